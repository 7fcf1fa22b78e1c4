// The match's openings and zerofarm's move choice (learn/match.h), without an
// engine: the engine side is tested against real programs in
// tests/integration/match_test.cpp.
#include "zerofarm/learn/match.h"

#include <catch2/catch.hpp>

#include "zerofarm/game/go.h"
#include "zerofarm/game/othello.h"

using namespace zerofarm;

TEST_CASE("match openings: a fixed set parses and checks legality, and random ones never pass", "[match]") {
  const game::OthelloGame othello;
  const auto set = learn::ParseOpenings(othello, "# comment\nd3 c5\n\n F5 D6  # trailing\n", "set.txt");
  REQUIRE(set.size() == 2);
  CHECK(othello.FormatMoves(set[0]) == "d3 c5");
  CHECK(othello.FormatMoves(set[1]) == "f5 d6");
  CHECK_THROWS_WITH(learn::ParseOpenings(othello, "d3\nd3 d3\n", "set.txt"),
                    Catch::Contains("set.txt:2: 'd3' is not a legal othello move there"));
  CHECK_THROWS_WITH(learn::ParseOpenings(othello, "a1\n", "x"), Catch::Contains("x:1: 'a1'"));
  CHECK_THROWS_WITH(learn::ParseOpenings(othello, "# none\n", "x"), Catch::Contains("x: no opening"));
  const game::GoGame go(9, 7.0);
  for (int k = 0; k < 20; ++k) {
    const auto opening = learn::RandomOpening(go, 6, 3, k);
    CHECK(opening.size() == 6);
    for (int a : opening) CHECK(a != go.PassAction());
    CHECK(learn::RandomOpening(go, 6, 3, k) == opening);  // from the seed and k alone
  }
  CHECK(learn::RandomOpening(go, 6, 3, 0) != learn::RandomOpening(go, 6, 3, 1));
}

TEST_CASE("match: zerofarm's move is legal, and a forced Othello pass is taken", "[match]") {
  const game::OthelloGame othello;
  auto net = eval::MakeRandomEvaluator(eval::NetConfig{"othello", 3, 8, 8, 65, 1, 1, 1}, 2);
  mcts::SearchConfig search;
  search.simulations = 8;
  auto state = othello.NewInitialState();
  for (int ply = 0; ply < 200 && !state->IsTerminal(); ++ply) {  // 60 moves and any passes
    const int a = learn::ChooseMatchMove(othello, *state, *net, search, 1, ply);
    REQUIRE(state->IsLegal(a));
    state->Apply(a);
  }
  CHECK(state->IsTerminal());
  // White a1, Black b1, Black to move: Black's only move is a pass.
  const game::OthelloState stuck = game::OthelloState::FromDiscs(1ULL << 1, 1ULL << 0, 0);
  REQUIRE(stuck.IsLegal(game::OthelloGame::kPass));
  CHECK(learn::ChooseMatchMove(othello, stuck, *net, search, 1, 0) == game::OthelloGame::kPass);
}
