#include "zerofarm/io/run_dir.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"

using namespace zerofarm;

namespace {
void Touch(const std::string& path) { std::ofstream(path) << "x"; }
}  // namespace

TEST_CASE("run directory: every path of a run and of its host and the model file names", "[io]") {
  const io::RunDir run("R", "h1");
  CHECK(run.Root() == "R");
  CHECK(run.ShardsDir() == "R/shards");
  CHECK(run.HostDir() == "R/shards/h1");
  CHECK(run.ConfigFile() == "R/shards/h1/config.txt");
  CHECK(run.EpochFile() == "R/shards/h1/epoch");
  CHECK(run.LockFile() == "R/shards/h1/.zerofarm.lock");
  CHECK(run.MetricsCsv() == "R/shards/h1/metrics.csv");
  CHECK(run.RotatedMetricsCsv(3) == "R/shards/h1/metrics-3.csv");
  CHECK(run.MetricsProm() == "R/shards/h1/metrics.prom");
  CHECK(run.RunIdFile() == "R/run_id");
  CHECK(run.HostIndexDir() == "R/host-index");
  CHECK(run.HostIndexClaim(7) == "R/host-index/7");
  CHECK(run.ModelsDir() == "R/models");
  CHECK(run.ModelPath(12) == "R/models/model-12.h5");
  CHECK(run.TrainDir() == "R/train");
  CHECK(run.TrainStateFile() == "R/train/state.txt");
  CHECK(run.TrainMomentumFile() == "R/train/momentum.h5");
  CHECK(run.EvalDir() == "R/eval");
  CHECK(run.EvalCsv() == "R/eval/eval.csv");
  CHECK(run.CurveCsv() == "R/eval/curve.csv");
  CHECK(run.LoopFarmConfig() == "R/eval/farm-config.txt");
  CHECK(run.LoopSecondsFile() == "R/eval/loop-seconds.txt");
  CHECK(run.LoopCpuSecondsFile() == "R/eval/loop-cpu-seconds.txt");
  CHECK(run.RatedFile("pons-1.txt") == "R/eval/pons-1.txt.rated");
  // --models DIR replaces OUT/models and nothing else.
  const io::RunDir moved("R", "h1", "/m");
  CHECK(moved.ModelsDir() == "/m");
  CHECK(moved.ModelPath(1) == "/m/model-1.h5");
  CHECK(moved.HostDir() == "R/shards/h1");
  // Model files: model-VERSION.h5 or model-VERSION.pt (TorchScript), and no other name is a model.
  CHECK(io::RunDir::ModelFileName(0) == "model-0.h5");
  CHECK(io::RunDir::ModelNumber(io::RunDir::ModelFileName(42)) == 42);
  CHECK(io::RunDir::ModelNumber("model-007.h5") == 7);
  CHECK(io::RunDir::ModelNumber("model-12.pt") == 12);
  for (const char* other :
       {"model-.h5", "model-1.h5.tmp", "model-x.h5", "model-1a.h5", "best.h5", "model-1.pt2",
        "model-1.pt.x1.tmp", "model-.pt", "model-1.ptx", "model-1234567890123456.h5"})
    CHECK(io::RunDir::ModelNumber(other) == -1);
  // Hot reload's rule: a model-N file records version N; any other name records what it likes.
  io::RunDir::CheckModelFileVersion("R/models/model-12.pt", 12);
  io::RunDir::CheckModelFileVersion("R/models/model-007.h5", 7);
  io::RunDir::CheckModelFileVersion("START.pt", 12);
  CHECK_THROWS_MATCHES(
      io::RunDir::CheckModelFileVersion("R/models/model-12.pt", 13), ConfigError,
      Catch::Message("R/models/model-12.pt: its name says model version 12 but it records 13 "
                     "(zerofarm.json); a model-N file must record version N (docs/models.md, "
                     "Hot reload)"));
  CHECK_THROWS_WITH(io::RunDir::CheckModelFileVersion("model-3.h5", 4),
                    Catch::Contains("records 4 (its version attribute)"));
}

// One test case on disk, in sections (each test case costs CTest a process start).
TEST_CASE("run directory: on disk", "[io]") {
  testing::ScratchDir dir("zf-run-dir");
  SECTION("the newest model is the highest version, not the newest file or name") {
    const io::RunDir run(dir.path());
    CHECK(run.NewestModel() == std::pair<int64_t, std::string>{-1, ""});  // no models directory yet
    std::filesystem::create_directories(run.ModelsDir());
    CHECK(run.NewestModel().first == -1);
    for (const char* name : {"model-2.h5", "model-10.h5", "model-9.h5", "model-11.h5.tmp", "weights.h5"})
      Touch(run.ModelsDir() + "/" + std::string(name));
    CHECK(run.NewestModel() == std::pair<int64_t, std::string>{10, run.ModelPath(10)});
    CHECK(io::RunDir::NewestModelIn(run.ModelsDir()).first == 10);
    // The newest N, oldest first; a link is never followed, a name not a model is skipped.
    Touch(run.ModelsDir() + "/model-3.h5");
    std::filesystem::create_symlink(run.ModelPath(10), run.ModelsDir() + "/model-12.h5");
    CHECK(io::RunDir::NewestModelIn(run.ModelsDir()).first == 10);  // the link is not a model
    using Models = std::vector<std::pair<int64_t, std::string>>;
    CHECK(io::RunDir::NewestModelsIn(run.ModelsDir(), 2) ==
          Models{{9, run.ModelPath(9)}, {10, run.ModelPath(10)}});
    CHECK(io::RunDir::NewestModelsIn(run.ModelsDir(), 10).size() == 4);
    CHECK(io::RunDir::NewestModelsIn(run.ModelsDir(), 10).front().first == 2);
    CHECK(io::RunDir::NewestModelsIn(run.ModelsDir(), 0).empty());
    CHECK(io::RunDir::NewestModelsIn(dir.path() + "/none", 3).empty());
  }
  SECTION("readers find the shards and the run id from the run, shards or host directory") {
    const io::RunDir run(dir.path(), "h1");
    CHECK(io::RunDir::ShardsRootOf(dir.path()) == dir.path());  // no shards/: the directory itself
    std::string where;
    CHECK(io::RunDir::RunIdAbove(dir.path(), &where).empty());
    std::filesystem::create_directories(run.HostDir());
    io::WriteTextFileAtomically(run.RunIdFile(), "abc123\n");
    CHECK(io::RunDir::ShardsRootOf(dir.path()) == run.ShardsDir());
    CHECK(io::RunDir::ShardsRootOf(run.HostDir()) == run.HostDir());
    for (const std::string& start : {dir.path(), run.ShardsDir(), run.HostDir(), run.HostDir() + "/"}) {
      where.clear();
      CHECK(io::RunDir::RunIdAbove(start, &where) == "abc123");
      CHECK(std::filesystem::equivalent(where, run.RunIdFile()));
    }
  }
  SECTION("made, locked, claimed and counted by a host's supervisor") {
    const io::RunDir a(dir / "run", "a"), b(dir / "run", "b");
    a.MakeDirectories(false);
    for (const std::string& d : {a.Root(), a.ShardsDir(), a.HostDir(), a.HostIndexDir(), a.ModelsDir()})
      CHECK(std::filesystem::is_directory(d));
    {
      const io::RunDir::HostLock lock = a.LockHostDir();
      CHECK_THROWS_AS(a.LockHostDir(), ConfigError);  // another open file: flock refuses it
      CHECK(io::ReadTextFile(a.LockFile()) == std::to_string(getpid()));
    }
    const io::RunDir::HostLock again = a.LockHostDir();  // released with its owner
    {  // the loop's own lock, in OUT/eval: one loop a run, whatever its hosts
      std::filesystem::create_directories(a.EvalDir());
      const io::RunDir::HostLock loop = a.LockLoop();
      CHECK_THROWS_WITH(b.LockLoop(),
                        Catch::Contains("is a zerofarm loop of") && Catch::Contains("still stopping"));
      CHECK(io::ReadTextFile(a.LoopLockFile()) == std::to_string(getpid()));
    }
    CHECK_NOTHROW(a.LockLoop());  // released with its owner
    // One run id for all hosts: the first makes it, the others read it.
    const std::string id = a.ReadOrMakeRunId(0x1234);
    CHECK(id == "0000000000001234");
    CHECK(b.ReadOrMakeRunId(0x5678) == id);
    a.ClaimHostIndex(3);
    a.ClaimHostIndex(3);  // the same host again: a restart
    CHECK_THROWS_AS(b.ClaimHostIndex(3), ConfigError);
    b.ClaimHostIndex(4);
    CHECK(a.NextEpoch(3) == 0);
    CHECK(a.NextEpoch(3) == 1);
    CHECK(a.NextEpoch(3) == 2);
    CHECK_THROWS_AS(a.NextEpoch(3), Error);
  }
}
