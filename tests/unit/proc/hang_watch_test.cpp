// The supervisor's watch of its children's silence (proc/hang_watch.h), with
// exact times: its own pauses do not count, and only their excess is left out.
#include "zerofarm/proc/hang_watch.h"

#include <catch2/catch.hpp>

using namespace zerofarm::proc;

namespace {
constexpr uint64_t kS = 1'000'000'000;  // ns a second
constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kT0 = 1000 * kS;  // an arbitrary monotonic start
}  // namespace

TEST_CASE("hang watch: a pause of the supervisor's own does not count as silence", "[proc][hang]") {
  HangWatch watch(4.0);  // --hang-timeout 4: threshold 1 s
  REQUIRE(watch.ThresholdNs() == kS);
  // Passes every 20 ms for 2 s; a child beats at the start.
  uint64_t now = kT0;
  for (; now <= kT0 + 2 * kS; now += 20 * kMs) CHECK(watch.Pass(now) == 0);
  now -= 20 * kMs;  // the last pass
  CHECK(watch.WatchedSeconds(kT0, now) == Approx(2.0));
  // A second child beats 10 ms after that pass; then the machine freezes for
  // 10 s, and the supervisor's next pass comes 10.02 s after its last.
  const uint64_t late_beat = now + 10 * kMs;
  now += 10 * kS + 20 * kMs;
  const uint64_t pause_end = now;
  CHECK(watch.Pass(now) == 10 * kS + 20 * kMs);
  // 12 s since the first child's beat, 3 s of it watched: not yet over 4.
  CHECK(watch.UnwatchedSince(kT0) == 9 * kS + 20 * kMs);
  CHECK(watch.WatchedSeconds(kT0, now) == Approx(3.0));
  // The second child's beat came inside the pause: only the part after it
  // counts, less the threshold (the same 1 s watched).
  CHECK(watch.WatchedSeconds(late_beat, now) == Approx(1.0));
  // A beat in the pause's last 5 ms: a part under the threshold, watched whole.
  CHECK(watch.WatchedSeconds(now - 5 * kMs, now) == Approx(0.005));
  // The first child stays silent: watched time grows again, pass by pass.
  for (int i = 0; i < 100; ++i) watch.Pass(now += 20 * kMs);
  CHECK(watch.WatchedSeconds(kT0, now) == Approx(5.0));
  // A beat after the pause's end owes it nothing.
  CHECK(watch.UnwatchedSince(pause_end) == 0);
  CHECK(watch.WatchedSeconds(pause_end + kS, now) == Approx(1.0));
}

TEST_CASE("hang watch: a supervisor whose every pass is slow still finds a hung child", "[proc][hang]") {
  HangWatch watch(4.0);
  uint64_t now = kT0;
  watch.Pass(now);
  const uint64_t beat = now;
  // Every pass 3 s after the one before: each is a pause, and counts as its
  // threshold (1 s) of watched time. Over 4 s after the fifth.
  int passes = 0;
  while (watch.WatchedSeconds(beat, now) <= 4.0 && passes < 100) {
    CHECK(watch.Pass(now += 3 * kS) == 3 * kS);
    ++passes;
  }
  CHECK(passes == 5);
  CHECK(now - beat == 15 * kS);  // 15 s of silence in all
  // Pauses past the ones kept are forgotten: counted as watched, which only finds a hang sooner.
  for (size_t i = 0; i < 2 * HangWatch::kPausesKept; ++i) watch.Pass(now += 3 * kS);
  CHECK(watch.UnwatchedSince(beat) == HangWatch::kPausesKept * 2 * kS);
  CHECK(watch.WatchedSeconds(beat, now) == Approx(399.0 - 128.0));  // 133 passes of 3 s
  CHECK(watch.UnwatchedSince(now - 3 * kS) == 2 * kS);              // the newest pause is kept
}

TEST_CASE("hang watch: promises, short gaps and a disabled watch", "[proc][hang]") {
  HangWatch watch(30.0);  // threshold 7.5 s
  CHECK(watch.ThresholdNs() == 7500 * kMs);
  uint64_t now = kT0;
  watch.Pass(now);
  // A heartbeat in the future (busy by promise) is no silence.
  CHECK(watch.WatchedSeconds(now + 60 * kS, now) == 0.0);
  // A gap under the threshold is watched time, not a pause.
  CHECK(watch.Pass(now += 7 * kS) == 0);
  CHECK(watch.UnwatchedSince(kT0) == 0);
  CHECK(watch.WatchedSeconds(kT0, now) == Approx(7.0));
  // A pause of 60 s: 52.5 s of it unwatched for a beat before it.
  watch.Pass(now += 60 * kS);
  CHECK(watch.UnwatchedSince(kT0) == 52500 * kMs);
  CHECK(watch.WatchedSeconds(kT0, now) == Approx(14.5));

  // Under 4 s the threshold stays 1 s, and a pause counts a quarter of the timeout.
  HangWatch short_timeout(2.0);
  CHECK(short_timeout.ThresholdNs() == kS);
  CHECK(short_timeout.CountedNs() == 500 * kMs);
  short_timeout.Pass(kT0);
  CHECK(short_timeout.Pass(kT0 + 900 * kMs) == 0);  // under the threshold
  CHECK(short_timeout.Pass(kT0 + 10900 * kMs) == 10 * kS);
  CHECK(short_timeout.WatchedSeconds(kT0, kT0 + 10900 * kMs) == Approx(1.4));  // 0.9 + 0.5

  HangWatch off(0.0);  // --hang-timeout 0
  off.Pass(kT0);
  CHECK(off.Pass(kT0 + 600 * kS) == 0);
  CHECK(off.UnwatchedSince(kT0) == 0);
}
