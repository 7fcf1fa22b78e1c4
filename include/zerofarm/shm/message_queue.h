#pragma once
// The finished-game queue: one per worker, in shared memory. A single producer
// (the worker) pushes variable-length byte messages of at most slot_bytes into
// `depth` fixed slots; a single consumer (the writer) reads them and commits
// them only once they are durably written (two-phase), so a writer that dies
// loses nothing: its replacement re-reads from the last commit.
//
//   committed_tail       read (writer-local)      head
//   ...-----|----read, not yet durable----|----unread----|-----free-----...
//
//   head            (shm) messages published, total. Only increases. Written by
//                   the producer (release, after the bytes and length of the
//                   slot); acquired by the consumer.
//   committed_tail  (shm) messages durably consumed, total. Only increases,
//                   <= head. Written by the consumer (release, after it has
//                   finished reading the slots); acquired by the producer
//                   before it reuses a slot.
//   next_sequence   (shm) the producer's game counter: survives a producer
//                   restart so game numbers never repeat within a run.
//   read            (consumer-local) committed_tail <= read <= head.
//
// A replacement attaches only after the supervisor reaped its predecessor.
// Message `seq` lives in slot seq % depth. All of this is noexcept, lock-free.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

#include "zerofarm/core/error.h"
#include "zerofarm/shm/doorbell.h"

namespace zerofarm::shm {

// In shared memory, at the start of each queue region (64-aligned). Arrays at
// offsets from this struct's address. Placement-constructed by InitSegment.
struct MessageQueueControl {
  // ---- Immutable after InitSegment. ----
  uint64_t depth = 0;           // slots, >= 1
  uint32_t slot_bytes = 0;      // largest message
  uint32_t worker = 0;          // the producer's worker index
  uint64_t slot_stride = 0;     // bytes between slots: slot_bytes rounded up to 64
  uint64_t lengths_offset = 0;  // uint32_t [depth]: message lengths, by the producer
  uint64_t data_offset = 0;     // uint8_t [depth][slot_stride]: messages, by the producer

  // Written by the producer (release), acquired by the consumer.
  alignas(64) std::atomic<uint64_t> head{0};
  // Written by the consumer (release), acquired by the producer.
  alignas(64) std::atomic<uint64_t> committed_tail{0};
  // Written and read by the producer only (relaxed).
  alignas(64) std::atomic<uint64_t> next_sequence{0};
  // The producer sleeps here when the queue is full; Commit() rings it.
  DoorbellWords producer_wake;
  // Statistics, written by the producer only (relaxed).
  alignas(64) std::atomic<uint64_t> producer_full_waits{0};
};
static_assert(std::is_standard_layout_v<MessageQueueControl>);
static_assert(std::is_trivially_destructible_v<MessageQueueControl>);
static_assert(offsetof(MessageQueueControl, head) == 64);
static_assert(offsetof(MessageQueueControl, committed_tail) == 128);
static_assert(offsetof(MessageQueueControl, next_sequence) == 192);
static_assert(offsetof(MessageQueueControl, producer_wake) == 256);
static_assert(sizeof(MessageQueueControl) == 448);

enum class PushResult { kOk, kFull, kTooLarge };

// A message as the consumer sees it, in place in the slot: valid until the
// consumer commits past `seq`.
struct Message {
  uint64_t seq = 0;
  const uint8_t* data = nullptr;
  uint32_t size = 0;  // 0 with data == nullptr: the slot's length was impossible (corrupt)
};

// ---- Producer (worker) ----------------------------------------------------------
class MessageQueueProducer {
 public:
  MessageQueueProducer() = default;
  // `consumer_bell` (the writer's doorbell) is rung after each push; Doorbell() for none.
  MessageQueueProducer(MessageQueueControl& q, Doorbell consumer_bell) noexcept
      : q_(&q), bell_(consumer_bell) {
    // relaxed: we are the only writer of head (our predecessor is dead).
    head_ = q.head.load(std::memory_order_relaxed);
    // acquire: pairs with the consumer's release; slots below are finished with.
    tail_ = q.committed_tail.load(std::memory_order_acquire);
    // relaxed: we are the only sleeper; clears what a predecessor killed in
    // its sleep left behind.
    q.producer_wake.sleeping.store(0, std::memory_order_relaxed);
  }

  uint32_t MaxMessageBytes() const noexcept { return q_->slot_bytes; }
  uint64_t Depth() const noexcept { return q_->depth; }
  // Messages pushed into this queue so far, by every producer it had (its head).
  uint64_t Pushed() const noexcept { return head_; }

  // Copies the message into the next slot and publishes it.
  [[nodiscard]] PushResult TryPush(const void* data, uint32_t len) noexcept {
    if (len > q_->slot_bytes) return PushResult::kTooLarge;
    if (FreeSlots() == 0) return PushResult::kFull;
    const uint64_t i = head_ % q_->depth;
    auto* base = reinterpret_cast<uint8_t*>(q_);
    if (len > 0) std::memcpy(base + q_->data_offset + i * q_->slot_stride, data, len);
    reinterpret_cast<uint32_t*>(base + q_->lengths_offset)[i] = len;
    ++head_;
    // release: the message bytes and length written above are visible before head is.
    q_->head.store(head_, std::memory_order_release);
    bell_.Ring();
    return PushResult::kOk;
  }

  // Slots free now (refreshes the cached committed_tail).
  uint64_t FreeSlots() noexcept {
    if (head_ - tail_ == q_->depth) {
      // acquire: pairs with the consumer's release of committed_tail, so the
      // slots below it have been read completely before we overwrite them.
      tail_ = q_->committed_tail.load(std::memory_order_acquire);
    }
    return q_->depth - (head_ - tail_);
  }

  // Sleeps until a slot is free or timeout_ns pass. True if a slot is free.
  bool WaitForSpace(uint64_t timeout_ns) noexcept {
    Doorbell wake(&q_->producer_wake);
    const uint32_t ticket = wake.PrepareToSleep();
    if (FreeSlots() > 0) {
      wake.CancelSleep();
      return true;
    }
    // relaxed: statistics; we are the only writer.
    q_->producer_full_waits.fetch_add(1, std::memory_order_relaxed);
    wake.Sleep(ticket, timeout_ns);
    return FreeSlots() > 0;
  }

  // A fresh game number: 0, 1, 2, ... across producer restarts.
  uint64_t NextSequence() noexcept {
    // relaxed: only this producer reads or writes it; a replacement starts
    // after our death, which the supervisor's waitpid orders.
    const uint64_t s = q_->next_sequence.load(std::memory_order_relaxed);
    // relaxed: as above.
    q_->next_sequence.store(s + 1, std::memory_order_relaxed);
    return s;
  }

  uint64_t Head() const noexcept { return head_; }

 private:
  MessageQueueControl* q_ = nullptr;
  Doorbell bell_;
  uint64_t head_ = 0;  // == q_->head
  uint64_t tail_ = 0;  // last acquired committed_tail
};

// ---- Consumer (writer) ----------------------------------------------------------
class MessageQueueConsumer {
 public:
  MessageQueueConsumer() = default;
  // Attaches: reading restarts at committed_tail, so messages a dead
  // predecessor read but did not commit are read again.
  explicit MessageQueueConsumer(MessageQueueControl& q) noexcept : q_(&q) {
    // relaxed: we are the only writer of committed_tail.
    committed_ = q.committed_tail.load(std::memory_order_relaxed);
    read_ = committed_;
    head_ = committed_;
    Refresh();  // loads head (acquire there), refusing an impossible one
  }

  // Messages published and not yet read / not yet committed.
  uint64_t Unread() noexcept { return Refresh() - read_; }
  uint64_t Pending() noexcept { return Refresh() - committed_; }

  // The i-th unread message (0 = the next ReadNext()), without reading it.
  std::optional<Message> Peek(uint64_t i = 0) noexcept {
    if (read_ + i >= head_ && read_ + i >= Refresh()) return std::nullopt;
    return At(read_ + i);
  }
  // The next unread message; advances the read cursor.
  std::optional<Message> ReadNext() noexcept {
    std::optional<Message> m = Peek(0);
    if (m) ++read_;
    return m;
  }
  // Moves the read cursor back to the last commit (after a failed write).
  void Rewind() noexcept { read_ = committed_; }

  // Messages below up_to_seq are durable: release their slots and wake the
  // producer if it waits for space. Committed() <= up_to_seq <= ReadCursor().
  void Commit(uint64_t up_to_seq) noexcept {
    ZF_DCHECK(up_to_seq >= committed_ && up_to_seq <= read_) << "commit to " << up_to_seq;
    if (up_to_seq == committed_) return;
    committed_ = up_to_seq;
    // release: our reads of the slots below are complete before the producer
    // (acquire in FreeSlots) may overwrite them.
    q_->committed_tail.store(committed_, std::memory_order_release);
    Doorbell(&q_->producer_wake).Ring();
  }

  uint64_t ReadCursor() const noexcept { return read_; }
  uint64_t Depth() const noexcept { return q_->depth; }
  uint64_t Committed() const noexcept { return committed_; }
  // True once head was impossible (below the commit, or more than the queue
  // ahead of it): the queue is then read no further.
  bool Corrupt() const noexcept { return corrupt_; }

 private:
  uint64_t Refresh() noexcept {
    // acquire: pairs with the producer's release of head (message visible).
    const uint64_t head = q_->head.load(std::memory_order_acquire);
    // Never trust shared memory: a head that would make us read stale or
    // unwritten slots is a corrupt (or hostile) queue. Keep the last good one.
    if (head < head_ || head - committed_ > q_->depth) {
      corrupt_ = true;
      return head_;
    }
    head_ = head;
    return head_;
  }
  // A message whose length does not fit its slot comes back empty (size 0,
  // no data) for the caller to count and skip, not to read past the slot.
  Message At(uint64_t seq) const noexcept {
    const uint64_t i = seq % q_->depth;
    const auto* base = reinterpret_cast<const uint8_t*>(q_);
    const uint32_t len = reinterpret_cast<const uint32_t*>(base + q_->lengths_offset)[i];
    if (len > q_->slot_bytes) return {seq, nullptr, 0};
    return {seq, base + q_->data_offset + i * q_->slot_stride, len};
  }

  MessageQueueControl* q_ = nullptr;
  uint64_t head_ = 0;       // last acquired head
  uint64_t read_ = 0;       // committed_ <= read_ <= head_
  uint64_t committed_ = 0;  // == q_->committed_tail
  bool corrupt_ = false;
};

}  // namespace zerofarm::shm
