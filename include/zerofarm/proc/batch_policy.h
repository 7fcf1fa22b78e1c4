#pragma once
// The evaluator's adaptive wait: after the first ready leaf, is waiting for
// one more leaf worth it? Pure logic on measured rates (no clock, no shm), so
// it is unit-tested with exact inputs; src/proc/evaluator.cpp feeds it.
//
// Model. A batch of b leaves costs the evaluator fixed + per_leaf * b ns
// (fitted from the batches it ran). Leaves arrive every `interarrival` ns on
// average while it waits. Evaluating now costs fixed / b + per_leaf per leaf;
// waiting for one more leaf costs (interarrival + fixed + per_leaf * (b+1)) /
// (b+1). Waiting wins exactly when interarrival < fixed / b: the next leaf is
// expected sooner than the share of the fixed cost each leaf in hand pays.
// The same holds for every further leaf, so the evaluator keeps waiting while
// it holds, and stops when leaves stop coming (no arrival within a few
// expected inter-arrival times: the workers are all waiting for this batch),
// when the batch or the rings are full, or at --max-wait-us.
//
// Single-threaded: one instance per evaluator process, its main thread only.
#include <cstdint>

namespace zerofarm::proc {

class AdaptiveBatchPolicy {
 public:
  // Weight of each new sample in the running averages (EWMA), 0 < alpha <= 1.
  explicit AdaptiveBatchPolicy(double alpha = 0.1) : alpha_(alpha) {}

  // `leaves` arrived `gap_ns` after the previous arrival (or after the wait
  // began), while the evaluator was waiting. leaves == 0 is ignored.
  void ObserveArrival(uint64_t leaves, uint64_t gap_ns);
  // A batch of `batch` leaves took `ns` to evaluate.
  void ObserveBatch(uint64_t batch, uint64_t ns);

  // True when waiting for one more leaf should raise throughput, holding
  // `batch` (>= 1) leaves. With no measurements yet: true (the caller's cap
  // bounds the wait, as the fixed policy did).
  bool WorthWaiting(uint64_t batch) const;
  // How long to wait for the next arrival before concluding the leaves have
  // stopped coming: a few expected inter-arrival times, at least min_gap_ns.
  uint64_t ArrivalTimeoutNs(uint64_t min_gap_ns = 20'000) const;

  // The fitted model, ns (0 until known).
  double InterarrivalNs() const { return interarrival_ns_; }
  double FixedNs() const;
  double PerLeafNs() const;
  bool Calibrated() const { return interarrival_ns_ > 0 && batches_ >= 2; }

 private:
  double alpha_;
  double interarrival_ns_ = 0;  // EWMA of gap / leaves
  uint64_t batches_ = 0;
  // Exponentially weighted sums for the least-squares fit t = fixed + per_leaf * b.
  double s1_ = 0, sb_ = 0, sbb_ = 0, st_ = 0, sbt_ = 0;
};

}  // namespace zerofarm::proc
