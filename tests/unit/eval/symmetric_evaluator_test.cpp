// The mean of a network over a game's symmetries (eval/symmetric_evaluator.h),
// checked with the random evaluator, whose answers differ between a position
// and its mirror image: averaged, they must not.
#include "zerofarm/eval/symmetric_evaluator.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/game/symmetry.h"

using namespace zerofarm;

namespace {

// n positions of `g` along games (none terminal), features back to back.
std::vector<uint8_t> Positions(const game::Game& g, int n) {
  auto s = g.NewInitialState();
  const size_t fb = static_cast<size_t>(g.Shape().FeatureBytes());
  std::vector<uint8_t> f(n * fb);
  std::vector<int> legal;
  for (int i = 0; i < n; ++i) {
    if (s->IsTerminal()) s = g.NewInitialState();
    s->EncodeFeatures(&f[i * fb]);
    s->LegalActions(&legal);
    s->Apply(legal[(i * 5 + 1) % legal.size()]);
  }
  return f;
}

struct Answers {
  std::vector<float> policy, value;
};

// Evaluates `features` (n leaves) in two chunks, as a batch across two rings.
Answers Evaluate(eval::Evaluator& e, const std::vector<uint8_t>& features, int n) {
  const auto& c = e.Config();
  const size_t fb = static_cast<size_t>(c.planes) * c.height * c.width;
  Answers a{std::vector<float>(n * c.actions), std::vector<float>(n)};
  const int split = n / 2;
  const eval::LeafChunk chunks[2] = {
      {features.data(), a.policy.data(), a.value.data(), split},
      {features.data() + split * fb, a.policy.data() + split * c.actions, a.value.data() + split, n - split}};
  e.Evaluate(chunks, 2);
  return a;
}

std::vector<float> Softmax(const float* logits, int n) {
  std::vector<float> p(logits, logits + n);
  float top = p[0], total = 0;
  for (float x : p) top = std::max(top, x);
  for (float& x : p) total += (x = std::exp(x - top));
  for (float& x : p) x /= total;
  return p;
}

}  // namespace

TEST_CASE("averaged over the symmetries, a position and its images get the same answer", "[eval]") {
  for (const std::string name : {"connect4", "tictactoe", "othello"}) {
    INFO(name);
    const auto g = game::MakeGame(name);
    const game::SymmetryTables tables(*g);
    const int n = 6, actions = g->ActionCount(), fb = g->Shape().FeatureBytes();
    const auto positions = Positions(*g, n);
    auto averaged = eval::MakeSymmetricEvaluator(*g, eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 7));
    const Answers base = Evaluate(*averaged, positions, n);
    for (int s = 1; s < tables.Count(); ++s) {
      std::vector<uint8_t> images(positions.size());
      for (int i = 0; i < n; ++i) tables.TransformFeatures(s, &positions[i * fb], &images[i * fb]);
      const Answers image = Evaluate(*averaged, images, n);
      for (int i = 0; i < n; ++i) {
        CHECK(image.value[i] == Approx(base.value[i]).margin(1e-6));
        // The image's policy, turned back, is the position's.
        std::vector<float> back(actions);
        tables.UntransformPolicy(s, &image.policy[i * actions], back.data());
        const auto p = Softmax(back.data(), actions), q = Softmax(&base.policy[i * actions], actions);
        for (int a = 0; a < actions; ++a) CHECK(p[a] == Approx(q[a]).margin(1e-6));
      }
    }
  }
}

TEST_CASE("the averaged answer is the mean of the network's answers in each orientation", "[eval]") {
  const auto g = game::MakeGame("connect4");
  const game::SymmetryTables tables(*g);
  REQUIRE(tables.Count() == 2);
  const int n = 5, actions = g->ActionCount(), fb = g->Shape().FeatureBytes();
  const auto positions = Positions(*g, n);
  auto plain = eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 3);
  auto averaged = eval::MakeSymmetricEvaluator(*g, eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 3));
  CHECK_THAT(averaged->Describe(), Catch::Contains("averaged over 2 symmetries"));
  std::vector<uint8_t> mirrored(positions.size());
  for (int i = 0; i < n; ++i) tables.TransformFeatures(1, &positions[i * fb], &mirrored[i * fb]);
  const Answers as_is = Evaluate(*plain, positions, n), mirror = Evaluate(*plain, mirrored, n);
  const Answers mean = Evaluate(*averaged, positions, n);
  // The random network must answer the two orientations of a lopsided position
  // differently, or this proves nothing (the empty board is its own mirror).
  int lopsided = 0, differ = 0;
  for (int i = 0; i < n; ++i) {
    if (!std::equal(&positions[i * fb], &positions[(i + 1) * fb], &mirrored[i * fb])) {
      ++lopsided;
      differ += as_is.value[i] != mirror.value[i];
    }
    CHECK(mean.value[i] == Approx((as_is.value[i] + mirror.value[i]) / 2).margin(1e-6));
    std::vector<float> back(actions);
    tables.UntransformPolicy(1, &mirror.policy[i * actions], back.data());
    const auto p = Softmax(&as_is.policy[i * actions], actions), q = Softmax(back.data(), actions);
    const auto m = Softmax(&mean.policy[i * actions], actions);
    for (int a = 0; a < actions; ++a) CHECK(m[a] == Approx((p[a] + q[a]) / 2).margin(1e-6));
  }
  CHECK(lopsided >= n - 1);
  CHECK(differ == lopsided);
}
