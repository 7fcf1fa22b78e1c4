// A network asked in other orientations (eval/symmetric_evaluator.h),
// checked with the random evaluator, whose answers differ between a position
// and its mirror image: averaged or canonical, they must not.
#include "zerofarm/eval/symmetric_evaluator.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>

#include "zerofarm/core/error.h"
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

// `positions` (n leaves' features back to back), each turned by symmetry s.
std::vector<uint8_t> Turned(const game::SymmetryTables& tables, const std::vector<uint8_t>& positions, int n,
                            int s) {
  const size_t fb = static_cast<size_t>(tables.FeatureBytes());
  std::vector<uint8_t> out(positions.size());
  for (int i = 0; i < n; ++i) tables.TransformFeatures(s, &positions[i * fb], &out[i * fb]);
  return out;
}

// A game, its symmetries and six positions of it: what the tests run on every game start from.
struct GameCase {
  explicit GameCase(const std::string& name)
      : g(game::MakeGame(name)),
        tables(*g),
        actions(g->ActionCount()),
        fb(g->Shape().FeatureBytes()),
        positions(Positions(*g, n)) {}
  const std::unique_ptr<game::Game> g;
  const game::SymmetryTables tables;
  const int n = 6, actions, fb;
  const std::vector<uint8_t> positions;
};

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

const eval::Orientation kMean{eval::Orientation::kMean, 0};

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
    const GameCase c(name);
    const auto& [g, tables, n, actions, fb, positions] = c;
    auto averaged =
        eval::MakeOrientedEvaluator(*g, eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 7), kMean);
    const Answers base = Evaluate(*averaged, positions, n);
    for (int s = 1; s < tables.Count(); ++s) {
      const std::vector<uint8_t> images = Turned(tables, positions, n, s);
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
  auto averaged =
      eval::MakeOrientedEvaluator(*g, eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 3), kMean);
  CHECK_THAT(averaged->Describe(), Catch::Contains("averaged over 2 symmetries"));
  const std::vector<uint8_t> mirrored = Turned(tables, positions, n, 1);
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

namespace {

// Counts the leaves its inner network is asked about.
class Counting final : public eval::Evaluator {
 public:
  explicit Counting(std::unique_ptr<eval::Evaluator> inner, int* leaves)
      : inner_(std::move(inner)), leaves_(leaves) {}
  void Evaluate(const eval::LeafChunk* chunks, int n) override {
    for (int c = 0; c < n; ++c) *leaves_ += chunks[c].count;
    inner_->Evaluate(chunks, n);
  }
  void RegisterHostMemory(void*, size_t) override {}
  uint32_t ModelVersion() const override { return inner_->ModelVersion(); }
  const eval::NetConfig& Config() const override { return inner_->Config(); }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  std::unique_ptr<eval::Evaluator> inner_;
  int* leaves_;
};

// Whether some symmetry other than the identity maps the position to itself.
bool SelfSymmetric(const game::SymmetryTables& tables, const uint8_t* features) {
  std::vector<uint8_t> image(tables.FeatureBytes());
  for (int s = 1; s < tables.Count(); ++s) {
    tables.TransformFeatures(s, features, image.data());
    if (std::equal(image.begin(), image.end(), features)) return true;
  }
  return false;
}

// The plain network's answer to `positions` turned by symmetry s, turned back.
Answers TurnedBack(eval::Evaluator& plain, const game::SymmetryTables& tables,
                   const std::vector<uint8_t>& positions, int n, int s) {
  const int actions = plain.Config().actions;
  Answers a = Evaluate(plain, Turned(tables, positions, n, s), n);
  std::vector<float> back(a.policy.size());
  for (int i = 0; i < n; ++i) tables.UntransformPolicy(s, &a.policy[i * actions], &back[i * actions]);
  a.policy = back;
  return a;
}

}  // namespace

TEST_CASE("turned by one symmetry, each leaf gets the network's answer to its image, one evaluation each",
          "[eval]") {
  const auto g = game::MakeGame("connect4");
  const game::SymmetryTables tables(*g);
  const int n = 5;
  const auto positions = Positions(*g, n);
  auto plain = eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 3);
  int leaves = 0;
  auto mirrored = eval::MakeOrientedEvaluator(
      *g, std::make_unique<Counting>(eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 3), &leaves),
      eval::ParseOrientation("1", *g));
  CHECK_THAT(mirrored->Describe(), Catch::Contains("turned by symmetry 1"));
  const Answers got = Evaluate(*mirrored, positions, n);
  CHECK(leaves == n);
  const Answers want = TurnedBack(*plain, tables, positions, n, 1), as_is = Evaluate(*plain, positions, n);
  CHECK(got.value == want.value);
  CHECK(got.policy == want.policy);
  CHECK(got.value != as_is.value);  // else the check above proves nothing
}

TEST_CASE("in the canonical orientation, a position and its images get one answer, one evaluation each",
          "[eval]") {
  for (const std::string name : {"connect4", "tictactoe", "othello"}) {
    INFO(name);
    const GameCase c(name);
    const auto& [g, tables, n, actions, fb, positions] = c;
    auto plain = eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 5);
    int leaves = 0;
    auto canonical = eval::MakeOrientedEvaluator(
        *g, std::make_unique<Counting>(eval::MakeRandomEvaluator(eval::GameNetConfig(*g), 5), &leaves),
        eval::ParseOrientation("canonical", *g));
    const Answers base = Evaluate(*canonical, positions, n);
    CHECK(leaves == n);
    // Each answer is the plain network's in one orientation: the canonical one.
    std::vector<uint8_t> scratch(fb);
    for (int i = 0; i < n; ++i) {
      const int s = game::HashCanonical(tables, &positions[i * fb], scratch.data()).symmetry;
      const std::vector<uint8_t> one(&positions[i * fb], &positions[(i + 1) * fb]);
      const Answers want = TurnedBack(*plain, tables, one, 1, s);
      CHECK(base.value[i] == want.value[0]);
      CHECK(std::equal(want.policy.begin(), want.policy.end(), &base.policy[i * actions]));
    }
    int turned = 0;
    for (int s = 1; s < tables.Count(); ++s) {
      const std::vector<uint8_t> images = Turned(tables, positions, n, s);
      const Answers image = Evaluate(*canonical, images, n);
      for (int i = 0; i < n; ++i) {
        CHECK(image.value[i] == base.value[i]);
        // A position with a symmetry of its own (the empty board) has more than
        // one way to its canonical orientation, and the network's policy there
        // need not have that symmetry: the policies agree up to it only.
        if (SelfSymmetric(tables, &positions[i * fb])) continue;
        ++turned;
        std::vector<float> back(actions);
        tables.UntransformPolicy(s, &image.policy[i * actions], back.data());
        CHECK(std::equal(back.begin(), back.end(), &base.policy[i * actions]));
      }
    }
    CHECK(turned >= (n - 1) * (tables.Count() - 1) / 2);
  }
}

TEST_CASE("the orientation of --orientation: as-is, canonical, mean or one of the game's symmetries",
          "[eval]") {
  const auto c4 = game::MakeGame("connect4"), ttt = game::MakeGame("tictactoe");
  CHECK(eval::ParseOrientation("as-is", *c4).AsIs());
  CHECK(eval::ParseOrientation("0", *c4).AsIs());
  CHECK(eval::ParseOrientation("1", *c4).symmetry == 1);
  CHECK(eval::ParseOrientation("canonical", *c4).kind == eval::Orientation::kCanonical);
  CHECK(eval::ParseOrientation("mean", *c4).EvaluationsPerLeaf(*c4) == 2);
  CHECK(eval::ParseOrientation("mean", *ttt).EvaluationsPerLeaf(*ttt) == 8);
  CHECK(eval::ParseOrientation("7", *ttt).Name() == "7");
  CHECK_THROWS_WITH(eval::ParseOrientation("2", *c4), Catch::Contains("connect4 in [1, 1]"));
  CHECK_THROWS_WITH(eval::ParseOrientation("8", *ttt), Catch::Contains("expected as-is, canonical, mean"));
  CHECK_THROWS_AS(eval::ParseOrientation("mirror", *c4), ConfigError);
  CHECK_THROWS_AS(eval::ParseOrientation("", *c4), ConfigError);
  // The network itself when shown positions as they are.
  auto inner = eval::MakeRandomEvaluator(eval::GameNetConfig(*c4), 1);
  eval::Evaluator* raw = inner.get();
  CHECK(eval::MakeOrientedEvaluator(*c4, std::move(inner), {}).get() == raw);
}
