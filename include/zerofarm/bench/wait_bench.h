#pragma once
// The waits of `zerofarm bench --parts waits` (wait_bench.cpp): how long the
// farm's waiting primitives take on this machine, measured here because the
// unit tests only check that they return, in order, with the right value
// (tests/support/hang_bound.h). Each figure is the median of `rounds` tries,
// in microseconds:
//   futex_wake_us           a thread asleep in FutexWait, from FutexWakeAll
//                           to its return (the worker's and evaluator's wake-up)
//   futex_at_once_us        FutexWait on a word that already differs (no sleep)
//   futex_timeout_over_us   FutexWait of 20 ms with nobody waking it: time past the 20 ms
//   spin_over_us            SpinUntil of 2 ms that never succeeds: time past the 2 ms
#include <string>
#include <vector>

namespace zerofarm::bench {

struct WaitTime {
  std::string name;  // as above
  double median_us = 0;
  double max_us = 0;
  int rounds = 0;
};

// Runs each measurement `rounds` times (a second or so at 25 rounds); starts
// one thread at a time. Throws nothing.
std::vector<WaitTime> MeasureWaits(int rounds = 25);

}  // namespace zerofarm::bench
