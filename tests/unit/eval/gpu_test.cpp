// The CUDA evaluator. Every test SKIPs where this build has no CUDA LibTorch
// or the machine has no GPU.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "skip.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/eval/trainer.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;

namespace {
// Shared memory like a ring's (features, then policy, then value) holding
// `leaves` Connect Four positions of one line of play (move i is legal move
// (i * step + offset) % count), unmapped when it goes.
struct MappedLeaves {
  MappedLeaves(const game::Game& g, int leaves, int step, int offset) : bytes(4 << 20) {
    const size_t fb = g.Shape().FeatureBytes();
    REQUIRE(static_cast<size_t>(leaves) * (fb + 8 * sizeof(float)) <= bytes);
    region = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(region != MAP_FAILED);
    features = static_cast<uint8_t*>(region);
    policy = reinterpret_cast<float*>(features + leaves * fb);
    value = policy + leaves * 7;
    auto s = g.NewInitialState();
    std::vector<int> legal;
    for (int i = 0; i < leaves; ++i) {
      if (s->IsTerminal()) s = g.NewInitialState();
      s->EncodeFeatures(features + i * fb);
      s->LegalActions(&legal);
      s->Apply(legal[(i * step + offset) % legal.size()]);
    }
  }
  ~MappedLeaves() { munmap(region, bytes); }
  MappedLeaves(const MappedLeaves&) = delete;
  MappedLeaves& operator=(const MappedLeaves&) = delete;
  size_t bytes;
  void* region;
  uint8_t* features;
  float *policy, *value;
};

// The graph test's batches, of several sizes (graphs of 16, 64, 512 rows:
// some full, most padded), each on leaves of its own: kGraphLeaves is their
// sum, so no batch reads or writes past the leaves (or past want_policy).
constexpr int kGraphBatches[] = {1, 16, 40, 300, 512, 3};
constexpr int kGraphLeaves = [] {
  int sum = 0;
  for (const int n : kGraphBatches) sum += n;
  return sum;
}();
}  // namespace

TEST_CASE("the CUDA evaluator matches the CPU one, reading and writing pinned shared memory in place",
          "[eval][gpu]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  auto g = game::MakeGame("connect4");
  eval::NetConfig c{"connect4", 3, 6, 7, 7, 2, 32, 32};
  c.score_plies = GENERATE(0, 42);  // the scalar value head, and the score head (--score-head)
  INFO("score_plies " << c.score_plies);
  const auto weights = eval::RandomWeights(c, 9);
  eval::TorchOptions cpu_options;
  cpu_options.value_discount = 0.98;
  constexpr int kLeaves = 40;
  const size_t fb = g->Shape().FeatureBytes();
  const MappedLeaves m(*g, kLeaves, 7, 3);
  uint8_t* features = m.features;
  float *policy = m.policy, *value = m.value;
  std::vector<float> cpu_policy(kLeaves * 7), cpu_value(kLeaves);
  auto cpu = eval::MakeTorchEvaluator(weights, cpu_options);
  eval::LeafChunk cpu_chunk{features, cpu_policy.data(), cpu_value.data(), kLeaves};
  cpu->Evaluate(&cpu_chunk, 1);

  for (const char* precision : {"fp32", "bf16", "fp16"}) {
    eval::TorchOptions o;
    o.cuda = true;
    o.value_discount = 0.98;
    o.bf16 = !std::strcmp(precision, "bf16");
    o.fp16 = !std::strcmp(precision, "fp16");
    auto gpu = eval::MakeTorchEvaluator(weights, o);
    gpu->RegisterHostMemory(m.region, m.bytes);
    std::memset(policy, 0, kLeaves * 7 * sizeof(float) + kLeaves * sizeof(float));
    // Chunks as a batch across rings has them: here out of memory order, and one empty.
    eval::LeafChunk chunks[3] = {{features + 15 * fb, policy + 15 * 7, value + 15, kLeaves - 15},
                                 {features, policy, value, 0},
                                 {features, policy, value, 15}};
    gpu->Evaluate(chunks, 3);
    const double tolerance = std::strcmp(precision, "fp32") ? 0.1 : 1e-3;
    INFO(precision);
    for (int i = 0; i < kLeaves * 7; ++i) CHECK(policy[i] == Approx(cpu_policy[i]).margin(tolerance));
    for (int i = 0; i < kLeaves; ++i) CHECK(value[i] == Approx(cpu_value[i]).margin(tolerance));
  }
}

TEST_CASE("the CUDA evaluator's graphs answer as its eager passes, before and after weights updated in place",
          "[eval][gpu][graphs]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  auto g = game::MakeGame("connect4");
  const eval::NetConfig c{"connect4", 3, 6, 7, 7, 2, 32, 32, GENERATE(0, 42)};  // scalar and score heads
  INFO("score_plies " << c.score_plies);
  const auto first = eval::RandomWeights(c, 11);
  auto second = eval::RandomWeights(c, 12);
  second.version = 5;
  const size_t fb = g->Shape().FeatureBytes();
  const MappedLeaves m(*g, kGraphLeaves, 5, 1);
  uint8_t* features = m.features;
  float *policy = m.policy, *value = m.value;
  eval::TorchOptions eager_options, graph_options;
  eager_options.cuda = graph_options.cuda = true;
  eager_options.value_discount = graph_options.value_discount = 0.98;
  graph_options.cuda_graph = true;
  auto eager = eval::MakeTorchEvaluator(first, eager_options);
  auto graphed = eval::MakeTorchEvaluator(first, graph_options);
  graphed->RegisterHostMemory(m.region, m.bytes);  // pinned for the process: the others copy from it too
  CHECK_THAT(graphed->Describe(), Catch::Contains("CUDA graphs"));
  std::vector<float> want_policy(kGraphLeaves * 7), want_value(kGraphLeaves);
  // Each batch in two chunks out of memory order, each leaf compared with the
  // eager evaluator's answer; then the same after both take new weights.
  int start = 0;
  for (const int weights_set : {1, 2}) {
    if (weights_set == 2) {
      REQUIRE(eager->UpdateWeights(second));
      REQUIRE(graphed->UpdateWeights(second));
      CHECK(graphed->ModelVersion() == 5);
      start = 0;  // the same leaves again: the answers must follow the new weights
    }
    for (const int n : kGraphBatches) {
      INFO("weights " << weights_set << ", batch of " << n);
      REQUIRE(start + n <= kGraphLeaves);
      const int head = n / 3;
      auto run = [&](eval::Evaluator& e) {
        std::memset(policy + start * 7, 0, n * 7 * sizeof(float));
        std::memset(value + start, 0, n * sizeof(float));
        eval::LeafChunk chunks[2] = {
            {features + (start + head) * fb, policy + (start + head) * 7, value + start + head, n - head},
            {features + start * fb, policy + start * 7, value + start, head}};
        e.Evaluate(chunks, 2);
      };
      run(*eager);
      std::copy(policy + start * 7, policy + (start + n) * 7, want_policy.begin() + start * 7);
      std::copy(value + start, value + start + n, want_value.begin() + start);
      run(*graphed);
      for (int i = start * 7; i < (start + n) * 7; ++i)
        REQUIRE(policy[i] == Approx(want_policy[i]).margin(1e-4));
      for (int i = start; i < start + n; ++i) REQUIRE(value[i] == Approx(want_value[i]).margin(1e-4));
      start += n;
    }
  }
  // The new weights answer differently from the old on these leaves.
  auto old_weights = eval::MakeTorchEvaluator(first, eager_options);
  std::vector<float> new_policy(policy, policy + 7 * 16);
  eval::LeafChunk chunk{features, policy, value, 16};
  old_weights->Evaluate(&chunk, 1);
  CHECK(std::vector<float>(policy, policy + 7 * 16) != new_policy);
}

TEST_CASE("the CUDA evaluator at depth 2 answers as at depth 1, two batches in flight across a reload",
          "[eval][gpu][pipeline]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  auto g = game::MakeGame("connect4");
  const eval::NetConfig c{"connect4", 3, 6, 7, 7, 2, 32, 32};
  const auto first = eval::RandomWeights(c, 21);
  auto second = eval::RandomWeights(c, 22);
  second.version = 5;
  constexpr int kBatch = 40, kBatches = 4;  // batches 0 and 1 by `first`, 2 and 3 by `second`
  const size_t fb = g->Shape().FeatureBytes();
  const MappedLeaves m(*g, kBatch * kBatches, 3, 2);
  auto chunk = [&](int k) {
    return eval::LeafChunk{m.features + k * kBatch * fb, m.policy + k * kBatch * 7, m.value + k * kBatch,
                           kBatch};
  };
  eval::TorchOptions depth1;
  depth1.cuda = true;
  auto by_first = eval::MakeTorchEvaluator(first, depth1),
       by_second = eval::MakeTorchEvaluator(second, depth1);
  for (int k = 0; k < kBatches; ++k) {
    const eval::LeafChunk ch = chunk(k);
    (k < 2 ? by_first : by_second)->Evaluate(&ch, 1);
  }
  const std::vector<float> want_policy(m.policy, m.policy + kBatch * kBatches * 7);
  const std::vector<float> want_value(m.value, m.value + kBatch * kBatches);
  for (const bool graphs : {false, true}) {
    INFO("graphs " << graphs);
    eval::TorchOptions o = depth1;
    o.depth = 2;
    o.cuda_graph = graphs;
    auto e = eval::MakeTorchEvaluator(first, o);
    e->RegisterHostMemory(m.region, m.bytes);
    std::memset(m.policy, 0, kBatch * kBatches * 8 * sizeof(float));
    eval::LeafChunk chunks[kBatches];
    for (int k = 0; k < kBatches; ++k) chunks[k] = chunk(k);
    const uint64_t t0 = e->Start(&chunks[0], 1);
    const uint64_t t1 = e->Start(&chunks[1], 1);
    CHECK_THROWS_AS(e->Start(&chunks[2], 1), Error);
    e->Finish(t0);
    REQUIRE(e->UpdateWeights(second));  // batch 1 in flight keeps `first`
    const uint64_t t2 = e->Start(&chunks[2], 1);
    e->Finish(t1);
    const uint64_t t3 = e->Start(&chunks[3], 1);
    e->Finish(t2);
    e->Finish(t3);
    for (int i = 0; i < kBatch * kBatches * 7; ++i)
      REQUIRE(m.policy[i] == Approx(want_policy[i]).margin(1e-4));
    for (int i = 0; i < kBatch * kBatches; ++i) REQUIRE(m.value[i] == Approx(want_value[i]).margin(1e-4));
    e->Start(&chunks[0], 1);  // destroyed with a batch in flight: waits for it, unpins after
  }
}

namespace {
// A fixed batch of n random Connect Four-shaped positions and targets.
struct TrainData {
  std::vector<uint8_t> features;
  std::vector<float> policy, z;
};
TrainData RandomTrainData(int n) {
  TrainData d;
  uint32_t x = 12345;
  auto next = [&x] { return (x = x * 1664525u + 1013904223u) >> 8; };
  d.features.resize(static_cast<size_t>(n) * 3 * 6 * 7);
  for (auto& f : d.features) f = next() % 10 < 3 ? 1 : 0;
  d.policy.assign(static_cast<size_t>(n) * 7, 0.0f);
  for (int i = 0; i < n; ++i) {
    d.policy[static_cast<size_t>(i) * 7 + next() % 7] = 1.0f;
    d.z.push_back(next() % 2 ? 1.0f : -1.0f);
  }
  return d;
}

// Every value of two weight sets of one net within `margin`, tensor by tensor.
void RequireNear(const eval::WeightSet& a, const eval::WeightSet& b, double margin) {
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t t = 0; t < a.tensors.size(); ++t) {
    REQUIRE(a.tensors[t].data.size() == b.tensors[t].data.size());
    for (size_t i = 0; i < a.tensors[t].data.size(); ++i)
      REQUIRE(b.tensors[t].data[i] == Approx(a.tensors[t].data[i]).margin(margin));
  }
}
}  // namespace

TEST_CASE("the trainer on the GPU takes the steps the CPU trainer takes", "[eval][gpu][trainer]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  REQUIRE(eval::TrainerCudaAvailable());
  const TrainData d = RandomTrainData(64);
  eval::TrainBatch batch;
  batch.features = d.features.data();
  batch.policy = d.policy.data();
  batch.z = d.z.data();
  batch.count = 64;
  const auto start = eval::RandomWeights(eval::NetConfig{"connect4", 3, 6, 7, 7, 2, 16, 16}, 4);
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  eval::Trainer cpu(start, o);
  o.cuda = true;
  eval::Trainer gpu(start, o);
  for (int i = 0; i < 5; ++i) {
    const auto a = cpu.Step(batch), b = gpu.Step(batch);
    CHECK(b.policy == Approx(a.policy).margin(1e-3));
    CHECK(b.value == Approx(a.value).margin(1e-3));
  }
  const auto wa = cpu.Export(5), wb = gpu.Export(5);
  RequireNear(wa, wb, 1e-3);
  // Momentum leaves the GPU and comes back.
  const auto m = gpu.ExportMomentum();
  eval::Trainer again(wb, o);
  again.ImportMomentum(m);
  CHECK(again.Step(batch).policy == Approx(gpu.Step(batch).policy).margin(1e-3));
  // bf16 autocast on the GPU trains too.
  o.bf16 = true;
  eval::Trainer half(start, o);
  const auto first = half.Step(batch);
  eval::TrainStepLoss last;
  for (int i = 0; i < 100; ++i) last = half.Step(batch);
  CHECK(last.policy < 0.8 * first.policy);
}

TEST_CASE("the trainer's CUDA graph takes the eager GPU trainer's steps", "[eval][gpu][trainer][graphs]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  const bool ownership = GENERATE(false, true);  // with the ownership head (train --ownership) too
  const bool score = GENERATE(false, true);      // with a score head (--score-head) too
  INFO("ownership head " << ownership << ", score head " << score);
  const TrainData d = RandomTrainData(64);
  std::vector<uint8_t> mask(64);
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = i % 3 != 0;
  std::vector<int8_t> own(64 * 42);
  for (size_t i = 0; i < own.size(); ++i) own[i] = static_cast<int8_t>(static_cast<int>(i % 3) - 1);
  std::vector<int16_t> bins(64);
  for (size_t i = 0; i < bins.size(); ++i) bins[i] = static_cast<int16_t>((i * 7) % 85);
  eval::TrainBatch batch;
  batch.ownership = own.data();
  batch.score_bin = bins.data();
  batch.features = d.features.data();
  batch.policy = d.policy.data();
  batch.z = d.z.data();
  batch.policy_mask = mask.data();
  batch.count = 64;
  eval::TrainBatch half = batch;  // another size: an eager step beside the graph
  half.count = 32;
  const auto start =
      eval::RandomWeights(eval::NetConfig{"connect4", 3, 6, 7, 7, 2, 16, 16, score ? 42 : 0}, 4);
  eval::TrainerOptions o;
  o.learning_rate = 0.05;
  o.cuda = true;
  o.ownership_weight = ownership ? 1.0 : 0.0;
  eval::Trainer eager(start, o);
  o.cuda_graph = true;
  eval::Trainer graphed(start, o);
  // 3 warm-up steps, the capture and its replays, an odd batch, a new rate (captured again).
  for (int i = 0; i < 12; ++i) {
    const eval::TrainBatch& b = i == 7 ? half : batch;
    if (i == 9) {
      eager.SetLearningRate(0.02);
      graphed.SetLearningRate(0.02);
    }
    const auto a = eager.Step(b), g = graphed.Step(b);
    CHECK(g.policy == Approx(a.policy).margin(1e-4));
    CHECK(g.value == Approx(a.value).margin(1e-4));
    CHECK(g.ownership == Approx(a.ownership).margin(1e-4));
  }
  RequireNear(eager.Export(12), graphed.Export(12), 1e-4);
  RequireNear(eager.ExportMomentum(), graphed.ExportMomentum(), 1e-4);
  RequireNear(eager.ExportHeads(12), graphed.ExportHeads(12), 1e-4);
  CHECK(graphed.ExportHeads(12).tensors.size() == (ownership ? 2u : 0u));
  // Not without a GPU, and not in bf16.
  o.bf16 = true;
  CHECK_THROWS_AS(eval::Trainer(start, o), ConfigError);
}
