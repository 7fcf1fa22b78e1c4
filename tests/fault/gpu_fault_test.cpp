// A GPU evaluator SIGKILLed while it runs batches: the segment it pinned, the
// copies in flight on its side stream and its CUDA context die with it; its
// successor pins the segment again and re-evaluates every leaf taken but not
// finished. Nothing finished is lost, nothing is written twice. Needs a CUDA
// build and a GPU (skips visibly otherwise). Only this (parent) process asserts.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/eval/torch_evaluator.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

pid_t EvaluatorPid(pid_t farm) {
  for (pid_t pid : ChildPids(farm)) {
    const std::string comm = Slurp("/proc/" + std::to_string(pid) + "/comm");
    if (comm.rfind("zf-eval-0", 0) == 0) return pid;
  }
  return -1;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a GPU evaluator SIGKILLed mid-batch: its successor re-evaluates the leaves and no game is lost",
          "[multiprocess][fault][gpu]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  ScratchDir dir("zf-gpu-kill");
  const std::string out = dir / "run";
  // A net big enough that the evaluator spends most of its time in batches.
  std::vector<std::string> args = FarmArgs(out, {"--workers", "4", "--games-per-worker", "32", "--blocks",
                                                 "6", "--filters", "64", "--shard-positions", "2000"});
  *(std::find(args.begin(), args.end(), "--gpus") + 1) = "1";
  Spawned farm(args, dir / "farm");
  constexpr int kKills = 5;
  int kills = 0;
  for (int attempt = 0; attempt < 200 && kills < kKills; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kills == 0 ? 3000 : 1500));
    // Only an evaluator that has started serving (pinned, batches running).
    if (Count(farm.Stderr(), "serving workers") < static_cast<size_t>(kills + 1)) continue;
    const pid_t victim = EvaluatorPid(farm.pid());
    if (victim > 0 && kill(victim, SIGKILL) == 0) ++kills;
  }
  // The last successor must serve, and games must go on finishing after it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (Count(farm.Stderr(), "serving workers") < static_cast<size_t>(kKills + 1) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::seconds(5));
  farm.Signal(SIGINT);
  const int code = farm.Wait(180);
  const std::string err = farm.Stderr(), summary = farm.Stdout();
  INFO(summary);
  INFO(err.substr(err.size() > 6000 ? err.size() - 6000 : 0));
  REQUIRE(kills == kKills);
  REQUIRE(code == 0);
  CHECK(Count(err, "serving workers") == static_cast<size_t>(kKills + 1));
  CHECK(Count(err, "with LibTorch CUDA") == static_cast<size_t>(kKills + 1));
  const long long finished = NumberBefore(summary, " games finished");
  const long long written = NumberBefore(summary, " written in ");
  CHECK(finished > 0);
  CHECK(written == finished);
  const ShardCheck check = CheckShards(HostDir(out));
  CHECK(check.duplicate_ids == 0);
  CHECK(static_cast<long long>(check.games) == written);
  CHECK(FilesWithSuffix(out, ".tmp").empty());
  CHECK(SegmentsOf(farm.pid()).empty());
}
