#pragma once
// A raw Linux futex on a 32-bit atomic that lives in shared memory.
//
// The waiters are in different processes, so these use FUTEX_WAIT / FUTEX_WAKE
// WITHOUT FUTEX_PRIVATE_FLAG (a private futex is keyed by the address space and
// would never see a wake from another process). The futex never carries data:
// every caller re-checks its real condition (a ring counter) after waking, so
// spurious wake-ups are harmless and a futex never needs to be "held".
//
// Nothing here allocates or throws; both calls are async-signal-safe syscalls.
#include <atomic>
#include <cstdint>
#include <type_traits>

namespace zerofarm::shm {

// The kernel reads the word as a plain aligned uint32_t, so the atomic must be
// exactly that (no hidden lock, no padding).
static_assert(std::atomic<uint32_t>::is_always_lock_free, "futex word must be lock-free");
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word must be 32 bits");
static_assert(alignof(std::atomic<uint32_t>) == alignof(uint32_t), "futex word alignment");
static_assert(std::is_standard_layout_v<std::atomic<uint32_t>>, "futex word layout");

// Sleeps while *word == expected, for at most timeout_ns nanoseconds (relative,
// CLOCK_MONOTONIC). Returns false only when the timeout expired; true when the
// thread was woken, the word no longer held `expected` on entry (EAGAIN), or a
// signal interrupted the sleep (EINTR: the caller gets to look at its stop flag).
// A timeout of 0 returns at once. Callers always re-check their condition.
bool FutexWait(std::atomic<uint32_t>* word, uint32_t expected, uint64_t timeout_ns) noexcept;

// Wakes every thread of every process sleeping in FutexWait on `word`.
// Returns how many were woken (0 when nobody slept, which costs one syscall).
int FutexWakeAll(std::atomic<uint32_t>* word) noexcept;

}  // namespace zerofarm::shm
