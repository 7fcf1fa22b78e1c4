#include "zerofarm/eval/inprocess_selfplay.h"

#include <memory>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/mcts/selfplay_game.h"

namespace zerofarm::eval {

SelfPlayStats RunInProcessSelfPlay(const game::Game& game, Evaluator& evaluator,
                                   const mcts::SearchConfig& search, const SelfPlayOptions& options,
                                   const std::function<void(mcts::GameRecord&&)>& on_game) {
  ZF_CHECK(options.concurrent_games >= 1 && options.max_batch >= 1);
  const double start = MonotonicSeconds();
  const size_t feature_bytes = static_cast<size_t>(game.Shape().FeatureBytes());
  const size_t actions = static_cast<size_t>(game.ActionCount());
  const int per_game = search.leaves_per_round;
  // The batch buffers, laid out as one chunk (structure of arrays).
  std::vector<uint8_t> features(options.max_batch * feature_bytes);
  std::vector<float> policy(options.max_batch * actions);
  std::vector<float> value(options.max_batch);
  struct Owner {
    int game;
    int token;
  };
  std::vector<Owner> owners(options.max_batch);

  SelfPlayStats stats;
  int started = 0;
  std::vector<std::unique_ptr<mcts::SelfPlayGame>> games;
  auto start_game = [&]() {
    const uint64_t id = static_cast<uint64_t>(started++);
    return std::make_unique<mcts::SelfPlayGame>(game, search, id, MixSeed(options.seed, id), 0);
  };
  while (static_cast<int>(games.size()) < options.concurrent_games && started < options.total_games)
    games.push_back(start_game());

  std::vector<mcts::LeafRequest> leaves;
  while (!games.empty()) {
    int n = 0;
    for (size_t g = 0; g < games.size() && n + per_game <= options.max_batch; ++g) {
      leaves.clear();
      games[g]->NextLeaves(per_game, &leaves);
      for (const auto& leaf : leaves) {
        leaf.state->EncodeFeatures(features.data() + n * feature_bytes);
        owners[n] = Owner{static_cast<int>(g), leaf.token};
        ++n;
      }
    }
    if (n > 0) {
      LeafChunk chunk{features.data(), policy.data(), value.data(), n};
      evaluator.Evaluate(&chunk, 1);
      stats.leaves += n;
      stats.batches += 1;
      const uint32_t version = evaluator.ModelVersion();
      for (int i = 0; i < n; ++i)
        games[owners[i].game]->OnResult(owners[i].token, policy.data() + i * actions, value[i], version);
    }
    // Hand over finished games and start new ones in their place.
    for (size_t g = 0; g < games.size();) {
      if (!games[g]->Finished()) {
        ++g;
        continue;
      }
      mcts::GameRecord record = games[g]->TakeRecord();
      stats.games += 1;
      stats.positions += static_cast<int64_t>(record.Positions());
      on_game(std::move(record));
      if (started < options.total_games) {
        games[g] = start_game();
        ++g;
      } else {
        games.erase(games.begin() + static_cast<long>(g));
      }
    }
    ZF_CHECK(n > 0 || games.empty() || stats.games > 0 || started > 0) << "self-play made no progress";
  }
  stats.seconds = MonotonicSeconds() - start;
  return stats;
}

}  // namespace zerofarm::eval
