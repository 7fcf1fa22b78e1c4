// The adaptive wait's logic on exact inputs: no clock, no processes.
#include "zerofarm/proc/batch_policy.h"

#include <catch2/catch.hpp>

namespace zerofarm::proc {
namespace {

TEST_CASE("AdaptiveBatchPolicy: uncalibrated, it waits (bounded by the caller's cap)", "[proc]") {
  AdaptiveBatchPolicy p;
  CHECK_FALSE(p.Calibrated());
  CHECK(p.WorthWaiting(1));
  CHECK(p.WorthWaiting(1000));
  CHECK(p.ArrivalTimeoutNs(20'000) == 20'000);
}

TEST_CASE("AdaptiveBatchPolicy: fits fixed and per-leaf cost from batches of several sizes", "[proc]") {
  AdaptiveBatchPolicy p(0.5);
  // t = 1000 us + 20 us * b, exactly.
  for (int round = 0; round < 3; ++round)
    for (uint64_t b : {1, 8, 32, 64}) p.ObserveBatch(b, 1'000'000 + 20'000 * b);
  CHECK(p.FixedNs() == Approx(1'000'000).epsilon(1e-6));
  CHECK(p.PerLeafNs() == Approx(20'000).epsilon(1e-6));
}

TEST_CASE("AdaptiveBatchPolicy: one batch size: half the time counts as fixed", "[proc]") {
  AdaptiveBatchPolicy p;
  for (int i = 0; i < 5; ++i) p.ObserveBatch(16, 1'600'000);
  CHECK(p.FixedNs() == Approx(800'000));
  CHECK(p.PerLeafNs() == Approx(50'000));
}

TEST_CASE("AdaptiveBatchPolicy: waits exactly while interarrival * batch < fixed cost", "[proc]") {
  AdaptiveBatchPolicy p(0.5);  // exact linear samples fit exactly at any alpha
  p.ObserveBatch(1, 1'010'000);
  p.ObserveBatch(101, 2'010'000);  // fixed 1 ms, 10 us per leaf
  REQUIRE(p.FixedNs() == Approx(1'000'000));
  p.ObserveArrival(4, 40'000);  // one leaf every 10 us
  REQUIRE(p.Calibrated());
  CHECK(p.InterarrivalNs() == Approx(10'000));
  CHECK(p.WorthWaiting(1));
  CHECK(p.WorthWaiting(99));
  CHECK_FALSE(p.WorthWaiting(100));  // 10 us x 100 = the whole fixed cost
  CHECK_FALSE(p.WorthWaiting(500));
  CHECK(p.ArrivalTimeoutNs(20'000) == 40'000);  // four expected gaps

  // Leaves slow down to one per 5 ms (average now ~2.5 ms): not worth waiting
  // even for a second one.
  p.ObserveArrival(1, 5'000'000);
  CHECK_FALSE(p.WorthWaiting(1));
}

TEST_CASE("AdaptiveBatchPolicy: the averages move by alpha and ignore empty samples", "[proc]") {
  AdaptiveBatchPolicy p(0.25);
  p.ObserveArrival(1, 1000);
  CHECK(p.InterarrivalNs() == Approx(1000));
  p.ObserveArrival(0, 1'000'000);  // nothing arrived: no sample
  CHECK(p.InterarrivalNs() == Approx(1000));
  p.ObserveArrival(2, 10'000);  // 5000 per leaf
  CHECK(p.InterarrivalNs() == Approx(1000 + 0.25 * 4000));
  p.ObserveBatch(0, 123);  // an empty batch is no sample either
  CHECK_FALSE(p.Calibrated());
}

}  // namespace
}  // namespace zerofarm::proc
