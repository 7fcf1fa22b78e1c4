// DistinctGames: the share of distinct move sequences, exact while small and
// over a hash sample (adaptive sampling) in bounded memory beyond.
#include "zerofarm/proc/distinct_games.h"

#include <catch2/catch.hpp>
#include <vector>

#include "zerofarm/proc/farm_config.h"

using namespace zerofarm::proc;

TEST_CASE("distinct games: sequences hash by every move, in order", "[proc][distinct]") {
  const std::vector<int16_t> a = {3, 3, 4}, b = {3, 4, 3}, c = {3, 3, 4, 0}, d = {3, 3};
  CHECK(MoveSequenceHash(a) == MoveSequenceHash(std::vector<int16_t>{3, 3, 4}));
  CHECK(MoveSequenceHash(a) != MoveSequenceHash(b));
  CHECK(MoveSequenceHash(a) != MoveSequenceHash(c));
  CHECK(MoveSequenceHash(a) != MoveSequenceHash(d));
  CHECK(MoveSequenceHash({}) != MoveSequenceHash(std::vector<int16_t>{0}));
}

TEST_CASE("distinct games: exact counts while the sequences fit", "[proc][distinct]") {
  DistinctGames d(100);
  for (int16_t i = 0; i < 50; ++i) {
    d.Add(MoveSequenceHash({i}));
    d.Add(MoveSequenceHash({i}));  // each one twice
  }
  d.Add(MoveSequenceHash({7, 7}));
  CHECK(d.Level() == 0);
  CHECK(d.SampledGames() == 101);
  CHECK(d.SampledDistinct() == 51);
}

TEST_CASE("distinct games: beyond the bound, a hash sample keeps the share and the memory bounded",
          "[proc][distinct]") {
  DistinctGames d(1000);
  // 20,000 sequences: 15,000 played once, 5,000 played twice: 25,000 games, 80 % distinct.
  for (int i = 0; i < 20000; ++i) {
    const std::vector<int16_t> moves = {static_cast<int16_t>(i % 7), static_cast<int16_t>(i / 7)};
    d.Add(MoveSequenceHash(moves));
    if (i % 4 == 0) d.Add(MoveSequenceHash(moves));
  }
  CHECK(d.SampledDistinct() <= 1000);
  CHECK(d.Level() >= 4);  // 20,000 sequences in at most 1,000 entries
  const double share = static_cast<double>(d.SampledDistinct()) / d.SampledGames();
  CHECK(share == Approx(0.8).margin(0.05));
  // A sequence is in the sample with all its copies: never more games than twice the entries here.
  CHECK(d.SampledGames() <= 2 * d.SampledDistinct());
}

TEST_CASE("the farm's default search explores: random openings and sampled plies", "[proc][distinct]") {
  const FarmConfig c;
  CHECK(c.search.random_opening_plies == 8);
  CHECK(c.search.temperature_plies == 20);
  CHECK(c.search.final_temperature == Approx(0.3f));
  CHECK(c.search.dirichlet_fraction > 0.0f);
}
