// Hot reload: new weights dropped into RUN/models are picked up between
// batches without stopping the farm; a broken file is refused and the old
// weights stay; hot reload never sticks (issue 21, point 7): a refused file
// does not block a later valid one, and a file seen half-copied is retried
// until it is complete. Only the parent asserts.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/weights_file.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A farm with `gpus` GPU evaluators (0: one on the CPU) hot-reloads version 7,
// refuses a broken file and a NaN model once each, loads a half-copied
// file once it is complete, and refuses a file that crashes libhdf5. With
// `depth` batches in flight (--eval-depth).
void CheckHotReload(const std::string& gpus, const std::string& depth) {
  ScratchDir dir("zf-reload");
  const std::string out = dir / "run";
  std::vector<std::string> args = FarmArgs(out, {"--shard-positions", "100000"});
  *(std::find(args.begin(), args.end(), "--gpus") + 1) = gpus;
  args.insert(args.end(), {"--eval-depth", depth});
  INFO("--eval-depth " << depth);
  Spawned farm(args, dir / "farm");
  REQUIRE(WaitForLog(farm, "serving workers", 60));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // some games with the random net (version 0)

  eval::NetConfig c{"connect4", 3, 6, 7, 7, 1, 8, 64};
  eval::WeightSet v7 = eval::RandomWeights(c, 4242);
  v7.version = 7;
  io::WriteWeights(out + "/models/model-000007.h5", v7);
  REQUIRE(WaitForLog(farm, "loaded model version 7", 30));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // games searched by version 7

  std::ofstream(out + "/models/model-000008.h5") << "not a weights file";
  REQUIRE(WaitForLog(farm, "keeping model version 7", 30));

  // NaN weights: refused like any bad file (issue 21, point 2), one log line.
  eval::WeightSet v9 = eval::RandomWeights(c, 99);
  v9.version = 9;
  v9.tensors[0].data[0] = std::nanf("");
  io::WriteWeights(out + "/models/model-000009.h5", v9);
  REQUIRE(WaitForLog(farm, "refused " + out + "/models/model-000009.h5", 30));

  // A copy in progress (no rename): seen half-written, refused, retried once
  // complete. Neither refused file blocks it.
  eval::NetConfig deeper = c;  // another net: loaded as a new one, not in place
  deeper.blocks = 2;
  eval::WeightSet v10 = eval::RandomWeights(deeper, 1010);
  v10.version = 10;
  io::WriteWeights(dir / "v10.h5", v10);
  const std::string whole = Slurp(dir / "v10.h5"), copy = out + "/models/model-000010.h5";
  std::ofstream(copy, std::ios::binary) << whole.substr(0, whole.size() / 2);
  REQUIRE(WaitForLog(farm, "refused " + copy, 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::ofstream(copy, std::ios::binary | std::ios::app) << whole.substr(whole.size() / 2);
  REQUIRE(WaitForLog(farm, "loaded model version 10", 30));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // games searched by version 10
  // A file that crashes libhdf5 (issue 75): refused, the evaluator lives on with version 10.
  io::WriteWeights(dir / "v11.h5", v10);
  BreakGlobalHeapReference(dir / "v11.h5");
  std::filesystem::rename(dir / "v11.h5", out + "/models/model-000011.h5");
  REQUIRE(WaitForLog(farm, "refused " + out + "/models/model-000011.h5; keeping model version 10", 30));
  // The N of model-N counts (docs/models.md, Hot reload): a file recording another version is
  // refused in one line as it appears, and one numbered at or below the model loaded is ignored in
  // one line. A later model is still loaded: the polls in between logged neither again.
  const auto publish = [&](uint32_t version, const std::string& name) {
    eval::WeightSet w = eval::RandomWeights(c, 7000 + version);
    w.version = version;
    io::WriteWeights(dir / "publish.h5", w);
    std::filesystem::rename(dir / "publish.h5", out + "/models/" + name);
    return out + "/models/" + name;
  };
  const std::string misnamed = publish(13, "model-000012.h5");
  REQUIRE(WaitForLog(farm, "refused " + misnamed + "; keeping model version 10", 30));
  const std::string late = publish(4, "model-000004.h5");
  REQUIRE(WaitForLog(farm, "ignoring " + late, 30));
  publish(14, "model-000014.h5");
  REQUIRE(WaitForLog(farm, "loaded model version 14", 30));
  farm.Signal(SIGINT);
  REQUIRE(farm.Wait(120) == 0);
  const std::string err = farm.Stderr();
  INFO(err.substr(err.size() > 4000 ? err.size() - 4000 : 0));
  CHECK_THAT(err, Catch::Contains("model-000008.h5"));
  // Version 7 is the farm's net (1 x 8), so its weights go in place
  // (Evaluator::UpdateWeights, keeping the pinned segment and any CUDA
  // graphs); version 10 is another net (2 x 8), so a new one.
  CHECK_THAT(err,
             Catch::Contains("loaded model version 7 from " + out + "/models/model-000007.h5 (in place)"));
  CHECK_THAT(err, Catch::Contains("loaded model version 10 from " + copy + "\n"));
  // Each refusal is logged once, not every second while the file stays as it is.
  const size_t nan_refusals = Count(err, "refused " + out + "/models/model-000009.h5");
  CHECK(nan_refusals == 1);
  CHECK(Count(err, "refused " + misnamed) == 1);
  CHECK_THAT(err, Catch::Contains(misnamed + ": its name says model version 12 but it records 13"));
  CHECK(Count(err, "ignoring " + late + ": hot reload loads only a model-N numbered above model-10") == 1);
  CHECK_THAT(err, Catch::Contains("non-finite value (nan)"));
  CHECK_THAT(err, Catch::Contains("model-000011.h5: refused: reading it crashed libhdf5 ("));
  CHECK_THAT(err, !Catch::Contains("restarted "));  // no child died, the evaluator least of all

  std::set<uint32_t> versions;
  bool monotonic = true;
  for (const auto& path : io::ListShards(HostDir(out))) {
    io::ShardReader shard(path);
    const auto rows = shard.ReadAllPositions();
    for (const auto& game : shard.ReadGames()) {
      uint32_t last = 0;
      for (int i = 0; i < game.position_count; ++i) {
        const uint32_t v = rows.model_version[game.first_position + i];
        versions.insert(v);
        // Models only get newer: a game never goes back to an older one.
        if (v < last) monotonic = false;
        last = v;
      }
    }
    CHECK(shard.meta().model_version_max <= 14);
  }
  CHECK(versions.count(0) == 1);
  CHECK(versions.count(7) == 1);
  CHECK(versions.count(10) == 1);
  CHECK(versions.count(9) == 0);  // the NaN model never searched a position
  CHECK(versions.count(4) == 0);  // nor the late one, the misnamed one or the crashing one
  CHECK(versions.count(13) == 0);
  CHECK(versions.count(11) == 0);
  CHECK(monotonic);
}

}  // namespace

TEST_CASE("new weights are hot-reloaded between batches and broken files are refused without sticking",
          "[multiprocess][reload]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  CheckHotReload("0", GENERATE("1", "2"));
}

TEST_CASE("hot reload on the GPU: the new net is pinned and used and broken files are refused",
          "[multiprocess][reload][gpu]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  CheckHotReload("1", GENERATE("1", "2"));
}

TEST_CASE("stage dir: each model is copied once per host and every evaluator loads the copy",
          "[multiprocess][reload]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-stage");
  const std::string out = dir / "run", stage = dir / "local";
  std::filesystem::create_directories(out + "/models");
  eval::NetConfig c{"connect4", 3, 6, 7, 7, 1, 8, 64};
  eval::WeightSet v3 = eval::RandomWeights(c, 33);
  v3.version = 3;
  io::WriteWeights(out + "/models/model-000003.h5", v3);  // there at start: staged before the evaluators
  std::vector<std::string> args = FarmArgs(out, {"--shard-positions", "100000", "--stage-dir", stage});
  *(std::find(args.begin(), args.end(), "--cpu-evaluators") + 1) = "2";
  Spawned farm(args, dir / "farm");
  REQUIRE(WaitForLog(farm, "loaded model version 3", 60));
  eval::WeightSet v5 = eval::RandomWeights(c, 55);
  v5.version = 5;
  io::WriteWeights(out + "/models/model-000005.h5", v5);
  REQUIRE(WaitForLog(farm, "staged model version 5", 30));
  const auto both_loaded = [&] {
    const std::string err = farm.Stderr();
    return err.find("loaded model version 5") != err.rfind("loaded model version 5");
  };
  REQUIRE(WaitFor(both_loaded, 30));
  farm.Signal(SIGINT);
  REQUIRE(farm.Wait(120) == 0);
  const std::string err = farm.Stderr();
  INFO(err.substr(err.size() > 4000 ? err.size() - 4000 : 0));
  const std::string local = stage + "/" + Slurp(out + "/run_id").substr(0, 16) + "-" + kTestHost;
  const auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = err.find(text); at != std::string::npos; at = err.find(text, at + 1)) ++n;
    return n;
  };
  CHECK(count("staged model version 3: ") == 1);  // one read of each model for the host ...
  CHECK(count("staged model version 5: ") == 1);
  CHECK(count("loaded model version 3 from " + local + "/model-000003.h5") == 2);  // ... two evaluators
  CHECK(count("loaded model version 5 from " + local + "/model-000005.h5") == 2);
  CHECK(count("from " + out + "/models/") == 0);  // none from the shared models directory
  CHECK(Slurp(local + "/model-000005.h5") == Slurp(out + "/models/model-000005.h5"));
}

// Issue 82: a bad model is refused in one line, not one per evaluator.
TEST_CASE("a bad model in the models directory is refused in one line by two evaluators",
          "[multiprocess][reload]") {
  ScratchDir dir("zf-reload");
  const std::string models = dir / "models";
  std::filesystem::create_directory(models);
  std::ofstream(models + "/model-000005.h5") << "not a weights file";
  std::vector<std::string> args = FarmArgs(dir / "run", {"--models", models, "--games", "4"});
  *(std::find(args.begin(), args.end(), "--cpu-evaluators") + 1) = "2";
  Spawned farm(args, dir / "farm");
  REQUIRE(farm.Wait(180) == 0);
  const std::string err = farm.Stderr();
  INFO(err);
  REQUIRE_THAT(err, Catch::Contains("of evaluator 1"));  // both evaluators served
  size_t refusals = 0;
  for (size_t at = err.find("refused " + models + "/model-000005.h5"); at != std::string::npos;
       at = err.find("refused " + models + "/model-000005.h5", at + 1))
    ++refusals;
  CHECK(refusals == 1);
}
