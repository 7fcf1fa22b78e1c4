#pragma once
// `zerofarm eval`: how strong a network is.
//
// Move error (Connect Four): on a Pons-format file ("moves score" per line,
// Pascal Pons's test sets), the share of positions where the move chosen by
// the network alone (argmax of the policy over legal moves), and by MCTS at N
// simulations (most visited, no noise), is worse than the best move by the
// exact solver's score. The solver's verdict on every move of every position
// is computed once (null-window searches around the file's score, see
// Connect4Solver::RateMoves) and cached in a text file, so evaluating each new
// checkpoint costs only the network's time.
//
// Arena: two networks play each other with MCTS, colours alternating, the
// first plies sampled from the visit counts so that games differ.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "zerofarm/eval/arena_result.h"
#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search.h"
#include "zerofarm/mcts/search_config.h"

namespace zerofarm::learn {

struct PonsPosition {
  std::string moves;  // "4455", 1-based columns
  int score = 0;      // exact score for the side to move
  // Solver verdict per column: Connect4Solver::MoveQuality chars ('2' optimal,
  // '1' same outcome, '0' worse outcome, '-' illegal); empty until rated.
  std::string rating;
};

// Reads up to `limit` lines (0 = all) of a Pons file; ConfigError naming the
// file and line for a malformed or illegal line.
std::vector<PonsPosition> ReadPonsFile(const std::string& path, int limit = 0);

// One line of a verdicts file, "moves score rating\n": the format that
// RatePositions reads and writes and `zerofarm eval --make-set` writes.
std::string RatingLine(const std::string& moves, int score, const std::string& rating);

// Fills `rating` of every position with the solver, using (and updating)
// `cache_path` ("moves score rating" lines; written atomically) when not
// empty, and reading verdicts from `known` files of the same format too (the
// ones shipped in data/connect4). `progress(done, total)` is called once
// before the solver starts when some position is in none of them, then now
// and then, the last time with done == total; only that once when every
// position was found (from one thread at a time). `threads` solvers (64 MiB each) rate the
// positions not found in parallel. Throws Error if the solver disagrees with a
// line's score (a corrupt file); the verdicts made before are kept in the cache.
void RatePositions(std::vector<PonsPosition>* positions, const std::string& cache_path,
                   const std::vector<std::string>& known = {},
                   const std::function<void(int, int)>& progress = {}, int threads = 1);

struct MoveErrorResult {
  int positions = 0;
  int net_errors = 0;          // network alone: chose a move scoring below the best
  int net_outcome_errors = 0;  // ... that gives away a win or a draw
  int mcts_errors = 0;         // MCTS at `simulations`
  int mcts_outcome_errors = 0;
  // The value head against the exact outcome for the side to move (score > 0
  // win, 0 draw, < 0 loss): its mean value per outcome and the share of
  // positions whose value is nearest the right one of -1, 0, +1 (|v| < 1/3
  // reads as a draw). A value head with its sign flipped has value_agree near 0.
  std::array<double, 3> value_mean{};  // [loss, draw, win]
  std::array<int, 3> value_count{};
  int value_agree = 0;
  int simulations = 0;
  double seconds = 0.0;
  // Each position's moves, in the order given (0-based columns; -1: not
  // searched, simulations 0): what the network alone and the search chose,
  // the value head's value and the search's root value (both for the side to
  // move). For finding the positions behind the rates.
  struct Moves {
    int net_move = -1;
    float net_value = 0;
    int mcts_move = -1;
    float mcts_value = 0;
  };
  std::vector<Moves> moves;
  double NetRate() const { return positions ? static_cast<double>(net_errors) / positions : 0.0; }
  double MctsRate() const { return positions ? static_cast<double>(mcts_errors) / positions : 0.0; }
  double NetOutcomeRate() const {
    return positions ? static_cast<double>(net_outcome_errors) / positions : 0.0;
  }
  double MctsOutcomeRate() const {
    return positions ? static_cast<double>(mcts_outcome_errors) / positions : 0.0;
  }
  double ValueAgreement() const { return positions ? static_cast<double>(value_agree) / positions : 0.0; }
};

// The columns RUN/eval/curve.csv and eval.csv give a MoveErrorResult (after
// their own leading columns), and one row's values for them.
inline constexpr const char* kMoveErrorCsvColumns =
    "positions,simulations,net_error,mcts_error,net_outcome_error,mcts_outcome_error,value_agreement";
std::string MoveErrorCsvFields(const MoveErrorResult& m);

// One position's row of `zerofarm eval --positions-csv` (kPositionCsvColumns):
// the file's name, the position (Pons's moves and score), the solver's verdict
// per column, and each chooser's move (1-based, as Pons writes columns), its
// verdict (2 optimal, 1 same outcome, 0 gives the outcome away) and value.
inline constexpr const char* kPositionCsvColumns =
    "file,moves,score,rating,net_move,net_verdict,net_value,mcts_move,mcts_verdict,mcts_value";
std::string PositionCsvRow(const std::string& file, const PonsPosition& p, const MoveErrorResult::Moves& m);

// Rated positions only. search.simulations = 0 skips the MCTS part.
MoveErrorResult MoveError(const game::Game& game, eval::Evaluator& net,
                          const std::vector<PonsPosition>& positions, mcts::SearchConfig search,
                          int max_batch = 256);

// The arena's score (kept in eval, below proc, for the GTP referee too).
using eval::ArenaResult;

// `games` games between a and b, in pairs: games 2k and 2k+1 start from the
// same `opening_plies` uniformly random legal moves (from `seed` and k; moves
// that would end the game are not drawn), a playing player 0 in the first and
// player 1 in the second; then every move is searched and the most visited
// played. Random openings, not moves sampled from the visits: two sharp
// networks would otherwise replay the same few games, and the interval of
// their score would mean nothing.
ArenaResult Arena(const game::Game& game, eval::Evaluator& a, eval::Evaluator& b, int games,
                  mcts::SearchConfig search, int opening_plies, uint64_t seed, int concurrent = 64);

}  // namespace zerofarm::learn
