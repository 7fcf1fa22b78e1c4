// The weights file end to end with the real network: save, load, identical outputs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/weights_file.h"

using namespace zerofarm;

namespace {
eval::NetConfig ConfigFor(const std::string& name, int blocks, int filters) {
  return eval::GameNetConfig(*game::MakeGame(name), blocks, filters);
}

std::pair<std::vector<float>, std::vector<float>> Evaluate(eval::Evaluator& e, int positions) {
  auto g = game::MakeGame(e.Config().game);
  const size_t fb = g->Shape().FeatureBytes();
  std::vector<uint8_t> features(positions * fb);
  auto s = g->NewInitialState();
  std::vector<int> legal;
  for (int i = 0; i < positions && !s->IsTerminal(); ++i) {
    s->EncodeFeatures(features.data() + i * fb);
    s->LegalActions(&legal);
    s->Apply(legal[(5 * i + 1) % legal.size()]);
  }
  std::vector<float> policy(positions * g->ActionCount()), value(positions);
  eval::LeafChunk chunk{features.data(), policy.data(), value.data(), positions};
  e.Evaluate(&chunk, 1);
  return {policy, value};
}
}  // namespace

TEST_CASE("weights saved to HDF5 and loaded back give identical outputs", "[io][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-weights-net");
  const auto config = ConfigFor("connect4", 2, 16);
  eval::WeightSet original = eval::RandomWeights(config, 77);
  original.version = 3;
  io::WriteWeights(dir / "net.h5", original);
  const eval::WeightSet loaded = io::ReadWeights(dir / "net.h5");
  CHECK(loaded.version == 3);
  CHECK(loaded.config.SameShape(config));
  auto a = eval::MakeTorchEvaluator(original, {});
  auto b = eval::MakeTorchEvaluator(loaded, {});
  CHECK(b->ModelVersion() == 3);
  const auto oa = Evaluate(*a, 12), ob = Evaluate(*b, 12);
  CHECK(oa.first == ob.first);
  CHECK(oa.second == ob.second);
}

TEST_CASE("weights for another game or shape fail with one clear line", "[io][torch]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-weights-mismatch");
  io::WriteWeights(dir / "c4.h5", eval::RandomWeights(ConfigFor("connect4", 1, 8), 1));
  const eval::WeightSet w = io::ReadWeights(dir / "c4.h5");
  try {
    io::CheckWeightsMatch(w, ConfigFor("tictactoe", 1, 8), "c4.h5");
    FAIL("no error for weights of another game");
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_THAT(msg, Catch::Contains("c4.h5") && Catch::Contains("connect4") && Catch::Contains("tictactoe"));
  }
  CHECK_THROWS_AS(io::CheckWeightsMatch(w, ConfigFor("connect4", 2, 8), "c4.h5"), ConfigError);
  // A truncated file.
  const auto size = std::filesystem::file_size(dir / "c4.h5");
  std::filesystem::copy_file(dir / "c4.h5", dir / "cut.h5");
  std::filesystem::resize_file(dir / "cut.h5", size / 2);
  CHECK_THROWS_AS(io::ReadWeights(dir / "cut.h5"), Error);
}
