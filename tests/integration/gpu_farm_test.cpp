// GPU placement (proc/gpu_plan.h) end to end: the real binary, real processes.
// The CPU cases run everywhere (--simulate-gpus: the farm laid out as for
// GPUs, networks on the CPU); the [gpu] cases need a CUDA build and a GPU and
// skip visibly otherwise. Only this (parent) process asserts.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/eval/torch_evaluator.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

// One variable of /proc/PID/environ, or "(unset)".
std::string EnvOf(pid_t pid, const std::string& name) {
  const std::string env = Slurp("/proc/" + std::to_string(pid) + "/environ");
  size_t at = 0;
  while (at < env.size()) {
    const size_t end = env.find('\0', at);
    const std::string entry = env.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "(unset)";
}

// CUDA_VISIBLE_DEVICES of each running evaluator of `farm`, by name (zf-eval-N),
// once `count` of them are up (at most 60 s).
std::map<std::string, std::string> EvaluatorDevicesOf(const Spawned& farm, size_t count) {
  std::map<std::string, std::string> out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (pid_t pid : ChildPids(farm.pid())) {
      std::string comm = Slurp("/proc/" + std::to_string(pid) + "/comm");
      if (!comm.empty() && comm.back() == '\n') comm.pop_back();
      if (comm.rfind("zf-eval-", 0) == 0) out[comm] = EnvOf(pid, "CUDA_VISIBLE_DEVICES");
    }
  }
  return out;
}

// A connect4 farm of `workers` workers with `extra` options; waits for it.
struct FarmResult {
  int code;
  std::string err, summary;
  std::map<std::string, std::string> devices;  // zf-eval-N -> CUDA_VISIBLE_DEVICES
  ShardCheck shards;
};
FarmResult RunTestFarm(const ScratchDir& dir, int workers, int games, size_t evaluators,
                       std::vector<std::string> extra) {
  const std::string out = dir / "run";
  extra.insert(extra.end(), {"--workers", std::to_string(workers), "--games", std::to_string(games)});
  std::vector<std::string> args = FarmArgs(out, {});
  for (const char* name : {"--gpus", "--workers", "--cpu-evaluators"})  // `extra` sets them
    if (auto at = std::find(args.begin(), args.end(), name); at != args.end()) args.erase(at, at + 2);
  args.insert(args.end(), extra.begin(), extra.end());
  Spawned farm(args, dir / "farm");
  FarmResult r;
  r.devices = EvaluatorDevicesOf(farm, evaluators);
  r.code = farm.Wait(300);
  r.err = farm.Stderr();
  r.summary = farm.Stdout();
  if (r.code == 0) r.shards = CheckShards(HostDir(out));
  CHECK(SegmentsOf(farm.pid()).empty());
  return r;
}

}  // namespace

TEST_CASE(
    "two simulated GPU evaluators (--gpus 2 --simulate-gpus) each get their own CUDA_VISIBLE_DEVICES and "
    "half the workers",
    "[multiprocess][farm][gpu_plan][slow]") {
  if (!eval::TorchBuilt()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-gpu-plan");
  ScopedEnv visible("CUDA_VISIBLE_DEVICES", "5,7");
  const FarmResult r = RunTestFarm(dir, 3, 24, 2, {"--gpus", "2", "--simulate-gpus"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.devices == std::map<std::string, std::string>{{"zf-eval-0", "5"}, {"zf-eval-1", "7"}});
  // Workers w % 2 == e feed evaluator e.
  CHECK_THAT(r.err, Catch::Contains("serving workers 0,2 (CUDA_VISIBLE_DEVICES=5) of evaluator 0"));
  CHECK_THAT(r.err, Catch::Contains("serving workers 1 (CUDA_VISIBLE_DEVICES=7) of evaluator 1"));
  CHECK_THAT(r.err, Catch::Contains("2 simulated-GPU (CPU) evaluator(s)"));
  CHECK_THAT(r.summary, Catch::Contains("24 games finished, 24 written"));
  CHECK(r.shards.games == 24);
  CHECK(r.shards.duplicate_ids == 0);
}

// Issue #23: a CPU farm spreads the network over E evaluator processes.
TEST_CASE("a CPU farm with two CPU evaluator processes writes valid games from every worker",
          "[multiprocess][farm][cpu_evaluators]") {
  ScratchDir dir("zf-cpu-evals");
  const FarmResult r =
      RunTestFarm(dir, 3, 18, 2, {"--gpus", "0", "--cpu-evaluators", "2", "--eval-threads", "1"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.devices.size() == 2);  // zf-eval-0 and zf-eval-1 ran
  CHECK_THAT(r.err, Catch::Contains("serving workers 0,2 ("));
  CHECK_THAT(r.err, Catch::Contains("serving workers 1 ("));
  CHECK_THAT(r.err, Catch::Contains("2 CPU evaluator(s)"));
  CHECK_THAT(r.summary, Catch::Contains("18 games finished, 18 written"));
  CHECK(r.shards.games == 18);
  CHECK(r.shards.duplicate_ids == 0);
  std::set<uint64_t> workers;  // game ids carry the worker (proc::MakeGameId)
  for (uint64_t id : r.shards.game_ids) workers.insert((id >> 26) & 1023);
  CHECK(workers == std::set<uint64_t>{0, 1, 2});
}

TEST_CASE("two GPU evaluators with one visible GPU are refused in one line and share it with --share-gpus",
          "[multiprocess][farm][gpu_plan][slow]") {
  if (!eval::TorchBuilt()) ZF_SKIP("built without LibTorch");
  ScopedEnv visible("CUDA_VISIBLE_DEVICES", "3");
  {
    ScratchDir dir("zf-gpu-plan-refused");
    const FarmResult r = RunTestFarm(dir, 2, 4, 0, {"--gpus", "2", "--simulate-gpus"});
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err,
               Catch::Contains("--gpus 2 but 1 GPU(s) visible (3)") && Catch::Contains("--share-gpus"));
  }
  ScratchDir dir("zf-gpu-plan-shared");
  const FarmResult r = RunTestFarm(dir, 2, 12, 2, {"--gpus", "2", "--simulate-gpus", "--share-gpus"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.devices == std::map<std::string, std::string>{{"zf-eval-0", "3"}, {"zf-eval-1", "3"}});
  CHECK(r.shards.games == 12);
  CHECK(r.shards.duplicate_ids == 0);
}

TEST_CASE("a farm with --gpus 2: two GPUs where two are visible or else two evaluators sharing one",
          "[multiprocess][farm][gpu]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  const int devices = eval::CudaDeviceCount();
  if (devices == 0) ZF_SKIP("no CUDA device");
  ScratchDir dir("zf-gpu-two");
  std::vector<std::string> extra = {"--gpus", "2"};
  if (devices < 2) extra.push_back("--share-gpus");
  // Where neither the variable nor /proc/driver/nvidia says which GPU there
  // is, name it, so both evaluators share the one device CUDA sees.
  std::optional<ScopedEnv> only_one;
  if (devices < 2 && !std::getenv("CUDA_VISIBLE_DEVICES")) only_one.emplace("CUDA_VISIBLE_DEVICES", "0");
  FarmResult r = RunTestFarm(dir, 4, 40, 2, extra);
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.devices.size() == 2);
  if (devices >= 2)
    CHECK(r.devices["zf-eval-0"] != r.devices["zf-eval-1"]);
  else
    CHECK(r.devices["zf-eval-0"] == r.devices["zf-eval-1"]);
  CHECK_THAT(r.err, Catch::Contains("serving workers 0,2 (CUDA_VISIBLE_DEVICES=" + r.devices["zf-eval-0"] +
                                    ") of evaluator 0 with LibTorch CUDA"));
  CHECK_THAT(r.err, Catch::Contains("serving workers 1,3 (CUDA_VISIBLE_DEVICES=" + r.devices["zf-eval-1"] +
                                    ") of evaluator 1 with LibTorch CUDA"));
  CHECK(r.shards.games == 40);
  CHECK(r.shards.duplicate_ids == 0);
}
