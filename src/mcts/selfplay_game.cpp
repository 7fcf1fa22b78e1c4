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
  // Drawn first and always, so the rest of the game's randomness does not
  // depend on whether resignation is on.
  const bool playthrough = rng_.Uniform() < config_.resign_playthrough;
  may_resign_ = config_.ResignEnabled() && !playthrough;
  const auto start = game.NewInitialState();
  if (config_.random_opening_plies > 0) PlayRandomOpening(start.get());
  search_.SetRoot(*start);
  StartMove();
}

void SelfPlayGame::PlayRandomOpening(game::State* state) {
  const auto plies = rng_.Below(static_cast<uint64_t>(config_.random_opening_plies) + 1);
  std::vector<int> legal, open;  // open: the legal moves that do not end the game
  for (uint64_t i = 0; i < plies; ++i) {
    legal.clear();
    state->LegalActions(&legal);
    open.clear();
    for (const int a : legal) {
      const auto next = state->Clone();
      next->Apply(a);
      if (!next->IsTerminal()) open.push_back(a);
    }
    if (open.empty()) return;
    const int a = open[rng_.Below(open.size())];
    state->Apply(a);
    record_.moves.push_back(static_cast<int16_t>(a));
  }
}

void SelfPlayGame::StartMove() {
  full_search_ = true;
  if (config_.playout_cap_fraction > 0.0f && rng_.Uniform() < config_.playout_cap_fraction) {
    full_search_ = false;
    search_.SetMoveBudget(std::min(config_.fast_simulations, config_.simulations), false);
  }
}

void SelfPlayGame::Finish(int winner) {
  finished_ = true;
  record_.winner = winner;
  // z holds the mover of each position until now.
  for (float& z : record_.z) {
    const int mover = static_cast<int>(z);
    z = winner < 0 ? 0.0f : (winner == mover ? 1.0f : -1.0f);
  }
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
  record_.full_search.push_back(full_search_ ? 1 : 0);
  // z is filled in when the game ends; remember who was to move.
  const int mover = root.CurrentPlayer();
  record_.z.push_back(static_cast<float>(mover));

  if (config_.ResignEnabled()) {
    low_moves_[mover] = search_.RootValue() < config_.resign_threshold ? low_moves_[mover] + 1 : 0;
    if (low_moves_[mover] >= config_.resign_moves) {
      if (may_resign_) {
        record_.resigned = mover;
        Finish(1 - mover);
        return;
      }
      if (record_.would_resign < 0) record_.would_resign = mover;
    }
  }

  const int action = search_.ChooseAction(config_.MoveTemperature(ply), rng_);
  record_.moves.push_back(static_cast<int16_t>(action));
  search_.Advance(action);
  // search_model_version_ carries over: a search that needs no new network
  // call (reused tree, terminal leaves) was still guided by that model.

  const game::State& next = search_.RootState();
  if (next.IsTerminal())
    Finish(next.Winner());
  else
    StartMove();
}

GameRecord SelfPlayGame::TakeRecord() {
  ZF_CHECK(finished_) << "TakeRecord before the game ended";
  GameRecord r = std::move(record_);
  record_ = GameRecord{};
  return r;
}

}  // namespace zerofarm::mcts
