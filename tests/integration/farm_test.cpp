// The farm end to end: the real binary, real processes, real shared memory,
// real HDF5 files. Only this (parent) process asserts.
#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/farm_config.h"

using namespace zerofarm;
using namespace zerofarm::testing;

TEST_CASE("a farm of 2 workers and a CPU evaluator writes 50 games exactly once", "[multiprocess][farm]") {
  ScratchDir dir("zf-farm");
  const std::string out = dir / "run";
  const std::string depth = GENERATE("1", "2");  // batches in flight (--eval-depth)
  INFO("--eval-depth " << depth);
  Spawned farm(FarmArgs(out, {"--games", "50", "--shard-positions", "300", "--simulations", "24",
                              "--eval-depth", depth}),
               dir / "farm");
  // Roles are visible to ps while it runs.
  std::multiset<std::string> names;
  auto all_named = [&]() {
    return names.count("zf-worker-0") && names.count("zf-worker-1") && names.count("zf-eval-0") &&
           names.count("zf-writer");
  };
  for (int i = 0; i < 400 && !all_named(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    names = ChildNames(farm.pid());
  }
  // Which processes map LibTorch: the evaluator alone (exec'd from
  // zerofarm-torch); never the supervisor, nor the workers and writer it forks.
  auto maps_torch = [](pid_t pid) {
    return Slurp("/proc/" + std::to_string(pid) + "/maps").find("libtorch") != std::string::npos;
  };
  const bool supervisor_torch = maps_torch(farm.pid());
  std::map<std::string, bool> child_torch;
  for (pid_t pid : ChildPids(farm.pid())) {
    std::string comm = Slurp("/proc/" + std::to_string(pid) + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    child_torch[comm] = maps_torch(pid);
  }
  const int code = farm.Wait(300);
  INFO(farm.Stderr());
  REQUIRE(code == 0);
  CHECK_FALSE(supervisor_torch);
  REQUIRE(child_torch.count("zf-eval-0"));
  CHECK(child_torch["zf-eval-0"] == eval::TorchBuilt());
  for (const char* forked : {"zf-worker-0", "zf-worker-1", "zf-writer"}) {
    INFO(forked);
    REQUIRE(child_torch.count(forked));
    CHECK_FALSE(child_torch[forked]);
  }
  CHECK(names.count("zf-worker-0") == 1);
  CHECK(names.count("zf-worker-1") == 1);
  CHECK(names.count("zf-eval-0") == 1);
  CHECK(names.count("zf-writer") == 1);
  const std::string summary = farm.Stdout();
  CHECK_THAT(summary, Catch::Contains("50 games finished, 50 written"));
  if (depth == "2" && eval::TorchBuilt()) CHECK_THAT(farm.Stderr(), Catch::Contains(", depth 2"));

  const ShardCheck check = CheckShards(HostDir(out));
  CHECK(check.games == 50);
  CHECK(check.duplicate_ids == 0);
  CHECK(check.game_ids.size() == 50);
  CHECK(io::ListShards(HostDir(out)).size() >= 2);  // 300-position shards
  CHECK(FilesWithSuffix(out, ".tmp").empty());
  CHECK(SegmentsOf(farm.pid()).empty());
}

TEST_CASE("SIGINT stops the farm cleanly: finished games kept, in-flight games reported",
          "[multiprocess][farm]") {
  ScratchDir dir("zf-farm-int");
  const std::string out = dir / "run";
  Spawned farm(FarmArgs(out, {"--shard-positions", "100000"}), dir / "farm");
  // Let it finish some games (the shard is only written at the stop).
  std::this_thread::sleep_for(std::chrono::seconds(6));
  farm.Signal(SIGINT);
  const int code = farm.Wait(120);
  INFO(farm.Stderr());
  REQUIRE(code == 0);
  const std::string summary = farm.Stdout();
  CHECK_THAT(summary, Catch::Contains("signal"));
  CHECK_THAT(summary, Catch::Contains("in-flight games dropped"));
  const ShardCheck check = CheckShards(HostDir(out));
  CHECK(check.games > 0);
  CHECK(check.duplicate_ids == 0);
  CHECK_THAT(summary, Catch::Contains(std::to_string(check.games) + " written"));
  CHECK(FilesWithSuffix(out, ".tmp").empty());
  CHECK(SegmentsOf(farm.pid()).empty());
}

TEST_CASE("bad command-line values give one line on stderr and exit code 2", "[multiprocess][cli]") {
  ScratchDir dir("zf-badargs");
  const std::vector<std::vector<std::string>> cases = {
      {"--workers", "-1"},
      {"--workers", "abc"},
      {"--workers", "1025"},
      {"--simulations", "-5"},
      {"--game", "chess"},
      {"--max-batch", "0"},
      {"--gpus", "-2"},
      {"--compression", "12"},
      {"--dirichlet-fraction", "2"},
      {"--no-such-option"},
      {"--games-per-worker", "0"},
      {"--duration", "-1"},
      {"stray"},
      {"--weights", dir / "missing.h5"},
      {"--host-id", "a/b"},
      {"--host-id", ".."},
  };
  for (const auto& extra : cases) {
    std::vector<std::string> args = {ZF_BINARY, "run", "--out", dir / "run"};
    args.insert(args.end(), extra.begin(), extra.end());
    Spawned p(args, dir / "bad");
    const int code = p.Wait(60);
    const std::string err = p.Stderr();
    INFO(extra.front() << " -> " << err);
    CHECK(code == 2);
    CHECK(std::count(err.begin(), err.end(), '\n') == 1);
    CHECK(p.Stdout().empty());
  }
  Spawned unknown({ZF_BINARY, "frobnicate"}, dir / "unknown");
  CHECK(unknown.Wait(30) == 2);
}

TEST_CASE("inspect summarises shards and refuses a file that is not one", "[multiprocess][cli]") {
  ScratchDir dir("zf-inspect");
  const std::string out = dir / "run";
  Spawned farm(FarmArgs(out, {"--games", "6"}), dir / "farm");
  REQUIRE(farm.Wait(300) == 0);
  Spawned inspect({ZF_BINARY, "inspect", out}, dir / "inspect");
  REQUIRE(inspect.Wait(60) == 0);
  const std::string text = inspect.Stdout();
  CHECK_THAT(text, Catch::Contains("total: 1 shard(s), 6 games"));
  CHECK_THAT(text, Catch::Contains("connect4 3x6x7 -> 7 actions"));
  // Draw a position of the first game listed.
  const auto shards = io::ListShards(HostDir(out));
  REQUIRE(!shards.empty());
  const auto games = io::ShardReader(shards[0]).ReadGames();
  // Issue 24 point 4: each listed game with its id's fields, its moves (the convention stated)
  // and its final board.
  {
    INFO(text);
    const proc::GameIdFields f = proc::SplitGameId(games[0].game_id);
    CHECK(proc::MakeGameId(f.host_index, f.epoch, f.worker, f.sequence) == games[0].game_id);
    CHECK_THAT(text, Catch::Contains("game " + std::to_string(games[0].game_id) + " (host " +
                                     std::to_string(f.host_index) + ", epoch " + std::to_string(f.epoch) +
                                     ", worker " + std::to_string(f.worker) + ", sequence " +
                                     std::to_string(f.sequence) + ")"));
    CHECK_THAT(text, Catch::Contains("the shards store 0-based actions 0..6, shown as 1..7"));
    auto c4 = game::MakeGame("connect4");
    const std::vector<int> moves(games[0].moves.begin(), games[0].moves.end());
    CHECK_THAT(text, Catch::Contains("moves: " + c4->FormatMoves(moves)));
    std::istringstream board(c4->Replay(moves)->ToString());
    std::string drawn = "final board:\n";
    for (std::string line; std::getline(board, line);) drawn += "      " + line + "\n";
    CHECK_THAT(text, Catch::Contains(drawn));
    CHECK(std::count(text.begin(), text.end(), '\n') > 6 * 6);  // six boards of six rows
  }
  // A searched position (after the default random opening), at least ply 3.
  const int ply = std::max(3, games[0].length - games[0].position_count);
  REQUIRE(ply < games[0].length);
  Spawned draw({ZF_BINARY, "inspect", shards[0], "--game-id", std::to_string(games[0].game_id), "--ply",
                std::to_string(ply)},
               dir / "draw");
  REQUIRE(draw.Wait(60) == 0);
  CHECK_THAT(draw.Stdout(), Catch::Contains("position after " + std::to_string(ply) + " plies"));
  CHECK_THAT(draw.Stdout(), Catch::Contains("policy target"));
  {
    std::ofstream junk(dir / "junk.h5");
    junk << "not hdf5 at all";
  }
  Spawned bad({ZF_BINARY, "inspect", dir / "junk.h5"}, dir / "bad");
  CHECK(bad.Wait(60) != 0);
  const std::string err = bad.Stderr();
  INFO(err);
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK_THAT(err, Catch::Contains("junk.h5"));
}

TEST_CASE("a farm with one GPU evaluator writes valid games, eagerly and as CUDA graphs",
          "[multiprocess][farm][gpu]") {
  if (!eval::CudaBuilt()) ZF_SKIP("this build's LibTorch has no CUDA");
  if (eval::CudaDeviceCount() == 0) ZF_SKIP("no CUDA device");
  for (const bool graphs : {false, true}) {
    INFO("--gpu-graphs " << graphs);
    ScratchDir dir("zf-farm-gpu");
    const std::string out = dir / "run";
    std::vector<std::string> args = FarmArgs(out, {"--games", "40"});
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == "--gpus") args[i + 1] = "1";
    if (graphs) args.push_back("--gpu-graphs");
    Spawned farm(args, dir / "farm");
    const int code = farm.Wait(300);
    INFO(farm.Stderr());
    REQUIRE(code == 0);
    CHECK_THAT(farm.Stderr(), Catch::Contains("LibTorch CUDA"));
    CHECK((farm.Stderr().find("as CUDA graphs") != std::string::npos) == graphs);
    const ShardCheck check = CheckShards(HostDir(out));
    CHECK(check.games == 40);
    CHECK(check.duplicate_ids == 0);
    CHECK(SegmentsOf(farm.pid()).empty());
  }
}
