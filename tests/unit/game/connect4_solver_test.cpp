// The exact Connect Four solver against Pascal Pons's benchmark sets
// (data/reference/connect4/Test_*: "<moves> <score>" lines, the
// score exact for the side to move; see SOURCES.md) and the blog's examples.
#include "zerofarm/game/connect4_solver.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/connect4.h"

namespace zerofarm::game {
namespace {

struct BenchLine {
  std::string moves;  // Pons's 1-based column digits
  int score = 0;      // exact, for the side to move
};

std::vector<BenchLine> ReadBench(const std::string& name) {
  const std::string path = testing::ReferenceFile("connect4/" + name);
  INFO("reading " << path);
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<BenchLine> lines;
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty() || text == "\r") continue;
    std::istringstream fields(text);
    BenchLine line;
    INFO("line '" << text << "'");
    REQUIRE(fields >> line.moves >> line.score);
    lines.push_back(line);
  }
  REQUIRE(lines.size() == 1000);
  return lines;
}

Connect4State Play(const std::string& moves) {
  const Connect4Game game;
  const std::unique_ptr<State> s = game.Replay(game.ParseMoves(moves));
  return dynamic_cast<const Connect4State&>(*s);
}

int Sign(int x) { return (x > 0) - (x < 0); }

// Solve == the listed score for lines [first, first + count) of a file, with
// one solver (so the transposition table is shared across positions).
void CheckExact(const std::string& name, size_t first, size_t count) {
  const std::vector<BenchLine> lines = ReadBench(name);
  Connect4Solver solver;
  int wrong = 0;
  for (size_t i = first; i < first + count && i < lines.size(); ++i) {
    INFO(name << " line " << i + 1 << ": " << lines[i].moves << " " << lines[i].score);
    const Connect4State s = Play(lines[i].moves);
    REQUIRE_FALSE(s.IsTerminal());
    const int got = solver.Solve(s);
    CHECK(got == lines[i].score);
    wrong += got != lines[i].score;
  }
  CHECK(wrong == 0);
}

// Scores every legal move independently: an immediate win scores
// (43 - n) / 2, otherwise minus the child's score from a second solver.
std::array<int, Connect4Game::kWidth> ReferenceMoveScores(const Connect4State& s, Connect4Solver* checker) {
  std::array<int, Connect4Game::kWidth> scores;
  scores.fill(Connect4Solver::kIllegal);
  for (int a = 0; a < Connect4Game::kWidth; ++a) {
    if (!s.IsLegal(a)) continue;
    Connect4State child = s;
    child.Apply(a);
    if (child.Winner() == s.CurrentPlayer()) {
      scores[a] = (43 - s.MoveNumber()) / 2;
    } else if (child.IsTerminal()) {
      scores[a] = 0;  // the last cell, no four
    } else {
      scores[a] = -checker->Solve(child);
    }
  }
  return scores;
}

TEST_CASE("connect4 solver: the blog's example positions", "[game][solver]") {
  Connect4Solver solver;
  // SOURCES.md: "position 4455 has score 18 (the side to move wins with its
  // 4th stone); position 44455554221 has score -15".
  CHECK(solver.Solve(Play("4455")) == 18);
  CHECK(solver.Solve(Play("44455554221")) == -15);
  CHECK(solver.SolveWeak(Play("4455")) == 1);
  CHECK(solver.SolveWeak(Play("44455554221")) == -1);
  // A fresh solver agrees (nothing depends on what the table held).
  Connect4Solver fresh;
  CHECK(fresh.Solve(Play("44455554221")) == -15);
}

TEST_CASE("connect4 solver: End-Easy (Test_L3_R1) exact scores", "[game][solver]") {
  CheckExact("Test_L3_R1", 0, 1000);
}

TEST_CASE("connect4 solver: Middle-Easy (Test_L2_R1) exact scores", "[game][solver]") {
  CheckExact("Test_L2_R1", 0, 1000);
}

TEST_CASE("connect4 solver: Begin-Easy (Test_L1_R1) exact scores", "[game][solver]") {
  CheckExact("Test_L1_R1", 0, 1000);
}

// Begin-Hard takes seconds a position (no opening book): a prefix runs with
// the [slow] tests, the whole file only on request (hidden tag).
TEST_CASE("connect4 solver: Begin-Hard (Test_L1_R3) exact scores, first 8 lines", "[game][solver][slow]") {
  CheckExact("Test_L1_R3", 0, 8);
}

TEST_CASE("connect4 solver: Begin-Hard (Test_L1_R3) exact scores, first 40 lines", "[.solver-40]") {
  CheckExact("Test_L1_R3", 0, 40);
}

TEST_CASE("connect4 solver: Begin-Hard (Test_L1_R3) exact scores, all 1000 lines", "[.solver-full]") {
  // About 1.5 hours of CPU (5 s a line on average, a minute at most in the
  // first 100): one solver per hardware thread.
  const std::vector<BenchLine> lines = ReadBench("Test_L1_R3");
  std::vector<int> got(lines.size(), Connect4Solver::kIllegal);
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  const unsigned n_threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < n_threads; ++t) {
    threads.emplace_back([&] {
      Connect4Solver solver;
      for (size_t i = next++; i < lines.size(); i = next++) got[i] = solver.Solve(Play(lines[i].moves));
    });
  }
  for (std::thread& t : threads) t.join();
  int wrong = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO("Test_L1_R3 line " << i + 1 << ": " << lines[i].moves << " " << lines[i].score);
    CHECK(got[i] == lines[i].score);
    wrong += got[i] != lines[i].score;
  }
  CHECK(wrong == 0);
}

TEST_CASE("connect4 solver: SolveWeak gives the sign on Middle-Easy (Test_L2_R1)", "[game][solver]") {
  Connect4Solver solver;
  int wrong = 0;
  for (const BenchLine& line : ReadBench("Test_L2_R1")) {
    INFO("Test_L2_R1: " << line.moves << " " << line.score);
    const int got = solver.SolveWeak(Play(line.moves));
    CHECK(got == Sign(line.score));
    wrong += got != Sign(line.score);
  }
  CHECK(wrong == 0);
}

// ScoreMoves on every `step`-th line of a file against ReferenceMoveScores;
// returns the number of full columns and of positions with one empty cell.
std::pair<int, int> CheckScoreMoves(const std::string& name, size_t step) {
  Connect4Solver solver;
  Connect4Solver checker(20);  // a second, independent table
  int full_columns = 0, last_cell = 0;
  const std::vector<BenchLine> lines = ReadBench(name);
  for (size_t i = 0; i < lines.size(); i += step) {
    INFO(name << " line " << i + 1 << ": " << lines[i].moves << " " << lines[i].score);
    const Connect4State s = Play(lines[i].moves);
    const std::array<int, 7> scores = solver.ScoreMoves(s);
    const std::array<int, 7> expected = ReferenceMoveScores(s, &checker);
    CHECK(scores == expected);
    CHECK(*std::max_element(scores.begin(), scores.end()) == lines[i].score);
    CHECK(solver.Solve(s) == lines[i].score);
    for (int a = 0; a < 7; ++a) {
      CHECK((scores[a] == Connect4Solver::kIllegal) == !s.IsLegal(a));
      full_columns += !s.IsLegal(a);
      if (s.IsLegal(a)) {
        CHECK(scores[a] >= Connect4Solver::kMinScore);
        CHECK(scores[a] <= Connect4Solver::kMaxScore);
      }
    }
    last_cell += s.MoveNumber() == 41;
  }
  return {full_columns, last_cell};
}

TEST_CASE("connect4 solver: ScoreMoves agrees with solving every child (End-Easy, Middle-Easy)",
          "[game][solver]") {
  // Every 20th line: 100 positions of 15 to 41 stones. (No listed position
  // has an immediate win; the terminal-state test covers those.)
  const auto [full_columns, last_cell] = CheckScoreMoves("Test_L3_R1", 20);
  CHECK(full_columns > 0);
  CHECK(last_cell > 0);  // the only move fills the board
  CheckScoreMoves("Test_L2_R1", 20);
}

TEST_CASE("connect4 solver: ScoreMoves agrees with solving every child (Begin-Easy)",
          "[game][solver][slow]") {
  // Every 100th line (10 positions of 8 to 14 stones): the weaker moves lead
  // to positions that take up to seconds each.
  CheckScoreMoves("Test_L1_R1", 100);
}

// RateMoves and AtLeast against ScoreMoves on every `step`-th line.
void CheckRateMoves(const std::string& name, size_t step) {
  Connect4Solver solver;
  Connect4Solver checker(20);
  int optimal = 0, same = 0, worse = 0;
  const std::vector<BenchLine> lines = ReadBench(name);
  for (size_t i = 0; i < lines.size(); i += step) {
    INFO(name << " line " << i + 1 << ": " << lines[i].moves << " " << lines[i].score);
    const Connect4State s = Play(lines[i].moves);
    const int best = lines[i].score;
    const auto rating = solver.RateMoves(s, best);
    const auto scores = checker.ScoreMoves(s);
    for (int a = 0; a < 7; ++a) {
      INFO("column " << a + 1 << " scores " << scores[a]);
      char expected = Connect4Solver::kIllegalMove;
      if (scores[a] == best)
        expected = Connect4Solver::kOptimal;
      else if (scores[a] != Connect4Solver::kIllegal && Sign(scores[a]) == Sign(best))
        expected = Connect4Solver::kSameOutcome;
      else if (scores[a] != Connect4Solver::kIllegal)
        expected = Connect4Solver::kWorseOutcome;
      CHECK(rating[a] == expected);
      optimal += rating[a] == Connect4Solver::kOptimal;
      same += rating[a] == Connect4Solver::kSameOutcome;
      worse += rating[a] == Connect4Solver::kWorseOutcome;
    }
    // AtLeast brackets the exact score.
    CHECK(solver.AtLeast(s, best));
    CHECK_FALSE(solver.AtLeast(s, best + 1));
  }
  // Every kind of verdict occurs, so the test can tell them apart.
  CHECK(optimal > 0);
  CHECK(same > 0);
  CHECK(worse > 0);
}

TEST_CASE("connect4 solver: RateMoves and AtLeast agree with ScoreMoves (End-Easy, Middle-Easy)",
          "[game][solver]") {
  CheckRateMoves("Test_L3_R1", 10);
  CheckRateMoves("Test_L2_R1", 25);
}

TEST_CASE("connect4 solver: terminal states, the last cell and immediate wins", "[game][solver]") {
  Connect4Solver solver;
  // A full board without a four is a draw.
  const Connect4State draw = Play("216537736677261744376553645442354325211121");
  REQUIRE(draw.IsTerminal());
  CHECK(solver.Solve(draw) == 0);
  CHECK(solver.SolveWeak(draw) == 0);
  for (int v : solver.ScoreMoves(draw)) CHECK(v == Connect4Solver::kIllegal);
  // One cell left: playing it draws.
  const Connect4State last = Play("21653773667726174437655364544235432521112");
  REQUIRE_FALSE(last.IsTerminal());
  CHECK(solver.Solve(last) == 0);
  const std::array<int, 7> last_scores = solver.ScoreMoves(last);
  CHECK(last_scores[0] == 0);  // column 1 is the open one
  for (int a = 1; a < 7; ++a) CHECK(last_scores[a] == Connect4Solver::kIllegal);

  // X (to move after 6 stones) wins at once with its 4th stone: 22 - 4.
  const Connect4State before = Play("121212");
  CHECK(solver.Solve(before) == 18);
  CHECK(solver.SolveWeak(before) == 1);
  // After that stone the game is over: O lost to X's 4th stone.
  const Connect4State won = Play("1212121");
  REQUIRE(won.Winner() == 0);
  CHECK(solver.Solve(won) == -18);
  CHECK(solver.SolveWeak(won) == -1);
  for (int v : solver.ScoreMoves(won)) CHECK(v == Connect4Solver::kIllegal);
  // X to move after 20 stones must block O's threat, and wins doing so
  // (Test_L2_R1); every other move lets O win with its next stone.
  const Connect4State threat = Play("47724652442416755146");
  const std::array<int, 7> scores = solver.ScoreMoves(threat);
  int blocks = 0;
  for (int a = 0; a < 7; ++a) {
    if (scores[a] == Connect4Solver::kIllegal) continue;
    if (scores[a] == 8) {
      ++blocks;
    } else {
      CHECK(scores[a] == -11);  // -(42 - 20) / 2
    }
  }
  CHECK(blocks == 1);
  CHECK(solver.Solve(threat) == 8);

  // After 32 stones (a line of Test_L3_R1 and one more move), X wins at once
  // in column 1 with its 17th stone, (43 - 32) / 2 = 5; other moves win later.
  const Connect4State win_now = Play("27627517222312764666334756745331");
  constexpr int kIllegal = Connect4Solver::kIllegal;
  CHECK(solver.ScoreMoves(win_now) == std::array<int, 7>{5, kIllegal, 2, 4, 4, kIllegal, kIllegal});
  CHECK(solver.Solve(win_now) == 5);
  Connect4State won_now = win_now;
  won_now.Apply(0);
  CHECK(solver.Solve(won_now) == -5);  // -(44 - 33) / 2
}

TEST_CASE("connect4 solver: table size, node count and reset", "[game][solver]") {
  CHECK_THROWS_AS(Connect4Solver(3), ConfigError);
  CHECK_THROWS_AS(Connect4Solver(31), ConfigError);

  // A 16-entry table collides constantly but stays exact.
  const std::vector<BenchLine> lines = ReadBench("Test_L2_R1");
  Connect4Solver tiny(4);
  Connect4Solver big;
  for (size_t i = 0; i < 100; ++i) {
    INFO("Test_L2_R1: " << lines[i].moves << " " << lines[i].score);
    CHECK(tiny.Solve(Play(lines[i].moves)) == lines[i].score);
    CHECK(big.Solve(Play(lines[i].moves)) == lines[i].score);
  }
  CHECK(tiny.NodeCount() > big.NodeCount());

  Connect4Solver solver;
  CHECK(solver.NodeCount() == 0);
  const Connect4State s = Play(lines[0].moves);
  const int score = solver.Solve(s);
  const uint64_t first = solver.NodeCount();
  CHECK(first > 0);
  CHECK(solver.Solve(s) == score);  // the table answers most of it now
  CHECK(solver.NodeCount() - first < first);
  solver.Reset();
  CHECK(solver.NodeCount() == 0);
  CHECK(solver.Solve(s) == score);
  CHECK(solver.NodeCount() == first);  // a reset solver repeats itself exactly
}

}  // namespace
}  // namespace zerofarm::game
