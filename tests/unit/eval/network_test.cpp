#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>

#include "skip.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;

namespace {
eval::NetConfig SmallConnect4() {
  eval::NetConfig c;
  c.game = "connect4";
  c.planes = 3;
  c.height = 6;
  c.width = 7;
  c.actions = 7;
  c.blocks = 2;
  c.filters = 16;
  c.value_hidden = 16;
  return c;
}

// Features of a few positions, and the evaluator's outputs for them.
struct Outputs {
  std::vector<float> policy, value;
};
Outputs Run(eval::Evaluator& e, const std::vector<uint8_t>& features, int n, int split) {
  const auto& c = e.Config();
  Outputs o{std::vector<float>(n * c.actions), std::vector<float>(n)};
  const size_t fb = static_cast<size_t>(c.planes) * c.height * c.width;
  // Two chunks, as a batch across two rings would be.
  eval::LeafChunk chunks[2] = {
      {features.data(), o.policy.data(), o.value.data(), split},
      {features.data() + split * fb, o.policy.data() + split * c.actions, o.value.data() + split, n - split}};
  e.Evaluate(chunks, 2);
  return o;
}

std::vector<uint8_t> SomePositions(int n) {
  auto g = game::MakeGame("connect4");
  auto s = g->NewInitialState();
  std::vector<uint8_t> f(n * g->Shape().FeatureBytes());
  std::vector<int> legal;
  for (int i = 0; i < n; ++i) {
    if (s->IsTerminal()) s = g->NewInitialState();
    s->EncodeFeatures(f.data() + i * g->Shape().FeatureBytes());
    s->LegalActions(&legal);
    s->Apply(legal[(i * 3) % legal.size()]);
  }
  return f;
}
}  // namespace

TEST_CASE("the network's weights export and import to identical outputs", "[eval][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const auto config = SmallConnect4();
  auto weights = eval::RandomWeights(config, 1);
  // state_dict names, as PyTorch would write them.
  CHECK(weights.Find("stem.conv.weight"));
  CHECK(weights.Find("blocks.1.bn2.running_var"));
  CHECK(weights.Find("policy_head.fc.bias"));
  CHECK(weights.Find("value_head.fc2.weight"));
  CHECK(weights.Find("stem.bn.num_batches_tracked"));
  auto a = eval::MakeTorchEvaluator(weights, {});
  auto b = eval::MakeTorchEvaluator(weights, {});
  auto other = eval::MakeTorchEvaluator(eval::RandomWeights(config, 2), {});
  const auto features = SomePositions(10);
  auto oa = Run(*a, features, 10, 4);
  auto ob = Run(*b, features, 10, 7);
  auto oo = Run(*other, features, 10, 4);
  CHECK(oa.policy == ob.policy);
  CHECK(oa.value == ob.value);
  CHECK(oa.policy != oo.policy);
  for (float v : oa.value) CHECK(std::abs(v) <= 1.0f);
}

TEST_CASE("a value head of several channels: its tensors and outputs, and refused under one channel's config",
          "[eval][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  auto config = SmallConnect4();
  config.value_channels = 4;
  const eval::WeightSet weights = eval::RandomWeights(config, 1);
  REQUIRE(weights.Find("value_head.conv.weight"));
  CHECK(weights.Find("value_head.conv.weight")->shape == std::vector<int64_t>{4, 16, 1, 1});
  CHECK(weights.Find("value_head.bn.weight")->shape == std::vector<int64_t>{4});
  CHECK(weights.Find("value_head.fc1.weight")->shape == std::vector<int64_t>{16, 4 * 42});
  CHECK(weights.config.Describe() == "connect4 3x6x7 -> 7, 2 blocks x 16 filters, value head of 4 channels");
  auto net = eval::MakeTorchEvaluator(weights, {});
  const auto features = SomePositions(6);
  const Outputs o = Run(*net, features, 6, 2);
  for (float v : o.value) CHECK(std::abs(v) <= 1.0f);
  auto one = weights;
  one.config.value_channels = 1;
  CHECK_THROWS_AS(eval::MakeTorchEvaluator(one, {}), ConfigError);
}

TEST_CASE("ScoreBin lays out wins, then losses, then the draw", "[eval]") {
  CHECK(eval::ScoreBin(42, 1, +1) == 0);  // this move wins
  CHECK(eval::ScoreBin(42, 42, +1) == 41);
  CHECK(eval::ScoreBin(42, 2, -1) == 43);  // the opponent's reply wins
  CHECK(eval::ScoreBin(42, 42, -1) == 83);
  CHECK(eval::ScoreBin(42, 7, 0) == 84);  // a draw, however far
  CHECK(eval::ScoreBin(42, 0, +1) == -1);
  CHECK(eval::ScoreBin(42, 43, -1) == -1);
  eval::NetConfig c = SmallConnect4();
  CHECK(c.ScoreBins() == 1);
  c.score_plies = 42;
  CHECK(c.ScoreBins() == 85);
  CHECK_THAT(c.Describe(), Catch::EndsWith("2 blocks x 16 filters, score head"));
  CHECK_FALSE(c.SameShape(SmallConnect4()));
}

TEST_CASE("a score head's value is its distribution weighed by the value discount", "[eval][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  eval::NetConfig config = SmallConnect4();
  config.score_plies = 42;
  const auto features = SomePositions(6);
  // value_head.fc2 all zero but one bias: the head is sure of that bin for every position.
  const auto sure_of = [&](int bin, double discount) {
    eval::WeightSet w = eval::RandomWeights(config, 1);
    for (auto& t : w.tensors)
      if (t.name == "value_head.fc2.weight")
        std::fill(t.data.begin(), t.data.end(), 0.0f);
      else if (t.name == "value_head.fc2.bias") {
        std::fill(t.data.begin(), t.data.end(), 0.0f);
        t.data.at(static_cast<size_t>(bin)) = 40.0f;
      }
    eval::TorchOptions o;
    o.value_discount = discount;
    auto e = eval::MakeTorchEvaluator(w, o);
    return Run(*e, features, 6, 2).value;
  };
  for (float v : sure_of(eval::ScoreBin(42, 3, +1), 0.9)) CHECK(v == Approx(0.81).margin(1e-4));
  for (float v : sure_of(eval::ScoreBin(42, 3, +1), 1.0)) CHECK(v == Approx(1.0).margin(1e-4));
  for (float v : sure_of(eval::ScoreBin(42, 2, -1), 0.9)) CHECK(v == Approx(-0.9).margin(1e-4));
  for (float v : sure_of(eval::ScoreBin(42, 1, -1), 0.5)) CHECK(v == Approx(-1.0).margin(1e-4));
  for (float v : sure_of(eval::ScoreBin(42, 30, 0), 0.98)) CHECK(v == Approx(0.0).margin(1e-4));
  // A random score head's values lie in [-1, 1], and its weights carry over as any net's.
  const auto weights = eval::RandomWeights(config, 3);
  CHECK(weights.Find("value_head.fc2.bias")->shape == std::vector<int64_t>{85});
  auto a = eval::MakeTorchEvaluator(weights, {});
  const auto out = Run(*a, features, 6, 3);
  for (float v : out.value) CHECK(std::abs(v) <= 1.0f);
  auto b = eval::MakeTorchEvaluator(eval::RandomWeights(config, 4), {});
  CHECK(b->UpdateWeights(weights));
  CHECK(Run(*b, features, 6, 1).value == out.value);
  // Into a scalar net: refused, the net unchanged.
  auto scalar = eval::MakeTorchEvaluator(eval::RandomWeights(SmallConnect4(), 1), {});
  CHECK_THROWS_AS(scalar->UpdateWeights(weights), ConfigError);
}

TEST_CASE("weights for another shape are refused with one clear line", "[eval][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  auto weights = eval::RandomWeights(SmallConnect4(), 1);
  auto wrong = weights;
  wrong.config.filters = 32;
  CHECK_THROWS_AS(eval::MakeTorchEvaluator(wrong, {}), ConfigError);
  auto missing = weights;
  missing.tensors.pop_back();
  CHECK_THROWS_WITH(eval::MakeTorchEvaluator(missing, {}), Catch::Contains("lack tensor"));
  auto misshapen = weights;
  misshapen.tensors[0].shape[0] += 1;
  CHECK_THROWS_WITH(eval::MakeTorchEvaluator(misshapen, {}), Catch::Contains("wrong shape"));
}

TEST_CASE(
    "weights updated in place answer as a new evaluator of them, and weights that do not fit change nothing",
    "[eval][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const auto config = SmallConnect4();
  const auto first = eval::RandomWeights(config, 1);
  auto second = eval::RandomWeights(config, 2);
  second.version = 7;
  const auto features = SomePositions(10);
  for (const bool bf16 : {false, true}) {
    INFO("bf16 " << bf16);
    eval::TorchOptions o;
    o.bf16 = bf16;
    auto e = eval::MakeTorchEvaluator(first, o);
    const auto before = Run(*e, features, 10, 4);
    // Weights that do not fit, found before any tensor is copied: a late
    // tensor missing, an early one misshapen, another net.
    auto missing = second;
    missing.tensors.pop_back();
    CHECK_THROWS_WITH(e->UpdateWeights(missing), Catch::Contains("lack tensor"));
    auto misshapen = second;  // the net's last parameter: the old import had copied all before it
    for (auto& t : misshapen.tensors)
      if (t.name == "value_head.fc2.bias") t.shape[0] += 1;
    CHECK_THROWS_WITH(e->UpdateWeights(misshapen), Catch::Contains("wrong shape"));
    auto wider = eval::RandomWeights(config, 3);
    wider.config.filters = 32;
    CHECK_THROWS_AS(e->UpdateWeights(wider), ConfigError);
    const auto kept = Run(*e, features, 10, 4);
    CHECK(kept.policy == before.policy);
    CHECK(kept.value == before.value);
    CHECK(e->ModelVersion() == first.version);

    REQUIRE(e->UpdateWeights(second));
    CHECK(e->ModelVersion() == 7);
    const auto updated = Run(*e, features, 10, 6);
    const auto fresh = Run(*eval::MakeTorchEvaluator(second, o), features, 10, 6);
    CHECK(updated.policy == fresh.policy);
    CHECK(updated.value == fresh.value);
    CHECK(updated.policy != before.policy);
  }
}

// True when x is exactly representable in bfloat16 (its low 16 bits are zero):
// an output computed in bf16 and widened to float always is.
static bool IsBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0xFFFFu) == 0;
}

TEST_CASE("bf16 inference runs in bf16 and stays close to fp32", "[eval][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  auto weights = eval::RandomWeights(SmallConnect4(), 3);
  auto fp32 = eval::MakeTorchEvaluator(weights, {});
  eval::TorchOptions bf;
  bf.bf16 = true;
  auto bf16 = eval::MakeTorchEvaluator(weights, bf);
  const auto features = SomePositions(8);
  auto a = Run(*fp32, features, 8, 3);
  auto b = Run(*bf16, features, 8, 3);
  for (size_t i = 0; i < a.policy.size(); ++i) CHECK(a.policy[i] == Approx(b.policy[i]).margin(0.1));
  for (size_t i = 0; i < a.value.size(); ++i) CHECK(a.value[i] == Approx(b.value[i]).margin(0.1));
  // Really bf16: every output is a bf16 number; the fp32 outputs mostly are not.
  int fp32_wide = 0;
  for (float x : b.policy) CHECK(IsBf16(x));
  for (float x : b.value) CHECK(IsBf16(x));
  for (float x : a.policy) fp32_wide += !IsBf16(x);
  CHECK(fp32_wide > static_cast<int>(a.policy.size()) / 2);
  CHECK(a.policy != b.policy);
}

TEST_CASE("the random evaluator is deterministic per position", "[eval]") {
  auto r = eval::MakeRandomEvaluator(SmallConnect4(), 5);
  const auto features = SomePositions(6);
  auto a = Run(*r, features, 6, 2);
  auto b = Run(*r, features, 6, 5);
  CHECK(a.policy == b.policy);
  CHECK(a.value == b.value);
}

namespace {
constexpr float kUnset = 12345.0f;  // an output slot not written yet

// One batch of Pipelined's test: eight positions from `all` (batch k), laid
// out in two chunks as Run lays them out, its outputs kUnset until written.
struct InFlight {
  InFlight(const std::vector<uint8_t>& all, int k, const eval::NetConfig& c) {
    const size_t fb = static_cast<size_t>(c.planes) * c.height * c.width;
    features.assign(all.begin() + k * 8 * fb, all.begin() + (k + 1) * 8 * fb);
    out = Outputs{std::vector<float>(8 * c.actions, kUnset), std::vector<float>(8, kUnset)};
    chunks[0] = {features.data(), out.policy.data(), out.value.data(), 3};
    chunks[1] = {features.data() + 3 * fb, out.policy.data() + 3 * c.actions, out.value.data() + 3, 5};
  }
  bool Unset() const {
    for (float v : out.value)
      if (v != kUnset) return false;
    return true;
  }
  std::vector<uint8_t> features;
  Outputs out;
  eval::LeafChunk chunks[2];
};
}  // namespace

TEST_CASE(
    "the CPU evaluator at depth 2: two batches in flight, each answered in its own slots by its Start's "
    "weights",
    "[eval][torch][pipeline]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const auto config = SmallConnect4();
  const auto first = eval::RandomWeights(config, 1);
  auto second = eval::RandomWeights(config, 2);
  second.version = 7;
  auto poisoned = second;  // every output NaN
  poisoned.version = 8;
  for (auto& t : poisoned.tensors)
    if (t.name == "stem.conv.weight") std::fill(t.data.begin(), t.data.end(), std::nanf(""));
  const auto all = SomePositions(48);
  auto by_first = eval::MakeTorchEvaluator(first, {});
  auto by_second = eval::MakeTorchEvaluator(second, {});
  // What a depth-1 evaluator of `weights` answers for batch k.
  auto want = [&](eval::Evaluator& ref, int k) { return Run(ref, InFlight(all, k, config).features, 8, 3); };
  std::vector<std::unique_ptr<InFlight>> b;
  for (int k = 0; k < 6; ++k) b.push_back(std::make_unique<InFlight>(all, k, config));
  auto same = [](const Outputs& got, const Outputs& wanted) {
    return got.policy == wanted.policy && got.value == wanted.value;
  };

  eval::TorchOptions o;
  o.depth = 2;
  auto e = eval::MakeTorchEvaluator(first, o);
  REQUIRE(e->Depth() == 2);
  const uint64_t t0 = e->Start(b[0]->chunks, 2);
  const uint64_t t1 = e->Start(b[1]->chunks, 2);
  CHECK((b[0]->Unset() && b[1]->Unset()));  // the CPU answers at Finish
  CHECK_THROWS_WITH(e->Start(b[2]->chunks, 2), Catch::Contains("in flight"));
  CHECK_THROWS_WITH(e->Finish(t1), Catch::Contains("out of order"));
  e->Finish(t0);
  CHECK(same(b[0]->out, want(*by_first, 0)));
  CHECK(b[1]->Unset());

  // A reload between Start and Finish: the batches in flight keep the old weights.
  const uint64_t t2 = e->Start(b[2]->chunks, 2);
  REQUIRE(e->UpdateWeights(second));
  CHECK(e->ModelVersion() == 7);
  e->Finish(t1);
  const uint64_t t3 = e->Start(b[3]->chunks, 2);
  e->Finish(t2);
  CHECK(same(b[1]->out, want(*by_first, 1)));
  CHECK(same(b[2]->out, want(*by_first, 2)));
  CHECK(b[3]->Unset());

  // NaN in one of the two: weights that answer NaN loaded with batch 3 in flight.
  REQUIRE(e->UpdateWeights(poisoned));
  const uint64_t t4 = e->Start(b[4]->chunks, 2);
  e->Finish(t3);
  e->Finish(t4);
  CHECK(same(b[3]->out, want(*by_second, 3)));
  for (float v : b[4]->out.value) CHECK(std::isnan(v));

  // Destroyed with a batch in flight: nothing is written after.
  e->Start(b[5]->chunks, 2);
  e.reset();
  CHECK(b[5]->Unset());

  // Depth 1 answers in Start; depths past BatchTickets::kMaxDepth are refused.
  auto one = eval::MakeTorchEvaluator(first, {});
  auto again = std::make_unique<InFlight>(all, 0, config);
  const uint64_t t = one->Start(again->chunks, 2);
  CHECK(same(again->out, want(*by_first, 0)));
  one->Finish(t);
  o.depth = eval::BatchTickets::kMaxDepth + 1;
  CHECK_THROWS_AS(eval::MakeTorchEvaluator(first, o), ConfigError);
}
