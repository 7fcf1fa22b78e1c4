// Tic-tac-toe rules against the reference counts (tictactoe/tictactoe_counts.csv)
// and the OpenSpiel playthrough (tictactoe/tic_tac_toe.txt).
#include "zerofarm/game/tictactoe.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "openspiel_trace.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

// ---- reference file parsing -------------------------------------------------

using reference::ReadLines;

// Splits one CSV line; double-quoted fields may hold commas.
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') {
      quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += ch;
    }
  }
  return fields;
}

// "91 / 44 / 3" -> "91,44,3"; "1,3,12" -> "1,3,12"; "draw" -> "draw".
std::string NormaliseValue(const std::string& value) {
  std::string out, number;
  bool any_digit = false;
  for (char ch : value + " ") {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      number += ch;
      any_digit = true;
    } else if (!number.empty()) {
      out += (out.empty() ? "" : ",") + number;
      number.clear();
    }
  }
  if (any_digit) return out;
  std::string word;
  for (char ch : value) {
    if (!std::isspace(static_cast<unsigned char>(ch))) word += static_cast<char>(std::tolower(ch));
  }
  return word;
}

template <typename T>
std::string Join(const std::vector<T>& v) {
  std::string s;
  for (const T& x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// ---- enumeration --------------------------------------------------------------

struct Tally {
  long games = 0, x_wins = 0, o_wins = 0, draws = 0;
  std::set<std::pair<uint32_t, uint32_t>> positions;           // (X, O) bitboards
  std::set<std::pair<uint32_t, uint32_t>> terminal_positions;  // subset of positions
};

void Enumerate(const TicTacToeState& state, Tally* t) {
  t->positions.insert({state.Stones(0), state.Stones(1)});
  if (state.IsTerminal()) {
    t->terminal_positions.insert({state.Stones(0), state.Stones(1)});
    ++t->games;
    if (state.Winner() == 0) ++t->x_wins;
    if (state.Winner() == 1) ++t->o_wins;
    if (state.Winner() < 0) ++t->draws;
    return;
  }
  std::vector<int> legal;
  state.LegalActions(&legal);
  for (int a : legal) {
    TicTacToeState child = state;
    child.Apply(a);
    Enumerate(child, t);
  }
}

uint32_t MapBits(uint32_t bits, const std::vector<int>& map) {
  uint32_t out = 0;
  for (int c = 0; c < 9; ++c) {
    if ((bits >> c) & 1u) out |= 1u << map[c];
  }
  return out;
}

// Games "up to rotation and reflection" in the sense of the 26,830 figure:
// at every position, moves that a symmetry of that position maps onto each
// other count once (the symmetric alternatives are pruned at each node).
// (Counting orbits of whole move sequences instead gives 255168 / 8 = 31896.)
long CountGamesUpToSymmetry(const TicTacToeState& state, const std::vector<std::vector<int>>& maps) {
  if (state.IsTerminal()) return 1;
  std::vector<const std::vector<int>*> stabiliser;
  for (const auto& map : maps) {
    if (MapBits(state.Stones(0), map) == state.Stones(0) &&
        MapBits(state.Stones(1), map) == state.Stones(1)) {
      stabiliser.push_back(&map);
    }
  }
  std::vector<int> legal;
  state.LegalActions(&legal);
  long total = 0;
  for (int a : legal) {
    // Count a only if it is the smallest move of its orbit.
    bool smallest = true;
    for (const auto* map : stabiliser) smallest = smallest && (*map)[a] >= a;
    if (!smallest) continue;
    TicTacToeState child = state;
    child.Apply(a);
    total += CountGamesUpToSymmetry(child, maps);
  }
  return total;
}

// Negamax value for the side to move: +1 win, 0 draw, -1 loss.
int Negamax(const TicTacToeState& state) {
  if (state.IsTerminal()) return state.Winner() < 0 ? 0 : (state.Winner() == state.CurrentPlayer() ? 1 : -1);
  std::vector<int> legal;
  state.LegalActions(&legal);
  int best = -2;
  for (int a : legal) {
    TicTacToeState child = state;
    child.Apply(a);
    best = std::max(best, -Negamax(child));
  }
  return best;
}

}  // namespace

TEST_CASE("tictactoe reproduces every figure of tictactoe_counts.csv", "[game][tictactoe]") {
  const TicTacToeGame game;
  std::vector<std::vector<int>> maps;
  for (int s = 0; s < game.SymmetryCount(); ++s) maps.push_back(game.CellMap(s));

  Tally t;
  Enumerate(TicTacToeState(), &t);

  // Canonical positions: the smallest (X, O) pair over the eight symmetries.
  std::set<std::pair<uint32_t, uint32_t>> canonical, canonical_terminal;
  std::vector<long> per_ply(10, 0), terminal_per_ply(10, 0);
  long canon_x = 0, canon_o = 0, canon_draw = 0;
  for (const auto& [x, o] : t.positions) {
    std::pair<uint32_t, uint32_t> best{~0u, ~0u};
    for (const auto& map : maps) best = std::min(best, {MapBits(x, map), MapBits(o, map)});
    if (!canonical.insert(best).second) continue;
    const TicTacToeState s = TicTacToeState::FromStones(best.first, best.second);
    ++per_ply[s.MoveNumber()];
    if (s.IsTerminal()) {
      canonical_terminal.insert(best);
      ++terminal_per_ply[s.MoveNumber()];
      (s.Winner() == 0 ? canon_x : s.Winner() == 1 ? canon_o : canon_draw)++;
    }
  }
  const int value = Negamax(TicTacToeState());

  std::map<std::string, std::string> computed = {
      {"complete games (distinct move sequences ending in a terminal position)", std::to_string(t.games)},
      {"complete games won by X (first player)", std::to_string(t.x_wins)},
      {"complete games won by O (second player)", std::to_string(t.o_wins)},
      {"complete games drawn", std::to_string(t.draws)},
      {"complete games up to rotation/reflection",
       std::to_string(CountGamesUpToSymmetry(TicTacToeState(), maps))},
      {"legal positions reachable in play (incl. empty board; no symmetry reduction)",
       std::to_string(t.positions.size())},
      {"terminal positions (no symmetry reduction)", std::to_string(t.terminal_positions.size())},
      {"legal positions up to rotation/reflection", std::to_string(canonical.size())},
      {"legal positions up to symmetry after n plays (n=0..9)", Join(per_ply)},
      {"terminal positions up to symmetry", std::to_string(canonical_terminal.size())},
      {"terminal positions up to symmetry: won by X / won by O / drawn",
       Join(std::vector<long>{canon_x, canon_o, canon_draw})},
      {"terminal positions up to symmetry after n plays (n=0..9)", Join(terminal_per_ply)},
      {"game-theoretic value of the empty board", value == 0  ? "draw"
                                                  : value > 0 ? "win"
                                                              : "loss"},
  };

  int rows = 0;
  for (const std::string& line : ReadLines(testing::ReferenceFile("tictactoe/tictactoe_counts.csv"))) {
    if (line.empty() || line[0] == '#' || line.rfind("quantity,", 0) == 0) continue;
    const std::vector<std::string> f = SplitCsv(line);
    REQUIRE(f.size() >= 2);
    INFO("quantity: " << f[0]);
    REQUIRE(computed.count(f[0]) == 1);  // every figure in the file is checked
    CHECK(computed[f[0]] == NormaliseValue(f[1]));
    ++rows;
  }
  CHECK(rows == static_cast<int>(computed.size()));
}

TEST_CASE("tictactoe golden boards: wins, draws, round trips", "[game][tictactoe]") {
  const TicTacToeGame game;

  SECTION("X wins on the top row") {
    const auto s = game.ParseBoard(R"(XXX
OO.
...
)");
    CHECK(s->IsTerminal());
    CHECK(s->Winner() == 0);
    CHECK(s->MoveNumber() == 5);
    CHECK(s->Outcome(0) == 1.0f);
    CHECK(s->Outcome(1) == -1.0f);
  }
  SECTION("O wins on the right column") {
    const auto s = game.ParseBoard("XXO\nX.O\n..O\n");
    CHECK(s->IsTerminal());
    CHECK(s->Winner() == 1);
    CHECK(s->CurrentPlayer() == 0);
  }
  SECTION("X wins two lines with one stone") {
    const auto s = game.ParseBoard("XXX\nXOO\nXOO\n");
    CHECK(s->Winner() == 0);
  }
  SECTION("full board draw") {
    const auto s = game.ParseBoard(R"(XOX
XOO
OXX
)");
    CHECK(s->IsTerminal());
    CHECK(s->Winner() == -1);
    CHECK(s->Outcome(0) == 0.0f);
    std::vector<int> legal{1};
    s->LegalActions(&legal);
    CHECK(legal.empty());
  }
  SECTION("open position") {
    const auto s = game.ParseBoard("X..\n.O.\n..X\n");
    CHECK_FALSE(s->IsTerminal());
    CHECK(s->CurrentPlayer() == 1);
    std::vector<int> legal;
    s->LegalActions(&legal);
    CHECK(legal == std::vector<int>{1, 2, 3, 5, 6, 7});
    CHECK_FALSE(s->IsLegal(4));
    CHECK_FALSE(s->IsLegal(9));
    CHECK_FALSE(s->IsLegal(-1));
  }
  SECTION("play, print and read back") {
    const auto s = game.Replay(game.ParseMoves("b2 a3 c1 c3 a1"));
    CHECK(s->ToString() == "O.O\n.X.\nX.X\n");
    CHECK_FALSE(s->IsTerminal());
    const auto back = game.ParseBoard(s->ToString());
    CHECK(back->Equals(*s));
    CHECK(back->Hash() == s->Hash());
    CHECK(back->CurrentPlayer() == 1);
    s->Apply(1);  // O completes the top row
    CHECK(s->ToString() == "OOO\n.X.\nX.X\n");
    CHECK(s->Winner() == 1);
    CHECK(game.ParseBoard(s->ToString())->Equals(*s));
  }
  SECTION("impossible boards are rejected") {
    CHECK_THROWS_AS(game.ParseBoard("XXX\nOOO\n...\n"), Error);   // both have lines
    CHECK_THROWS_AS(game.ParseBoard("XXX\nOOO\nX..\n"), Error);   // play went on
    CHECK_THROWS_AS(game.ParseBoard("XX.\n...\n...\n"), Error);   // counts
    CHECK_THROWS_AS(game.ParseBoard("OO.\nX..\n...\n"), Error);   // O moved first
    CHECK_THROWS_AS(game.ParseBoard("X?.\n...\n...\n"), Error);   // bad character
    CHECK_THROWS_AS(game.ParseBoard("X..\n...\n"), Error);        // rows
    CHECK_THROWS_AS(game.ParseBoard("X...\n...\n...\n"), Error);  // width
  }
}

TEST_CASE("tictactoe action text and move lists", "[game][tictactoe]") {
  const TicTacToeGame game;
  CHECK(game.ActionToString(0) == "a3");  // top left
  CHECK(game.ActionToString(2) == "c3");
  CHECK(game.ActionToString(4) == "b2");
  CHECK(game.ActionToString(6) == "a1");  // bottom left
  CHECK(game.ActionToString(8) == "c1");
  for (int a = 0; a < 9; ++a) CHECK(game.ParseAction(game.ActionToString(a)) == a);
  CHECK(game.ParseAction("d1") == -1);
  CHECK(game.ParseAction("a4") == -1);
  CHECK(game.ParseAction("a") == -1);
  CHECK(game.FormatMoves({4, 0, 8}) == "b2 a3 c1");
  CHECK(game.ParseMoves("  b2   a3 c1 ") == std::vector<int>{4, 0, 8});
  CHECK_THROWS_WITH(game.ParseMoves("b2 zz c1"), Catch::Contains("zz"));
  CHECK_THROWS_WITH(game.Replay({4, 4}), Catch::Contains("move 2 (b2) is illegal"));
  CHECK_THROWS_WITH(game.Replay({0, 3, 1, 4, 2, 5}), Catch::Contains("move 6 (c2) is after the game ended"));
  CHECK_THROWS_AS(game.Replay({9}), Error);
}

TEST_CASE("tictactoe feature planes", "[game][tictactoe]") {
  const TicTacToeGame game;
  REQUIRE(game.PlaneNames() == std::vector<std::string>{"own", "opponent", "first_player_to_move"});
  auto s = game.Replay({4, 0, 8});  // X b2, O a3, X c1: O to move
  std::vector<uint8_t> f(game.Shape().FeatureBytes(), 7);
  s->EncodeFeatures(f.data());
  // O to move: own = {0}, opponent = {4, 8}, plane 2 all zero.
  CHECK(std::vector<uint8_t>(f.begin(), f.begin() + 9) == std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(std::vector<uint8_t>(f.begin() + 9, f.begin() + 18) ==
        std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(std::all_of(f.begin() + 18, f.end(), [](uint8_t v) { return v == 0; }));
  s->Apply(2);  // O c3: X to move
  s->EncodeFeatures(f.data());
  CHECK(std::vector<uint8_t>(f.begin(), f.begin() + 9) == std::vector<uint8_t>{0, 0, 0, 0, 1, 0, 0, 0, 1});
  CHECK(std::vector<uint8_t>(f.begin() + 9, f.begin() + 18) ==
        std::vector<uint8_t>{1, 0, 1, 0, 0, 0, 0, 0, 0});
  CHECK(std::all_of(f.begin() + 18, f.end(), [](uint8_t v) { return v == 1; }));
}

TEST_CASE("tictactoe follows the OpenSpiel playthrough", "[game][tictactoe]") {
  // Board lines "# ..." (top row first, x / o) in full states only.
  const TicTacToeGame game;
  const auto trace = reference::ReadOpenSpielTrace(testing::ReferenceFile("tictactoe/tic_tac_toe.txt"));
  const reference::Replayed r = reference::ReplayTrace(
      game, trace,
      [&](const reference::TraceState& s, const State& state) {
        reference::CheckLowerCaseBoard(game, s, state);
      },
      [](const reference::TraceState&, int) {});
  CHECK(r.full_states >= 4);
  CHECK(r.actions == std::vector<int>{8, 3, 6, 0, 2, 1, 5});
  reference::CheckFinalReturns(trace, *r.state, {1, -1});
}

}  // namespace zerofarm::game
