#include "zerofarm/eval/inprocess_selfplay.h"

#include <memory>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/batched_search.h"
#include "zerofarm/mcts/selfplay_game.h"

namespace zerofarm::eval {
namespace {

// A self-play game as a LeafSource of the batched driver.
class GameSource : public LeafSource {
 public:
  GameSource(const game::Game& game, const mcts::SearchConfig& search, uint64_t id, uint64_t seed)
      : game_(game, search, id, seed, 0) {}
  bool Done() const override { return game_.Finished(); }
  int NextLeaves(int max, std::vector<mcts::LeafRequest>* out) override { return game_.NextLeaves(max, out); }
  void Complete(int token, const float* logits, float value, uint32_t model_version) override {
    game_.OnResult(token, logits, value, model_version);
  }
  mcts::GameRecord TakeRecord() { return game_.TakeRecord(); }

 private:
  mcts::SelfPlayGame game_;
};

}  // namespace

SelfPlayStats RunInProcessSelfPlay(const game::Game& game, Evaluator& evaluator,
                                   const mcts::SearchConfig& search, const SelfPlayOptions& options,
                                   const std::function<void(mcts::GameRecord&&)>& on_game) {
  ZF_CHECK(options.concurrent_games >= 1 && options.max_batch >= 1);
  const double start = MonotonicSeconds();
  BatchedSearch driver(game, evaluator, options.max_batch);
  SelfPlayStats stats;
  int started = 0;
  std::vector<std::unique_ptr<GameSource>> games;
  std::vector<LeafSource*> sources;
  auto start_game = [&]() {
    const uint64_t id = static_cast<uint64_t>(started++);
    return std::make_unique<GameSource>(game, search, id, MixSeed(options.seed, id));
  };
  while (static_cast<int>(games.size()) < options.concurrent_games && started < options.total_games)
    games.push_back(start_game());

  while (!games.empty()) {
    // Every game in flight is unfinished here: one round asks each, in order,
    // for leaves_per_round leaves while they fit in the batch.
    sources.assign(games.size(), nullptr);
    for (size_t g = 0; g < games.size(); ++g) sources[g] = games[g].get();
    const int64_t leaves_before = driver.Leaves();
    driver.Round(sources, 0, search.leaves_per_round);
    const bool evaluated = driver.Leaves() > leaves_before;
    // Hand over finished games and start new ones in their place.
    for (size_t g = 0; g < games.size();) {
      if (!games[g]->Done()) {
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
    ZF_CHECK(evaluated || games.empty() || stats.games > 0 || started > 0) << "self-play made no progress";
  }
  stats.leaves = driver.Leaves();
  stats.batches = driver.Batches();
  stats.seconds = MonotonicSeconds() - start;
  return stats;
}

}  // namespace zerofarm::eval
