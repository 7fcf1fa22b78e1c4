#include "zerofarm/shm/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace zerofarm::shm {
namespace {
long Futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* timeout) noexcept {
  // The static_asserts in futex.h guarantee the atomic is a bare uint32_t.
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, timeout, nullptr, 0);
}
}  // namespace

bool FutexWait(std::atomic<uint32_t>* word, uint32_t expected, uint64_t timeout_ns) noexcept {
  if (timeout_ns == 0) return false;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000ULL);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000ULL);
  // FUTEX_WAIT (not FUTEX_WAIT_PRIVATE): the waker may be another process.
  // Its timeout is relative and measured against CLOCK_MONOTONIC.
  if (Futex(word, FUTEX_WAIT, expected, &ts) == 0) return true;
  return errno != ETIMEDOUT;  // EAGAIN (value changed) and EINTR count as woken
}

int FutexWakeAll(std::atomic<uint32_t>* word) noexcept {
  const long woken = Futex(word, FUTEX_WAKE, INT_MAX, nullptr);
  return woken > 0 ? static_cast<int>(woken) : 0;
}

}  // namespace zerofarm::shm
