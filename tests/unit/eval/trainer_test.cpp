// The LibTorch trainer: it learns (a fixed batch is fitted), its momentum
// state round-trips, and bad state is refused with a clear error.
#include "zerofarm/eval/trainer.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "skip.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/torch_evaluator.h"

using namespace zerofarm;

namespace {
eval::NetConfig Tiny() { return eval::NetConfig{"connect4", 3, 6, 7, 7, 1, 8, 16}; }

// n random positions with a one-hot policy target and a +-1 value target.
struct Data {
  std::vector<uint8_t> features;
  std::vector<float> policy, z;
  eval::TrainBatch Batch(int n) const {
    eval::TrainBatch b;
    b.features = features.data();
    b.policy = policy.data();
    b.z = z.data();
    b.count = n;
    return b;
  }
};
Data RandomData(int n, uint64_t seed) {
  Rng rng(seed);
  Data d;
  d.features.resize(static_cast<size_t>(n) * 3 * 6 * 7);
  for (auto& f : d.features) f = rng.Uniform() < 0.3 ? 1 : 0;
  d.policy.assign(static_cast<size_t>(n) * 7, 0.0f);
  for (int i = 0; i < n; ++i) {
    d.policy[static_cast<size_t>(i) * 7 + rng.Below(7)] = 1.0f;
    d.z.push_back(rng.Uniform() < 0.5 ? -1.0f : 1.0f);
  }
  return d;
}
}  // namespace

TEST_CASE("the trainer fits a fixed batch: both losses fall", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(64, 3);
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  eval::Trainer t(eval::RandomWeights(Tiny(), 1), o);
  const eval::TrainStepLoss first = t.Step(d.Batch(64));
  eval::TrainStepLoss last;
  for (int i = 0; i < 150; ++i) last = t.Step(d.Batch(64));
  INFO("policy " << first.policy << " -> " << last.policy << ", value " << first.value << " -> "
                 << last.value);
  CHECK(first.policy > 1.5);  // about ln 7 = 1.95 at the start
  CHECK(last.policy < 0.6 * first.policy);
  CHECK(last.value < 0.6 * first.value);
}

TEST_CASE("a score head learns its bins by cross-entropy, and its checkpoints evaluate to their sign",
          "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const int n = 64;
  const Data d = RandomData(n, 3);
  std::vector<int16_t> bins(n);
  for (int i = 0; i < n; ++i)  // won or lost (as z says) at 1 to 9 plies
    bins[static_cast<size_t>(i)] =
        static_cast<int16_t>(eval::ScoreBin(42, 1 + i % 9, d.z[static_cast<size_t>(i)] > 0 ? 1 : -1));
  eval::NetConfig config = Tiny();
  config.score_plies = 42;
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  eval::Trainer t(eval::RandomWeights(config, 1), o);
  CHECK_THROWS_WITH(t.Step(d.Batch(n)), Catch::Contains("needs score targets"));
  eval::TrainBatch batch = d.Batch(n);
  batch.score_bin = bins.data();
  const eval::TrainStepLoss first = t.Step(batch);
  eval::TrainStepLoss last;
  for (int i = 0; i < 200; ++i) last = t.Step(batch);
  INFO("value " << first.value << " -> " << last.value);
  CHECK(first.value > 3.5);  // cross-entropy over 85 bins: about ln 85 = 4.44 at the start
  CHECK(last.value < 0.5 * first.value);
  const eval::WeightSet w = t.Export(1);
  CHECK(w.config.score_plies == 42);
  // Evaluated, the value takes the sign of each row's result.
  auto e = eval::MakeTorchEvaluator(w, {});
  std::vector<float> policy(static_cast<size_t>(n) * 7), value(n);
  const eval::LeafChunk chunk{d.features.data(), policy.data(), value.data(), n};
  e->Evaluate(&chunk, 1);
  int agree = 0;
  for (int i = 0; i < n; ++i)
    agree += (value[static_cast<size_t>(i)] > 0) == (d.z[static_cast<size_t>(i)] > 0);
  CHECK(agree >= n * 9 / 10);
}

TEST_CASE("a bf16 forward pass trains like fp32 and keeps fp32 weights", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(64, 5);
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  eval::Trainer fp32(eval::RandomWeights(Tiny(), 2), o);
  o.bf16 = true;
  eval::Trainer bf16(eval::RandomWeights(Tiny(), 2), o);
  const eval::TrainStepLoss a = fp32.Step(d.Batch(64));
  const eval::TrainStepLoss b = bf16.Step(d.Batch(64));
  // The same net on the same batch: bf16's 8-bit mantissa moves the losses by
  // well under a percent.
  CHECK(b.policy == Approx(a.policy).epsilon(0.02));
  CHECK(b.value == Approx(a.value).epsilon(0.05));
  eval::TrainStepLoss last;
  for (int i = 0; i < 150; ++i) last = bf16.Step(d.Batch(64));
  INFO("bf16: policy " << b.policy << " -> " << last.policy << ", value " << b.value << " -> " << last.value);
  CHECK(last.policy < 0.6 * b.policy);
  CHECK(last.value < 0.6 * b.value);
  // What it exports is fp32 weights the evaluator loads as any other.
  const eval::WeightSet w = bf16.Export(7);
  REQUIRE_FALSE(w.tensors.empty());
  for (const auto& t : w.tensors)
    for (float x : t.data) REQUIRE(std::isfinite(x));
  CHECK(eval::MakeTorchEvaluator(w, eval::TorchOptions{})->ModelVersion() == 7);
}

TEST_CASE("a policy mask keeps masked rows out of the policy loss", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  Data d = RandomData(8, 5);
  std::vector<uint8_t> mask(8, 0);
  mask[0] = 1;
  Data other = d;  // the same positions, other policy targets on the masked rows
  for (size_t k = 7; k < other.policy.size(); ++k) other.policy[k] = k % 7 == 3 ? 1.0f : 0.0f;
  eval::Trainer a(eval::RandomWeights(Tiny(), 2), {});
  eval::Trainer b(eval::RandomWeights(Tiny(), 2), {});
  eval::Trainer c(eval::RandomWeights(Tiny(), 2), {});
  eval::TrainBatch masked = d.Batch(8), masked_other = other.Batch(8);
  masked.policy_mask = mask.data();
  masked_other.policy_mask = mask.data();
  const double la = a.Step(masked).policy;
  const double lb = b.Step(masked_other).policy;
  CHECK(la == Approx(lb).epsilon(1e-6));  // masked rows' targets do not matter
  const double lc = c.Step(other.Batch(8)).policy;
  CHECK(lc != Approx(lb).epsilon(1e-3));  // unmasked, they do
}

TEST_CASE("the trainer's weights and momentum round-trip and mismatched momentum is refused", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(32, 7);
  eval::Trainer a(eval::RandomWeights(Tiny(), 3), {});
  for (int i = 0; i < 5; ++i) a.Step(d.Batch(32));
  // A second trainer from a's weights and momentum takes the same next step.
  eval::Trainer b(a.Export(5), {});
  b.ImportMomentum(a.ExportMomentum());
  a.Step(d.Batch(32));
  b.Step(d.Batch(32));
  const eval::WeightSet wa = a.Export(6), wb = b.Export(6);
  REQUIRE(wa.tensors.size() == wb.tensors.size());
  double max_diff = 0;
  for (size_t i = 0; i < wa.tensors.size(); ++i)
    for (size_t k = 0; k < wa.tensors[i].data.size(); ++k)
      max_diff = std::max<double>(max_diff, std::fabs(wa.tensors[i].data[k] - wb.tensors[i].data[k]));
  CHECK(max_diff < 1e-5);
  // Training changed the weights (the step is not a no-op).
  const eval::WeightSet start = eval::RandomWeights(Tiny(), 3);
  CHECK(start.Find("stem.conv.weight")->data != wa.Find("stem.conv.weight")->data);

  eval::WeightSet bad = a.ExportMomentum();
  bad.tensors.pop_back();
  CHECK_THROWS_AS(b.ImportMomentum(bad), ConfigError);
  bad = a.ExportMomentum();
  bad.tensors[0].shape = {1};
  CHECK_THROWS_AS(b.ImportMomentum(bad), ConfigError);
  // Momentum whose last tensor does not fit changes nothing, not the ones before it.
  const eval::WeightSet kept = b.ExportMomentum();
  bad = a.ExportMomentum();
  for (auto& t : bad.tensors) std::fill(t.data.begin(), t.data.end(), 7.0f);
  bad.tensors.back().shape.push_back(2);  // a dimension more than the net's
  CHECK_THROWS_WITH(b.ImportMomentum(bad), Catch::Contains("wrong shape"));
  const eval::WeightSet after = b.ExportMomentum();
  REQUIRE(after.tensors.size() == kept.tensors.size());
  for (size_t i = 0; i < kept.tensors.size(); ++i) CHECK(after.tensors[i].data == kept.tensors[i].data);
}

TEST_CASE("bad trainer options and batches are refused", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  eval::TrainerOptions o;
  o.learning_rate = 0;
  CHECK_THROWS_AS(eval::Trainer(eval::RandomWeights(Tiny(), 1), o), ConfigError);
  o = {};
  o.momentum = 1.0;
  CHECK_THROWS_AS(eval::Trainer(eval::RandomWeights(Tiny(), 1), o), ConfigError);
  o = {};
  o.cuda_graph = true;  // a CUDA graph of the step: only on a GPU
  CHECK_THROWS_WITH(eval::Trainer(eval::RandomWeights(Tiny(), 1), o), Catch::Contains("CUDA graph"));
  eval::Trainer t(eval::RandomWeights(Tiny(), 1), {});
  CHECK_THROWS_AS(t.Step(eval::TrainBatch{}), Error);
}

TEST_CASE("a trainer asked for a GPU that this LibTorch does not see is refused", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  if (eval::TrainerCudaAvailable()) ZF_SKIP("this machine has a GPU: gpu_test.cpp trains there");
  eval::TrainerOptions o;
  o.cuda = true;
  CHECK_THROWS_WITH(eval::Trainer(eval::RandomWeights(Tiny(), 1), o), Catch::Contains("sees none"));
}

namespace {
// The largest difference between two weight sets of one network, tensor by tensor.
double MaxDiff(const eval::WeightSet& a, const eval::WeightSet& b) {
  REQUIRE(a.tensors.size() == b.tensors.size());
  double max_diff = 0;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    REQUIRE(a.tensors[i].name == b.tensors[i].name);
    REQUIRE(a.tensors[i].data.size() == b.tensors[i].data.size());
    for (size_t k = 0; k < a.tensors[i].data.size(); ++k)
      max_diff = std::max<double>(max_diff, std::fabs(a.tensors[i].data[k] - b.tensors[i].data[k]));
  }
  return max_diff;
}
}  // namespace

TEST_CASE("the channels-last trainer takes the NCHW trainer's steps and exports NCHW", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(64, 11);
  const eval::WeightSet start = eval::RandomWeights(Tiny(), 4);
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  o.channels_last = false;
  eval::Trainer nchw(start, o);
  o.channels_last = true;
  eval::Trainer nhwc(start, o);
  // Before any step, each exports exactly the weights it started from: in the
  // file's element order, whatever the memory layout inside.
  CHECK(MaxDiff(nhwc.Export(0), start) == 0.0);
  CHECK(MaxDiff(nchw.Export(0), start) == 0.0);
  for (int i = 0; i < 10; ++i) {
    const eval::TrainStepLoss a = nchw.Step(d.Batch(64));
    const eval::TrainStepLoss b = nhwc.Step(d.Batch(64));
    CHECK(b.policy == Approx(a.policy).epsilon(1e-4));
    CHECK(b.value == Approx(a.value).epsilon(1e-4));
  }
  // The same ten steps (other summation orders only), and steps they were:
  // the weights moved by far more than the two trainers differ.
  const double moved = MaxDiff(nchw.Export(10), start);
  CHECK(moved > 1e-2);
  CHECK(MaxDiff(nhwc.Export(10), nchw.Export(10)) < 1e-4);
  CHECK(MaxDiff(nhwc.ExportMomentum(), nchw.ExportMomentum()) < 1e-3);
  // A channels-last trainer resumed from NCHW momentum takes the same next step.
  eval::Trainer resumed(nchw.Export(10), o);
  resumed.ImportMomentum(nchw.ExportMomentum());
  nchw.Step(d.Batch(64));
  resumed.Step(d.Batch(64));
  CHECK(MaxDiff(resumed.Export(11), nchw.Export(11)) < 1e-4);
}

namespace {
// Each parameter's change from `from` to `to`, flattened in the file's order
// (the parameters are the tensors that have momentum, "momentum.NAME"; BN
// statistics are not).
std::string ParamName(const eval::NamedTensor& momentum) {
  REQUIRE(momentum.name.rfind("momentum.", 0) == 0);
  return momentum.name.substr(9);
}
std::vector<double> ParamDelta(const eval::WeightSet& params, const eval::WeightSet& from,
                               const eval::WeightSet& to) {
  std::vector<double> delta;
  for (const auto& p : params.tensors) {
    const eval::NamedTensor *a = from.Find(ParamName(p)), *b = to.Find(ParamName(p));
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    for (size_t k = 0; k < a->data.size(); ++k) delta.push_back(double(b->data[k]) - a->data[k]);
  }
  return delta;
}
double MaxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}
}  // namespace

// The update rule itself, from what the trainer exports: a step is
// w -= lr * m with m = momentum * m + grad + l2 * w (PyTorch's SGD). Each
// check compares two trainers that see the same gradient, so it holds for
// any gradient: twice the rate moves twice as far; L2 adds -lr * l2 * w;
// momentum adds momentum times the first step to the second.
TEST_CASE("a step is SGD with momentum and L2 on every parameter", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(32, 13);
  const eval::WeightSet w0 = eval::RandomWeights(Tiny(), 5);
  const double lr = 0.1, l2 = 0.05, mu = 0.9;
  auto trainer = [&](double rate, double decay, double momentum) {
    eval::TrainerOptions o;
    o.learning_rate = rate;
    o.l2 = decay;
    o.momentum = momentum;
    return std::make_unique<eval::Trainer>(w0, o);
  };
  auto plain = trainer(lr, 0, 0), twice = trainer(2 * lr, 0, 0), decayed = trainer(lr, l2, 0),
       heavy = trainer(lr, 0, mu);
  const eval::WeightSet params = plain->ExportMomentum();
  REQUIRE(params.tensors.size() > 10);
  for (auto* t : {plain.get(), twice.get(), decayed.get(), heavy.get()}) t->Step(d.Batch(32));
  const eval::WeightSet w1 = plain->Export(1);
  const std::vector<double> step = ParamDelta(params, w0, w1);  // -lr * grad
  REQUIRE(MaxAbs(step) > 1e-3);
  const std::vector<double> step2 = ParamDelta(params, w0, twice->Export(1));
  const std::vector<double> step_l2 = ParamDelta(params, w0, decayed->Export(1));
  std::vector<double> w0_flat;
  for (const auto& p : params.tensors)
    for (float x : w0.Find(ParamName(p))->data) w0_flat.push_back(x);
  REQUIRE(w0_flat.size() == step.size());
  double err_rate = 0, err_l2 = 0, l2_term = 0;
  for (size_t k = 0; k < step.size(); ++k) {
    err_rate = std::max(err_rate, std::fabs(step2[k] - 2 * step[k]));
    err_l2 = std::max(err_l2, std::fabs(step_l2[k] - (step[k] - lr * l2 * w0_flat[k])));
    l2_term = std::max(l2_term, std::fabs(lr * l2 * w0_flat[k]));
  }
  INFO("largest step " << MaxAbs(step) << ", largest L2 term " << l2_term);
  REQUIRE(l2_term > 1e-4);
  CHECK(err_rate < 1e-6);
  CHECK(err_l2 < 1e-6);
  // The heavy-ball trainer's first step is plain's; its second adds mu times it.
  CHECK(MaxDiff(heavy->Export(1), w1) < 1e-7);
  plain->Step(d.Batch(32));
  heavy->Step(d.Batch(32));
  const std::vector<double> extra = ParamDelta(params, plain->Export(2), heavy->Export(2));
  double err_mu = 0;
  for (size_t k = 0; k < step.size(); ++k) err_mu = std::max(err_mu, std::fabs(extra[k] - mu * step[k]));
  CHECK(err_mu < 1e-6);
}

// The value weight scales the value loss's gradient and nothing else: with
// plain SGD a step is -lr x (policy gradient + W x value gradient), so the
// steps at W = 1, 2 and 3 are equally spaced, by the value gradient's step.
TEST_CASE("the value weight scales the value loss's gradient, not the losses reported", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(32, 17);
  const eval::WeightSet w0 = eval::RandomWeights(Tiny(), 6);
  std::vector<std::unique_ptr<eval::Trainer>> t;
  std::vector<eval::TrainStepLoss> loss;
  for (double weight : {1.0, 2.0, 3.0}) {
    eval::TrainerOptions o;
    o.learning_rate = 0.1;
    o.l2 = 0;
    o.momentum = 0;
    o.value_weight = weight;
    t.push_back(std::make_unique<eval::Trainer>(w0, o));
    loss.push_back(t.back()->Step(d.Batch(32)));
  }
  CHECK(loss[2].policy == Approx(loss[0].policy).epsilon(1e-6));  // the same forward pass, unweighted
  CHECK(loss[2].value == Approx(loss[0].value).epsilon(1e-6));
  const eval::WeightSet params = t[0]->ExportMomentum();
  const std::vector<double> s1 = ParamDelta(params, w0, t[0]->Export(1)),
                            s2 = ParamDelta(params, w0, t[1]->Export(1)),
                            s3 = ParamDelta(params, w0, t[2]->Export(1));
  std::vector<double> value_step(s1.size());
  double err = 0;
  for (size_t k = 0; k < s1.size(); ++k) {
    value_step[k] = s2[k] - s1[k];
    err = std::max(err, std::fabs((s3[k] - s2[k]) - value_step[k]));
  }
  INFO("largest value step " << MaxAbs(value_step));
  REQUIRE(MaxAbs(value_step) > 1e-3);  // the weight moved the step
  CHECK(err < 1e-5);

  eval::TrainerOptions bad;
  for (double w : {0.0, -1.0, std::nan("")}) {
    bad.value_weight = w;
    CHECK_THROWS_WITH(eval::Trainer(w0, bad), Catch::Contains("value weight"));
  }
}

TEST_CASE("an ownership head learns its targets, stays out of checkpoints and carries over", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const Data d = RandomData(64, 11);
  // Targets that depend on the input: +1 where the first plane has a stone,
  // -1 where the second has, 0 elsewhere (what a final board looks like).
  std::vector<int8_t> own(64 * 42);
  for (size_t i = 0; i < 64; ++i)
    for (size_t c = 0; c < 42; ++c)
      own[i * 42 + c] = d.features[i * 126 + c] ? 1 : d.features[i * 126 + 42 + c] ? -1 : 0;
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  o.ownership_weight = 1.0;
  eval::Trainer t(eval::RandomWeights(Tiny(), 1), o);
  REQUIRE(t.HasOwnershipHead());
  // Without targets a step is refused; with them the head's loss falls.
  CHECK_THROWS_WITH(t.Step(d.Batch(64)), Catch::Contains("ownership targets"));
  eval::TrainBatch b = d.Batch(64);
  b.ownership = own.data();
  const eval::TrainStepLoss first = t.Step(b);
  eval::TrainStepLoss last;
  for (int i = 0; i < 100; ++i) last = t.Step(b);
  INFO("ownership " << first.ownership << " -> " << last.ownership);
  CHECK(first.ownership > 0.2);
  CHECK(last.ownership < 0.3 * first.ownership);
  // The checkpoint is the plain net: the evaluators and the weights file
  // format know nothing of the head.
  const eval::WeightSet w = t.Export(9);
  CHECK(w.tensors.size() == eval::RandomWeights(Tiny(), 1).tensors.size());
  CHECK(w.Find("ownership_head.conv.weight") == nullptr);
  const eval::WeightSet heads = t.ExportHeads(9);
  REQUIRE(heads.tensors.size() == 2);
  CHECK(heads.Find("ownership_head.conv.weight")->shape == std::vector<int64_t>{1, 8, 1, 1});
  // A trainer from the checkpoint, the momentum and the heads takes t's next step.
  eval::Trainer u(w, o);
  u.ImportMomentum(t.ExportMomentum());
  u.ImportHeads(heads);
  CHECK(t.Step(b).ownership == Approx(u.Step(b).ownership).epsilon(1e-5));
  // Momentum with the head's buffers loads into a trainer without the head,
  // and momentum without them into one with it (the head's start at zero).
  eval::Trainer plain(w, {});
  CHECK_FALSE(plain.HasOwnershipHead());
  CHECK_NOTHROW(plain.ImportMomentum(t.ExportMomentum()));
  eval::Trainer fresh(w, o);
  CHECK_NOTHROW(fresh.ImportMomentum(plain.ExportMomentum()));
  CHECK(plain.ExportHeads(9).tensors.empty());
  // Heads that do not fit change nothing.
  eval::WeightSet bad = heads;
  bad.tensors[1].shape = {2};
  CHECK_THROWS_AS(u.ImportHeads(bad), ConfigError);
  bad.tensors.pop_back();
  CHECK_THROWS_AS(u.ImportHeads(bad), ConfigError);
}

TEST_CASE("bad ownership weights are refused", "[trainer]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  eval::TrainerOptions o;
  o.ownership_weight = -1;
  CHECK_THROWS_WITH(eval::Trainer(eval::RandomWeights(Tiny(), 1), o), Catch::Contains("ownership weight"));
  o.ownership_weight = std::nan("");
  CHECK_THROWS_WITH(eval::Trainer(eval::RandomWeights(Tiny(), 1), o), Catch::Contains("ownership weight"));
}
