#include "zerofarm/eval/batched_search.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

using namespace zerofarm;

namespace {

// A random network that records the size of every batch it is given.
class CountingEvaluator : public eval::Evaluator {
 public:
  explicit CountingEvaluator(const game::Game& g) {
    inner_ = eval::MakeRandomEvaluator(eval::GameNetConfig(g), 7);
  }
  void Evaluate(const eval::LeafChunk* chunks, int num_chunks) override {
    for (int i = 0; i < num_chunks; ++i) batches.push_back(chunks[i].count);
    inner_->Evaluate(chunks, num_chunks);
  }
  uint32_t ModelVersion() const override { return 5; }
  const eval::NetConfig& Config() const override { return inner_->Config(); }
  std::string Describe() const override { return "counting " + inner_->Describe(); }
  std::vector<int> batches;

 private:
  std::unique_ptr<eval::Evaluator> inner_;
};

// A source that hands out `leaves` leaves in all, at most `max` at a time, and
// remembers the versions and the order it was asked in.
class FixedSource : public eval::LeafSource {
 public:
  FixedSource(const game::State& state, int leaves, std::vector<int>* asked, int id)
      : state_(state), left_(leaves), asked_(asked), id_(id) {}
  bool Done() const override { return left_ == 0 && in_flight_ == 0; }
  int NextLeaves(int max, std::vector<mcts::LeafRequest>* out) override {
    asked_->push_back(id_);
    int n = 0;
    for (; n < max && left_ > 0; ++n, --left_, ++in_flight_) out->push_back(mcts::LeafRequest{n, &state_});
    return n;
  }
  void Complete(int, const float*, float, uint32_t model_version) override {
    --in_flight_;
    versions.push_back(model_version);
  }
  std::vector<uint32_t> versions;

 private:
  const game::State& state_;
  int left_;
  int in_flight_ = 0;
  std::vector<int>* asked_;
  int id_;
};

}  // namespace

TEST_CASE("batched search: RunSearches brings every search to its budget in batches of at most max_batch",
          "[eval][search]") {
  auto g = game::MakeGame("tictactoe");
  CountingEvaluator net(*g);
  mcts::SearchConfig config;
  config.simulations = 12;
  config.leaves_per_round = 2;
  auto root = g->NewInitialState();
  std::vector<std::unique_ptr<mcts::Search>> trees;
  std::vector<mcts::Search*> searches;
  for (int i = 0; i < 5; ++i) {
    trees.push_back(std::make_unique<mcts::Search>(*g, config, 100 + i));
    trees.back()->SetRoot(*root);
    searches.push_back(trees.back().get());
  }
  eval::RunSearches(*g, net, searches, 3);
  for (const auto* s : searches) CHECK(s->Done());
  REQUIRE_FALSE(net.batches.empty());
  for (int b : net.batches) {
    CHECK(b >= 1);
    CHECK(b <= 3);
  }
}

TEST_CASE("batched search: a round asks sources in turn from `start` while their leaves fit",
          "[eval][search]") {
  auto g = game::MakeGame("tictactoe");
  CountingEvaluator net(*g);
  auto state = g->NewInitialState();
  std::vector<int> asked;
  FixedSource a(*state, 4, &asked, 0), b(*state, 4, &asked, 1), c(*state, 4, &asked, 2);
  const std::vector<eval::LeafSource*> sources = {&a, &b, &c};
  eval::BatchedSearch driver(*g, net, 5);
  // Two leaves each from source 1 on: 1 and 2 fit (4 leaves), 0 would not (6 > 5).
  REQUIRE(driver.Round(sources, 1, 2));
  CHECK(asked == std::vector<int>{1, 2});
  CHECK(net.batches == std::vector<int>{4});
  CHECK(b.versions == std::vector<uint32_t>{5, 5});
  // As many as there is room for: source 0 takes 4, source 1 the last slot.
  asked.clear();
  REQUIRE(driver.Round(sources, 0, 0));
  CHECK(asked == std::vector<int>{0, 1});
  CHECK(net.batches.back() == 5);
  CHECK(a.Done());
  CHECK(driver.Leaves() == 9);
  CHECK(driver.Batches() == 2);
  while (driver.Round(sources, 0, 0)) {
  }
  CHECK(b.Done());
  CHECK(c.Done());
  CHECK(driver.Leaves() == 12);
}
