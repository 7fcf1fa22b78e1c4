#pragma once
// Bounds for tests of code that waits (futexes, spins, child processes): no
// test asserts how fast something is (that is `zerofarm bench`'s job, on a
// machine whose load is recorded). A test checks that the wait returned, in
// order, with the right value; where it must tell "returned at once" from
// "slept its whole timeout", it gives a timeout of kLongWaitNs and checks the
// wait took less than kHangSeconds: only a hang (or the bug of sleeping the
// timeout out) crosses that, however loaded the machine. Lower bounds ("it
// waited at least its timeout") are kept: no load can make a wait shorter.
#include <chrono>
#include <cstdint>

namespace zerofarm::testing {

inline constexpr double kHangSeconds = 60;                   // far beyond any load
inline constexpr uint64_t kLongWaitNs = 120'000'000'000ULL;  // 2 x kHangSeconds
inline constexpr int kLongWaitMs = static_cast<int>(kLongWaitNs / 1'000'000);

inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace zerofarm::testing
