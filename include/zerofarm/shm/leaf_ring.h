#pragma once
// The leaf ring: one per worker, in shared memory. The worker (single producer)
// writes leaf features into slots; its evaluator (single consumer) runs the
// network on them in place and writes policy, value and model version back into
// the same slots. Modelled on rigtorp's SPSCQueue, with two counters instead of
// head/tail because a slot is handed over twice (features there, results back).
//
// Sequence numbers: leaf number `seq` (counting from 0 for the life of the
// segment) lives in slot seq % slots. Any slot count >= 1 works.
//
//      consumed          done              head              consumed + slots
//   ...---|---results-----|---in flight-----|------free---------|
//         worker reads     evaluator reads   worker writes
//         policy/value     features, writes  features
//
//   head     (shm) written by the worker only, release, after the features of
//            [old head, new head) are written. Acquired by the evaluator.
//   done     (shm) written by the evaluator only, release, after policy, value
//            and model_version of [old done, new done) are written. Acquired by
//            the worker. done <= head.
//   consumed (worker-local) results below it have been read; their slots are
//            free again. consumed <= done.
//   taken    (evaluator-local) leaves below it have been handed to the net.
//            done <= taken <= head.
//
// Replacements. A process attaches only after the supervisor reaped (waitpid)
// its predecessor, so each side still has one writer at a time.
//   - A new evaluator starts at taken = done: leaves its predecessor took but
//     did not complete are evaluated again (results are a function of the
//     features, so rewriting a half-written slot is harmless).
//   - A new worker starts at consumed = done and head = head; the leaves in
//     [done, head) at attach time are "ghosts" of the dead worker's games: they
//     keep their slots until the evaluator completes them, and the new worker
//     Consume()s them without using their results.
//
// Waking: after Publish() the worker rings its evaluator's Doorbell (one ring
// per burst); after Complete() the evaluator rings the worker's worker_wake.
// Either side first spins briefly (spin_wait.h), so a peer that answers within
// microseconds costs no system call at all. See doorbell.h for the protocol. All of this is noexcept and
// lock-free.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "zerofarm/core/error.h"
#include "zerofarm/shm/doorbell.h"

namespace zerofarm::shm {

static_assert(std::atomic<uint64_t>::is_always_lock_free, "ring counters must be lock-free");

// In shared memory, at the start of each ring region (4096-aligned). The
// arrays follow it, each 64-byte aligned, at offsets from this struct's address.
// Placement-constructed by InitSegment; lives as long as the segment.
struct LeafRingControl {
  // ---- Immutable after InitSegment (written before any child exists). ----
  uint64_t slots = 0;                 // leaf slots, >= 1
  uint32_t feature_bytes = 0;         // bytes of features per leaf
  uint32_t actions = 0;               // policy floats per leaf
  uint64_t features_offset = 0;       // uint8_t  [slots][feature_bytes], written by the worker
  uint64_t policy_offset = 0;         // float    [slots][actions], written by the evaluator (raw logits)
  uint64_t value_offset = 0;          // float    [slots], by the evaluator, mover's view, [-1, 1]
  uint64_t model_version_offset = 0;  // uint32_t [slots], by the evaluator
  uint32_t worker = 0;                // the producer's worker index
  uint32_t evaluator = 0;             // the consumer's evaluator index (worker % num_evaluators)

  // Leaves published, total. Only increases. Written by the worker (release),
  // read by the evaluator (acquire) and by the supervisor (relaxed, statistics).
  alignas(64) std::atomic<uint64_t> head{0};
  // Leaves evaluated, total. Only increases, <= head. Written by the evaluator
  // (release), read by the worker (acquire) and by the supervisor (relaxed).
  alignas(64) std::atomic<uint64_t> done{0};
  // The worker sleeps here (WaitForResults); the evaluator rings it in Complete().
  DoorbellWords worker_wake;
  // Statistics, written by the worker only (relaxed), read by anyone.
  alignas(64) std::atomic<uint64_t> worker_waits{0};  // WaitForResults calls that slept
  std::atomic<uint64_t> worker_full_waits{0};         // ... of which with a full ring
  // Set once, 0 -> 1, by the evaluator that stops serving this ring for its
  // impossible counters (Refuse); read by the worker in its loop (Refused),
  // which then stops the run instead of waiting for answers that never come.
  // Never cleared: the segment lives as long as the run.
  std::atomic<uint32_t> refused{0};
};
static_assert(std::is_standard_layout_v<LeafRingControl>);
static_assert(std::is_trivially_destructible_v<LeafRingControl>);
static_assert(offsetof(LeafRingControl, head) == 64);
static_assert(offsetof(LeafRingControl, done) == 128);
static_assert(offsetof(LeafRingControl, worker_wake) == 192);
static_assert(offsetof(LeafRingControl, worker_waits) == 320);
static_assert(sizeof(LeafRingControl) == 384);

// A half-open range of sequence numbers [begin, end).
struct SeqRange {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t size() const noexcept { return end - begin; }
};

// One evaluated leaf as the worker reads it. `policy` points into the slot:
// valid until Consume() passes this seq.
struct LeafResult {
  const float* policy = nullptr;  // `actions` raw logits
  float value = 0.0f;
  uint32_t model_version = 0;
};

// Leaves [start_seq, start_seq + count) in consecutive slots (never wrapping):
// the arrays can go to the network as they are (see eval::LeafChunk).
struct LeafRun {
  uint64_t start_seq = 0;
  uint32_t count = 0;
  const uint8_t* features = nullptr;  // count x feature_bytes
  float* policy = nullptr;            // count x actions
  float* value = nullptr;             // count
  uint32_t* model_version = nullptr;  // count
};
// What Take() hands out: one run, or two when the range wraps around the ring.
struct LeafRuns {
  LeafRun runs[2];
  uint32_t num_runs = 0;
  uint64_t total = 0;  // sum of the counts
};
static_assert(std::is_trivially_copyable_v<LeafRuns>);

enum class WaitStatus { kReady, kTimeout, kPeerDead };

// Statistics snapshot (relaxed loads; for the supervisor's status line).
struct LeafRingCounts {
  uint64_t head = 0;  // leaves submitted
  uint64_t done = 0;  // leaves evaluated; head - done = in flight
};
inline LeafRingCounts ReadCounts(const LeafRingControl& ring) noexcept {
  // relaxed: statistics only; nothing is read on the strength of these values.
  return {ring.head.load(std::memory_order_relaxed), ring.done.load(std::memory_order_relaxed)};
}

// ---- Worker side --------------------------------------------------------------
// Process-local handle; one per ring in the one worker process that owns it.
// Not thread-safe. Copying is allowed but only one copy may be used.
class LeafRingProducer {
 public:
  LeafRingProducer() = default;
  // Attaches (see AttachAsProducer). `evaluator_bell` is rung after Publish();
  // pass Doorbell() for none (tests).
  LeafRingProducer(LeafRingControl& ring, Doorbell evaluator_bell) noexcept;  // leaf_ring.cpp

  // (Re)reads the shared counters: consumed = done, head = head. Returns the
  // ghost range [done, head): leaves published by a previous worker process,
  // whose results this worker must Consume() and ignore. Empty on a fresh ring.
  SeqRange AttachAsProducer() noexcept;  // leaf_ring.cpp
  SeqRange Ghosts() const noexcept { return ghosts_; }
  bool IsGhost(uint64_t seq) const noexcept { return seq < ghosts_.end; }

  uint64_t Slots() const noexcept { return slots_; }
  uint32_t FeatureBytes() const noexcept { return ring_->feature_bytes; }
  uint32_t Actions() const noexcept { return ring_->actions; }
  // Sequence number of the next leaf to write.
  uint64_t Head() const noexcept { return head_; }
  uint64_t Consumed() const noexcept { return consumed_; }
  // Leaves published whose results were not consumed yet (ghosts included).
  uint64_t InFlight() const noexcept { return head_ - consumed_; }
  // Slots that may be written now: seqs [Head(), Head() + FreeSlots()).
  uint64_t FreeSlots() const noexcept { return slots_ - (head_ - consumed_); }

  // Where to write the features of leaf `seq` (Head() <= seq < Head() + FreeSlots()).
  uint8_t* SlotFeatures(uint64_t seq) noexcept {
    ZF_DCHECK(seq >= head_ && seq < consumed_ + slots_) << "seq " << seq;
    return features_ + (seq % slots_) * ring_->feature_bytes;
  }

  // Hands leaves [Head(), Head() + n) to the evaluator and rings its doorbell.
  // Call once per burst, not once per leaf.
  void Publish(uint64_t n) noexcept {
    ZF_DCHECK(n <= FreeSlots()) << "publishing " << n << " leaves, " << FreeSlots() << " free";
    head_ += n;
    // release: the feature bytes written above are visible before head is.
    ring_->head.store(head_, std::memory_order_release);
    bell_.Ring();
  }

  // Loads `done`: leaves [Consumed(), returned value) have results. A done
  // below the last one or above Head() (results for leaves never published)
  // is a corrupt ring: Corrupt() turns true and the last good value is kept.
  uint64_t PollCompleted() noexcept {
    // acquire: pairs with the evaluator's release of done; the results of the
    // slots below it are visible.
    const uint64_t done = ring_->done.load(std::memory_order_acquire);
    if (done < done_ || done > head_) {
      corrupt_ = true;
      return done_;
    }
    done_ = done;
    return done_;
  }
  // True once the shared counters were impossible (at attach or a poll): the
  // evaluator is broken or the segment corrupt; the worker must not go on.
  bool Corrupt() const noexcept { return corrupt_; }
  // True once the evaluator has stopped serving this ring (LeafRingConsumer::Refuse).
  bool Refused() const noexcept {
    // relaxed: a flag; no data is published through it.
    return ring_->refused.load(std::memory_order_relaxed) != 0;
  }
  uint64_t Completed() const noexcept { return done_; }  // as of the last poll

  // The result of leaf `seq`, Consumed() <= seq < Completed().
  LeafResult Result(uint64_t seq) const noexcept {
    ZF_DCHECK(seq >= consumed_ && seq < done_) << "seq " << seq;
    const uint64_t i = seq % slots_;
    return {policy_ + i * ring_->actions, value_[i], model_version_[i]};
  }

  // The results below up_to_seq have been read: their slots are free.
  void Consume(uint64_t up_to_seq) noexcept {
    ZF_DCHECK(up_to_seq >= consumed_ && up_to_seq <= done_) << "consume to " << up_to_seq;
    consumed_ = up_to_seq;  // process-local: the evaluator never needs it
  }

  // Waits until a result is waiting (done > Consumed()) or timeout_ns pass:
  // first spins within the spin policy's budget (spin_wait.h; the evaluator's
  // Complete() then makes no system call), then sleeps on the futex.
  // Returns kReady (results may be waiting; PollCompleted() to see) or
  // kTimeout (check the evaluator is alive, then call again).
  WaitStatus WaitForResults(uint64_t timeout_ns) noexcept;  // leaf_ring.cpp
  // As above, but on timeout asks peer_alive() (a bool() callable, e.g. a look at
  // the evaluator's heartbeat) and returns kPeerDead if it says no.
  template <class PeerAlive>
  WaitStatus WaitForResults(uint64_t timeout_ns, PeerAlive&& peer_alive) noexcept {
    const WaitStatus s = WaitForResults(timeout_ns);
    if (s == WaitStatus::kTimeout && !peer_alive()) return WaitStatus::kPeerDead;
    return s;
  }

  // The spin before WaitForResults sleeps (default DefaultSpinBudgetNs(); 0 =
  // sleep at once). Its statistics: spins won, lost, skipped.
  void SetSpinBudgetNs(uint64_t ns) noexcept { spin_.SetBudgetNs(ns); }
  const SpinPolicy& Spin() const noexcept { return spin_; }

 private:
  LeafRingControl* ring_ = nullptr;
  Doorbell bell_;
  SpinPolicy spin_;
  uint64_t slots_ = 0;
  uint8_t* features_ = nullptr;
  const float* policy_ = nullptr;
  const float* value_ = nullptr;
  const uint32_t* model_version_ = nullptr;
  uint64_t head_ = 0;      // == ring_->head except inside Publish()
  uint64_t done_ = 0;      // last acquired value of ring_->done
  uint64_t consumed_ = 0;  // <= done_
  SeqRange ghosts_;
  bool corrupt_ = false;
};

// ---- Evaluator side -----------------------------------------------------------
// Process-local handle; one per ring in the evaluator serving it. Not thread-safe.
class LeafRingConsumer {
 public:
  LeafRingConsumer() = default;
  // Attaches: taken = done (a predecessor's uncompleted leaves are redone).
  explicit LeafRingConsumer(LeafRingControl& ring) noexcept;  // leaf_ring.cpp

  uint64_t Slots() const noexcept { return slots_; }
  uint32_t FeatureBytes() const noexcept { return ring_->feature_bytes; }
  uint32_t Actions() const noexcept { return ring_->actions; }

  // Leaves published but not yet taken.
  uint64_t Available() noexcept {
    // acquire: pairs with the worker's release of head, so the features of
    // every slot below it are visible before Take() hands them out.
    const uint64_t head = ring_->head.load(std::memory_order_acquire);
    // Never trust shared memory: a head below what we took, or more than a
    // ring's worth ahead of done, is a corrupt (or hostile) ring. Refuse it.
    if (head < taken_ || head - done_ > slots_) {
      corrupt_ = true;
      return 0;
    }
    head_ = head;
    return head_ - taken_;
  }

  // Takes up to `max` leaves (oldest first) as one or two contiguous runs.
  LeafRuns Take(uint64_t max) noexcept {
    if (head_ - taken_ < max) Available();
    uint64_t n = head_ - taken_;
    if (n > max) n = max;
    LeafRuns out;
    out.total = n;
    while (n > 0) {
      const uint64_t i = taken_ % slots_;
      const uint64_t count = (slots_ - i < n) ? slots_ - i : n;
      LeafRun& r = out.runs[out.num_runs++];
      r.start_seq = taken_;
      r.count = static_cast<uint32_t>(count);
      r.features = features_ + i * ring_->feature_bytes;
      r.policy = policy_ + i * ring_->actions;
      r.value = value_ + i;
      r.model_version = model_version_ + i;
      taken_ += count;
      n -= count;
    }
    return out;
  }

  // Results of leaves [Done(), up_to_seq) are written: hand them to the worker
  // and wake it if it sleeps. Done() <= up_to_seq <= Taken().
  void Complete(uint64_t up_to_seq) noexcept {
    ZF_DCHECK(up_to_seq >= done_ && up_to_seq <= taken_) << "complete to " << up_to_seq;
    if (up_to_seq == done_) return;
    done_ = up_to_seq;
    // release: policy, value and model_version written above are visible
    // before done is.
    ring_->done.store(done_, std::memory_order_release);
    Doorbell(&ring_->worker_wake).Ring();
  }
  void CompleteAllTaken() noexcept { Complete(taken_); }

  uint64_t Taken() const noexcept { return taken_; }
  // True once Available() saw an impossible head; the ring is then ignored.
  bool Corrupt() const noexcept { return corrupt_; }
  // Says to the worker that this ring is no longer served, and wakes it.
  void Refuse() noexcept {
    // relaxed: a flag; no data is published through it (the doorbell wakes the worker).
    ring_->refused.store(1, std::memory_order_relaxed);
    Doorbell(&ring_->worker_wake).Ring();
  }
  uint64_t Done() const noexcept { return done_; }

 private:
  LeafRingControl* ring_ = nullptr;
  uint64_t slots_ = 0;
  uint8_t* features_ = nullptr;
  float* policy_ = nullptr;
  float* value_ = nullptr;
  uint32_t* model_version_ = nullptr;
  uint64_t head_ = 0;   // last acquired value of ring_->head
  uint64_t taken_ = 0;  // done_ <= taken_ <= head_
  uint64_t done_ = 0;   // == ring_->done (we are its only writer)
  bool corrupt_ = false;
};

}  // namespace zerofarm::shm
