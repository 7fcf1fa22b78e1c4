#include "zerofarm/shm/spin_wait.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "hang_bound.h"
#include "shm_test_util.h"
#include "zerofarm/shm/doorbell.h"

// No timed assertion here (hang_bound.h): a wait that must end early is given
// kLongNs and checked to end before kHangSeconds. How long a spin overshoots
// its budget is measured by `zerofarm bench --parts waits`.
namespace zerofarm::shm {
namespace {

using Clock = std::chrono::steady_clock;
using zerofarm::testing::kHangSeconds;
using zerofarm::testing::SecondsSince;

constexpr uint64_t kLongNs =
    zerofarm::testing::kLongWaitNs;  // far beyond any hand-off, and beyond kHangSeconds

TEST_CASE("SpinPolicy: spins while spins win and backs off after losses until a probe wins", "[shm]") {
  SpinPolicy none(0);
  CHECK(none.NextBudgetNs() == 0);  // no budget: never spins

  SpinPolicy p(5'000);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(p.NextBudgetNs() == 5'000);
    p.Record(true);
  }
  CHECK(p.Won() == 10);
  // Losses in a row: the first kLossesBeforeBackoff - 1 keep spinning, then
  // the waits between probes double: 1, 2, 4, .. up to kMaxSkip.
  REQUIRE(p.NextBudgetNs() == 5'000);
  p.Record(false);
  REQUIRE(p.NextBudgetNs() == 5'000);
  p.Record(false);
  uint32_t expect_skip = 1;
  for (int probe = 0; probe < 9; ++probe) {
    for (uint32_t k = 0; k < expect_skip; ++k) REQUIRE(p.NextBudgetNs() == 0);
    REQUIRE(p.NextBudgetNs() == 5'000);  // the probe
    p.Record(false);
    expect_skip = std::min(expect_skip * 2, SpinPolicy::kMaxSkip);
  }
  CHECK(expect_skip == SpinPolicy::kMaxSkip);
  for (uint32_t k = 0; k < SpinPolicy::kMaxSkip; ++k) REQUIRE(p.NextBudgetNs() == 0);
  REQUIRE(p.NextBudgetNs() == 5'000);
  p.Record(true);  // the probe won: spin on every wait again
  CHECK(p.NextBudgetNs() == 5'000);
  CHECK(p.Lost() == 11);
  CHECK(p.Skipped() == 1 + 2 + 4 + 8 + 16 + 32 + 64 + 64 + 64 + 64);
}

TEST_CASE("SpinUntil returns at once on work and gives up after its budget", "[shm]") {
  CHECK(SpinUntil([] { return true; }, 0));
  CHECK_FALSE(SpinUntil([] { return false; }, 0));
  const auto t0 = Clock::now();
  CHECK_FALSE(SpinUntil([] { return false; }, 2'000'000));  // 2 ms
  const double took = SecondsSince(t0);
  CHECK(took >= 0.002);        // a lower bound: it spun its whole budget
  CHECK(took < kHangSeconds);  // bounded: the spin stops
}

TEST_CASE("Doorbell: a waiter that sees the work while it spins costs the waker no futex wake", "[shm]") {
  DoorbellWords words;
  Doorbell bell(&words);
  SpinPolicy spin(kLongNs);  // it spins until the work comes
  std::atomic<uint64_t> counter{0};
  std::atomic<bool> spinning{false};
  bool got = false;
  double took = 0;
  std::thread waiter([&] {
    const auto t0 = Clock::now();
    got = bell.SpinThenSleepUnless(
        [&] {
          spinning.store(true, std::memory_order_relaxed);
          // acquire: pairs with the release store of the counter below.
          return counter.load(std::memory_order_acquire) > 0;
        },
        spin, kLongNs);
    took = SecondsSince(t0);
  });
  while (!spinning.load(std::memory_order_relaxed)) std::this_thread::yield();
  // release: the "work" is published before the ring, as a ring counter is.
  counter.store(1, std::memory_order_release);
  const bool woke_a_sleeper = bell.Ring();
  waiter.join();
  CHECK_FALSE(woke_a_sleeper);    // the waiter never set `sleeping`: no syscall
  CHECK(words.word.load() == 0);  // and the futex word was never bumped
  CHECK(words.sleeping.load() == 0);
  CHECK(got);
  CHECK(took < kHangSeconds);  // ended by the work, not by its timeout
  CHECK(spin.Won() == 1);
  CHECK(spin.Lost() == 0);
}

TEST_CASE("Doorbell: a waiter past its spin budget sleeps in the futex and is woken", "[shm]") {
  DoorbellWords words;
  Doorbell bell(&words);
  SpinPolicy spin(100'000);  // 100 us, then sleep
  std::atomic<uint64_t> counter{0};
  bool got = false;
  double took = 0;
  std::thread waiter([&] {
    const auto t0 = Clock::now();
    // acquire: pairs with the release store of the counter below.
    got =
        bell.SpinThenSleepUnless([&] { return counter.load(std::memory_order_acquire) > 0; }, spin, kLongNs);
    took = SecondsSince(t0);
  });
  // The waiter announces its sleep only after its spin ran out.
  while (words.sleeping.load() == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  counter.store(1, std::memory_order_release);  // release: as a ring counter
  const bool woke_a_sleeper = bell.Ring();
  waiter.join();
  CHECK(woke_a_sleeper);  // a sleeper: the futex word bumped and FUTEX_WAKE issued
  CHECK(words.word.load() == 1);
  CHECK(words.sleeping.load() == 0);
  CHECK(got);  // woken with the work, long before the timeout
  CHECK(took < kHangSeconds);
  CHECK(spin.Lost() == 1);
  CHECK(spin.Won() == 0);
}

TEST_CASE("Leaf ring: a spinning worker is answered without a wake and one past its budget is woken",
          "[shm]") {
  testing::LocalSegment seg([] {
    LayoutParams p;
    p.num_workers = 1;
    p.num_evaluators = 1;
    p.ring_slots = 4;
    p.feature_bytes = 8;
    p.actions = 2;
    return p;
  }());
  LeafRingProducer p(seg.map().Ring(0), Doorbell());
  LeafRingConsumer c(seg.map().Ring(0));
  DoorbellWords& wake = seg.map().Ring(0).worker_wake;
  const bool spin_first = GENERATE(true, false);
  p.SetSpinBudgetNs(spin_first ? kLongNs : 100'000);
  p.Publish(1);
  WaitStatus s = WaitStatus::kTimeout;
  std::thread worker([&] { s = p.WaitForResults(kLongNs); });
  if (spin_first) {
    // Give the worker time to enter its (long) spin; it sets nothing we could watch.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } else {
    while (wake.sleeping.load() == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  REQUIRE(c.Take(1).total == 1);
  c.CompleteAllTaken();  // rings worker_wake
  worker.join();
  INFO("spin first: " << spin_first);
  CHECK(s == WaitStatus::kReady);
  CHECK(wake.word.load() == (spin_first ? 0u : 1u));  // bumped only for a sleeper
  CHECK(seg.map().Ring(0).worker_waits.load() == (spin_first ? 0u : 1u));
  CHECK(p.Spin().Won() == (spin_first ? 1u : 0u));
}

}  // namespace
}  // namespace zerofarm::shm
