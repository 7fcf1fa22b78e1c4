// zerofarm bench and zerofarm tune, end to end with a tiny net and short runs:
// the JSON lines have sane fields, tune prints a table and a recommendation
// and draws its PNG. No speed is asserted here (numbers live in
// docs/benchmarks.md); only that every part ran and reported.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "skip.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/shm/spin_wait.h"

namespace zerofarm::testing {
namespace {

// The value of "key": in a JSON line (numbers and strings; "" if absent).
std::string Field(const std::string& line, const std::string& key) {
  const std::regex re("\"" + key + "\":(\"([^\"]*)\"|[^,}]*)");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return "";
  return m[2].matched ? m[2].str() : m[1].str();
}
double Number(const std::string& line, const std::string& key) {
  const std::string v = Field(line, key);
  return v.empty() || v == "null" ? -1 : std::atof(v.c_str());
}

const std::vector<std::string> kTinyNet = {"--blocks", "1", "--filters", "8", "--simulations", "10"};

TEST_CASE("zerofarm bench --quick reports every part as JSON lines and a table",
          "[perf][multiprocess][slow]") {
  ScratchDir dir("zf-bench");
  // One evaluator (the old default): two LibTorch starts do not fit the 3 s a
  // quick farm allows on a loaded 2-core machine (CI time, too).
  std::vector<std::string> args = {ZF_BINARY,          "bench", "--quick", "--farm-seconds", "2",
                                   "--cpu-evaluators", "1"};
  args.insert(args.end(), kTinyNet.begin(), kTinyNet.end());
  Spawned bench(args, dir / "bench");
  const int code = bench.Wait(240);
  const std::string out = bench.Stdout();
  INFO(out << bench.Stderr());
  REQUIRE(code == 0);

  std::map<std::string, std::vector<std::string>> lines;  // by "bench"
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') lines[Field(line, "bench")].push_back(line);
  REQUIRE(lines["machine"].size() == 1);
  CHECK(Number(lines["machine"][0], "cores") >= 1);

  // (a) the bound at the quick batch sizes. Which is faster is a measurement
  // (docs/benchmarks.md), not a check: under load batch 64 can time slower.
  REQUIRE(lines["bound"].size() == 3);
  std::map<int, double> bound;
  for (const auto& l : lines["bound"]) bound[static_cast<int>(Number(l, "batch"))] = Number(l, "evals_per_s");
  REQUIRE(bound.count(1) == 1);
  REQUIRE(bound.count(64) == 1);
  CHECK(bound[1] > 0);
  CHECK(bound[64] > 0);

  // (b) the farm: adaptive, a fixed wait, and the scaling runs (1 and the cores).
  REQUIRE(lines["farm"].size() >= 3);
  bool adaptive = false, fixed = false;
  for (const auto& l : lines["farm"]) {
    INFO(l);
    CHECK(Field(l, "error").empty());
    CHECK(Number(l, "evals_per_s") > 0);
    CHECK(Number(l, "mean_batch") >= 1);
    CHECK(Number(l, "mean_batch") <= 256);
    CHECK(Number(l, "efficiency") > 0);
    CHECK(Number(l, "latency_p50_us") > 0);
    adaptive |= Field(l, "wait") == "adaptive";
    fixed |= Field(l, "wait") == "fixed";
  }
  CHECK(adaptive);
  CHECK(fixed);

  // (c) four transports (the ring with its spin and without, a pipe, the spsc
  // queue) at two batch sizes; (d) three writer settings.
  REQUIRE(lines["handoff"].size() == 8);
  int spinning_rings = 0, futex_rings = 0;
  for (const auto& l : lines["handoff"]) {
    INFO(l);
    CHECK(Number(l, "ns_per_leaf") > 0);
    CHECK(Number(l, "leaves") > 0);
    // The default budget (0 where this process may use only one CPU; the bench inherits the affinity).
    spinning_rings += Field(l, "transport") == "leaf_ring" &&
                      Number(l, "spin_ns") == static_cast<double>(shm::DefaultSpinBudgetNs());
    futex_rings += Field(l, "transport") == "leaf_ring_futex" && Number(l, "spin_ns") == 0;
  }
  CHECK(spinning_rings == 2);
  CHECK(futex_rings == 2);
  REQUIRE(lines["writer"].size() == 3);
  for (const auto& l : lines["writer"]) CHECK(Number(l, "positions_per_s") > 0);

  // (a') the machine bound (issue #23): E x T evaluators at once, and the farm's
  // machine efficiency and steady-state positions/s beside the whole run's.
  REQUIRE(lines["machine_bound"].size() == 1);
  CHECK(Number(lines["machine_bound"][0], "evals_per_s") > 0);
  CHECK(Number(lines["machine_bound"][0], "evaluators") >= 1);
  for (const auto& l : lines["farm"]) {
    INFO(l);
    CHECK(Number(l, "machine_bound_evals_per_s") > 0);
    CHECK(Number(l, "positions_per_s_whole_run") >= 0);
    CHECK(Field(l, "positions_per_s_after_warmup") != "");  // a number, or null for a short run
  }
  // (a'') the search alone (issue 77): the same farm with the random
  // evaluator, its leaves/s and the random evaluator's own cost; the farm's
  // efficiency against the smaller bound, which names the bound that binds.
  REQUIRE(lines["search_bound"].size() == 1);
  CHECK(Number(lines["search_bound"][0], "leaves_per_s") > 0);
  CHECK(Number(lines["search_bound"][0], "random_evaluator_alone_leaves_per_s") > 0);
  REQUIRE(lines["random_evaluator"].size() == 1);
  bool against_smaller = false;
  for (const auto& l : lines["farm"]) {
    INFO(l);
    CHECK(Number(l, "cache_hit_rate") >= 0);
    if (Field(l, "setting") != "adaptive wait") continue;
    against_smaller = true;
    CHECK(Number(l, "efficiency_vs_smaller_bound") > 0);
    CHECK(Number(l, "search_bound_leaves_per_s") == Number(lines["search_bound"][0], "leaves_per_s"));
    const std::string binding = Field(l, "binding_bound");
    CHECK((binding == "search" || binding == "evaluator"));
  }
  CHECK(against_smaller);
  CHECK(lines["target"].size() == 5);
  CHECK(out.find("target farm_efficiency_vs_smaller_bound") != std::string::npos);
  CHECK(out.find("target machine_efficiency") != std::string::npos);
  CHECK(out.find("(a) evaluator alone") != std::string::npos);
  CHECK(out.find("(c) hand-off") != std::string::npos);
}

TEST_CASE("zerofarm bench --parts sweep times the evaluator alone by precision and says what it skipped",
          "[perf][multiprocess]") {
  ScratchDir dir("zf-bench");
  std::vector<std::string> args = {ZF_BINARY, "bench", "--quick", "--parts", "sweep", "--gpus", "0"};
  args.insert(args.end(), kTinyNet.begin(), kTinyNet.end());
  Spawned bench(args, dir / "sweep");
  const int code = bench.Wait(120);
  const std::string out = bench.Stdout();
  INFO(out << bench.Stderr());
  REQUIRE(code == 0);
  std::map<std::string, int> timed, skipped;  // by variant
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '{' || Field(line, "bench") != "sweep") continue;
    if (!Field(line, "skipped").empty()) {
      ++skipped[Field(line, "variant")];
    } else {
      CHECK(Number(line, "evals_per_s") > 0);
      ++timed[Field(line, "precision")];
    }
  }
  // On the CPU: fp32 eager at both quick batch sizes; bf16 eager where the CPU
  // has it; every other variant skipped, once, with a line of its own.
  CHECK(timed["fp32 eager"] == 2);
  const int bf16 = timed.count("bf16 eager") ? 1 : 0;
  CHECK(timed.size() == 1u + bf16);
  CHECK(skipped.size() == 7u - bf16);
  for (const auto& [variant, n] : skipped) CHECK(n == 1);
  CHECK(skipped.count("fp16 graphs") == 1);
  CHECK(out.find("zerofarm bench: sweep tf32 eager skipped: needs a GPU") != std::string::npos);
}

// `bench --weights FILE` measures that model in every part (issue 82): the
// bound, the machine bound's children, the search alone, the farms and the sweep.
void CheckBenchRunsModel(const std::string& weights, const std::string& log) {
  Spawned bench({ZF_BINARY, "bench", "--quick", "--farm-seconds", "2", "--cpu-evaluators", "1", "--parts",
                 "bound,machine,search,farm,wait,sweep", "--weights", weights, "--simulations", "10",
                 "--bound-batches", "1,8", "--sweep-batches", "8"},
                log);
  const int code = bench.Wait(240);
  const std::string out = bench.Stdout();
  INFO(out << bench.Stderr());
  REQUIRE(code == 0);
  std::map<std::string, std::vector<std::string>> lines;  // by "bench"
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') lines[Field(line, "bench")].push_back(line);
  CHECK(Field(lines["machine"].at(0), "weights") == weights);
  for (const char* part : {"bound", "machine_bound", "search_bound", "farm"}) {
    CAPTURE(part);
    REQUIRE(!lines[part].empty());
    for (const auto& l : lines[part]) {
      CHECK(Field(l, "error").empty());
      CHECK(Number(l, part == std::string("search_bound") ? "leaves_per_s" : "evals_per_s") > 0);
    }
  }
  CHECK(lines["farm"].size() == 2);  // the adaptive wait and a fixed one
  bool fp32 = false;
  for (const auto& l : lines["sweep"])
    fp32 |= Field(l, "precision") == "fp32 eager" && Number(l, "evals_per_s") > 0;
  CHECK(fp32);
  CHECK(out.find("weights " + weights) != std::string::npos);  // the table names the model
}

// A tiny net of connect4 (1 x 8) as weights.
std::string TinyWeights(const ScratchDir& dir) {
  const std::string h5 = dir / "tiny.h5";
  eval::WeightSet w = eval::RandomWeights(eval::GameNetConfig(*game::MakeGame("connect4"), 1, 8, 16), 3);
  w.version = 5;
  io::WriteWeights(h5, w);
  return h5;
}

TEST_CASE("zerofarm bench --weights FILE.h5 runs every part with that model", "[perf][multiprocess]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-bench");
  CheckBenchRunsModel(TinyWeights(dir), dir / "bench");
}

TEST_CASE("zerofarm bench --weights FILE.pt runs every part with that model", "[perf][multiprocess]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  if (std::system("/usr/bin/python3 -c 'import torch, h5py' >/dev/null 2>&1") != 0)
    ZF_SKIP("/usr/bin/python3 with torch and h5py not found (it makes the .pt)");
  ScratchDir dir("zf-bench");
  const std::string pt = dir / "tiny.pt";
  REQUIRE(std::system(("/usr/bin/python3 " + SourceDir() + "/tools/zf_weights_torch.py to-torchscript " +
                       TinyWeights(dir) + " " + pt + " >/dev/null")
                          .c_str()) == 0);
  CheckBenchRunsModel(pt, dir / "bench");
}

TEST_CASE("a part of zerofarm bench that fails makes it exit 1 with that part's line",
          "[perf][multiprocess]") {
  ScratchDir dir("zf-bench");
  // Every worker of the farm part crashes at start: the farm evaluates no leaf.
  setenv("ZF_FAULT_CRASH", "worker", 1);
  std::vector<std::string> args = {ZF_BINARY,          "bench", "--quick", "--farm-seconds", "2",
                                   "--cpu-evaluators", "1",     "--parts", "farm,writer"};
  args.insert(args.end(), kTinyNet.begin(), kTinyNet.end());
  Spawned bench(args, dir / "bench");
  unsetenv("ZF_FAULT_CRASH");
  const int code = bench.Wait(240);
  const std::string err = bench.Stderr();
  INFO(bench.Stdout() << err);
  CHECK(code == 1);
  CHECK_THAT(err, Catch::Contains("zerofarm bench: farm adaptive wait failed: "));
  CHECK_THAT(err, Catch::Contains("zerofarm bench: 1 part(s) failed"));
  CHECK_THAT(bench.Stdout(), Catch::Contains("\"bench\":\"writer\""));  // the other parts still ran
}

TEST_CASE("zerofarm bench rejects bad options with the usage exit code", "[perf][multiprocess]") {
  ScratchDir dir("zf-bench");
  Spawned bench({ZF_BINARY, "bench", "--runs", "0"}, dir / "bad");
  CHECK(bench.Wait(60) == 2);
  CHECK(bench.Stderr().find("--runs") != std::string::npos);
}

TEST_CASE("zerofarm tune --quick prints a table, a recommendation and draws a PNG",
          "[perf][multiprocess][slow]") {
  ScratchDir dir("zf-tune");
  // Net and search options reach the probe farms (issue 24), through OUT/tune-config.txt.
  std::vector<std::string> args = {ZF_BINARY,    "tune",         "--quick", "--out",
                                   dir / "tune", "--c-puct",     "2.5",     "--value-discount",
                                   "0.9",        "--eval-cache", "1024"};
  args.insert(args.end(), kTinyNet.begin(), kTinyNet.end());
  Spawned tune(args, dir / "tune-log");
  const int code = tune.Wait(240);
  const std::string out = tune.Stdout();
  INFO(out << tune.Stderr());
  REQUIRE(code == 0);
  CHECK(out.find("ring_slots") != std::string::npos);
  // Each setting ran twice (--quick), its spread shown; a recommendation only
  // from clear winners, which two short runs on a shared machine may not give.
  CHECK_THAT(out, Catch::Contains("2 rounds (medians; pos/s also its min-max)") &&
                      Catch::Contains("pos/s min-max") && Catch::Contains("\nring_slots: "));
  const bool recommended = out.find("\nrecommended: zerofarm run --workers ") != std::string::npos;
  const bool declined =
      out.find("\nno clear winner: in every sweep the spread of 2 rounds") != std::string::npos;
  CHECK(recommended != declined);
  if (recommended) CHECK(out.find(" --games-per-worker ") != std::string::npos);
  CHECK(out.find("--workers 0 ") == std::string::npos);         // resolved to the CPUs granted
  CHECK_THAT(out, Catch::Contains("a random 1x8 net (seed "));  // the header names the net it measured
  const std::string config = Slurp(dir / "tune/tune-config.txt");
  CHECK_THAT(config, Catch::Contains("c_puct=2.5\n") && Catch::Contains("value_discount=0.9\n") &&
                         Catch::Contains("eval_cache=1024\n") && Catch::Contains("blocks=1\n"));
  std::ifstream csv(dir / "tune/tune.csv");
  int rows = 0;
  for (std::string line; std::getline(csv, line);) {
    if (rows++ == 0)
      CHECK_THAT(line, Catch::EndsWith(",rounds,positions_per_s_min,positions_per_s_max,"
                                       "positions_per_s_rounds"));
    if (rows > 1) CHECK_THAT(line, Catch::Contains(",1,2,"));  // ok, 2 rounds
  }
  CHECK(rows >= 4);  // a header and a row per setting of the quick sweeps

  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
    ZF_SKIP("no matplotlib for /usr/bin/python3: the PNG is not checked");
  REQUIRE(out.find("plot: ") != std::string::npos);
  std::ifstream png(dir / "tune/tune.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  CHECK(std::string(magic + 1, 3) == "PNG");
}

}  // namespace
}  // namespace zerofarm::testing
