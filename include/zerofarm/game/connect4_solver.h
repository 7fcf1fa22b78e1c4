#pragma once
// An exact Connect Four solver: negamax with alpha-beta pruning on Pascal
// Pons's bitboards, a transposition table of lower and upper bounds, move
// ordering (centre first, then by the number of winning cells a move
// creates), anticipation of the opponent's immediate wins, and a null-window
// binary search on the score. The method follows Pons's tutorial "Solving
// Connect 4: how to build a perfect AI" (blog.gamesolver.org); the code is
// this project's own. Beyond the tutorial: two-entry table buckets that keep
// the costlier search, enhanced transposition cutoffs (a child the table
// already refutes), and a bound of 0 for a side with no line of four left.
// There is no opening book: positions with under about 8 stones take
// seconds to minutes; past about 14 stones, milliseconds.
//
// Scores are Pons's, always from the point of view of the side to move, with
// both sides playing perfectly (win as fast as possible, lose as slowly as
// possible):
//   * positive when the side to move wins: 22 - k when it wins with its k-th
//     stone, so (43 - n) / 2 for a win with the very next stone after n stones;
//   * 0 for a draw;
//   * negative when it loses: k - 22 when the opponent wins with its k-th
//     stone, so -(42 - n) / 2 when the opponent wins with its next stone.
// Examples (Pons's blog): "4455" scores 18, "44455554221" scores -15.
//
// A terminal state is accepted too: a full board scores 0, and a position the
// previous mover has just won scores -(44 - n) / 2 (the opponent won with its
// last stone). So ScoreMoves(s)[a] == -Solve(s after a) for every legal a.
//
// Not thread-safe: one solver per thread. The transposition table keeps exact
// bounds across calls (they never depend on the root), so solving related
// positions with one solver is faster than with fresh ones.
#include <array>
#include <cstdint>
#include <vector>

#include "zerofarm/game/connect4.h"

namespace zerofarm::game {

class Connect4Solver {
 public:
  // ScoreMoves' value for a full column (no legal move there).
  static constexpr int kIllegal = -1000;
  // Every score lies in [kMinScore, kMaxScore]: the earliest win is with a
  // 4th stone (22 - 4).
  static constexpr int kMinScore = -18;
  static constexpr int kMaxScore = 18;

  // The transposition table holds 2^tt_log2 entries of 8 bytes (23: 64 MiB)
  // in buckets of two. Entries store the whole position key, so any size
  // gives exact results; small tables only search more. Throws ConfigError unless 4 <= tt_log2 <= 30.
  explicit Connect4Solver(int tt_log2 = 23);

  // The exact score of `s` (see the file comment).
  int Solve(const Connect4State& s);
  // Only the sign of Solve(s): 1 win, 0 draw, -1 loss for the side to move.
  // Much faster than Solve for a won or lost position.
  int SolveWeak(const Connect4State& s);
  // For each column a (action 0..6), the exact score of playing a, from the
  // point of view of the side to move in `s`: (43 - n) / 2 for an immediate
  // win, else -Solve(s after a); kIllegal for a full column, and all kIllegal
  // when `s` is terminal. The best moves are those with the maximum, which
  // equals Solve(s) when `s` is not terminal.
  std::array<int, Connect4Game::kWidth> ScoreMoves(const Connect4State& s);
  // Whether Solve(s) >= target: one null-window search, far cheaper than
  // Solve when only a bound matters (is this move as good as the best?).
  bool AtLeast(const Connect4State& s, int target);
  // How good each move is, given `best` = Solve(s) (known, e.g. from a test
  // file): kOptimal when its score equals `best`, kSameOutcome when it keeps
  // the win, draw or loss of `best` but not the score, kWorseOutcome when it
  // gives a win or a draw away, kIllegalMove for a full column. Two
  // null-window searches per move at most.
  enum MoveQuality : char { kIllegalMove = '-', kWorseOutcome = '0', kSameOutcome = '1', kOptimal = '2' };
  std::array<MoveQuality, Connect4Game::kWidth> RateMoves(const Connect4State& s, int best);

  // Positions searched (negamax calls) since construction or Reset().
  uint64_t NodeCount() const { return node_count_; }
  // Clears the transposition table and the node count.
  void Reset();

 private:
  struct Position;  // bitboards of the side to move; defined in the .cpp

  int SolvePosition(const Position& p, bool weak);
  // Precondition: alpha < beta and the side to move cannot win at once.
  // Returns the exact score if it lies in (alpha, beta), an upper bound
  // <= alpha if the score is <= alpha, a lower bound >= beta if >= beta.
  int Negamax(const Position& p, int alpha, int beta);

  // Transposition table (entries described at Pack in the .cpp): the
  // bucket of `key`, its entry there or nullptr, and recording bounds
  // lower <= score <= upper found by a search of `nodes` nodes.
  uint64_t* Bucket(uint64_t key);
  const uint64_t* Find(uint64_t key);
  void Store(uint64_t key, int lower, int upper, uint64_t nodes);

  int tt_log2_;
  std::vector<uint64_t> table_;
  uint64_t node_count_ = 0;
};

}  // namespace zerofarm::game
