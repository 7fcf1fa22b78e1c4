#pragma once
#include <cstdint>
#include <ctime>

namespace zerofarm {
// Monotonic time in nanoseconds (CLOCK_MONOTONIC: comparable across processes
// of one boot, which is what shared-memory timestamps need).
inline uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}
inline double MonotonicSeconds() { return static_cast<double>(MonotonicNs()) * 1e-9; }
}  // namespace zerofarm
