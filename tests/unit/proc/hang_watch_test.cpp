// The supervisor's watch of its children's silence (proc/hang_watch.h), with
// exact times: its own pauses do not count, and only their excess is left out.
#include "zerofarm/proc/hang_watch.h"

#include <catch2/catch.hpp>

using namespace zerofarm::proc;

namespace {
constexpr uint64_t kS = 1'000'000'000;  // ns a second
constexpr uint64_t kT0 = 1000 * kS;     // an arbitrary monotonic start
}  // namespace

TEST_CASE("hang watch: a pause of the supervisor's own does not count as silence", "[proc][hang]") {
  HangWatch watch(4.0);  // --hang-timeout 4: threshold 1 s
  REQUIRE(watch.ThresholdNs() == kS);
  Silence child;
  // Passes every 20 ms for 2 s; the child beats once at the start.
  uint64_t now = kT0;
  const uint64_t beat = kT0;
  for (; now <= kT0 + 2 * kS; now += 20'000'000) {
    CHECK(watch.Pass(now) == 0);
    child.WatchedSeconds(beat, now, watch.PausedNs());
  }
  CHECK(child.WatchedSeconds(beat, now - 20'000'000, watch.PausedNs()) == Approx(2.0));
  // The machine freezes for 10 s: the supervisor's next pass is 10 s later.
  now += 10 * kS;
  CHECK(watch.Pass(now) == 10 * kS + 20'000'000);
  CHECK(watch.PausedNs() == 9 * kS + 20'000'000);  // all but the threshold
  // 12 s since its beat, 3 s of them watched: not yet over 4.
  CHECK(child.WatchedSeconds(beat, now, watch.PausedNs()) == Approx(3.0));
  // A child that beats after the pause starts afresh.
  Silence other;
  CHECK(other.WatchedSeconds(now - 5'000'000, now, watch.PausedNs()) == Approx(0.005));
  // The first child stays silent: watched time grows again, pass by pass.
  for (int i = 0; i < 100; ++i) watch.Pass(now += 20'000'000);
  CHECK(child.WatchedSeconds(beat, now, watch.PausedNs()) == Approx(5.0));
}

TEST_CASE("hang watch: a supervisor whose every pass is slow still finds a hung child", "[proc][hang]") {
  HangWatch watch(4.0);
  Silence hung;
  uint64_t now = kT0;
  watch.Pass(now);
  const uint64_t beat = now;
  hung.WatchedSeconds(beat, now, watch.PausedNs());
  // Every pass 3 s after the one before: each is a pause, and counts as its
  // threshold (1 s) of watched time. Over 4 s after the fifth.
  int passes = 0;
  while (hung.WatchedSeconds(beat, now, watch.PausedNs()) <= 4.0 && passes < 100) {
    CHECK(watch.Pass(now += 3 * kS) == 3 * kS);
    ++passes;
  }
  CHECK(passes == 5);
  CHECK(now - beat == 15 * kS);  // 15 s of silence in all
}

TEST_CASE("hang watch: promises, new heartbeats and a disabled watch", "[proc][hang]") {
  HangWatch watch(30.0);  // threshold 7.5 s
  CHECK(watch.ThresholdNs() == 7'500'000'000);
  Silence child;
  uint64_t now = kT0;
  watch.Pass(now);
  // A heartbeat in the future (busy by promise) is no silence.
  CHECK(child.WatchedSeconds(now + 60 * kS, now, watch.PausedNs()) == 0.0);
  // A gap under the threshold is watched time, not a pause.
  CHECK(watch.Pass(now += 7 * kS) == 0);
  CHECK(watch.PausedNs() == 0);
  CHECK(child.WatchedSeconds(kT0, now, watch.PausedNs()) == Approx(7.0));
  // A pause, then a heartbeat seen only after it: none of that pause is taken off the new one.
  watch.Pass(now += 60 * kS);
  CHECK(watch.PausedNs() == 52'500'000'000);
  CHECK(child.WatchedSeconds(now - kS, now, watch.PausedNs()) == Approx(1.0));

  HangWatch off(0.0);  // --hang-timeout 0
  off.Pass(kT0);
  CHECK(off.Pass(kT0 + 600 * kS) == 0);
  CHECK(off.PausedNs() == 0);
}
