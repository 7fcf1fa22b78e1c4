#pragma once
// Bounded, adaptive spinning before a futex sleep (issue #23 point 4).
//
// A futex sleep and its wake-up cost two context switches and a system call on
// each side: tens of microseconds on a loaded VM, more than moving a batch of
// leaves. A waiter whose peer answers within a few microseconds therefore
// first spins (a pause instruction between looks at the counter, the clock
// read every kPausesPerClockRead pauses) for at most a budget of nanoseconds,
// and only then sleeps in the futex as before (doorbell.h). While it spins its
// doorbell's `sleeping` flag stays 0, so the waker's Ring() makes no system
// call. No core burns while idle: a spin never outlasts its budget, and a
// waiter whose spins keep running out (its peer takes milliseconds, e.g. the
// network, or shares its core) stops spinning and only probes now and then
// (SpinPolicy below).
//
// Everything here is process-local and noexcept; nothing lives in shared memory.
#include <algorithm>
#include <cstdint>

#include "zerofarm/core/clock.h"

namespace zerofarm::shm {

// The default spin budget: 20 us. Measured with `zerofarm bench --parts
// handoff --handoff-spins-us ...` (docs/benchmarks.md, docs/results/handoff-2026-11-25/):
// a round trip of 64..256 leaves needs each side to wait 1..10 us, so 20 us
// catches it with room for a loaded machine; a longer budget gained nothing.
inline constexpr uint64_t kDefaultSpinBudgetNs = 20'000;

// kDefaultSpinBudgetNs when this process may run on 2 or more CPUs (its
// affinity mask), else 0: on one CPU the peer cannot run while we spin.
// Computed once per process (spin_wait.cpp).
uint64_t DefaultSpinBudgetNs() noexcept;

// One pause: tells the core we are spinning (frees the sibling hyper-thread,
// avoids the memory-order flush on loop exit). A no-op where there is none.
inline void CpuPause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Whether the next wait spins, from how the last spins ended. A pure class
// (no clock), so its decisions are unit-tested directly.
//   - budget 0: never spins.
//   - a spin that saw the work arrive ("won") keeps spinning on.
//   - kLossesBeforeBackoff spins in a row that ran out ("lost") start a back-off:
//     the next 1, 2, 4 .. kMaxSkip waits sleep at once, each followed by one
//     probing spin; a won probe ends the back-off.
// So a waiter whose peer answers within the budget always spins, and one whose
// peer takes longer spends at most a budget per kMaxSkip + 1 waits spinning.
// Process-local, not thread-safe: one per waiting loop.
class SpinPolicy {
 public:
  static constexpr uint32_t kLossesBeforeBackoff = 2;
  static constexpr uint32_t kMaxSkip = 64;

  SpinPolicy() noexcept : budget_ns_(DefaultSpinBudgetNs()) {}
  explicit SpinPolicy(uint64_t budget_ns) noexcept : budget_ns_(budget_ns) {}

  uint64_t BudgetNs() const noexcept { return budget_ns_; }
  void SetBudgetNs(uint64_t ns) noexcept { *this = SpinPolicy(ns); }  // also resets back-off and statistics

  // The spin budget of the wait about to start: BudgetNs(), or 0 when it
  // should sleep at once (no budget, or backing off).
  uint64_t NextBudgetNs() noexcept {
    if (budget_ns_ == 0) return 0;
    if (skip_ > 0) {
      --skip_;
      ++skipped_;
      return 0;
    }
    return budget_ns_;
  }
  // How the spin NextBudgetNs() allowed ended: won (the work came) or lost.
  void Record(bool won) noexcept {
    if (won) {
      ++won_;
      losses_ = 0;
      return;
    }
    ++lost_;
    if (++losses_ < kLossesBeforeBackoff) return;
    const uint32_t step = std::min<uint32_t>(losses_ - kLossesBeforeBackoff, 6);  // 2^6 = kMaxSkip
    skip_ = std::min<uint32_t>(1u << step, kMaxSkip);
  }

  // Statistics (this process's waits): spins won, lost, and waits that slept
  // without spinning because of the back-off.
  uint64_t Won() const noexcept { return won_; }
  uint64_t Lost() const noexcept { return lost_; }
  uint64_t Skipped() const noexcept { return skipped_; }

 private:
  uint64_t budget_ns_ = 0;
  uint32_t losses_ = 0;  // spins lost in a row
  uint32_t skip_ = 0;    // waits left that sleep without spinning
  uint64_t won_ = 0, lost_ = 0, skipped_ = 0;
};

// Spins until ready() holds or budget_ns have passed; returns ready()'s last
// answer. ready() must do the acquire loads of the counters it looks at (as
// for Doorbell::SleepUnless). Reads the clock once per kPausesPerClockRead
// pauses (a pause is 10..150 cycles depending on the core, so the budget is
// kept in time, not in pauses).
inline constexpr int kPausesPerClockRead = 16;
template <class Ready>
bool SpinUntil(Ready&& ready, uint64_t budget_ns) noexcept {
  if (ready()) return true;
  if (budget_ns == 0) return false;
  const uint64_t start = MonotonicNs();
  for (;;) {
    for (int i = 0; i < kPausesPerClockRead; ++i) {
      CpuPause();
      if (ready()) return true;
    }
    if (MonotonicNs() - start >= budget_ns) return ready();
  }
}

}  // namespace zerofarm::shm
