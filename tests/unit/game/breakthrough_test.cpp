// Breakthrough (src/game/breakthrough.cpp) against OpenSpiel's playthrough
// (breakthrough/breakthrough.txt): boards, legal actions, action text and the
// result. The conformance suite (conformance_test.cpp) checks the rest.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "openspiel_trace.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

// The board lines of ToString (without our status line).
std::string BoardPart(const State& state) {
  const std::string text = state.ToString();
  return text.substr(0, text.rfind('\n', text.size() - 2) + 1);
}

TEST_CASE("breakthrough replays OpenSpiel's playthrough", "[breakthrough]") {
  const auto game = MakeGame("breakthrough");
  const auto trace = reference::ReadOpenSpielTrace(testing::ReferenceFile("breakthrough/breakthrough.txt"));
  const reference::Replayed r = reference::ReplayTrace(
      *game, trace,
      [&](const reference::TraceState& s, const State& state) {
        CHECK(BoardPart(state) == reference::JoinLines(s.board));
        const std::string status = state.CurrentPlayer() == 0 ? "black" : "white";
        const std::string text = reference::JoinLines(s.board) + status + " to move, ply " +
                                 std::to_string(state.MoveNumber()) + "\n";
        CHECK(game->ParseBoard(text)->Equals(state));
      },
      [&](const reference::TraceState& s, int action) {
        CHECK(game->ActionToString(action) == s.applied_text);
        CHECK(game->ParseAction(s.applied_text) == action);
      });
  CHECK(r.actions.size() == 38);
  CHECK(r.full_states == 9);  // boards, legal actions and returns: states 0-7 and 38
  reference::CheckFinalReturns(trace, *r.state, {-1, 1});
  CHECK(r.state->Winner() == 1);
}

TEST_CASE("breakthrough rules: captures only diagonally, wins by reaching the far row or capturing all",
          "[breakthrough]") {
  const auto game = MakeGame("breakthrough");
  // Black on d5 faces White on d4 (blocked straight ahead) and e4 (a capture).
  const std::string board =
      "8........\n7........\n6........\n5...b....\n4...ww...\n3........\n2........\n1........\n abcdefgh\n";
  auto state = game->ParseBoard(board + "black to move, ply 10\n");
  std::vector<int> legal;
  state->LegalActions(&legal);
  std::vector<std::string> text;
  for (int a : legal) text.push_back(game->ActionToString(a));
  CHECK(text == std::vector<std::string>{"d5c4", "d5e4*"});
  CHECK(game->ParseAction("d5d4") >= 0);
  CHECK_FALSE(state->IsLegal(game->ParseAction("d5d4")));
  CHECK_FALSE(state->IsLegal(game->ParseAction("d5e4")));  // the capture bit must be set
  state->Apply(game->ParseAction("d5e4*"));
  CHECK_FALSE(state->IsTerminal());  // White still has d4
  state->Apply(game->ParseAction("d4d5"));
  state->Apply(game->ParseAction("e4e3"));
  CHECK_FALSE(state->IsTerminal());
  state->Apply(game->ParseAction("d5d6"));
  state->Apply(game->ParseAction("e3e2"));
  state->Apply(game->ParseAction("d6d7"));
  state->Apply(game->ParseAction("e2e1"));  // Black reaches rank 1
  REQUIRE(state->IsTerminal());
  CHECK(state->Winner() == 0);
  // Capturing the last enemy piece wins too.
  auto last = game->ParseBoard(
      "8........\n7........\n6........\n5...b....\n4....w...\n3........\n2........\n1........\n abcdefgh\n"
      "black to move, ply 4\n");
  last->Apply(game->ParseAction("d5e4*"));
  REQUIRE(last->IsTerminal());
  CHECK(last->Winner() == 0);
}

TEST_CASE("breakthrough text rejects bad boards and moves in one line", "[breakthrough]") {
  const auto game = MakeGame("breakthrough");
  const std::string good = game->NewInitialState()->ToString();
  CHECK(game->ParseBoard(good)->Equals(*game->NewInitialState()));
  CHECK_THROWS_WITH(game->ParseBoard("8bbbbbbbb\n"), Catch::Contains("expected 10 lines"));
  std::string bad = good;
  bad[3] = 'x';
  CHECK_THROWS_WITH(game->ParseBoard(bad), Catch::Contains("bad character 'x'"));
  CHECK_THROWS_WITH(game->ParseBoard(good.substr(0, good.rfind("black")) + "black to move, ply 3\n"),
                    Catch::Contains("black moves at even plies"));
  CHECK(game->ParseAction("a8a9") == -1);
  CHECK(game->ParseAction("i2i3") == -1);
  CHECK(game->ParseAction("a7a5") == -1);                  // two rows: no such action
  CHECK(game->ParseAction(game->ActionToString(0)) == 0);  // "#0": a8 towards the left edge
  CHECK(game->ActionToString(0) == "#0");
}

}  // namespace
}  // namespace zerofarm::game
