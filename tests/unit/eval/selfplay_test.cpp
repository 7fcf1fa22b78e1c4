#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <set>

#include "zerofarm/eval/inprocess_selfplay.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;

namespace {
eval::NetConfig ConfigFor(const game::Game& g, int blocks, int filters) {
  return eval::GameNetConfig(g, blocks, filters, 32);
}
}  // namespace

TEST_CASE("in-process self-play: 20 Connect Four games with a random net have valid records",
          "[eval][selfplay]") {
  auto g = game::MakeGame("connect4");
  const auto config = ConfigFor(*g, 2, 16);
  std::unique_ptr<eval::Evaluator> evaluator =
      eval::TorchAvailable() ? eval::MakeTorchEvaluator(eval::RandomWeights(config, 42), {})
                             : eval::MakeRandomEvaluator(config, 42);
  mcts::SearchConfig search;
  search.simulations = 24;
  eval::SelfPlayOptions options;
  options.concurrent_games = 8;
  options.total_games = 20;
  options.max_batch = 64;
  std::vector<mcts::GameRecord> records;
  auto stats = eval::RunInProcessSelfPlay(*g, *evaluator, search, options,
                                          [&](mcts::GameRecord&& r) { records.push_back(std::move(r)); });
  REQUIRE(records.size() == 20);
  CHECK(stats.games == 20);
  CHECK(stats.MeanBatch() > 1.0);  // leaves of several games share a call

  const size_t fb = g->Shape().FeatureBytes();
  const size_t actions = g->ActionCount();
  std::set<uint64_t> ids;
  std::vector<uint8_t> expected_features(fb);
  std::vector<int> legal;
  for (const auto& r : records) {
    ids.insert(r.game_id);
    REQUIRE(r.Positions() == r.moves.size());
    auto state = g->NewInitialState();
    for (size_t i = 0; i < r.Positions(); ++i) {
      CHECK(r.ply[i] == static_cast<int>(i));
      state->EncodeFeatures(expected_features.data());
      CHECK(std::equal(expected_features.begin(), expected_features.end(), r.features.begin() + i * fb));
      state->LegalActions(&legal);
      const float* p = r.policy.data() + i * actions;
      float sum = 0.0f;
      for (size_t a = 0; a < actions; ++a) {
        const bool is_legal = std::find(legal.begin(), legal.end(), static_cast<int>(a)) != legal.end();
        if (!is_legal) CHECK(p[a] == 0.0f);
        CHECK(p[a] >= 0.0f);
        sum += p[a];
      }
      CHECK(sum == Approx(1.0f).epsilon(1e-5));
      CHECK(std::abs(r.root_value[i]) <= 1.0f);
      const int mover = state->CurrentPlayer();
      state->Apply(r.moves[i]);
      // z is the final result from the view of the player to move here.
      const float expected_z = r.winner < 0 ? 0.0f : (r.winner == mover ? 1.0f : -1.0f);
      CHECK(r.z[i] == expected_z);
    }
    REQUIRE(state->IsTerminal());
    CHECK(state->Winner() == r.winner);
  }
  CHECK(ids.size() == 20);
}
