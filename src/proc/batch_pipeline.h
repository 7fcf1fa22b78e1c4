#pragma once
// The batches an evaluator process has started and not finished (issue 77;
// eval::Evaluator::Start and Finish), oldest first, with the ring slots each
// holds, and the check of their outputs for NaN and Inf.
//
// A batch's slots belong to the evaluator from the Take that gathered them to
// the Finish that answered them: only then is each ring's `done` moved past
// them (LeafRingConsumer::Complete), so the worker reads no result early, and
// an evaluator that dies with batches in flight leaves them to its
// replacement, which starts from `done`. With depth 1 a batch is finished
// before the next starts: the farm's old loop. Used by the evaluator's one
// thread; not thread-safe.
#include <cstdint>
#include <deque>
#include <vector>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/leaf_ring.h"

namespace zerofarm::proc {

class BatchPipeline {
 public:
  struct Batch {
    uint64_t ticket = 0;
    uint32_t version = 0;  // the model version in use at its Start: its slots are stamped with it
    uint64_t leaves = 0;
    uint64_t start_ns = 0;
    std::vector<shm::LeafRun> runs;
    std::vector<uint64_t> taken;  // each ring's Taken() at its Start: Complete() up to it
  };

  size_t Size() const { return batches_.size(); }
  bool Empty() const { return batches_.empty(); }
  // True when `net` takes no other batch until the oldest is finished.
  bool Full(const eval::Evaluator& net) const { return batches_.size() >= static_cast<size_t>(net.Depth()); }

  // Starts the leaves `runs` (taken from `rings`, `leaves` in all) on `net`.
  // Requires !Full(net) and rings that stay as they are (none added or
  // dropped) until the batch is finished.
  void Start(eval::Evaluator& net, const std::vector<shm::LeafRun>& runs, uint64_t leaves,
             const std::vector<shm::LeafRingConsumer>& rings, uint64_t now_ns);

  // The oldest batch, its outputs written (net.Finish) and its slots stamped
  // with its version; still holding its slots. Requires !Empty().
  const Batch& WaitOldest(eval::Evaluator& net);
  // Hands the oldest batch's slots back to their workers (after WaitOldest)
  // and forgets it.
  void CompleteOldest(std::vector<shm::LeafRingConsumer>& rings);

 private:
  std::deque<Batch> batches_;  // oldest first
  bool oldest_waited_ = false;
};

// Non-finite network output (issue #21): counted in the evaluator's block and
// logged once per model version. The workers check their own leaves and drop
// the games that got NaN or Inf (worker.cpp); nothing is retried here, since
// the same model would answer the same again. With batches in flight, a
// batch of an older model than the one in use is counted and logged, but
// does not flag the model in use (EvaluatorBlock::model_nonfinite).
class NonFiniteCheck {
 public:
  explicit NonFiniteCheck(shm::EvaluatorBlock& block) : block_(block) {}
  // True once per model version: its first batch is about to start.
  bool NewModel(uint32_t version);
  // The outputs of a finished batch of model `version`.
  void Check(const std::vector<shm::LeafRun>& runs, uint32_t actions, uint32_t version, uint64_t batch);
  static bool Finite(const float* policy, uint32_t actions, float value);

 private:
  shm::EvaluatorBlock& block_;
  uint32_t version_ = 0;
  bool seen_ = false, logged_ = false, logged_older_ = false;
};

}  // namespace zerofarm::proc
