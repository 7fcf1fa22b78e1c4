// The evaluator's batches in flight (src/proc/batch_pipeline.h) on real leaf
// rings in one process, with the CPU LibTorch evaluator at depth 2, which
// answers a batch at its Finish as a GPU's copies land at its event.
#include "batch_pipeline.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "../shm/shm_test_util.h"
#include "skip.h"
#include "zerofarm/eval/torch_evaluator.h"

namespace zerofarm::proc {
namespace {

using shm::testing::LocalSegment;

constexpr uint32_t kFeatureBytes = 3 * 6 * 7, kActions = 7;
constexpr float kUnset = 12345.0f;  // an output slot not written yet

eval::WeightSet Weights(uint64_t seed, uint32_t version) {
  auto w = eval::RandomWeights(eval::NetConfig{"connect4", 3, 6, 7, 7, 1, 8, 8}, seed);
  w.version = version;
  return w;
}

std::unique_ptr<eval::Evaluator> Net(const eval::WeightSet& w, int depth) {
  eval::TorchOptions o;
  o.depth = depth;
  return eval::MakeTorchEvaluator(w, o);
}

// One evaluator's two rings and their workers' ends, in ordinary memory.
struct Rig {
  Rig() : seg(Params()) {
    producers.reserve(2);
    rings.reserve(2);
    for (uint32_t w = 0; w < 2; ++w) {
      producers.emplace_back(seg.map().Ring(w), shm::Doorbell());
      rings.emplace_back(seg.map().Ring(w));
    }
  }
  static shm::LayoutParams Params() {
    shm::LayoutParams p;
    p.num_workers = 2;
    p.ring_slots = 8;
    p.feature_bytes = kFeatureBytes;
    p.actions = kActions;
    return p;
  }
  // Worker w publishes n leaves of random 0/1 planes.
  void Publish(uint32_t w, uint64_t n) {
    auto& p = producers[w];
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t* f = p.SlotFeatures(p.Head() + i);
      for (uint32_t b = 0; b < kFeatureBytes; ++b) f[b] = static_cast<uint8_t>(rng() % 2);
    }
    p.Publish(n);
  }
  // Every ready leaf of both rings, as the evaluator gathers a batch, its outputs kUnset.
  std::vector<shm::LeafRun> Take() {
    std::vector<shm::LeafRun> runs;
    for (auto& ring : rings) {
      const shm::LeafRuns taken = ring.Take(100);
      for (uint32_t r = 0; r < taken.num_runs; ++r) runs.push_back(taken.runs[r]);
    }
    for (const auto& run : runs) {
      std::fill(run.policy, run.policy + run.count * kActions, kUnset);
      std::fill(run.value, run.value + run.count, kUnset);
    }
    return runs;
  }
  uint64_t Completed(uint32_t w) { return producers[w].PollCompleted(); }

  LocalSegment seg;
  std::vector<shm::LeafRingProducer> producers;
  std::vector<shm::LeafRingConsumer> rings;
  std::mt19937 rng{5};
};

uint64_t Leaves(const std::vector<shm::LeafRun>& runs) {
  uint64_t n = 0;
  for (const auto& run : runs) n += run.count;
  return n;
}
bool Unset(const std::vector<shm::LeafRun>& runs) {
  for (const auto& run : runs)
    for (uint32_t i = 0; i < run.count; ++i)
      if (run.value[i] != kUnset) return false;
  return true;
}
// Every leaf's outputs are what `ref` answers for its features, and stamped `version`.
bool AnsweredBy(eval::Evaluator& ref, const std::vector<shm::LeafRun>& runs, uint32_t version) {
  std::vector<float> policy(kActions);
  float value = 0;
  for (const auto& run : runs)
    for (uint32_t i = 0; i < run.count; ++i) {
      const eval::LeafChunk one{run.features + i * kFeatureBytes, policy.data(), &value, 1};
      ref.Evaluate(&one, 1);
      if (std::abs(run.value[i] - value) > 1e-4 || run.model_version[i] != version) return false;
      for (uint32_t a = 0; a < kActions; ++a)
        if (std::abs(run.policy[i * kActions + a] - policy[a]) > 1e-4) return false;
    }
  return true;
}

TEST_CASE("BatchPipeline: two batches in flight hold their slots until each is finished, oldest first",
          "[proc][pipeline]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const auto weights = Weights(1, 1);
  auto net = Net(weights, 2);
  auto ref = Net(weights, 1);
  Rig r;
  BatchPipeline pipe;
  r.Publish(0, 3);
  r.Publish(1, 2);
  const auto a = r.Take();
  pipe.Start(*net, a, Leaves(a), r.rings, 1);
  CHECK(!pipe.Full(*net));
  r.Publish(0, 4);
  r.Publish(1, 1);
  const auto b = r.Take();
  pipe.Start(*net, b, Leaves(b), r.rings, 2);
  CHECK(pipe.Full(*net));
  CHECK((r.Completed(0) == 0 && r.Completed(1) == 0));

  const BatchPipeline::Batch& first = pipe.WaitOldest(*net);
  CHECK(first.leaves == 5);
  CHECK(AnsweredBy(*ref, a, 1));
  CHECK(Unset(b));
  CHECK(r.Completed(0) == 0);  // answered, still held
  pipe.CompleteOldest(r.rings);
  CHECK(r.Completed(0) == 3);  // batch a's leaves only, not b's
  CHECK(r.Completed(1) == 2);

  // A third batch wraps ring 0 around its end (seqs 7 to 10 of 8 slots).
  r.producers[0].Consume(3);
  r.Publish(0, 4);
  const auto c = r.Take();
  CHECK(c.size() == 2);
  pipe.Start(*net, c, Leaves(c), r.rings, 3);
  pipe.WaitOldest(*net);
  CHECK(AnsweredBy(*ref, b, 1));
  CHECK(Unset(c));
  pipe.CompleteOldest(r.rings);
  CHECK((r.Completed(0) == 7 && r.Completed(1) == 3));
  pipe.WaitOldest(*net);
  CHECK(AnsweredBy(*ref, c, 1));
  pipe.CompleteOldest(r.rings);
  CHECK((r.Completed(0) == 11 && r.Completed(1) == 3));
  CHECK(pipe.Empty());
}

TEST_CASE("BatchPipeline: a reload and a NaN model between Start and Finish, and the evaluator gone",
          "[proc][pipeline]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  const auto first = Weights(1, 1), second = Weights(2, 3);
  auto poisoned = Weights(2, 2);  // every output NaN
  for (auto& t : poisoned.tensors)
    if (t.name == "stem.conv.weight") std::fill(t.data.begin(), t.data.end(), std::nanf(""));
  auto net = Net(first, 2);
  auto by_first = Net(first, 1), by_second = Net(second, 1);
  Rig r;
  shm::EvaluatorBlock& block = r.seg.map().Evaluator(0);
  NonFiniteCheck nan(block);
  BatchPipeline pipe;
  // Starts what the workers published, as the ring server does.
  auto start = [&](uint64_t w0, uint64_t w1) {
    r.Publish(0, w0);
    r.Publish(1, w1);
    auto runs = r.Take();
    nan.NewModel(net->ModelVersion());
    pipe.Start(*net, runs, Leaves(runs), r.rings, 0);
    return runs;
  };
  auto finish = [&]() {
    const BatchPipeline::Batch& done = pipe.WaitOldest(*net);
    nan.Check(done.runs, kActions, done.version, done.leaves);
    pipe.CompleteOldest(r.rings);
  };

  const auto a = start(2, 1);
  REQUIRE(net->UpdateWeights(poisoned));  // with batch a in flight
  const auto b = start(1, 1);
  finish();
  CHECK(AnsweredBy(*by_first, a, 1));
  CHECK(block.nonfinite_leaves.load() == 0);
  finish();
  for (const auto& run : b) CHECK((std::isnan(run.value[0]) && run.model_version[0] == 2));
  CHECK(block.nonfinite_leaves.load() == 2);
  CHECK(block.model_nonfinite.load() == 1);

  // NaN from the model before the one in use is counted, but does not flag the new model.
  const auto c = start(1, 0);
  REQUIRE(net->UpdateWeights(second));
  const auto d = start(1, 2);
  CHECK(block.model_nonfinite.load() == 0);
  finish();
  CHECK(block.nonfinite_leaves.load() == 3);
  CHECK(block.model_nonfinite.load() == 0);
  finish();
  CHECK(AnsweredBy(*by_second, d, 3));
  CHECK(block.nonfinite_leaves.load() == 3);

  // Gone with a batch in flight: `done` stays, so a replacement evaluates its leaves again.
  const uint64_t done0 = r.Completed(0), done1 = r.Completed(1);
  start(2, 1);
  net.reset();
  CHECK((r.Completed(0) == done0 && r.Completed(1) == done1));
  shm::LeafRingConsumer replacement0(r.seg.map().Ring(0)), replacement1(r.seg.map().Ring(1));
  CHECK(replacement0.Available() == 2);
  CHECK(replacement1.Available() == 1);
}

}  // namespace
}  // namespace zerofarm::proc
