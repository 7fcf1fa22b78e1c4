#pragma once
// Single-process self-play: K concurrent games, their leaves batched into one
// Evaluator call per round by the batched search driver (eval/batched_search.h),
// through the same leaf API the farm's workers use.
// The stepping stone to the farm, and a tool for tests and `zerofarm selfplay`.
#include <cstdint>
#include <functional>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/mcts/game_record.h"
#include "zerofarm/mcts/search_config.h"

namespace zerofarm::eval {

struct SelfPlayOptions {
  int concurrent_games = 16;  // K games in flight
  int total_games = 16;       // games to finish
  int max_batch = 256;        // most leaves per Evaluate call
  uint64_t seed = 1;
};

struct SelfPlayStats {
  int64_t games = 0;
  int64_t positions = 0;
  int64_t leaves = 0;   // leaves evaluated by the network
  int64_t batches = 0;  // Evaluate calls
  double seconds = 0.0;
  double MeanBatch() const { return batches ? static_cast<double>(leaves) / batches : 0.0; }
};

// Plays options.total_games games; calls on_game for each finished one (in
// the order they finish) and returns the totals.
SelfPlayStats RunInProcessSelfPlay(const game::Game& game, Evaluator& evaluator,
                                   const mcts::SearchConfig& search, const SelfPlayOptions& options,
                                   const std::function<void(mcts::GameRecord&&)>& on_game);

}  // namespace zerofarm::eval
