// The GTP engine (proc/gtp.h) on the random evaluator: the protocol's
// framing, errors for illegal moves, and refereed engine-vs-engine games that
// end by two passes with every move legal.
#include "zerofarm/learn/gtp.h"

#include <catch2/catch.hpp>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/go.h"

using namespace zerofarm;

namespace {

std::unique_ptr<eval::Evaluator> GoNet(int size, uint64_t seed) {
  return eval::MakeRandomEvaluator(eval::NetConfig{"go", 3, size, size, size * size + 1, 1, 1, 1}, seed);
}

mcts::SearchConfig FewSimulations() {
  mcts::SearchConfig s;
  s.simulations = 4;
  return s;
}

}  // namespace

TEST_CASE("gtp engine answers ok or error with the command id", "[gtp]") {
  auto net = GoNet(9, 1);
  learn::GtpEngine engine(*net, 9, 7.5, FewSimulations(), 1);
  bool quit = false;
  CHECK(engine.Handle("1 protocol_version", &quit) == "=1 2\n\n");
  CHECK(engine.Handle("name", &quit) == "= zerofarm\n\n");
  CHECK(engine.Handle("  # a comment only", &quit).empty());
  CHECK(engine.Handle("7 known_command genmove", &quit) == "=7 true\n\n");
  CHECK(engine.Handle("known_command fly", &quit) == "= false\n\n");
  CHECK_THAT(engine.Handle("list_commands", &quit), Catch::Contains("\nfinal_score\n"));
  CHECK(engine.Handle("3 fly", &quit) == "?3 unknown command\n\n");
  CHECK(engine.Handle("boardsize 19", &quit).rfind("? unacceptable size", 0) == 0);
  CHECK(engine.Handle("boardsize 9", &quit) == "= \n\n");
  CHECK(engine.Handle("komi 6.5", &quit) == "= \n\n");
  CHECK(engine.state().Score() == -6.5);
  CHECK(quit == false);
  CHECK(engine.Handle("quit", &quit) == "= \n\n");
  CHECK(quit);
}

TEST_CASE("gtp engine refuses illegal moves and plays legal ones", "[gtp]") {
  auto net = GoNet(9, 2);
  learn::GtpEngine engine(*net, 9, 7.5, FewSimulations(), 2);
  bool quit = false;
  CHECK(engine.Handle("play b E5", &quit) == "= \n\n");
  CHECK(engine.Handle("play b e6", &quit) == "? illegal move (not b's turn)\n\n");
  CHECK(engine.Handle("play w e5", &quit) == "? illegal move\n\n");
  CHECK(engine.Handle("play w z9", &quit) == "? invalid coordinate\n\n");
  CHECK(engine.Handle("play x e6", &quit) == "? invalid color\n\n");
  CHECK_THAT(engine.Handle("showboard", &quit), Catch::Contains("....X....") && Catch::Contains("O to move"));
  const std::string move = engine.Command("genmove w");
  const game::GoGame go(9, 7.5);
  REQUIRE(go.ParseAction(move) >= 0);
  CHECK(engine.state().MoveNumber() == 2);
  CHECK(engine.Command("undo").empty());
  CHECK(engine.state().MoveNumber() == 1);
  CHECK(engine.Command("final_score") == "B+73.5");               // one black stone owns the board: 81 - 7.5
  CHECK_THROWS_AS(engine.Command("genmove b"), learn::GtpError);  // White is to move
}

TEST_CASE("gtp engine passes after a pass when it is ahead", "[gtp]") {
  auto net = GoNet(9, 3);
  learn::GtpEngine engine(*net, 9, 7.5, FewSimulations(), 3);
  engine.Command("play b e5");
  engine.Command("play w pass");
  CHECK(engine.Command("genmove b") == "pass");  // B+73.5 on the board: two passes end the game
  CHECK(engine.state().IsTerminal());
  CHECK(engine.Command("final_score") == "B+73.5");
}

TEST_CASE("refereed 7x7 games between two engines end by two passes with every move legal", "[gtp]") {
  auto net_a = GoNet(7, 4), net_b = GoNet(7, 5);
  learn::GtpEngine a(*net_a, 7, 4.5, FewSimulations(), 4), b(*net_b, 7, 4.5, FewSimulations(), 5);
  for (int g = 0; g < 2; ++g) {
    const learn::GtpGameResult r =
        g == 0 ? learn::PlayGtpGame(a, b, 7, 4.5, {24}, 500) : learn::PlayGtpGame(b, a, 7, 4.5, {}, 500);
    INFO("game " << g << ": " << r.Result() << " " << r.reason << " " << r.detail);
    CHECK(r.reason == "score");
    game::GoState s = learn::NewGtpGoState(7, 4.5);
    for (int m : r.moves) {
      REQUIRE(s.IsLegal(m));
      s.Apply(m);
    }
    REQUIRE(s.IsTerminal());
    CHECK(s.Score() == r.score);
    CHECK(r.black_score == (r.score > 0 ? "B+" : "W+") + r.Result().substr(2));
    if (g == 0) CHECK(r.moves.front() == 24);  // the opening was played
  }
}
