// Non-finite network output (issue #21, point 3): a model whose finite weights
// overflow to NaN/Inf in the forward pass never wedges a worker. The leaves
// it answers are counted, logged once per model version, and their games are
// dropped (and counted); the run stops on time, says why in its summary, and
// exits 1 while the model in use still produces NaN. Only the parent asserts.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/weights_file.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

const eval::NetConfig kNet{"connect4", 3, 6, 7, 7, 1, 8, 64};

bool EndsWith(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

// Finite weights (every value a float, at most about 1e30) whose forward pass
// overflows: every layer's weights and biases are scaled by 1e30, so the
// activations reach Inf after two layers, and Inf - Inf in the next one is NaN.
eval::WeightSet OverflowingWeights(uint32_t version) {
  eval::WeightSet w = eval::RandomWeights(kNet, 99);
  w.version = version;
  for (auto& t : w.tensors)
    if (!t.is_int() && (EndsWith(t.name, ".weight") || EndsWith(t.name, ".bias")))
      for (float& x : t.data) x *= 1e30f;
  return w;
}

bool AllFinite(const eval::WeightSet& w) {
  for (const auto& t : w.tensors)
    for (float x : t.data)
      if (!std::isfinite(x)) return false;
  return true;
}

// The net's answer for a position (all planes set) is not finite (checked in this process).
bool AnswersNonFinite(const eval::WeightSet& w) {
  auto net = eval::MakeTorchEvaluator(w, eval::TorchOptions{});
  std::vector<uint8_t> features(3 * 6 * 7, 1);
  std::vector<float> policy(7), value(1);
  eval::LeafChunk chunk{features.data(), policy.data(), value.data(), 1};
  net->Evaluate(&chunk, 1);
  bool finite = std::isfinite(value[0]);
  for (float p : policy) finite = finite && std::isfinite(p);
  return !finite;
}

int Count(const std::string& s, const std::string& text) {
  int n = 0;
  for (size_t at = s.find(text); at != std::string::npos; at = s.find(text, at + 1)) ++n;
  return n;
}

// What every NaN run shows: the summary says why; nothing hung, nothing
// restarted; every finished game (if any) written.
void CheckNonFiniteSummary(const std::string& summary, const std::string& err) {
  CHECK_THAT(summary, Catch::Contains("leaves with NaN or Inf"));
  CHECK(NumberBefore(summary, " leaves with NaN or Inf") > 0);
  CHECK(NumberBefore(summary, " games were dropped for it") > 0);
  CHECK(NumberAfter(summary, "restarts ") == 0);  // no worker wedged, crashed or hung
  CHECK(Count(err, ") is hung") == 0);
  CHECK(NumberBefore(summary, " written in ") == NumberBefore(summary, " games finished"));
}

}  // namespace

TEST_CASE("a model that answers NaN at start: the run stops on time with exit 1 and the summary says why",
          "[multiprocess][fault][nonfinite][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-nan-start");
  const eval::WeightSet nan = OverflowingWeights(3);
  REQUIRE(AllFinite(nan));         // a finiteness check of the weights passes ...
  REQUIRE(AnswersNonFinite(nan));  // ... yet the output is not finite
  io::WriteWeights(dir / "nan.h5", nan);
  const double duration = 12;
  Spawned farm(
      FarmArgs(dir / "run", {"--weights", dir / "nan.h5", "--duration", "12", "--hang-timeout", "10"}),
      dir / "farm");
  const int code = farm.Wait(duration + 120);
  const std::string err = farm.Stderr(), summary = farm.Stdout();
  INFO(summary);
  INFO(err.substr(err.size() > 5000 ? err.size() - 5000 : 0));
  CHECK(code == kExitFailure);
  CHECK(Count(err, ") is hung") == 0);  // no wedged worker waited for and killed
  CHECK_THAT(summary, Catch::Contains("duration reached"));
  CHECK_THAT(summary, Catch::Contains("the model in use still does (exit code 1)"));
  CHECK(Count(err, "model version 3 produced NaN or Inf") == 1);  // logged once per model version
  CheckNonFiniteSummary(summary, err);
}

TEST_CASE(
    "a model that answers NaN by hot reload: games are dropped and a later good model is used and nothing "
    "wedges",
    "[multiprocess][fault][nonfinite][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  for (const bool recover : {false, true}) {
    ScratchDir dir("zf-nan-reload");
    const std::string out = dir / "run";
    Spawned farm(FarmArgs(out, {"--duration", recover ? "0" : "40", "--hang-timeout", "10"}), dir / "farm");
    REQUIRE(WaitForLog(farm, "serving workers", 120));
    std::this_thread::sleep_for(std::chrono::seconds(3));  // games with the random net
    io::WriteWeights(out + "/models/model-000005.h5", OverflowingWeights(5));
    REQUIRE(WaitForLog(farm, "loaded model version 5", 60));
    REQUIRE(WaitForLog(farm, "model version 5 produced NaN or Inf", 60));
    std::this_thread::sleep_for(std::chrono::seconds(3));
    if (recover) {
      eval::WeightSet good = eval::RandomWeights(kNet, 7);
      good.version = 6;
      io::WriteWeights(out + "/models/model-000006.h5", good);
      REQUIRE(WaitForLog(farm, "loaded model version 6", 60));
      std::this_thread::sleep_for(std::chrono::seconds(6));  // the workers start games again
      farm.Signal(SIGINT);
    }
    const int code = farm.Wait(180);
    const std::string err = farm.Stderr(), summary = farm.Stdout();
    INFO((recover ? "recovered" : "stayed NaN") << "\n" << summary);
    INFO(err.substr(err.size() > 5000 ? err.size() - 5000 : 0));
    CHECK(code == (recover ? kExitOk : kExitFailure));
    CHECK(Count(err, "model version 5 produced NaN or Inf") == 1);
    CheckNonFiniteSummary(summary, err);
    if (recover) {
      CHECK_THAT(summary, !Catch::Contains("still does"));
      // Games searched by version 6 were finished and written.
      std::set<uint32_t> versions;
      for (const auto& path : io::ListShards(HostDir(out))) {
        io::ShardReader shard(path);
        for (uint32_t v : shard.ReadAllPositions().model_version) versions.insert(v);
      }
      CHECK(versions.count(6) == 1);
      CHECK(versions.count(5) == 0);  // no position was searched with NaN answers
    } else {
      CHECK_THAT(summary, Catch::Contains("duration reached"));
      CHECK_THAT(summary, Catch::Contains("the model in use still does (exit code 1)"));
      CHECK(NumberBefore(summary, " games finished") > 0);  // the random net's games, all written
    }
  }
}
