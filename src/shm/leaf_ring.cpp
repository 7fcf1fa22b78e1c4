#include "zerofarm/shm/leaf_ring.h"

#include <algorithm>

namespace zerofarm::shm {

LeafRingProducer::LeafRingProducer(LeafRingControl& ring, Doorbell evaluator_bell) noexcept
    : ring_(&ring), bell_(evaluator_bell), slots_(ring.slots) {
  auto* base = reinterpret_cast<uint8_t*>(&ring);
  features_ = base + ring.features_offset;
  policy_ = reinterpret_cast<const float*>(base + ring.policy_offset);
  value_ = reinterpret_cast<const float*>(base + ring.value_offset);
  model_version_ = reinterpret_cast<const uint32_t*>(base + ring.model_version_offset);
  AttachAsProducer();
}

SeqRange LeafRingProducer::AttachAsProducer() noexcept {
  // acquire: pairs with the evaluator's release of done; the slots below it
  // are finished, so we may reuse them.
  done_ = ring_->done.load(std::memory_order_acquire);
  // relaxed: we are the only writer of head (our predecessor is dead).
  head_ = ring_->head.load(std::memory_order_relaxed);
  // Never trust shared memory: done above head, or more than a ring's worth
  // in flight, is a corrupt ring. Attach to nothing and say so.
  if (done_ > head_ || head_ - done_ > slots_) {
    corrupt_ = true;
    head_ = done_;
  }
  consumed_ = done_;
  ghosts_ = {done_, head_};
  // relaxed: we are the ring's only sleeper; a predecessor killed in its
  // sleep left 1 here, which would cost the evaluator a syscall per Complete().
  ring_->worker_wake.sleeping.store(0, std::memory_order_relaxed);
  return ghosts_;
}

WaitStatus LeafRingProducer::WaitForResults(uint64_t timeout_ns) noexcept {
  const uint64_t budget = std::min(spin_.NextBudgetNs(), timeout_ns);
  if (budget > 0) {
    const bool won = SpinUntil([&] { return PollCompleted() > consumed_; }, budget);
    spin_.Record(won);
    if (won) return WaitStatus::kReady;
    timeout_ns -= budget;  // the spin took at least this long
  }
  Doorbell wake(&ring_->worker_wake);
  const uint32_t ticket = wake.PrepareToSleep();
  if (PollCompleted() > consumed_) {
    wake.CancelSleep();
    return WaitStatus::kReady;
  }
  // relaxed: statistics; we are the only writer.
  ring_->worker_waits.fetch_add(1, std::memory_order_relaxed);
  // relaxed: statistics; we are the only writer.
  if (FreeSlots() == 0) ring_->worker_full_waits.fetch_add(1, std::memory_order_relaxed);
  const bool woken = wake.Sleep(ticket, timeout_ns);
  return (woken || PollCompleted() > consumed_) ? WaitStatus::kReady : WaitStatus::kTimeout;
}

LeafRingConsumer::LeafRingConsumer(LeafRingControl& ring) noexcept : ring_(&ring), slots_(ring.slots) {
  auto* base = reinterpret_cast<uint8_t*>(&ring);
  features_ = base + ring.features_offset;
  policy_ = reinterpret_cast<float*>(base + ring.policy_offset);
  value_ = reinterpret_cast<float*>(base + ring.value_offset);
  model_version_ = reinterpret_cast<uint32_t*>(base + ring.model_version_offset);
  // relaxed: we are the only writer of done (our predecessor is dead).
  done_ = ring.done.load(std::memory_order_relaxed);
  taken_ = done_;
  head_ = done_;
  Available();  // loads head (acquire there), refusing an impossible one
}

}  // namespace zerofarm::shm
