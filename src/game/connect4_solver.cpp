#include "zerofarm/game/connect4_solver.h"

#include <algorithm>
#include <string>

#include "connect4_bits.h"
#include "zerofarm/core/error.h"

namespace zerofarm::game {
namespace {

using c4bits::ColumnMask;
using c4bits::kBoard;
using c4bits::kBottom;
using c4bits::kCells;
using c4bits::kStride;
using c4bits::kWidth;
using c4bits::WinningCells;

// Columns in the order they are tried when move scores tie: centre first.
constexpr int kColumnOrder[kWidth] = {3, 2, 4, 1, 5, 0, 6};

// The table is 2-entry buckets. An entry packs the position key (49 bits),
// the work its last search took (3 bits, about log8 of the nodes searched;
// replacement keeps the bigger work in a bucket's first entry) and a lower
// and an upper bound on its score (6 bits each, as bound - kLowBound).
// Bounds may lie past the reachable scores (the search clamps windows with
// loose ones), hence the wide range. A fresh entry holds key 0 (the empty
// board) with the widest bounds, that is no information.
constexpr int kLowBound = -21;
constexpr int kHighBound = 22;
constexpr int kKeyShift = 15;
constexpr uint64_t Pack(uint64_t key, int work, int lower, int upper) {
  return key << kKeyShift | static_cast<uint64_t>(work) << 12 |
         static_cast<uint64_t>(lower - kLowBound) << 6 | static_cast<uint64_t>(upper - kLowBound);
}
constexpr uint64_t kEmptyEntry = Pack(0, 0, kLowBound, kHighBound);
constexpr int EntryWork(uint64_t e) { return static_cast<int>((e >> 12) & 7); }
constexpr int EntryLower(uint64_t e) { return static_cast<int>((e >> 6) & 63) + kLowBound; }
constexpr int EntryUpper(uint64_t e) { return static_cast<int>(e & 63) + kLowBound; }
inline int Work(uint64_t nodes) { return std::min(7, (64 - __builtin_clzll(nodes | 1)) / 3); }

inline int PopCount(uint64_t x) {  // SWAR; the build targets baseline x86-64 (no POPCNT)
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
}

}  // namespace

// The position from the side to move's point of view (Pons's representation).
struct Connect4Solver::Position {
  uint64_t current;  // stones of the side to move
  uint64_t mask;     // all stones
  int moves;         // stones on the board

  // Exact and column-local: in each column, current + mask is the side to
  // move's stones plus a marker just above the column's stones, less one.
  uint64_t Key() const { return current + mask; }
  uint64_t Playable() const { return (mask + kBottom) & kBoard; }
  bool CanWinNext() const { return (WinningCells(current, mask) & Playable()) != 0; }
  // Playable cells that do not hand the opponent an immediate win: if the
  // opponent threatens a playable cell, that cell (or nothing, against two);
  // never the cell just below an opponent's winning cell.
  uint64_t NonLosingMoves() const {
    uint64_t playable = Playable();
    const uint64_t opponent_wins = WinningCells(current ^ mask, mask);
    const uint64_t forced = playable & opponent_wins;
    if (forced) {
      if (forced & (forced - 1)) return 0;
      playable = forced;
    }
    return playable & ~(opponent_wins >> 1);
  }
  // Winning cells the side to move would own after playing `move`.
  int MoveScore(uint64_t move) const { return PopCount(WinningCells(current | move, mask | move)); }
  Position Play(uint64_t move) const { return Position{current ^ mask, mask | move, moves + 1}; }
};

Connect4Solver::Connect4Solver(int tt_log2) : tt_log2_(tt_log2) {
  if (tt_log2 < 4 || tt_log2 > 30) {
    throw ConfigError("connect4 solver: transposition table log2 size " + std::to_string(tt_log2) +
                      " is out of range [4, 30]");
  }
  table_.assign(size_t{1} << tt_log2_, kEmptyEntry);
}

void Connect4Solver::Reset() {
  std::fill(table_.begin(), table_.end(), kEmptyEntry);
  node_count_ = 0;
}

uint64_t* Connect4Solver::Bucket(uint64_t key) {
  return &table_[((key * 0x9E3779B97F4A7C15ULL) >> (64 - tt_log2_)) & ~uint64_t{1}];
}

const uint64_t* Connect4Solver::Find(uint64_t key) {
  uint64_t* b = Bucket(key);
  if (b[0] >> kKeyShift == key) return &b[0];
  if (b[1] >> kKeyShift == key) return &b[1];
  return nullptr;
}

void Connect4Solver::Store(uint64_t key, int lower, int upper, uint64_t nodes) {
  ZF_DCHECK(kLowBound <= lower && lower <= upper && upper <= kHighBound) << lower << " " << upper;
  int work = Work(nodes);
  uint64_t* b = Bucket(key);
  for (int i = 0; i < 2; ++i) {
    if (b[i] >> kKeyShift == key) {  // both bounds hold: keep the tighter ones
      work = std::max(work, EntryWork(b[i]));
      b[i] = Pack(key, work, std::max(lower, EntryLower(b[i])), std::min(upper, EntryUpper(b[i])));
      return;
    }
  }
  const uint64_t e = Pack(key, work, lower, upper);
  if (work >= EntryWork(b[0])) {
    b[1] = b[0];
    b[0] = e;
  } else {
    b[1] = e;
  }
}

int Connect4Solver::Negamax(const Position& p, int alpha, int beta) {
  ZF_DCHECK(alpha < beta);
  ZF_DCHECK(!p.CanWinNext());
  const uint64_t first_node = node_count_++;
  const uint64_t next = p.NonLosingMoves();
  if (next == 0) return -(kCells - p.moves) / 2;  // the opponent wins with its next stone
  if (p.moves >= kCells - 2) return 0;            // two cells left, no win at either side's next stone
  // Neither side wins at its next stone: the opponent's earliest win is its
  // second stone from now, ours our second.
  int lower = -(kCells - 2 - p.moves) / 2;
  int upper = (kCells - 1 - p.moves) / 2;
  // A side with no line of four left free of the other's stones cannot win.
  if (!Connect4State::HasFour(kBoard & ~(p.current ^ p.mask))) upper = std::min(upper, 0);
  if (!Connect4State::HasFour(kBoard & ~p.current)) lower = std::max(lower, 0);
  const uint64_t key = p.Key();
  if (const uint64_t* e = Find(key)) {
    lower = std::max(lower, EntryLower(*e));
    upper = std::min(upper, EntryUpper(*e));
  }
  if (alpha < lower) {
    alpha = lower;
    if (alpha >= beta) return alpha;
  }
  if (beta > upper) {
    beta = upper;
    if (alpha >= beta) return beta;
  }

  // Order the non-losing moves by the number of winning cells they leave
  // us, ties in centre-first order (insertion sort keeps it stable).
  uint64_t moves[kWidth];
  int scores[kWidth];
  int count = 0;
  for (int col : kColumnOrder) {
    const uint64_t move = next & ColumnMask(col);
    if (!move) continue;
    const int score = p.MoveScore(move);
    int j = count++;
    for (; j > 0 && scores[j - 1] < score; --j) {
      moves[j] = moves[j - 1];
      scores[j] = scores[j - 1];
    }
    moves[j] = move;
    scores[j] = score;
  }

  // Enhanced transposition cutoff: a child the table already refutes.
  for (int i = 0; i < count; ++i) {
    const uint64_t* e = Find(p.Play(moves[i]).Key());
    if (e && -EntryUpper(*e) >= beta) return -EntryUpper(*e);
  }
  for (int i = 0; i < count; ++i) {
    const int score = -Negamax(p.Play(moves[i]), -beta, -alpha);
    if (score >= beta) {  // a lower bound
      Store(key, score, kHighBound, node_count_ - first_node);
      return score;
    }
    alpha = std::max(alpha, score);
  }
  Store(key, kLowBound, alpha, node_count_ - first_node);  // alpha is an upper bound
  return alpha;
}

int Connect4Solver::SolvePosition(const Position& p, bool weak) {
  if (p.CanWinNext()) return weak ? 1 : (kCells + 1 - p.moves) / 2;
  // Null-window searches bisect [lo, hi], the score's known range. Each probe
  // goes halfway between 0 and the bound on the midpoint's side (Pons's
  // choice): probes far from 0 are cheap and usually narrow the range fast.
  int lo = -(kCells - p.moves) / 2;
  int hi = (kCells - 1 - p.moves) / 2;
  if (weak) {
    lo = std::max(lo, -1);
    hi = std::min(hi, 1);
  }
  while (lo < hi) {
    int med = lo + (hi - lo) / 2;
    if (med <= 0 && lo / 2 < med) {
      med = lo / 2;
    } else if (med >= 0 && hi / 2 > med) {
      med = hi / 2;
    }
    const int r = Negamax(p, med, med + 1);
    if (r <= med) {
      hi = r;
    } else {
      lo = r;
    }
  }
  return weak ? (lo > 0) - (lo < 0) : lo;
}

namespace {
bool Finished(const Connect4State& s, int* score) {
  if (s.Winner() >= 0) {
    *score = -(kCells + 2 - s.MoveNumber()) / 2;  // the opponent won with its last stone
    return true;
  }
  if (s.MoveNumber() == kCells) {
    *score = 0;
    return true;
  }
  return false;
}
}  // namespace

int Connect4Solver::Solve(const Connect4State& s) {
  int score = 0;
  if (Finished(s, &score)) return score;
  const int me = s.CurrentPlayer();
  return SolvePosition(Position{s.Stones(me), s.Stones(0) | s.Stones(1), s.MoveNumber()}, false);
}

int Connect4Solver::SolveWeak(const Connect4State& s) {
  int score = 0;
  if (Finished(s, &score)) return (score > 0) - (score < 0);
  const int me = s.CurrentPlayer();
  return SolvePosition(Position{s.Stones(me), s.Stones(0) | s.Stones(1), s.MoveNumber()}, true);
}

std::array<int, Connect4Game::kWidth> Connect4Solver::ScoreMoves(const Connect4State& s) {
  std::array<int, kWidth> scores;
  scores.fill(kIllegal);
  for (int a = 0; a < kWidth; ++a) {
    if (!s.IsLegal(a)) continue;  // false for every column of a terminal state
    Connect4State child = s;
    child.Apply(a);
    scores[a] = -Solve(child);
  }
  return scores;
}

bool Connect4Solver::AtLeast(const Connect4State& s, int target) {
  int score = 0;
  if (Finished(s, &score)) return score >= target;
  const int me = s.CurrentPlayer();
  const Position p{s.Stones(me), s.Stones(0) | s.Stones(1), s.MoveNumber()};
  if (p.CanWinNext()) return (kCells + 1 - p.moves) / 2 >= target;
  if (target <= -(kCells - p.moves) / 2) return true;
  if (target > (kCells - 1 - p.moves) / 2) return false;
  // Null window (target - 1, target): the result is > target - 1 iff the score is.
  return Negamax(p, target - 1, target) >= target;
}

std::array<Connect4Solver::MoveQuality, Connect4Game::kWidth> Connect4Solver::RateMoves(
    const Connect4State& s, int best) {
  std::array<MoveQuality, kWidth> out;
  out.fill(kIllegalMove);
  const int class_floor = best > 0 ? 1 : best == 0 ? 0 : kMinScore;  // lowest score of best's outcome
  for (int a = 0; a < kWidth; ++a) {
    if (!s.IsLegal(a)) continue;
    Connect4State child = s;
    child.Apply(a);
    // score(a) = -Solve(child) >= t  <=>  Solve(child) <= -t  <=>  !AtLeast(child, 1 - t).
    if (!AtLeast(child, 1 - best))
      out[a] = kOptimal;
    else if (!AtLeast(child, 1 - class_floor))
      out[a] = kSameOutcome;
    else
      out[a] = kWorseOutcome;
  }
  return out;
}

}  // namespace zerofarm::game
