#include "zerofarm/shm/futex.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "zerofarm/shm/doorbell.h"

namespace zerofarm::shm {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST_CASE("FutexWait returns at once when the word differs", "[shm]") {
  std::atomic<uint32_t> word{7};
  const auto t0 = Clock::now();
  CHECK(FutexWait(&word, 6, 5'000'000'000ULL));
  CHECK(SecondsSince(t0) < 1.0);
}

TEST_CASE("FutexWait times out after roughly the timeout", "[shm]") {
  std::atomic<uint32_t> word{0};
  const uint64_t timeout_ns = 20'000'000;  // 20 ms
  const auto t0 = Clock::now();
  const bool woken = FutexWait(&word, 0, timeout_ns);
  const double took = SecondsSince(t0);
  // A signal (EINTR) would also return true; none is expected in this test.
  CHECK_FALSE(woken);
  CHECK(took >= 0.020);
  CHECK(took < 0.200);
  CHECK_FALSE(FutexWait(&word, 0, 0));  // zero timeout: no sleep at all
}

TEST_CASE("FutexWakeAll wakes a sleeping thread", "[shm]") {
  std::atomic<uint32_t> word{0};
  std::atomic<bool> returned{false};
  double waited = 0;
  std::thread sleeper([&] {
    const auto t0 = Clock::now();
    // Loop: a spurious wake-up must not end the test early.
    while (word.load(std::memory_order_acquire) == 0 && SecondsSince(t0) < 10.0)
      FutexWait(&word, 0, 5'000'000'000ULL);
    waited = SecondsSince(t0);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  word.store(1, std::memory_order_release);
  FutexWakeAll(&word);
  sleeper.join();
  CHECK(returned);
  CHECK(waited < 5.0);
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
  CHECK(bell.Sleep(ticket, 5'000'000'000ULL));  // EAGAIN: returns at once
  CHECK(SecondsSince(t0) < 1.0);
  CHECK(words.sleeping.load() == 0);

  SECTION("SleepUnless does not sleep when there is work") {
    const auto t1 = Clock::now();
    CHECK(bell.SleepUnless([] { return true; }, 5'000'000'000ULL));
    CHECK(SecondsSince(t1) < 1.0);
    CHECK(words.sleeping.load() == 0);
  }
  SECTION("SleepUnless times out when nothing rings") {
    CHECK_FALSE(bell.SleepUnless([] { return false; }, 2'000'000));
    CHECK(words.sleeping.load() == 0);
  }
}

}  // namespace
}  // namespace zerofarm::shm
