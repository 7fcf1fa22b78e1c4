// Several hosts in one run directory (docs/scale-out.md), without Slurm: two
// farms at once with different --host-id, a host index two hosts would share,
// a host directory of another run, and SIGTERM sent to every process of a
// farm (what a batch system does). tests/slurm/slurm_test.sh runs the same
// on a real Slurm. Only this (parent) process asserts.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "farm_check.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/farm_config.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {
std::vector<std::string> HostFarm(const std::string& out, const std::string& host,
                                  std::vector<std::string> extra) {
  std::vector<std::string> args = {ZF_BINARY,
                                   "run",
                                   "--game",
                                   "connect4",
                                   "--workers",
                                   "1",
                                   "--gpus",
                                   "0",
                                   "--games-per-worker",
                                   "4",
                                   "--simulations",
                                   "8",
                                   "--blocks",
                                   "1",
                                   "--filters",
                                   "8",
                                   "--out",
                                   out,
                                   "--no-status",
                                   "--seed",
                                   "11",
                                   "--shard-positions",
                                   "100",
                                   "--host-id",
                                   host};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
}  // namespace

TEST_CASE("two hosts write one run: own directories, one run id, distinct game ids and seeds",
          "[multiprocess][hosts][slow]") {
  ScratchDir dir("zf-hosts");
  const std::string out = dir / "run";
  Spawned a(HostFarm(out, "0", {"--games", "10"}), dir / "a");
  Spawned b(HostFarm(out, "node-b", {"--games", "10"}), dir / "b");
  REQUIRE(a.Wait(300) == 0);
  REQUIRE(b.Wait(300) == 0);
  const std::string run_id = Slurp(out + "/run_id").substr(0, 16);
  REQUIRE(run_id.size() == 16);

  std::set<uint64_t> ids, seeds;
  uint64_t games = 0;
  for (const std::string host : {"0", "node-b"}) {
    const uint32_t index = proc::HostIndexOf(host);
    const auto shards = io::ListShards(out + "/shards/" + host);
    REQUIRE(!shards.empty());
    for (const auto& path : shards) {
      io::ShardReader shard(path);
      CHECK(shard.meta().run_id == run_id);
      CHECK(shard.meta().host_id == host);
      CHECK(shard.meta().epoch == 0);
      for (const auto& g : shard.ReadGames()) {
        ++games;
        CHECK(g.game_id >> 48 == index);
        ids.insert(g.game_id);
        seeds.insert(g.seed);
      }
    }
    CHECK(Slurp(out + "/host-index/" + std::to_string(index)) == host + "\n");
  }
  CHECK(games == 20);
  CHECK(ids.size() == 20);    // same --seed, same worker numbers: only the host bits differ
  CHECK(seeds.size() == 20);  // so the seeds (mixed from the id) differ too

  // inspect sees both hosts, with per-host counts, and leaves RUN/models alone.
  std::ofstream(out + "/models/model-1.h5") << "weights, not a shard";
  Spawned inspect({ZF_BINARY, "inspect", out, "--games", "0"}, dir / "inspect");
  REQUIRE(inspect.Wait(60) == 0);
  CHECK_THAT(inspect.Stdout(), Catch::Contains("host 0: ") && Catch::Contains("host node-b: ") &&
                                   Catch::Contains("run " + run_id + ": 2 host(s)") &&
                                   Catch::Contains("total: ") && Catch::Contains(" 20 games"));

  // A host that starts again (a requeued task) continues its numbering: epoch 1.
  const auto before = io::ListShards(out + "/shards/0");
  Spawned again(HostFarm(out, "0", {"--games", "3"}), dir / "again");
  REQUIRE(again.Wait(300) == 0);
  const auto after = io::ListShards(out + "/shards/0");
  REQUIRE(after.size() > before.size());
  CHECK(std::equal(before.begin(), before.end(), after.begin()));
  const io::ShardReader newest(after.back());
  CHECK(newest.meta().epoch == 1);
  CHECK(newest.meta().shard_index == before.size());
  for (const auto& g : newest.ReadGames()) CHECK(((g.game_id >> 36) & 0xFFF) == 1);
}

TEST_CASE("a host index held by another host of the run is refused with one line", "[multiprocess][hosts]") {
  ScratchDir dir("zf-hosts-clash");
  const std::string out = dir / "run";
  std::filesystem::create_directories(out + "/host-index");
  std::ofstream(out + "/host-index/5") << "someone-else\n";
  Spawned p(HostFarm(out, "5", {"--games", "2"}), dir / "p");
  CHECK(p.Wait(60) == 2);
  const std::string err = p.Stderr();
  CHECK_THAT(err, Catch::Contains("host index 5") && Catch::Contains("someone-else"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("inspect refuses a host directory copied from another run", "[multiprocess][hosts][cli]") {
  ScratchDir dir("zf-hosts-mix");
  Spawned a(HostFarm(dir / "a", "1", {"--games", "3"}), dir / "fa");
  Spawned b(HostFarm(dir / "b", "2", {"--games", "3"}), dir / "fb");
  REQUIRE(a.Wait(300) == 0);
  REQUIRE(b.Wait(300) == 0);
  std::filesystem::copy(dir / "b/shards/2", dir / "a/shards/2", std::filesystem::copy_options::recursive);
  Spawned inspect({ZF_BINARY, "inspect", dir / "a", "--games", "0"}, dir / "inspect");
  CHECK(inspect.Wait(60) != 0);
  CHECK_THAT(inspect.Stderr(),
             Catch::Contains("comes from another run") && Catch::Contains("host directory 2"));
  // The Python reader refuses it too.
  const std::string cmd = "/usr/bin/python3 " + SourceDir() + "/tools/zf_shards.py --summary " + (dir / "a") +
                          " > " + (dir / "py.out") + " 2>&1";
  CHECK(std::system(cmd.c_str()) != 0);
  CHECK_THAT(Slurp(dir / "py.out"), Catch::Contains("comes from another run"));
}

TEST_CASE("SIGTERM to every process of a farm (a batch system's stop) drains every finished game, exit 0",
          "[multiprocess][hosts][signals]") {
  ScratchDir dir("zf-hosts-term");
  const std::string out = dir / "run";
  Spawned farm(HostFarm(out, "3", {"--workers", "2"}), dir / "farm");
  for (int i = 0; i < 600 && (!std::filesystem::exists(HostDirOf(out, "3")) ||
                              io::ListShards(HostDirOf(out, "3")).size() < 2);
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(io::ListShards(HostDirOf(out, "3")).size() >= 2);
  // Every process of the farm at once, as Slurm signals a job's processes.
  std::vector<pid_t> all = ChildPids(farm.pid());
  all.push_back(farm.pid());
  for (pid_t pid : all) kill(pid, SIGTERM);
  const int code = farm.Wait(120);
  INFO(farm.Stderr());
  CHECK(code == 0);
  const std::string summary = farm.Stdout();
  CHECK_THAT(summary, Catch::Contains("signal Terminated"));
  CHECK(NumberAfter(summary, "restarts ") == 0);  // no child died of the signal
  const long long finished = NumberBefore(summary, " games finished");
  CHECK(finished > 0);
  CHECK(NumberBefore(summary, " written in") == finished);
  const ShardCheck check = CheckShards(HostDirOf(out, "3"));
  CHECK(static_cast<long long>(check.games) == finished);
  CHECK(check.duplicate_ids == 0);
}

TEST_CASE("bench manifest-load: simulated hosts write while a trainer's window follows and none is lost",
          "[multiprocess][hosts]") {
  // Issue 76, point 3 at a test's scale (docs/scale-out.md has the real run).
  ScratchDir dir("zf-manifest-load");
  const std::string out = dir / "run", csv = dir / "load.csv";
  Spawned p({ZF_BINARY, "bench", "--manifest-load", "--out", out, "--csv", csv, "--shards", "300", "--hosts",
             "6", "--rate", "600", "--follow-every", "0.1", "--window", "400"},
            dir / "p");
  REQUIRE(p.Wait(300) == 0);
  INFO(p.Stderr());
  CHECK_THAT(p.Stdout(), Catch::Contains("\"found\": 300,") && Catch::Contains("\"positions\": 2400,") &&
                             Catch::Contains("\"ok\": true"));
  const std::string rows = Slurp(csv);
  CHECK(rows.rfind("elapsed_s,run_shards,found_shards,new_shards,refresh_ms,", 0) == 0);
  CHECK(rows.find(",300,300,") != std::string::npos);  // the last refresh found them all
  CHECK(std::filesystem::is_regular_file(out + "/shards/5/manifest"));
  Spawned again({ZF_BINARY, "bench", "--manifest-load", "--out", out}, dir / "again");
  CHECK(again.Wait(60) == 2);  // an existing --out is refused
}
