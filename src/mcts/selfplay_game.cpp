#include "zerofarm/mcts/selfplay_game.h"

#include <algorithm>

#include "zerofarm/core/error.h"

namespace zerofarm::mcts {

SelfPlayGame::SelfPlayGame(const game::Game& game, const SearchConfig& config, uint64_t game_id,
                           uint64_t seed, int worker)
    : game_(game), config_(config), search_(game, config, MixSeed(seed, 1)), rng_(MixSeed(seed, 2)) {
  record_.game_id = game_id;
  record_.seed = seed;
  record_.worker = worker;
  policy_scratch_.resize(game.ActionCount());
  search_.SetRoot(*game.NewInitialState());
}

int SelfPlayGame::NextLeaves(int max, std::vector<LeafRequest>* out) {
  while (!finished_) {
    const int n = search_.SelectLeaves(max, out);
    if (n > 0) return n;
    if (!search_.Done()) return 0;  // waiting for leaves in flight
    PlayMove();
  }
  return 0;
}

void SelfPlayGame::OnResult(int token, const float* logits, float value, uint32_t model_version) {
  search_model_version_ = std::max(search_model_version_, model_version);
  search_.CompleteLeaf(token, logits, value);
}

void SelfPlayGame::PlayMove() {
  const game::State& root = search_.RootState();
  const int ply = Ply();
  // Record the searched position.
  const size_t feature_bytes = static_cast<size_t>(game_.Shape().FeatureBytes());
  const size_t offset = record_.features.size();
  record_.features.resize(offset + feature_bytes);
  root.EncodeFeatures(record_.features.data() + offset);
  search_.RootPolicy(policy_scratch_.data());
  record_.policy.insert(record_.policy.end(), policy_scratch_.begin(), policy_scratch_.end());
  record_.root_value.push_back(search_.RootValue());
  record_.ply.push_back(static_cast<int16_t>(ply));
  record_.model_version.push_back(search_model_version_);
  // z is filled in when the game ends; remember who was to move.
  record_.z.push_back(static_cast<float>(root.CurrentPlayer()));

  const float temperature = ply < config_.temperature_plies ? 1.0f : config_.final_temperature;
  const int action = search_.ChooseAction(temperature, rng_);
  record_.moves.push_back(static_cast<int16_t>(action));
  search_.Advance(action);
  // search_model_version_ carries over: a search that needs no new network
  // call (reused tree, terminal leaves) was still guided by that model.

  const game::State& next = search_.RootState();
  if (next.IsTerminal()) {
    finished_ = true;
    record_.winner = next.Winner();
    for (float& z : record_.z) z = next.Outcome(static_cast<int>(z));
  }
}

GameRecord SelfPlayGame::TakeRecord() {
  ZF_CHECK(finished_) << "TakeRecord before the game ended";
  GameRecord r = std::move(record_);
  record_ = GameRecord{};
  return r;
}

}  // namespace zerofarm::mcts
