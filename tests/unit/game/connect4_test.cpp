// Connect Four rules against the shared reference data (connect4/): positions
// per ply, Pons's benchmark lines, the OpenSpiel playthrough, plus a naive
// grid implementation for random games.
#include "zerofarm/game/connect4.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "openspiel_trace.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/game/connect4_solver.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

using reference::ReadLines;

const Connect4State& AsC4(const State& s) { return dynamic_cast<const Connect4State&>(s); }

// ---- positions per ply ------------------------------------------------------

struct PlyRow {
  long long positions = -1, terminal = -1;
  long long won = -1, drawn = -1, lost = -1;  // for the first player
};

// results_solve_w7_h6.csv (a second source): won/drawn/lost for the side to
// move at each ply, turned to the first player's view (swapped at odd plies).
std::map<int, PlyRow> ReadSolveTable() {
  std::map<int, PlyRow> table;
  for (const std::string& line : ReadLines(testing::ReferenceFile("connect4/results_solve_w7_h6.csv"))) {
    if (line.empty() || line.rfind("width", 0) == 0) continue;
    std::vector<long long> f;
    std::istringstream in(line);
    std::string field;
    for (int i = 0; i < 6 && std::getline(in, field, ','); ++i) f.push_back(std::stoll(field));
    REQUIRE(f.size() == 6);  // width, height, ply, win, draw, loss (, time)
    const int ply = static_cast<int>(f[2]);
    const bool first_to_move = ply % 2 == 0;
    PlyRow row;
    row.won = first_to_move ? f[3] : f[5];
    row.drawn = f[4];
    row.lost = first_to_move ? f[5] : f[3];
    row.positions = f[3] + f[4] + f[5];
    table[ply] = row;
  }
  REQUIRE(table.size() == 43);
  return table;
}

std::map<int, PlyRow> ReadPlyTable() {
  std::map<int, PlyRow> table;
  for (const std::string& line :
       ReadLines(testing::ReferenceFile("connect4/connect4_7x6_positions_per_ply.csv"))) {
    if (line.empty() || line[0] == '#' || line.rfind("ply,", 0) == 0) continue;
    std::vector<long long> f;
    std::istringstream in(line);
    std::string field;
    while (std::getline(in, field, ',')) f.push_back(std::stoll(field));
    REQUIRE(f.size() == 6);  // ply,positions,won,drawn,lost,terminal
    table[static_cast<int>(f[0])] = PlyRow{f[1], f[5], f[2], f[3], f[4]};
  }
  REQUIRE(table.size() == 43);
  return table;
}

// Breadth-first over plies. A level is the sorted, duplicate-free set of exact
// position keys (Connect4State::Key, 49 bits), bit 63 flagging a position that
// Apply made terminal; won positions are counted but not extended.
// Solves `sample` positions drawn uniformly from `level` (the distinct
// positions of one ply) and checks that their won/drawn/lost split for the
// first player matches the table's within 4.5 standard deviations: a wrong
// outcome convention (a swapped sign, a draw miscounted) moves it far more.
void CheckOutcomeSample(const std::vector<uint64_t>& level, int ply, const PlyRow& row, int sample,
                        uint64_t terminal_flag) {
  Connect4Solver solver(20);
  Rng rng(ply);
  long long won = 0, drawn = 0, lost = 0;
  for (int i = 0; i < sample; ++i) {
    const uint64_t key = level[rng.Below(level.size())] & ~terminal_flag;
    const Connect4State s = Connect4State::FromKey(key);
    // Side to move's result; a terminal position was won by the previous mover.
    const int v = s.IsTerminal() ? (s.Winner() < 0 ? 0 : -1) : solver.SolveWeak(s);
    const int first = ply % 2 == 0 ? v : -v;
    won += first > 0;
    drawn += first == 0;
    lost += first < 0;
  }
  const double total = static_cast<double>(row.won + row.drawn + row.lost);
  for (const auto& [name, got, want] : {std::tuple<const char*, long long, long long>{"won", won, row.won},
                                        {"drawn", drawn, row.drawn},
                                        {"lost", lost, row.lost}}) {
    const double p = static_cast<double>(want) / total;
    const double mean = p * sample, sd = std::sqrt(sample * p * (1 - p));
    INFO("ply " << ply << ", " << name << ": " << got << " of " << sample << " sampled, table share " << p);
    CHECK(std::abs(static_cast<double>(got) - mean) <= 4.5 * sd + 1.0);
  }
}

void CheckPositionsPerPly(int max_ply, int outcome_sample) {
  constexpr uint64_t kTerminalFlag = 1ULL << 63;
  const std::map<int, PlyRow> table = ReadPlyTable();
  const std::map<int, PlyRow> solved = ReadSolveTable();
  std::vector<uint64_t> level = {Connect4State().Key()};
  std::vector<int> legal;
  for (int ply = 0; ply <= max_ply; ++ply) {
    long long terminal = 0, mismatches = 0;
    std::vector<uint64_t> next, hashes;
    hashes.reserve(level.size());
    if (ply < max_ply) next.reserve(level.size() * 7);
    for (const uint64_t flagged_key : level) {
      const Connect4State s = Connect4State::FromKey(flagged_key & ~kTerminalFlag);
      hashes.push_back(s.Hash());
      // FromKey recomputes the outcome from scratch; Apply found it incrementally.
      if (s.IsTerminal() != ((flagged_key & kTerminalFlag) != 0) || s.MoveNumber() != ply) {
        ++mismatches;
      }
      if (s.IsTerminal()) {
        ++terminal;
        continue;
      }
      if (ply == max_ply) continue;
      s.LegalActions(&legal);
      for (int a : legal) {
        Connect4State child = s;
        child.Apply(a);
        next.push_back(child.Key() | (child.IsTerminal() ? kTerminalFlag : 0));
      }
    }
    std::sort(hashes.begin(), hashes.end());
    INFO("ply " << ply);
    CHECK(static_cast<long long>(level.size()) == table.at(ply).positions);
    CHECK(static_cast<long long>(level.size()) == solved.at(ply).positions);
    if (ply == max_ply && outcome_sample > 0)
      CheckOutcomeSample(level, ply, solved.at(ply), outcome_sample, kTerminalFlag);
    CHECK(terminal == table.at(ply).terminal);
    CHECK(mismatches == 0);
    CHECK(std::unique(hashes.begin(), hashes.end()) == hashes.end());  // no Hash collisions
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    level.swap(next);
  }
}

// ---- a naive reference implementation ---------------------------------------

struct Grid {
  char cell[6][7];  // row 0 = top; 'X', 'O' or '.'
  Grid() { std::fill(&cell[0][0], &cell[0][0] + 42, '.'); }
  bool Full(int col) const { return cell[0][col] != '.'; }
  void Drop(int col, char stone) {
    int r = 5;
    while (cell[r][col] != '.') --r;
    cell[r][col] = stone;
  }
  bool HasFour(char stone) const {
    const int dirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};
    for (int r = 0; r < 6; ++r) {
      for (int c = 0; c < 7; ++c) {
        for (const auto& d : dirs) {
          int k = 0;
          while (k < 4) {
            const int rr = r + d[0] * k, cc = c + d[1] * k;
            if (rr < 0 || rr >= 6 || cc < 0 || cc >= 7 || cell[rr][cc] != stone) break;
            ++k;
          }
          if (k == 4) return true;
        }
      }
    }
    return false;
  }
};

constexpr char kDrawGame[] = "216537736677261744376553645442354325211121";

}  // namespace

TEST_CASE("the two Connect Four reference tables agree on the outcome counts of every ply",
          "[game][connect4]") {
  const std::map<int, PlyRow> table = ReadPlyTable(), solved = ReadSolveTable();
  for (int ply = 0; ply <= 42; ++ply) {
    INFO("ply " << ply);
    CHECK(solved.at(ply).won == table.at(ply).won);
    CHECK(solved.at(ply).drawn == table.at(ply).drawn);
    CHECK(solved.at(ply).lost == table.at(ply).lost);
    CHECK(solved.at(ply).positions == table.at(ply).positions);
  }
}

TEST_CASE("connect4 positions per ply match the reference table (plies 0..9)", "[game][connect4]") {
  CheckPositionsPerPly(9, 0);
}

TEST_CASE(
    "connect4 positions per ply and a sample of their outcomes match the reference tables (plies 0..11)",
    "[game][connect4][slow]") {
  CheckPositionsPerPly(11, 400);
}

TEST_CASE("connect4 replays every line of Pons's benchmark files", "[game][connect4]") {
  const Connect4Game game;
  for (const char* name : {"Test_L3_R1", "Test_L2_R1", "Test_L1_R1", "Test_L1_R3"}) {
    int lines = 0;
    for (const std::string& line : ReadLines(testing::ReferenceFile(std::string("connect4/") + name))) {
      if (line.empty()) continue;
      INFO(name << ": " << line);
      std::istringstream in(line);
      std::string moves_text;
      int score = 0;
      REQUIRE(in >> moves_text >> score);
      const std::vector<int> moves = game.ParseMoves(moves_text);
      const int n = static_cast<int>(moves.size());
      REQUIRE(n == static_cast<int>(moves_text.size()));
      std::unique_ptr<State> s;
      REQUIRE_NOTHROW(s = game.Replay(moves));
      CHECK_FALSE(s->IsTerminal());
      CHECK(s->MoveNumber() == n);
      CHECK(s->CurrentPlayer() == n % 2);
      const auto back = game.ParseBoard(s->ToString());
      CHECK(back->Equals(*s));
      CHECK(back->Hash() == s->Hash());
      CHECK_FALSE(back->IsTerminal());
      CHECK(game.FormatMoves(moves) == moves_text);
      // Pons's bounds on the side to move's score after n stones.
      CHECK(score >= -(42 - n) / 2);
      CHECK(score <= (43 - n) / 2);
      ++lines;
    }
    CHECK(lines == 1000);
  }
}

TEST_CASE("connect4 follows the OpenSpiel playthrough", "[game][connect4]") {
  // Board lines "# ......." (top row first, x / o) in full states only.
  const Connect4Game game;
  const auto trace = reference::ReadOpenSpielTrace(testing::ReferenceFile("connect4/connect_four.txt"));
  const reference::Replayed r = reference::ReplayTrace(
      game, trace,
      [&](const reference::TraceState& s, const State& state) {
        REQUIRE(s.board.size() == 6);
        reference::CheckLowerCaseBoard(game, s, state);
      },
      [](const reference::TraceState&, int) {});
  CHECK(r.full_states >= 6);
  CHECK(r.actions == std::vector<int>{0, 1, 2, 6, 4, 1, 0, 2, 6, 0, 5, 4, 0, 6, 5, 0, 3});
  reference::CheckFinalReturns(trace, *r.state, {1, -1});
  CHECK(r.state->Winner() == 0);
}

TEST_CASE("connect4 blog example positions", "[game][connect4]") {
  const Connect4Game game;
  const auto a = game.Replay(game.ParseMoves("4455"));
  CHECK_FALSE(a->IsTerminal());
  CHECK(a->CurrentPlayer() == 0);
  CHECK(a->MoveNumber() == 4);
  CHECK(a->ToString() == ".......\n.......\n.......\n.......\n...OO..\n...XX..\n");
  const auto b = game.Replay(game.ParseMoves("44455554221"));
  CHECK_FALSE(b->IsTerminal());
  CHECK(b->CurrentPlayer() == 1);
  CHECK(b->MoveNumber() == 11);
  CHECK(b->ToString() == R"(.......
.......
...OX..
...XO..
.O.OX..
XX.XO..
)");
  // A transposition is the same position; a different one is not.
  const auto t = game.Replay(game.ParseMoves("5544"));
  CHECK(t->Equals(*a));
  CHECK(t->Hash() == a->Hash());
  const auto d = game.Replay(game.ParseMoves("4545"));
  CHECK_FALSE(d->Equals(*a));
  CHECK(d->Hash() != a->Hash());
}

TEST_CASE("connect4 wins in every direction and the full-board draw", "[game][connect4]") {
  const Connect4Game game;
  struct Case {
    const char* moves;
    int winner;
  };
  // Each game is won by its last move and not before.
  for (const Case& c : {Case{"1212121", 0}, Case{"1122334", 0}, Case{"12234334544", 0},
                        Case{"76654554344", 0}, Case{"112233565", -2}, Case{"71122334", 1}}) {
    INFO(c.moves);
    const std::vector<int> moves = game.ParseMoves(c.moves);
    auto s = game.NewInitialState();
    for (size_t i = 0; i + 1 < moves.size(); ++i) {
      s->Apply(moves[i]);
      REQUIRE_FALSE(s->IsTerminal());
    }
    s->Apply(moves.back());
    if (c.winner == -2) {  // control: three in a row everywhere, no four
      CHECK_FALSE(s->IsTerminal());
      continue;
    }
    CHECK(s->IsTerminal());
    CHECK(s->Winner() == c.winner);
    CHECK(game.ParseBoard(s->ToString())->Equals(*s));
    CHECK(game.ParseBoard(s->ToString())->Winner() == c.winner);
  }
  // A full board without a four.
  const auto draw = game.Replay(game.ParseMoves(kDrawGame));
  CHECK(draw->IsTerminal());
  CHECK(draw->Winner() == -1);
  CHECK(draw->MoveNumber() == 42);
  CHECK(draw->Outcome(0) == 0.0f);
  CHECK(draw->ToString() == R"(OXOXOXO
OXXXOXO
XXOOXOO
OOXOXOX
XXOOOXX
OXXXOXO
)");
  const auto parsed = game.ParseBoard(draw->ToString());
  CHECK(parsed->IsTerminal());
  CHECK(parsed->Winner() == -1);
  // The OpenSpiel final board: x completed the bottom row.
  const auto os = game.ParseBoard(".......\no......\nx......\no.....o\nxoo.oxx\nxoxxxxo\n");
  CHECK(os->IsTerminal());
  CHECK(os->Winner() == 0);
}

TEST_CASE("connect4 agrees with a naive grid over random games", "[game][connect4]") {
  const Connect4Game game;
  Rng rng(12345);
  std::vector<int> legal;
  std::vector<uint8_t> features(game.Shape().FeatureBytes());
  long steps = 0, mismatches = 0, games_won = 0, games_drawn = 0;
  std::string first_mismatch;
  auto note = [&](bool ok, const std::string& what, const std::vector<int>& moves) {
    if (ok) return;
    if (mismatches++ == 0) first_mismatch = what + " after " + game.FormatMoves(moves);
  };
  Connect4State s, copy;
  for (int g = 0; g < 3000; ++g) {
    s = Connect4State();
    Grid grid;
    std::vector<int> moves;
    while (!s.IsTerminal()) {
      s.LegalActions(&legal);
      std::vector<int> expected;
      for (int c = 0; c < 7; ++c) {
        if (!grid.Full(c)) expected.push_back(c);
      }
      note(legal == expected, "legal actions", moves);
      const int a = legal[rng.Below(legal.size())];
      const int mover = s.CurrentPlayer();
      s.Apply(a);
      grid.Drop(a, mover == 0 ? 'X' : 'O');
      moves.push_back(a);
      ++steps;
      const bool four = grid.HasFour(mover == 0 ? 'X' : 'O');
      note(s.IsTerminal() == (four || moves.size() == 42), "terminal", moves);
      note(s.Winner() == (four ? mover : -1), "winner", moves);
      // Features from the mover's point of view, row 0 = top.
      s.EncodeFeatures(features.data());
      const char own = s.CurrentPlayer() == 0 ? 'X' : 'O';
      const char opp = own == 'X' ? 'O' : 'X';
      bool features_ok = true;
      for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 7; ++c) {
          const int cell = r * 7 + c;
          features_ok = features_ok && features[cell] == (grid.cell[r][c] == own) &&
                        features[42 + cell] == (grid.cell[r][c] == opp) &&
                        features[84 + cell] == (s.CurrentPlayer() == 0);
        }
      }
      note(features_ok, "features", moves);
      std::string drawn;
      for (int r = 0; r < 6; ++r) drawn += std::string(grid.cell[r], 7) + "\n";
      note(s.ToString() == drawn, "ToString", moves);
      const Connect4State from_key = Connect4State::FromKey(s.Key());
      note(from_key.Equals(s) && from_key.Hash() == s.Hash() && from_key.Winner() == s.Winner() &&
               from_key.IsTerminal() == s.IsTerminal(),
           "FromKey", moves);
      copy.CopyFrom(s);
      note(copy.Equals(s) && s.Clone()->Equals(s), "copies", moves);
    }
    (s.Winner() < 0 ? games_drawn : games_won)++;
  }
  INFO(first_mismatch);
  CHECK(mismatches == 0);
  CHECK(steps > 3000 * 7);
  CHECK(games_won > 2000);
}

TEST_CASE("connect4 feature planes", "[game][connect4]") {
  const Connect4Game game;
  REQUIRE(game.Shape().planes == 3);
  REQUIRE(game.Shape().height == 6);
  REQUIRE(game.Shape().width == 7);
  REQUIRE(game.PlaneNames() == std::vector<std::string>{"own", "opponent", "first_player_to_move"});
  const auto cells_of = [](const std::vector<uint8_t>& f, int plane) {
    std::vector<int> cells;
    for (int c = 0; c < 42; ++c) {
      if (f[plane * 42 + c]) cells.push_back(c);
    }
    return cells;
  };
  std::vector<uint8_t> f(126, 9);
  auto s = game.Replay(game.ParseMoves("4455"));  // X to move
  s->EncodeFeatures(f.data());
  CHECK(cells_of(f, 0) == std::vector<int>{38, 39});  // X on the bottom row (row 5)
  CHECK(cells_of(f, 1) == std::vector<int>{31, 32});  // O on row 4
  CHECK(cells_of(f, 2).size() == 42);
  s->Apply(0);  // X in column 1: O to move
  s->EncodeFeatures(f.data());
  CHECK(cells_of(f, 0) == std::vector<int>{31, 32});
  CHECK(cells_of(f, 1) == std::vector<int>{35, 38, 39});
  CHECK(cells_of(f, 2).empty());
  CHECK(std::all_of(f.begin(), f.end(), [](uint8_t v) { return v <= 1; }));
}

// Planes 3-5 of connect4-threats against the naive grid: a cell is a "win"
// of a player when it is empty and a stone of theirs there (gravity aside)
// makes a four; odd_row marks rows 1, 3, 5 from the bottom.
bool GridWinsAt(Grid grid, int r, int c, char stone) {
  if (grid.cell[r][c] != '.') return false;
  grid.cell[r][c] = stone;
  return grid.HasFour(stone);
}

TEST_CASE("connect4-threats planes agree with a naive grid over random games", "[game][connect4]") {
  const auto game = MakeGame("connect4-threats");
  REQUIRE(IsConnect4(*game));
  REQUIRE(game->Name() == "connect4-threats");
  REQUIRE(game->Shape().planes == 6);
  REQUIRE(game->PlaneNames() == std::vector<std::string>{"own", "opponent", "first_player_to_move",
                                                         "own_wins", "opponent_wins", "odd_row"});
  const Connect4Game plain;
  Rng rng(777);
  std::vector<int> legal;
  std::vector<uint8_t> f(252), f3(126);
  long positions = 0, mismatches = 0, own_wins = 0, opp_wins = 0;
  std::string first_mismatch;
  for (int g = 0; g < 500; ++g) {
    auto s = game->NewInitialState();
    Grid grid;
    std::vector<int> moves;
    while (!s->IsTerminal()) {
      s->LegalActions(&legal);
      const int a = legal[rng.Below(legal.size())];
      grid.Drop(a, s->CurrentPlayer() == 0 ? 'X' : 'O');
      s->Apply(a);
      moves.push_back(a);
      if (s->IsTerminal()) break;  // never encoded; the grid's naive test counts the old four there
      // Clones and replays keep the feature set.
      const auto copy = g % 2 ? s->Clone() : game->Replay(moves);
      copy->EncodeFeatures(f.data());
      plain.Replay(moves)->EncodeFeatures(f3.data());
      const char own = s->CurrentPlayer() == 0 ? 'X' : 'O';
      const char opp = own == 'X' ? 'O' : 'X';
      bool ok = std::equal(f3.begin(), f3.end(), f.begin());  // planes 0-2 as in connect4
      for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 7; ++c) {
          const int cell = r * 7 + c;
          const bool ow = GridWinsAt(grid, r, c, own), pw = GridWinsAt(grid, r, c, opp);
          own_wins += ow;
          opp_wins += pw;
          ok = ok && f[126 + cell] == ow && f[168 + cell] == pw && f[210 + cell] == ((5 - r) % 2 == 0);
        }
      }
      ++positions;
      if (!ok && mismatches++ == 0) first_mismatch = game->FormatMoves(moves);
    }
  }
  INFO("first mismatch after " << first_mismatch);
  CHECK(mismatches == 0);
  CHECK(positions > 500 * 7);
  CHECK(own_wins > 1000);  // the planes were exercised, not all zero
  CHECK(opp_wins > 1000);
  // ParseBoard keeps the feature set too. "454545": X to move, a four to
  // make in column 4 (row 4 from the bottom, an even row), and O in column 5.
  const auto replayed = game->Replay(game->ParseMoves("454545"));
  replayed->EncodeFeatures(f.data());
  std::vector<uint8_t> parsed(252);
  game->ParseBoard(replayed->ToString())->EncodeFeatures(parsed.data());
  CHECK(parsed == f);
  CHECK(f[126 + 2 * 7 + 3] == 1);  // own_wins: top row 0, so row 4 from the bottom is row 2
  CHECK(f[168 + 2 * 7 + 4] == 1);  // opponent_wins in column 5
  CHECK(f[210 + 2 * 7 + 3] == 0);  // an even row
  CHECK(std::count(f.begin() + 210, f.end(), 1) == 21);
}

TEST_CASE("connect4 text and bad input", "[game][connect4]") {
  const Connect4Game game;
  for (int a = 0; a < 7; ++a) {
    CHECK(game.ActionToString(a) == std::to_string(a + 1));
    CHECK(game.ParseAction(game.ActionToString(a)) == a);
  }
  CHECK(game.ParseAction("0") == -1);
  CHECK(game.ParseAction("8") == -1);
  CHECK(game.ParseAction("44") == -1);
  CHECK(game.FormatMoves({3, 3, 4, 4}) == "4455");
  CHECK(game.ParseMoves(" 44 5\n5 ") == std::vector<int>{3, 3, 4, 4});
  CHECK(game.ParseMoves("").empty());
  CHECK_THROWS_AS(game.ParseMoves("48a"), Error);
  CHECK_THROWS_WITH(game.ParseMoves("48a"), Catch::Contains("'8'"));
  CHECK_THROWS_WITH(game.ParseMoves("40"), Catch::Contains("'0'"));
  CHECK_THROWS_WITH(game.Replay(game.ParseMoves("4444444")), Catch::Contains("move 7 (4) is illegal"));
  CHECK_THROWS_WITH(game.Replay(game.ParseMoves("12121212")),
                    Catch::Contains("move 8 (2) is after the game ended"));
  CHECK_THROWS_AS(game.Replay({7}), Error);
  CHECK_THROWS_AS(game.Replay({-1}), Error);

  const auto s = game.Replay(game.ParseMoves("444444"));
  CHECK_FALSE(s->IsLegal(3));
  std::vector<int> legal;
  s->LegalActions(&legal);
  CHECK(legal == std::vector<int>{0, 1, 2, 4, 5, 6});

  // Boards that cannot arise in play.
  const std::string empty_row = ".......\n";
  CHECK_THROWS_WITH(game.ParseBoard(empty_row + empty_row + empty_row + empty_row + "...X...\n" + empty_row),
                    Catch::Contains("floating"));
  CHECK_THROWS_AS(game.ParseBoard(empty_row + empty_row + empty_row + empty_row + empty_row + "XX.....\n"),
                  Error);  // counts
  CHECK_THROWS_AS(game.ParseBoard(empty_row + empty_row + empty_row + empty_row + empty_row + "O......\n"),
                  Error);  // O moved first
  CHECK_THROWS_AS(game.ParseBoard(empty_row + empty_row + empty_row + empty_row + "OOOO...\n" + "XXXX...\n"),
                  Error);  // play went on after X's four
  CHECK_THROWS_AS(game.ParseBoard(".......\n.......\nX.....X\nXOO...X\nXOO...X\nXOOO..X\n"),
                  Error);  // two fours no single move made
  CHECK_THROWS_AS(game.ParseBoard(empty_row + empty_row + empty_row + empty_row + empty_row), Error);
  CHECK_THROWS_AS(game.ParseBoard(".......\n.......\n.......\n.......\n.......\n...X....\n"), Error);
  CHECK_THROWS_AS(game.ParseBoard(".......\n.......\n.......\n.......\n.......\n...Y...\n"), Error);
  // Whitespace around the rows is tolerated, the empty board reads back.
  CHECK(game.ParseBoard("\n" + empty_row + empty_row + empty_row + empty_row + empty_row + ".......  \r\n")
            ->Equals(*game.NewInitialState()));
  CHECK(AsC4(*game.NewInitialState()).Hash() != AsC4(*game.Replay({0})).Hash());
}

}  // namespace zerofarm::game
