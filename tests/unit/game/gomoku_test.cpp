// Gomoku rules against the shared reference data (gomoku/): AlphaGomoku's
// rule cases under both rules and the OpenSpiel playthrough, plus random
// games checked against the board reader and a full-board draw.
#include "zerofarm/game/gomoku.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "openspiel_trace.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

constexpr int kSize = GomokuGame::kSize;
constexpr int kCells = GomokuGame::kCells;

using reference::ReadLines;

struct RuleMove {
  std::string text;  // "Xa5"
  bool freestyle_win = false;
  bool standard_win = false;
};

struct RuleCase {
  std::string name;
  std::vector<std::string> rows;  // 15 rows, top first
  std::vector<RuleMove> moves;
};

std::vector<RuleCase> ReadRuleCases() {
  std::vector<RuleCase> cases;
  for (const std::string& line : ReadLines(testing::ReferenceFile("gomoku/gomoku_rule_cases.txt"))) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "case") {
      cases.emplace_back();
      in >> cases.back().name;
    } else if (word == "move") {
      REQUIRE(!cases.empty());
      RuleMove m;
      std::string free_field, standard_field;
      REQUIRE(in >> m.text >> free_field >> standard_field);
      REQUIRE(free_field.rfind("freestyle=", 0) == 0);
      REQUIRE(standard_field.rfind("standard=", 0) == 0);
      m.freestyle_win = free_field.substr(10) == "X_WIN";
      m.standard_win = standard_field.substr(9) == "X_WIN";
      REQUIRE((m.freestyle_win || free_field.substr(10) == "NO_RESULT"));
      cases.back().moves.push_back(m);
    } else {
      REQUIRE(!cases.empty());
      REQUIRE(line.size() == static_cast<size_t>(kSize));
      cases.back().rows.push_back(line);
    }
  }
  return cases;
}

// A reachable board with X to move: the case's X stones, plus as many O
// stones as X stones on isolated points (even row and even column, so no two
// O stones touch and O has no line) away from the moves to be tested.
std::string WithFillerStones(const RuleCase& c, const GomokuGame& game) {
  std::string cells;
  for (const std::string& row : c.rows) cells += row;
  REQUIRE(cells.size() == static_cast<size_t>(kCells));
  REQUIRE(std::count(cells.begin(), cells.end(), 'O') == 0);
  std::vector<int> reserved;
  for (const RuleMove& m : c.moves) reserved.push_back(game.ParseAction(m.text));
  int missing = static_cast<int>(std::count(cells.begin(), cells.end(), 'X'));
  for (int cell = 0; cell < kCells && missing > 0; ++cell) {
    const int r = cell / kSize, col = cell % kSize;
    if (r % 2 || col % 2 || cells[cell] != '.') continue;
    if (std::find(reserved.begin(), reserved.end(), cell) != reserved.end()) continue;
    cells[cell] = 'O';
    --missing;
  }
  REQUIRE(missing == 0);
  std::string board;
  for (int r = 0; r < kSize; ++r) board += cells.substr(r * kSize, kSize) + "\n";
  return board;
}

}  // namespace

TEST_CASE("gomoku rule cases under freestyle and standard rules", "[game][gomoku]") {
  const std::vector<RuleCase> cases = ReadRuleCases();
  REQUIRE(cases.size() == 3);
  int checks = 0, contrasts = 0;
  for (const bool standard : {false, true}) {
    const GomokuGame game(standard);
    for (const RuleCase& c : cases) {
      REQUIRE(c.rows.size() == static_cast<size_t>(kSize));
      const std::string board = WithFillerStones(c, game);
      const auto base = game.ParseBoard(board);
      REQUIRE_FALSE(base->IsTerminal());
      REQUIRE(base->CurrentPlayer() == 0);
      for (const RuleMove& m : c.moves) {
        INFO(game.Name() << " case " << c.name << " move " << m.text << "\n" << board);
        const int action = game.ParseAction(m.text);
        REQUIRE(action >= 0);
        REQUIRE(base->IsLegal(action));
        const bool expected = standard ? m.standard_win : m.freestyle_win;
        auto s = base->Clone();
        s->Apply(action);
        CHECK(s->IsTerminal() == expected);
        CHECK(s->Winner() == (expected ? 0 : -1));
        // The board reader finds the same result from scratch.
        const auto parsed = game.ParseBoard(s->ToString());
        CHECK(parsed->Equals(*s));
        CHECK(parsed->Winner() == s->Winner());
        ++checks;
        if (m.freestyle_win != m.standard_win) ++contrasts;
      }
    }
  }
  CHECK(checks == 2 * 16);
  CHECK(contrasts == 2);  // the overline Xa5, once per rule
}

TEST_CASE("gomoku follows the OpenSpiel playthrough", "[game][gomoku]") {
  // A side line "# B" / "# W" and 15 board lines (b / w) in full states;
  // "# Apply action "r,c"" / "action: N".
  const GomokuGame game;
  const auto trace = reference::ReadOpenSpielTrace(testing::ReferenceFile("gomoku/gomoku.txt"));
  const reference::Replayed r = reference::ReplayTrace(
      game, trace,
      [&](const reference::TraceState& s, const State& state) {
        REQUIRE(s.board.size() == static_cast<size_t>(kSize + 1));
        const std::string drawn = reference::JoinLines(s.board);
        const auto parsed = game.ParseBoard(drawn);
        CHECK(parsed->Equals(state));
        CHECK(parsed->IsTerminal() == state.IsTerminal());
        std::string ours = state.ToString();
        std::replace(ours.begin(), ours.end(), 'X', 'b');
        std::replace(ours.begin(), ours.end(), 'O', 'w');
        CHECK(ours == drawn.substr(2));  // without the side line
      },
      [&](const reference::TraceState& s, int action) {
        CHECK(game.ActionToString(action) == s.applied_text);
        CHECK(game.ParseAction(s.applied_text) == action);
      });
  const std::unique_ptr<State>& state = r.state;
  CHECK(r.full_states >= 5);
  CHECK(r.actions.size() == 115);
  REQUIRE(state->IsTerminal());
  std::vector<int> legal{0};
  state->LegalActions(&legal);
  CHECK(legal.empty());
  reference::CheckFinalReturns(trace, *state, {1, -1});
  CHECK(state->Winner() == 0);
  // Standard rules agree on this game (its five is not an overline).
  const GomokuGame standard(true);
  CHECK(standard.Replay(r.actions)->Winner() == 0);
}

TEST_CASE("gomoku full-board draw", "[game][gomoku]") {
  // Colour (r + c / 2) % 2: runs of at most 2 in every direction, 113 X and
  // 112 O. Play X's cells and O's cells alternately in scan order.
  std::vector<int> x_cells, o_cells;
  for (int cell = 0; cell < kCells; ++cell) {
    const int r = cell / kSize, c = cell % kSize;
    ((r + c / 2) % 2 == 0 ? x_cells : o_cells).push_back(cell);
  }
  REQUIRE(x_cells.size() == 113);
  REQUIRE(o_cells.size() == 112);
  std::vector<int> moves;
  for (size_t i = 0; i < x_cells.size(); ++i) {
    moves.push_back(x_cells[i]);
    if (i < o_cells.size()) moves.push_back(o_cells[i]);
  }
  for (const bool standard : {false, true}) {
    const GomokuGame game(standard);
    auto s = game.NewInitialState();
    for (size_t i = 0; i < moves.size(); ++i) {
      REQUIRE_FALSE(s->IsTerminal());
      s->Apply(moves[i]);
    }
    CHECK(s->IsTerminal());
    CHECK(s->Winner() == -1);
    CHECK(s->MoveNumber() == kCells);
    std::vector<int> legal{0};
    s->LegalActions(&legal);
    CHECK(legal.empty());
    const auto parsed = game.ParseBoard(s->ToString());
    CHECK(parsed->IsTerminal());
    CHECK(parsed->Winner() == -1);
  }
}

TEST_CASE("gomoku random games agree with the board reader", "[game][gomoku]") {
  Rng rng(777);
  std::vector<int> legal;
  std::vector<uint8_t> features(3 * kCells);
  long mismatches = 0, wins = 0;
  std::string first_mismatch;
  for (const bool standard : {false, true}) {
    const GomokuGame game(standard);
    for (int g = 0; g < 150; ++g) {
      auto s = game.NewInitialState();
      auto copy = game.NewInitialState();
      std::vector<int> moves;
      // Play in a 7x7 window so that lines form often.
      while (!s->IsTerminal()) {
        s->LegalActions(&legal);
        std::vector<int> window;
        for (int a : legal)
          if (a / kSize >= 4 && a / kSize < 11 && a % kSize >= 4 && a % kSize < 11) window.push_back(a);
        const int a = window.empty() ? legal[rng.Below(legal.size())] : window[rng.Below(window.size())];
        s->Apply(a);
        moves.push_back(a);
        const auto parsed = game.ParseBoard(s->ToString());
        copy->CopyFrom(*s);
        s->EncodeFeatures(features.data());
        const auto& gs = dynamic_cast<const GomokuState&>(*s);
        bool features_ok = true;
        for (int c = 0; c < kCells; ++c) {
          features_ok = features_ok && features[c] == (gs.At(c) == s->CurrentPlayer()) &&
                        features[kCells + c] == (gs.At(c) == 1 - s->CurrentPlayer()) &&
                        features[2 * kCells + c] == (s->CurrentPlayer() == 0);
        }
        const bool ok = parsed->Equals(*s) && parsed->Hash() == s->Hash() &&
                        parsed->Winner() == s->Winner() && parsed->IsTerminal() == s->IsTerminal() &&
                        copy->Equals(*s) && features_ok && s->MoveNumber() == static_cast<int>(moves.size());
        if (!ok && mismatches++ == 0) first_mismatch = game.Name() + ": " + game.FormatMoves(moves);
      }
      if (s->Winner() >= 0) ++wins;
    }
  }
  INFO(first_mismatch);
  CHECK(mismatches == 0);
  CHECK(wins > 250);
}

TEST_CASE("gomoku text, features and bad input", "[game][gomoku]") {
  const GomokuGame game;
  CHECK(game.Name() == "gomoku");
  CHECK(GomokuGame(true).Name() == "gomoku-standard");
  CHECK(MakeGame("gomoku-standard")->Name() == "gomoku-standard");
  CHECK(dynamic_cast<const GomokuState&>(*MakeGame("gomoku-standard")->NewInitialState()).standard());
  for (int a = 0; a < kCells; ++a) CHECK(game.ParseAction(game.ActionToString(a)) == a);
  CHECK(game.ActionToString(112) == "7,7");
  CHECK(game.ActionToString(204) == "13,9");
  CHECK(game.ParseAction("h7") == 112);
  CHECK(game.ParseAction("Xa5") == 75);
  CHECK(game.ParseAction("Oo10") == 164);
  CHECK(game.ParseAction("O10") == 164);  // column o, row 10
  CHECK(game.ParseAction("a14") == 210);
  for (const char* bad : {"", "7", "15,0", "0,15", "-1,2", "a15", "p3", "7,7,7", "Xa", "x,y"}) {
    INFO(bad);
    CHECK(game.ParseAction(bad) == -1);
  }
  CHECK(game.ParseMoves("7,7 h8  0,0") == std::vector<int>{112, 127, 0});
  CHECK(game.FormatMoves({112, 0}) == "7,7 0,0");
  CHECK_THROWS_WITH(game.ParseMoves("7,7 zz"), Catch::Contains("'zz'"));
  CHECK_THROWS_WITH(game.Replay({112, 112}), Catch::Contains("move 2 (7,7) is illegal"));

  // Features: X at the centre, O to move.
  auto s = game.Replay({112});
  std::vector<uint8_t> f(3 * kCells, 9);
  s->EncodeFeatures(f.data());
  CHECK(f[112] == 0);
  CHECK(f[kCells + 112] == 1);
  CHECK(std::count(f.begin(), f.end(), 1) == 1);
  REQUIRE(game.PlaneNames() == std::vector<std::string>{"own", "opponent", "first_player_to_move"});

  // Boards that cannot arise in play.
  std::string empty;
  for (int r = 0; r < kSize; ++r) empty += std::string(kSize, '.') + "\n";
  CHECK(game.ParseBoard(empty)->Equals(*game.NewInitialState()));
  CHECK(game.ParseBoard("B\n" + empty)->Equals(*game.NewInitialState()));
  CHECK_THROWS_AS(game.ParseBoard("W\n" + empty), Error);
  std::string two_x = empty;
  two_x[0] = two_x[1] = 'X';
  CHECK_THROWS_WITH(game.ParseBoard(two_x), Catch::Contains("X = O or O + 1"));
  std::string o_first = empty;
  o_first[0] = 'O';
  CHECK_THROWS_AS(game.ParseBoard(o_first), Error);
  std::string bad_char = empty;
  bad_char[3] = 'Z';
  CHECK_THROWS_WITH(game.ParseBoard(bad_char), Catch::Contains("'Z'"));
  CHECK_THROWS_AS(game.ParseBoard(empty.substr(16)), Error);  // 14 rows
  // Two separate fives of X: no single move made both.
  std::string two_fives = empty;
  for (int c = 0; c < 5; ++c) {
    two_fives[0 * 16 + c] = 'X';
    two_fives[4 * 16 + c] = 'X';
    two_fives[8 * 16 + 2 * c] = 'O';
    two_fives[12 * 16 + 2 * c] = 'O';
  }
  two_fives[14 * 16 + 14] = 'X';  // 11 X, 10 O
  CHECK_THROWS_WITH(game.ParseBoard(two_fives), Catch::Contains("no single move"));
  // O (to move) has a five: play went on after O won.
  std::string o_five = empty;
  for (int c = 0; c < 5; ++c) {
    o_five[0 * 16 + c] = 'O';
    o_five[4 * 16 + 2 * c] = 'X';
  }
  o_five[10 * 16 + 10] = 'X';  // 6 X, 5 O: X moved last
  CHECK_THROWS_WITH(game.ParseBoard(o_five), Catch::Contains("went on"));
  // A six: a win in freestyle, a legal non-terminal position in standard.
  std::string six = empty;
  for (int c = 0; c < 6; ++c) {
    six[0 * 16 + c] = 'X';
    six[4 * 16 + 2 * c + 1] = 'O';
  }
  six[8 * 16] = 'O';
  six[8 * 16 + 2] = 'X';  // 7 X, 7 O: O moved last, X to move, X has the six
  CHECK_THROWS_AS(game.ParseBoard(six), Error);
  const auto standard_six = GomokuGame(true).ParseBoard(six);
  CHECK_FALSE(standard_six->IsTerminal());
}

}  // namespace zerofarm::game
