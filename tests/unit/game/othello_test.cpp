// Othello rules against the shared reference data (othello/): Aart Bik's
// perft, the legal moves of the FFO endgame positions, the OpenSpiel
// playthrough, plus a naive grid implementation for random games.
#include "zerofarm/game/othello.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
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

constexpr int kPass = OthelloGame::kPass;

using reference::ReadLines;

// ---- perft ------------------------------------------------------------------

struct PerftRow {
  long long leaves = -1, full_depth = -1, higher = -1;
};

std::map<int, PerftRow> ReadPerftTable() {
  std::map<int, PerftRow> table;
  for (const std::string& line : ReadLines(testing::ReferenceFile("othello/othello_perft_aartbik.csv"))) {
    if (line.empty() || line[0] == '#' || line.rfind("depth,", 0) == 0) continue;
    std::vector<std::string> f;
    std::istringstream in(line + ",");
    std::string field;
    while (std::getline(in, field, ',')) f.push_back(field);
    REQUIRE(f.size() == 4);  // depth,leaf_nodes,full_depth,higher
    PerftRow row;
    row.leaves = std::stoll(f[1]);
    if (!f[2].empty()) row.full_depth = std::stoll(f[2]);
    if (!f[3].empty()) row.higher = std::stoll(f[3]);
    table[std::stoi(f[0])] = row;
  }
  REQUIRE(table.size() == 14);
  return table;
}

struct PerftCount {
  long long leaves = 0;
  long long higher = 0;  // Bik's "higher" leaves (see Perft)
};

// Bik's rule (SOURCES.md): a pass uses a ply; a position where neither side
// can move (our terminal state) is a leaf wherever it occurs. Leaves one ply
// down are counted from MoveMask() (a forced pass counts as one); the random
// games test checks MoveMask against LegalActions.
// Bik finds game over only after playing one pass (the side to move has no
// move, it passes, then the other has none either), so a game-over position
// with 1 ply to go is a full-depth leaf for him (the pass reaches depth 0) and
// only one with 2 or more plies to go is "higher".
void Perft(const OthelloState& s, int depth, std::vector<std::vector<int>>* scratch, PerftCount* out) {
  if (depth == 0) {
    ++out->leaves;
    return;
  }
  if (s.IsTerminal()) {
    ++out->leaves;
    if (depth >= 2) ++out->higher;
    return;
  }
  if (depth == 1) {  // one leaf per disc move, or one for the forced pass
    out->leaves += s.MoveMask() ? __builtin_popcountll(s.MoveMask()) : 1;
    return;
  }
  std::vector<int>& legal = (*scratch)[depth];
  s.LegalActions(&legal);
  for (int a : legal) {
    OthelloState child = s;
    child.Apply(a);
    Perft(child, depth - 1, scratch, out);
  }
}

void CheckPerft(int from_depth, int to_depth) {
  const std::map<int, PerftRow> table = ReadPerftTable();
  for (int depth = from_depth; depth <= to_depth; ++depth) {
    std::vector<std::vector<int>> scratch(depth + 1);
    PerftCount count;
    Perft(OthelloState(), depth, &scratch, &count);
    INFO("depth " << depth);
    CHECK(count.leaves == table.at(depth).leaves);
    if (table.at(depth).higher >= 0) {
      CHECK(count.higher == table.at(depth).higher);
      CHECK(count.leaves - count.higher == table.at(depth).full_depth);
    } else {
      CHECK(count.higher == 0);
    }
  }
}

// ---- a naive reference implementation ---------------------------------------

struct Grid {
  char cell[8][8];  // row 0 = rank 1; 'X', 'O' or '.'
  Grid() {
    std::fill(&cell[0][0], &cell[0][0] + 64, '.');
    cell[3][3] = cell[4][4] = 'O';
    cell[3][4] = cell[4][3] = 'X';
  }
  // The discs a move of `me` on (r, c) flips, as (row, col) pairs.
  std::vector<std::pair<int, int>> Flips(int r, int c, char me) const {
    std::vector<std::pair<int, int>> flips;
    if (cell[r][c] != '.') return flips;
    const char opp = me == 'X' ? 'O' : 'X';
    for (int dr = -1; dr <= 1; ++dr) {
      for (int dc = -1; dc <= 1; ++dc) {
        if (dr == 0 && dc == 0) continue;
        std::vector<std::pair<int, int>> line;
        int rr = r + dr, cc = c + dc;
        while (rr >= 0 && rr < 8 && cc >= 0 && cc < 8 && cell[rr][cc] == opp) {
          line.emplace_back(rr, cc);
          rr += dr;
          cc += dc;
        }
        if (!line.empty() && rr >= 0 && rr < 8 && cc >= 0 && cc < 8 && cell[rr][cc] == me) {
          flips.insert(flips.end(), line.begin(), line.end());
        }
      }
    }
    return flips;
  }
  std::vector<int> Moves(char me) const {
    std::vector<int> moves;
    for (int i = 0; i < 64; ++i)
      if (!Flips(i / 8, i % 8, me).empty()) moves.push_back(i);
    return moves;
  }
};

}  // namespace

TEST_CASE("othello perft from the start matches Bik's table (depths 1..10)", "[game][othello]") {
  CheckPerft(1, 10);  // passes from depth 9
}

TEST_CASE("othello perft depths 11 and 12 (game-over leaves)", "[game][othello][slow]") {
  CheckPerft(11, 12);
}

TEST_CASE("othello legal moves of every FFO position equal the listed moves", "[game][othello]") {
  // "<64 chars A1..H1, A2..H8> <side>; <MOVE>:<SCORE>; ..." with X = Black.
  const OthelloGame game;
  int positions = 0;
  for (const char* name : {"fforum-1-19.obf", "fforum-20-39.obf", "fforum-40-59.obf", "fforum-60-79.obf"}) {
    for (const std::string& line : ReadLines(testing::ReferenceFile(std::string("othello/") + name))) {
      if (line.empty() || line[0] == '%') continue;
      INFO(name << ": " << line);
      REQUIRE(line.size() > 66);
      uint64_t discs[2] = {0, 0};
      for (int i = 0; i < 64; ++i) {
        const char ch = line[i];
        if (ch == 'X')
          discs[0] |= 1ULL << i;
        else if (ch == 'O')
          discs[1] |= 1ULL << i;
        else
          REQUIRE(ch == '-');
      }
      REQUIRE(line[64] == ' ');
      REQUIRE((line[65] == 'X' || line[65] == 'O'));
      const OthelloState s = OthelloState::FromDiscs(discs[0], discs[1], line[65] == 'X' ? 0 : 1);
      std::set<int> listed;
      std::istringstream fields(line.substr(line.find(';') + 1));
      std::string field;
      while (std::getline(fields, field, ';')) {
        field.erase(0, field.find_first_not_of(' '));
        if (field.empty()) continue;
        const int move = game.ParseAction(field.substr(0, field.find(':')));
        REQUIRE(move >= 0);
        REQUIRE(move < kPass);
        listed.insert(move);
      }
      std::vector<int> legal;
      s.LegalActions(&legal);
      CHECK(std::set<int>(legal.begin(), legal.end()) == listed);
      CHECK_FALSE(s.IsTerminal());
      const auto parsed = game.ParseBoard(s.ToString());
      CHECK(parsed->Equals(s));
      CHECK(parsed->Hash() == s.Hash());
      ++positions;
    }
  }
  CHECK(positions == 79);
}

TEST_CASE("othello follows the OpenSpiel playthrough", "[game][othello]") {
  // Full states draw "# Black (x) to play:" (or White, or "Terminal State:"),
  // then "# N x o - ... N" rank lines.
  const OthelloGame game;
  const auto trace = reference::ReadOpenSpielTrace(testing::ReferenceFile("othello/othello.txt"));
  const reference::Replayed r = reference::ReplayTrace(
      game, trace,
      [](const reference::TraceState& s, const State& state) {
        std::string board;
        int ranks = 0;
        for (const std::string& line : s.board) {
          if (line.size() != 19 || line[0] < '1' || line[0] > '8') continue;
          for (int c = 0; c < 8; ++c) {
            const char ch = line[2 + 2 * c];
            board += ch == 'x' ? 'X' : ch == 'o' ? 'O' : '.';
          }
          board += '\n';
          ++ranks;
        }
        REQUIRE(ranks == 8);
        CHECK(state.ToString().substr(0, 72) == board);
      },
      [&](const reference::TraceState& s, int action) {
        CHECK(game.ActionToString(action) == s.applied_text);
      });
  CHECK(r.full_states >= 5);
  CHECK(r.actions.size() == 60);
  reference::CheckFinalReturns(trace, *r.state, {-1, 1});
  CHECK(r.state->Winner() == 1);
}

TEST_CASE("othello passes and the end of the game", "[game][othello]") {
  const OthelloGame game;
  // White a1, Black b1: Black cannot move, White can (c1).
  OthelloState s = OthelloState::FromDiscs(1ULL << 1, 1ULL << 0, 0);
  CHECK_FALSE(s.IsTerminal());
  std::vector<int> legal;
  s.LegalActions(&legal);
  CHECK(legal == std::vector<int>{kPass});
  CHECK(s.IsLegal(kPass));
  CHECK_FALSE(s.IsLegal(2));
  s.Apply(kPass);
  CHECK(s.CurrentPlayer() == 1);
  s.LegalActions(&legal);
  CHECK(legal == std::vector<int>{2});
  CHECK_FALSE(s.IsLegal(kPass));
  s.Apply(2);
  CHECK(s.IsTerminal());  // Black has no discs: neither side can move
  CHECK(s.Winner() == 1);
  s.LegalActions(&legal);
  CHECK(legal.empty());
  CHECK_FALSE(s.IsLegal(kPass));
  CHECK(s.ToString() ==
        "OOO.....\n........\n........\n........\n........\n........\n........\n"
        "........\nX to move\n");
  // A full board: game over, the count decides (32-32 is a draw).
  const OthelloState draw = OthelloState::FromDiscs(0x00000000FFFFFFFFULL, 0xFFFFFFFF00000000ULL, 0);
  CHECK(draw.IsTerminal());
  CHECK(draw.Winner() == -1);
  const OthelloState black = OthelloState::FromDiscs(0x00000001FFFFFFFFULL, 0xFFFFFFFE00000000ULL, 1);
  CHECK(black.IsTerminal());
  CHECK(black.Winner() == 0);
  // The start position.
  const OthelloState start;
  start.LegalActions(&legal);
  CHECK(legal == std::vector<int>{19, 26, 37, 44});
  CHECK(game.FormatMoves(legal) == "d3 c4 f5 e6");
  CHECK_FALSE(start.IsLegal(kPass));
}

TEST_CASE("othello agrees with a naive grid over random games", "[game][othello]") {
  const OthelloGame game;
  Rng rng(4242);
  std::vector<int> legal;
  std::vector<uint8_t> features(3 * 64);
  long mismatches = 0, passes = 0, plies = 0;
  int results[3] = {0, 0, 0};
  std::string first_mismatch;
  for (int g = 0; g < 400; ++g) {
    OthelloState s;
    Grid grid;
    std::vector<int> moves;
    auto note = [&](bool ok, const char* what) {
      if (!ok && mismatches++ == 0) first_mismatch = std::string(what) + " after " + game.FormatMoves(moves);
    };
    while (true) {
      const char me = s.CurrentPlayer() == 0 ? 'X' : 'O';
      const char opp = me == 'X' ? 'O' : 'X';
      std::vector<int> expected = grid.Moves(me);
      const bool over = expected.empty() && grid.Moves(opp).empty();
      if (expected.empty() && !over) expected.push_back(kPass);
      s.LegalActions(&legal);
      note(legal == expected, "legal actions");
      uint64_t mask = 0;
      for (int m : expected) mask |= m < kPass ? 1ULL << m : 0;
      note(s.MoveMask() == mask, "MoveMask");
      note(s.IsTerminal() == over, "terminal");
      if (over || legal != expected) break;
      const int a = legal[rng.Below(legal.size())];
      if (a == kPass) {
        ++passes;
      } else {
        for (const auto& rc : grid.Flips(a / 8, a % 8, me)) grid.cell[rc.first][rc.second] = me;
        grid.cell[a / 8][a % 8] = me;
      }
      s.Apply(a);
      moves.push_back(a);
      ++plies;
      std::string drawn;
      for (int r = 0; r < 8; ++r) drawn += std::string(grid.cell[r], 8) + "\n";
      drawn += s.CurrentPlayer() == 0 ? "X to move\n" : "O to move\n";
      note(s.ToString() == drawn, "ToString");
      note(game.ParseBoard(drawn)->Equals(s), "ParseBoard");
      note(s.MoveNumber() == static_cast<int>(moves.size()), "MoveNumber");
      s.EncodeFeatures(features.data());
      const char own = s.CurrentPlayer() == 0 ? 'X' : 'O';
      bool features_ok = true;
      for (int c = 0; c < 64; ++c) {
        const char v = grid.cell[c / 8][c % 8];
        features_ok = features_ok && features[c] == (v == own) &&
                      features[64 + c] == (v != own && v != '.') &&
                      features[128 + c] == (s.CurrentPlayer() == 0);
      }
      note(features_ok, "features");
    }
    note(static_cast<int>(moves.size()) <= game.MaxGameLength(), "game length");
    int count[2] = {0, 0};
    for (int c = 0; c < 64; ++c) {
      const char v = grid.cell[c / 8][c % 8];
      if (v != '.') ++count[v == 'X' ? 0 : 1];
    }
    const int winner = count[0] > count[1] ? 0 : count[1] > count[0] ? 1 : -1;
    note(s.Winner() == winner, "winner");
    ++results[winner + 1];
  }
  INFO(first_mismatch);
  CHECK(mismatches == 0);
  CHECK(passes > 20);
  CHECK(plies > 400 * 55);
  CHECK(results[1] > 100);
  CHECK(results[2] > 100);
}

TEST_CASE("othello symmetries, features and text", "[game][othello]") {
  const OthelloGame game;
  REQUIRE(game.SymmetryCount() == 4);
  const auto start = game.NewInitialState();
  std::vector<uint8_t> f(3 * 64), out(3 * 64);
  start->EncodeFeatures(f.data());
  for (int s = 0; s < game.SymmetryCount(); ++s) {
    INFO("symmetry " << s);
    const std::vector<int> cells = game.CellMap(s), actions = game.ActionMap(s);
    CHECK(actions[kPass] == kPass);
    for (int c = 0; c < 64; ++c) out[cells[c]] = f[c], out[64 + cells[c]] = f[64 + c];
    for (int c = 128; c < 192; ++c) out[c] = f[c];
    CHECK(out == f);  // each symmetry fixes the start position
  }
  CHECK(game.CellMap(2)[1] == 8);   // b1 <-> a2: the a1-h8 diagonal
  CHECK(game.CellMap(3)[0] == 63);  // a1 <-> h8: the h1-a8 diagonal
  CHECK(game.CellMap(3)[7] == 7);
  CHECK(game.CellMap(1)[0] == 63);  // half turn
  CHECK(game.CellMap(1)[7] == 56);
  // Own / opponent from Black's view at the start: Black e4 (28), d5 (35).
  CHECK(f[28] == 1);
  CHECK(f[35] == 1);
  CHECK(f[64 + 27] == 1);
  CHECK(f[64 + 36] == 1);
  CHECK(std::count(f.begin(), f.begin() + 128, 1) == 4);
  CHECK(std::count(f.begin() + 128, f.end(), 1) == 64);
  REQUIRE(game.PlaneNames() == std::vector<std::string>{"own", "opponent", "first_player_to_move"});

  for (int a = 0; a <= kPass; ++a) CHECK(game.ParseAction(game.ActionToString(a)) == a);
  CHECK(game.ActionToString(0) == "a1");
  CHECK(game.ActionToString(7) == "h1");
  CHECK(game.ActionToString(63) == "h8");
  CHECK(game.ActionToString(kPass) == "pass");
  CHECK(game.ParseAction("G8") == 62);
  CHECK(game.ParseAction("PASS") == kPass);
  for (const char* bad : {"", "a", "a0", "a9", "i1", "d33", "passs"}) CHECK(game.ParseAction(bad) == -1);
  CHECK(game.ParseMoves("f5 d6 c3") == std::vector<int>{37, 43, 18});
  CHECK_THROWS_WITH(game.Replay(game.ParseMoves("a1")), Catch::Contains("move 1 (a1) is illegal"));
  CHECK_THROWS_AS(game.Replay({kPass}), Error);

  CHECK(start->ToString() ==
        "........\n........\n........\n...OX...\n...XO...\n........\n........\n........\nX to move\n");
  CHECK(game.ParseBoard(start->ToString())->Equals(*start));
  CHECK(game.ParseBoard("--------\n--------\n--------\n---ox---\n---xo---\n--------\n--------\n"
                        "--------\nX to move\n")
            ->Equals(*start));
  const auto after = game.Replay(game.ParseMoves("f5"));
  CHECK_FALSE(game.ParseBoard(after->ToString())->Equals(*start));
  CHECK(game.ParseBoard(after->ToString())->MoveNumber() == 1);
  CHECK(after->Hash() != start->Hash());
  std::string bad_side = start->ToString();
  bad_side.replace(bad_side.size() - 10, 9, "Z to move");
  CHECK_THROWS_WITH(game.ParseBoard(bad_side), Catch::Contains("to move"));
  std::string bad_char = start->ToString();
  bad_char[0] = 'Q';
  CHECK_THROWS_WITH(game.ParseBoard(bad_char), Catch::Contains("'Q'"));
  CHECK_THROWS_AS(game.ParseBoard(start->ToString().substr(9)), Error);  // 7 rows
  CHECK_THROWS_AS(OthelloState::FromDiscs(1, 1, 0), Error);
}

}  // namespace zerofarm::game
