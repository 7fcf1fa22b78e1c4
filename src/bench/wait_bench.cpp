// `zerofarm bench --parts waits` (bench/wait_bench.h): the speed of the farm's
// waiting primitives, which the unit tests of shm no longer assert.
#include "zerofarm/bench/wait_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "zerofarm/core/clock.h"
#include "zerofarm/shm/futex.h"
#include "zerofarm/shm/spin_wait.h"

namespace zerofarm::bench {
namespace {

WaitTime Summary(const std::string& name, std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {name, us[us.size() / 2], us.back(), static_cast<int>(us.size())};
}

// From FutexWakeAll to the sleeper's return, in microseconds.
double OneWake() {
  std::atomic<uint32_t> word{0};
  std::atomic<bool> asleep{false};
  std::atomic<uint64_t> woke_ns{0};
  std::thread sleeper([&] {
    asleep.store(true, std::memory_order_release);  // release: orders nothing more; a hint to the waker
    while (word.load(std::memory_order_acquire) == 0) shm::FutexWait(&word, 0, 1'000'000'000ULL);
    woke_ns.store(MonotonicNs(), std::memory_order_relaxed);  // relaxed: read after join
  });
  while (!asleep.load(std::memory_order_acquire)) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // into the futex, most likely
  const uint64_t t0 = MonotonicNs();
  word.store(1, std::memory_order_release);  // release: pairs with the sleeper's acquire load
  shm::FutexWakeAll(&word);
  sleeper.join();
  return static_cast<double>(woke_ns.load(std::memory_order_relaxed) - t0) / 1e3;
}

}  // namespace

std::vector<WaitTime> MeasureWaits(int rounds) {
  rounds = std::max(rounds, 1);
  std::vector<double> wake, at_once, timeout_over, spin_over;
  for (int r = 0; r < rounds; ++r) {
    wake.push_back(OneWake());
    std::atomic<uint32_t> word{1};
    uint64_t t0 = MonotonicNs();
    shm::FutexWait(&word, 0, 1'000'000'000ULL);
    at_once.push_back(static_cast<double>(MonotonicNs() - t0) / 1e3);
    t0 = MonotonicNs();
    shm::FutexWait(&word, 1, 20'000'000ULL);
    timeout_over.push_back(static_cast<double>(MonotonicNs() - t0) / 1e3 - 20'000);
    t0 = MonotonicNs();
    (void)shm::SpinUntil([] { return false; }, 2'000'000ULL);
    spin_over.push_back(static_cast<double>(MonotonicNs() - t0) / 1e3 - 2'000);
  }
  return {Summary("futex_wake_us", wake), Summary("futex_at_once_us", at_once),
          Summary("futex_timeout_over_us", timeout_over), Summary("spin_over_us", spin_over)};
}

}  // namespace zerofarm::bench
