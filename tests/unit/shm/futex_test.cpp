#include "zerofarm/shm/futex.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "hang_bound.h"
#include "zerofarm/shm/doorbell.h"

// No timed assertion here (hang_bound.h): "at once" means "well before a
// timeout of kLongWaitNs", which only a hang or a wait that sleeps its
// timeout out misses. How long a futex wake or timeout takes is measured by
// `zerofarm bench --part waits` (src/bench/bench.cpp).
namespace zerofarm::shm {
namespace {

using Clock = std::chrono::steady_clock;
using zerofarm::testing::kHangSeconds;
using zerofarm::testing::kLongWaitNs;
using zerofarm::testing::SecondsSince;

TEST_CASE("FutexWait returns at once when the word differs", "[shm]") {
  std::atomic<uint32_t> word{7};
  const auto t0 = Clock::now();
  CHECK(FutexWait(&word, 6, kLongWaitNs));
  CHECK(SecondsSince(t0) < kHangSeconds);  // it did not sleep its timeout out
}

TEST_CASE("FutexWait times out, never before its timeout", "[shm]") {
  std::atomic<uint32_t> word{0};
  const uint64_t timeout_ns = 20'000'000;  // 20 ms
  const auto t0 = Clock::now();
  const bool woken = FutexWait(&word, 0, timeout_ns);
  const double took = SecondsSince(t0);
  // A signal (EINTR) would also return true; none is expected in this test.
  CHECK_FALSE(woken);
  CHECK(took >= 0.020);  // a lower bound: no load makes a timeout shorter
  CHECK(took < kHangSeconds);
  CHECK_FALSE(FutexWait(&word, 0, 0));  // zero timeout: no sleep at all
}

TEST_CASE("FutexWakeAll wakes a sleeping thread", "[shm]") {
  std::atomic<uint32_t> word{0};
  std::atomic<bool> returned{false};
  double waited = 0;
  std::thread sleeper([&] {
    const auto t0 = Clock::now();
    // Loop: a spurious wake-up must not end the test early.
    while (word.load(std::memory_order_acquire) == 0 && SecondsSince(t0) < kHangSeconds)
      FutexWait(&word, 0, kLongWaitNs);
    waited = SecondsSince(t0);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  word.store(1, std::memory_order_release);
  FutexWakeAll(&word);
  sleeper.join();
  CHECK(returned);
  CHECK(word.load() == 1);
  CHECK(waited < kHangSeconds);     // woken: its one wait of kLongWaitNs did not run out
  CHECK(FutexWakeAll(&word) == 0);  // nobody sleeps now
}

TEST_CASE("Doorbell rings only a sleeper, and a ring between prepare and sleep is not lost", "[shm]") {
  DoorbellWords words;
  Doorbell bell(&words);
  CHECK_FALSE(Doorbell().Ring());  // no doorbell: nothing to do
  CHECK_FALSE(bell.Ring());        // nobody sleeps
  CHECK(words.word.load() == 0);

  const uint32_t ticket = bell.PrepareToSleep();
  CHECK(words.sleeping.load() == 1);
  CHECK(bell.Ring());  // the waker saw `sleeping` and bumped the word
  const auto t0 = Clock::now();
  CHECK(bell.Sleep(ticket, kLongWaitNs));  // EAGAIN: returns at once
  CHECK(SecondsSince(t0) < kHangSeconds);
  CHECK(words.sleeping.load() == 0);

  SECTION("SleepUnless does not sleep when there is work") {
    const auto t1 = Clock::now();
    CHECK(bell.SleepUnless([] { return true; }, kLongWaitNs));
    CHECK(SecondsSince(t1) < kHangSeconds);
    CHECK(words.sleeping.load() == 0);
  }
  SECTION("SleepUnless times out when nothing rings") {
    CHECK_FALSE(bell.SleepUnless([] { return false; }, 2'000'000));
    CHECK(words.sleeping.load() == 0);
  }
}

}  // namespace
}  // namespace zerofarm::shm
