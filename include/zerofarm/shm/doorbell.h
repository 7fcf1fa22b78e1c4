#pragma once
// A doorbell: how one sleeper (an evaluator, a worker, the writer) sleeps on a
// futex until some other process has made progress it cares about, without a
// lock and without a syscall on the hot path when nobody sleeps.
//
// Protocol (Dekker style; the rings' counters carry the data, the doorbell
// carries only the wake-up):
//
//   waker (any number of processes)        sleeper (exactly one process)
//   ------------------------------------   --------------------------------------
//   counter.store(x, release)               t = PrepareToSleep()  // word, sleeping=1, fence
//   Ring():  fence(seq_cst)                 if (condition holds) { CancelSleep(); go on }
//            if (sleeping) { word += 1;     Sleep(t, timeout)     // futex wait, sleeping=0
//                            FutexWakeAll }
//
// The two seq_cst fences make it impossible that the waker misses `sleeping`
// AND the sleeper misses the counter: at least one sees the other's store
// (store-buffering litmus, forbidden with seq_cst fences). If the waker saw
// `sleeping` it bumps the word after the sleeper read it, so FUTEX_WAIT either
// returns EAGAIN or is woken. If the sleeper read an already bumped word, its
// acquire load synchronizes with the bump, so the re-check sees the counter.
// Sleeps always have a timeout: the sleeper then checks its peer is alive.
//
// A sleeper killed in its sleep leaves `sleeping` at 1 (wakers then make a
// needless syscall per ring): its replacement calls CancelSleep() once at
// start. The leaf ring and queue handles do that for their own wake words.
//
// Cost: Ring() is one fence and one load of a line nobody writes while the
// sleeper is awake; the syscall happens only when the sleeper really sleeps.
// Ring once per burst of published leaves, never once per leaf.
//
// Spinning first (SpinThenSleepUnless, spin_wait.h): the sleeper may look at its
// condition for a bounded budget before PrepareToSleep(). It does not set
// `sleeping` while it spins, so a waker that publishes then makes no system
// call; the protocol above starts only once the spin has run out.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "zerofarm/core/error.h"
#include "zerofarm/shm/futex.h"
#include "zerofarm/shm/spin_wait.h"

namespace zerofarm::shm {

#if defined(__SANITIZE_THREAD__)
// The TSan runtime's fence (a real full barrier; tsan_interface_atomic.h).
extern "C" void __tsan_atomic_thread_fence(int order);
#endif

// std::atomic_thread_fence(seq_cst). Under GCC's ThreadSanitizer that call is
// compiled to nothing (GCC warns -Wtsan), which would break the Dekker wake-up
// below, so TSan builds call the runtime's fence instead. These fences carry
// no data (the rings' release/acquire pairs do, and TSan sees those).
inline void SeqCstFence() noexcept {
#if defined(__SANITIZE_THREAD__)
  __tsan_atomic_thread_fence(5);  // __tsan_memory_order_seq_cst
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// In shared memory. Placement-constructed (zeroed) by InitSegment; lives as
// long as the segment. Each word on its own cache line: `word` is written by
// wakers, `sleeping` by the sleeper.
struct DoorbellWords {
  // Futex word. Written (fetch_add) by wakers, read by the sleeper. Only its
  // changes matter, not its value; it wraps around freely.
  alignas(64) std::atomic<uint32_t> word{0};
  // 1 while the sleeper is between PrepareToSleep() and the end of Sleep() or
  // CancelSleep(); else 0. Written by the sleeper only, read by wakers.
  alignas(64) std::atomic<uint32_t> sleeping{0};
};
static_assert(std::is_standard_layout_v<DoorbellWords>);
static_assert(std::is_trivially_destructible_v<DoorbellWords>);
static_assert(sizeof(DoorbellWords) == 128);

// A process-local handle on DoorbellWords; copyable (it is only a pointer).
// A default-constructed Doorbell is "no doorbell": Ring() does nothing.
class Doorbell {
 public:
  Doorbell() = default;
  explicit Doorbell(DoorbellWords* words) noexcept : words_(words) {}
  bool valid() const noexcept { return words_ != nullptr; }

  // Waker side. Call after the release store that published the progress.
  // Returns true when a sleeper was (about to be) woken.
  bool Ring() noexcept {
    if (words_ == nullptr) return false;
    // seq_cst fence: orders our earlier counter store before the load of
    // `sleeping` below (Dekker, pairs with the fence in PrepareToSleep).
    SeqCstFence();
    // relaxed: the fence above provides the ordering.
    if (words_->sleeping.load(std::memory_order_relaxed) == 0) return false;
    // release: a sleeper that reads this bump (acquire) also sees our counter.
    words_->word.fetch_add(1, std::memory_order_release);
    FutexWakeAll(&words_->word);
    return true;
  }

  // Sleeper side, step 1. Returns the ticket to pass to Sleep(). After this
  // call the sleeper must re-check its condition, then Sleep() or CancelSleep().
  uint32_t PrepareToSleep() noexcept {
    ZF_DCHECK(words_ != nullptr) << "sleeping on no doorbell";
    // acquire: if we read a bump, the waker's counter store is visible to the
    // re-check, so we never sleep on a word whose wake-up we already consumed.
    const uint32_t ticket = words_->word.load(std::memory_order_acquire);
    // relaxed: the fence below orders it before the re-check's loads.
    words_->sleeping.store(1, std::memory_order_relaxed);
    // seq_cst fence: pairs with the fence in Ring() (Dekker).
    SeqCstFence();
    return ticket;
  }

  // Sleeper side, step 2a: the condition did not hold. Sleeps until rung or
  // until timeout_ns have passed; returns false on timeout. Clears `sleeping`.
  bool Sleep(uint32_t ticket, uint64_t timeout_ns) noexcept {
    const bool woken = FutexWait(&words_->word, ticket, timeout_ns);
    // relaxed: a waker that still sees 1 only makes one needless syscall.
    words_->sleeping.store(0, std::memory_order_relaxed);
    return woken;
  }

  // Sleeper side, step 2b: the condition held after all; do not sleep.
  void CancelSleep() noexcept {
    // relaxed: as in Sleep(), a stale 1 costs a waker one needless syscall.
    words_->sleeping.store(0, std::memory_order_relaxed);
  }

  // The whole sleeper protocol: sleeps unless has_work() (which must do the
  // acquire loads of the counters it looks at) returns true. Returns true if
  // has_work() held or the doorbell rang, false on timeout.
  template <class HasWork>
  bool SleepUnless(HasWork&& has_work, uint64_t timeout_ns) noexcept {
    const uint32_t ticket = PrepareToSleep();
    if (has_work()) {
      CancelSleep();
      return true;
    }
    return Sleep(ticket, timeout_ns);
  }

  // As SleepUnless, but first spins while `spin` allows (its budget, capped by
  // timeout_ns; spin_wait.h), then sleeps for what is left of timeout_ns.
  // Records in `spin` whether the spin won. Returns as SleepUnless.
  template <class HasWork>
  bool SpinThenSleepUnless(HasWork&& has_work, SpinPolicy& spin, uint64_t timeout_ns) noexcept {
    const uint64_t budget = std::min(spin.NextBudgetNs(), timeout_ns);
    if (budget > 0) {
      const uint64_t t0 = MonotonicNs();
      const bool won = SpinUntil(has_work, budget);
      spin.Record(won);
      if (won) return true;
      const uint64_t spent = MonotonicNs() - t0;
      timeout_ns = spent < timeout_ns ? timeout_ns - spent : 0;
    }
    return SleepUnless(has_work, timeout_ns);
  }

 private:
  DoorbellWords* words_ = nullptr;
};

}  // namespace zerofarm::shm
