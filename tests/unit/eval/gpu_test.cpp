// The CUDA evaluator. Every test SKIPs where this build has no CUDA LibTorch
// or the machine has no GPU.
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "skip.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;

TEST_CASE("the CUDA evaluator matches the CPU one, reading and writing pinned shared memory in place",
          "[eval][gpu]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  auto g = game::MakeGame("connect4");
  eval::NetConfig c{"connect4", 3, 6, 7, 7, 2, 32, 32};
  const auto weights = eval::RandomWeights(c, 9);
  constexpr int kLeaves = 40;
  const size_t fb = g->Shape().FeatureBytes();
  // Shared memory like a ring's: features, then policy, then value.
  const size_t bytes = 1 << 20;
  void* region = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(region != MAP_FAILED);
  auto* features = static_cast<uint8_t*>(region);
  auto* policy = reinterpret_cast<float*>(features + 64 * 1024);
  auto* value = policy + kLeaves * 7;
  auto s = g->NewInitialState();
  std::vector<int> legal;
  for (int i = 0; i < kLeaves; ++i) {
    if (s->IsTerminal()) s = g->NewInitialState();
    s->EncodeFeatures(features + i * fb);
    s->LegalActions(&legal);
    s->Apply(legal[(i * 7 + 3) % legal.size()]);
  }
  std::vector<float> cpu_policy(kLeaves * 7), cpu_value(kLeaves);
  auto cpu = eval::MakeTorchEvaluator(weights, {});
  eval::LeafChunk cpu_chunk{features, cpu_policy.data(), cpu_value.data(), kLeaves};
  cpu->Evaluate(&cpu_chunk, 1);

  for (const char* precision : {"fp32", "bf16", "fp16"}) {
    eval::TorchOptions o;
    o.cuda = true;
    o.bf16 = !std::strcmp(precision, "bf16");
    o.fp16 = !std::strcmp(precision, "fp16");
    auto gpu = eval::MakeTorchEvaluator(weights, o);
    gpu->RegisterHostMemory(region, bytes);
    std::memset(policy, 0, kLeaves * 7 * sizeof(float) + kLeaves * sizeof(float));
    // Two chunks, as a batch across two rings is.
    eval::LeafChunk chunks[2] = {{features, policy, value, 15},
                                 {features + 15 * fb, policy + 15 * 7, value + 15, kLeaves - 15}};
    gpu->Evaluate(chunks, 2);
    const double tolerance = std::strcmp(precision, "fp32") ? 0.1 : 1e-3;
    INFO(precision);
    for (int i = 0; i < kLeaves * 7; ++i) CHECK(policy[i] == Approx(cpu_policy[i]).margin(tolerance));
    for (int i = 0; i < kLeaves; ++i) CHECK(value[i] == Approx(cpu_value[i]).margin(tolerance));
  }
  munmap(region, bytes);
}
