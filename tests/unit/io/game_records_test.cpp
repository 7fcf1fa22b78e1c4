// SGF records of shard games (io/game_records.h).
#include "zerofarm/io/game_records.h"

#include <catch2/catch.hpp>

#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;

namespace {

io::ShardGame Game(std::vector<int16_t> moves, int result, int resigned = -1) {
  io::ShardGame g;
  g.game_id = 0x0102030405060708ULL;
  g.result = result;
  g.resigned = resigned;
  g.length = static_cast<int32_t>(moves.size());
  g.position_count = g.length;
  g.moves = std::move(moves);
  return g;
}

io::PositionRows Rows(const io::ShardGame& g) {
  io::PositionRows rows;
  rows.count = static_cast<uint64_t>(g.length);
  for (int i = 0; i < g.length; ++i) {
    rows.ply.push_back(static_cast<int16_t>(i));
    rows.game_id.push_back(g.game_id);
    rows.root_value.push_back(i == 0 ? 0.5f : -0.25f);
    rows.model_version.push_back(3);
    rows.full_search.push_back(i != 1);
  }
  return rows;
}

}  // namespace

TEST_CASE("a go game as SGF has size and komi and a Tromp-Taylor result and a note per move", "[records]") {
  const auto go = game::MakeGame("go");
  const io::ShardGame g = Game({40, 81, 81}, 0);  // e5, pass, pass
  io::ShardMeta meta;
  meta.created = "2026-11-25T12:00:00Z";
  const std::string sgf = io::GameToSgf(*go, meta, g, io::MoveNotes(g, Rows(g)));
  CHECK(sgf.rfind("(;FF[4]", 0) == 0);
  CHECK_THAT(sgf, Catch::Contains("GM[1]") && Catch::Contains("SZ[9]") && Catch::Contains("KM[7.5]"));
  CHECK_THAT(sgf, Catch::Contains("RE[B+73.5]") && Catch::Contains("DT[2026-11-25]"));
  CHECK_THAT(sgf, Catch::Contains("GN[0x0102030405060708]") && Catch::Contains("PB[zerofarm model 3]"));
  CHECK_THAT(sgf, Catch::Contains(";B[ee]C[value +0.500 for B, model 3]"));
  CHECK_THAT(sgf, Catch::Contains(";W[]C[value -0.250 for W, model 3 (fast search)]"));
  CHECK_THAT(sgf, Catch::Contains(";B[]C[value -0.250 for B, model 3])"));
}

TEST_CASE("SGF results for resignation and othello and gomoku and none for connect4", "[records]") {
  const auto go = game::MakeGame("go");
  CHECK(io::SgfResult(*go, Game({40}, 0, 1)) == "B+R");
  const auto othello = game::MakeGame("othello");
  CHECK(io::SgfGameType(*othello) == 2);
  CHECK(io::SgfResult(*othello, Game({19}, 1)) == "W+");
  const std::string sgf = io::GameToSgf(*othello, {}, Game({19}, 1), {});
  CHECK_THAT(sgf, Catch::Contains("GM[2]") && Catch::Contains("SZ[8]") && Catch::Contains(";B[dc])"));
  const auto gomoku = game::MakeGame("gomoku");
  CHECK(io::SgfGameType(*gomoku) == 4);
  CHECK(io::SgfResult(*gomoku, Game({112}, -1)) == "0");
  CHECK_THAT(io::GameToSgf(*gomoku, {}, Game({112}, -1), {}),
             Catch::Contains("SZ[15]") && Catch::Contains(";B[hh]"));
  const auto c4 = game::MakeGame("connect4");
  CHECK(io::SgfGameType(*c4) == 0);
  CHECK_THROWS_AS(io::GameToSgf(*c4, {}, Game({3}, 0), {}), ConfigError);
}
