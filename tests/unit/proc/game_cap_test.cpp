// The games a worker keeps in play (src/proc/game_cap.h), on a made-up clock.
#include "game_cap.h"

#include <catch2/catch.hpp>

namespace zerofarm::proc {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

// Feeds `cap` `rate` leaves a second for `seconds` seconds from `*now`.
void Run(GameCap& cap, double rate, int seconds, uint64_t* now) {
  cap.Update(*now);
  for (int s = 0; s < seconds; ++s) {
    cap.Answered(static_cast<uint64_t>(rate));
    *now += kSecond;
    cap.Update(*now);
  }
}

TEST_CASE("a slow evaluator keeps a worker's games few enough that one ends within a minute", "[proc]") {
  uint64_t now = kSecond;
  // 1,700 leaves/s (a 6x64 net on 2 cores, two workers), 100 simulations x 21 plies a game.
  GameCap cap(256, true, 2100, 100);
  CHECK(cap.cap() == GameCap::kStartGames);
  Run(cap, 1700, 30, &now);
  CHECK(cap.cap() == 48);  // 1700 x 60 / 2100: its next game ends after about a minute
  CHECK(cap.rate() == Approx(1700));
  CHECK(cap.Settled());
  // Finished games are longer than the guess: the cap never shrinks (no game is dropped for it).
  cap.Finished(40);
  Run(cap, 1700, 5, &now);
  CHECK(cap.cap() == 48);
}

TEST_CASE("a fast evaluator lets a worker reach K, at most doubling a second", "[proc]") {
  uint64_t now = kSecond;
  GameCap cap(256, true, 2100, 100);
  Run(cap, 100'000, 1, &now);
  CHECK(cap.cap() == 32);
  CHECK_FALSE(cap.Settled());
  Run(cap, 100'000, 1, &now);
  CHECK(cap.cap() == 64);
  Run(cap, 100'000, 10, &now);
  CHECK(cap.cap() == 256);  // never above K
}

TEST_CASE("a K given on the command line is used as given", "[proc]") {
  uint64_t now = kSecond;
  GameCap given(256, false, 2100, 100);
  CHECK(given.cap() == 256);
  GameCap small(8, true, 2100, 100);
  CHECK(small.cap() == 8);  // below kStartGames: K from the start
  Run(given, 10, 5, &now);
  CHECK(given.cap() == 256);
}

}  // namespace
}  // namespace zerofarm::proc
