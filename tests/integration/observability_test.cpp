// What a run shows of itself: metrics.csv, metrics.prom, the plots drawn from
// them, and a config file with command-line overrides. Only the parent asserts.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "farm_check.h"
#include "test_paths.h"
#include "zerofarm/io/shard.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  std::string line;
  while (std::getline(is, line)) out.push_back(line);
  return out;
}
}  // namespace

TEST_CASE("a run writes metrics.csv and metrics.prom that agree with its summary",
          "[multiprocess][metrics][slow]") {
  ScratchDir dir("zf-metrics");
  const std::string out = dir / "run";
  Spawned farm(FarmArgs(out, {"--duration", "7", "--progress-every", "2"}), dir / "farm");
  REQUIRE(farm.Wait(300) == 0);
  const std::string summary = farm.Stdout();
  INFO(summary);
  // No terminal: a progress line in the log every --progress-every seconds instead of a status line
  // (issue 24 point 3), with the time left and the rates over the last 10 s.
  const std::string log = farm.Stderr();
  CHECK(log.find("\r") == std::string::npos);
  size_t progress = 0;
  for (const auto& line : Lines(log))
    if (line.find("] progress: ") != std::string::npos) {
      ++progress;
      CHECK_THAT(line, Catch::Contains("s  games ") && Catch::Contains(" of 7s, ETA ") &&
                           Catch::Contains("games/s "));
    }
  CHECK(progress >= 2);
  const auto csv = Lines(Slurp(HostDir(out) + "/metrics.csv"));
  REQUIRE(csv.size() >= 3);  // header + a row every 2 s + the final row
  CHECK(csv[0].rfind("time_s,games_total,positions_total,leaf_evals_total", 0) == 0);
  CHECK_THAT(csv[0], Catch::Contains("latency_p99_us") && Catch::Contains("ring_occupancy_w1") &&
                         Catch::Contains("leaf_evals_per_s_e0") && Catch::Contains("batch_hist_15"));
  const size_t columns = std::count(csv[0].begin(), csv[0].end(), ',');
  for (size_t i = 1; i < csv.size(); ++i)
    CHECK(static_cast<size_t>(std::count(csv[i].begin(), csv[i].end(), ',')) == columns);

  const std::string prom = Slurp(HostDir(out) + "/metrics.prom");
  const long long finished = NumberBefore(summary, " games finished");
  REQUIRE(finished > 0);
  CHECK_THAT(prom, Catch::Contains("# TYPE zerofarm_games_total counter"));
  CHECK_THAT(prom, Catch::Contains("\nzerofarm_games_total " + std::to_string(finished) + "\n"));
  CHECK_THAT(prom, Catch::Contains("zerofarm_leaf_evaluations_total{evaluator=\"0\"}"));
  CHECK_THAT(prom, Catch::Contains("zerofarm_leaf_latency_seconds{quantile=\"0.99\"}"));
  CHECK_THAT(prom, Catch::Contains("zerofarm_ring_occupancy_ratio{worker=\"1\"}"));
  CHECK_THAT(prom, Catch::Contains("zerofarm_restarts_total{role=\"writer\"} 0"));
  CHECK_THAT(prom, Catch::Contains("zerofarm_batch_size_bucket{le=\"+Inf\"}"));
  CHECK_FALSE(std::filesystem::exists(out + "/metrics.prom.tmp"));

  // The plots, when Debian's matplotlib is there.
  if (std::system("/usr/bin/python3 -c 'import matplotlib, numpy' 2>/dev/null") == 0) {
    const std::string cmd =
        "/usr/bin/python3 " + SourceDir() + "/tools/plot_metrics.py " + out + " --out " + (dir / "plots");
    REQUIRE(std::system(cmd.c_str()) == 0);
    for (const char* png : {"throughput.png", "batch.png", "latency.png", "occupancy.png"}) {
      const std::string bytes = Slurp(dir / (std::string("plots/") + png));
      INFO(png);
      REQUIRE(bytes.size() > 1000);
      CHECK(bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    }
  }
}

TEST_CASE(
    "a config file sets options that the command line overrides and the run config.txt fed back reproduces "
    "the run",
    "[multiprocess][config][slow]") {
  ScratchDir dir("zf-config");
  std::ofstream(dir / "farm.conf") << "# a small farm\ngame = connect4\nsimulations = 10\n"
                                      "games-per-worker = 3\nseed = 99\ngames = 100\n";
  const std::string out = dir / "run";
  Spawned farm({ZF_BINARY, "run", "--config", dir / "farm.conf", "--games", "5", "--gpus", "0", "--blocks",
                "1", "--filters", "8", "--out", out, "--no-status", "--host-id", kTestHost},
               dir / "farm");
  REQUIRE(farm.Wait(300) == 0);
  CHECK_THAT(farm.Stderr(), Catch::Contains("effective config: game=connect4"));
  const auto shards = io::ListShards(HostDir(out));
  REQUIRE(shards.size() == 1);
  const io::ShardReader shard(shards[0]);
  CHECK(shard.Games() == 5);  // the command line's --games 5, not the file's 100
  const std::string config = shard.meta().config;
  CHECK_THAT(config, Catch::Contains("simulations=10\n") && Catch::Contains("games_per_worker=3\n") &&
                         Catch::Contains("seed=99\n") && Catch::Contains("games=5\n"));

  // The run's own config.txt, fed back as --config alone, reproduces it: the
  // same effective config (the supervisor's epoch aside: it is the run's next piece).
  const std::string first = Slurp(HostDir(out) + "/config.txt");
  std::ofstream(dir / "first.txt") << first;
  Spawned again({ZF_BINARY, "run", "--config", dir / "first.txt"}, dir / "again");
  REQUIRE(again.Wait(300) == 0);
  auto without_epoch = [](const std::string& text) {
    std::string kept;
    for (const auto& line : Lines(text))
      if (line.rfind("epoch=", 0) != 0) kept += line + "\n";
    return kept;
  };
  const std::string second = Slurp(HostDir(out) + "/config.txt");
  CHECK_THAT(second, Catch::Contains("epoch=1\n"));
  CHECK(without_epoch(second) == without_epoch(first));
  CHECK(io::ListShards(HostDir(out)).size() == 2);

  std::ofstream(dir / "bad.conf") << "simulations = 10\nsimulatons = 12\n";
  Spawned bad({ZF_BINARY, "run", "--config", dir / "bad.conf", "--out", dir / "run2"}, dir / "bad");
  CHECK(bad.Wait(60) == 2);
  const std::string err = bad.Stderr();
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK_THAT(err, Catch::Contains("bad.conf:2: unknown key 'simulatons'"));
}
