// zerofarm bench: reads the command line into bench::BenchOptions and runs
// bench::RunBench (src/bench/bench.cpp), which prints the results.
#include "zerofarm/bench/bench.h"

#include <algorithm>
#include <cstdlib>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/proc/options.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {
// `zerofarm bench`'s options: the farm's (the option table) and its own.
void AddBenchOptions(cxxopts::Options& options) {
  AddTableOptions(options, proc::kBench);
  AddCommandOptions(options, proc::kBench);
}

// The options as given, --quick's smaller sizes where an option was not given.
bench::BenchOptions ReadBenchOptions(const cxxopts::ParseResult& r) {
  const CommandConfig cc = ReadCommandOptions(r, proc::kBench);
  bench::BenchOptions o = cc.bench;
  o.farm = ReadTableOptions(r, proc::kBench);
  const bool quick = cc.bench_quick;
  CheckTableOptions(o.farm, proc::kBench);
  o.farm.ResolveGpus();  // -1: the GPUs granted, as `zerofarm run` does; the bound runs on GPU 0 then
  if (o.farm.gpus > 0 && !eval::CudaBuilt())
    throw ConfigError("--gpus: this zerofarm was built without CUDA");
  o.deflate_levels = quick ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 3, 6, 9};
  if (quick) {  // the sizes of --quick, where the command line gives none
    const auto unless_given = [&](const char* name, auto* field, auto value) {
      if (!r.count(name)) *field = value;
    };
    unless_given("runs", &o.runs, 1);
    unless_given("farm-seconds", &o.farm_seconds, 3.0);
    unless_given("fixed-waits", &o.fixed_waits, std::vector<int>{0});
    unless_given("bound-batches", &o.bound_batches, std::vector<int>{1, 8, 64});
    unless_given("handoff-batches", &o.handoff_batches, std::vector<int>{1, 64});
    unless_given("sweep-batches", &o.sweep_batches, std::vector<int>{1, 64});
    unless_given("writer-positions", &o.writer_positions, uint64_t{20'000});
    unless_given("bound-seconds", &o.bound_seconds, 0.05);
    o.machine_seconds = 1;
    o.machine_start_s = 2;  // a late child only shortens the overlap
    o.handoff_seconds = 0.05;
  }
  if (o.scaling_workers.empty()) {  // not given: 1, 2, 4, .. and the cores
    const int cores =
        proc::CpusGranted();  // the affinity mask: `taskset -c 0-3 zerofarm bench` is a 4-core host
    for (int p = 1; p < cores; p *= 2) o.scaling_workers.push_back(p);
    o.scaling_workers.push_back(std::max(cores, 1));
  }
  return o;
}

namespace {

// The ranges of the bench's own options; the farm's settings resolved as
// `zerofarm run` resolves them on this host.
void CheckBenchOptions(bench::BenchOptions& o) {
  for (int b : o.bound_batches)
    if (b < 1 || b > 4096) throw ConfigError("--bound-batches must be 1..4096");
  for (int b : o.sweep_batches)
    if (b < 1 || b > 8192) throw ConfigError("--sweep-batches must be 1..8192");
  for (int b : o.handoff_batches)
    if (b < 1 || b > 1024) throw ConfigError("--handoff-batches must be 1..1024");
  for (int p : o.scaling_workers)
    if (p < 1 || p > 4096) throw ConfigError("--scaling-workers must be 1..4096");
  for (int us : o.handoff_spins_us)
    if (us < 0 || us > 10'000) throw ConfigError("--handoff-spins-us must be 0..10000");
  if (o.farm.fp16 && o.farm.gpus == 0)
    throw ConfigError("zerofarm bench --gpus 0 runs on the CPU: fp16 is for GPUs");
  if (o.farm.bf16) o.farm.precision = "bf16", o.farm.bf16 = false;
  if (o.farm.fp16) o.farm.precision = "fp16", o.farm.fp16 = false;
  o.farm.out = "bench";  // each farm run gets its own temporary directory
  o.farm.Validate();
  o.farm.ResolveResources();  // workers, E x T as `zerofarm run` resolves them on this host
  // A model file is read and checked once, before any part: one line, exit 2.
  if (!o.farm.weights.empty()) proc::LoadWeightsFor(*game::MakeGame(o.farm.game), o.farm.weights);
}

}  // namespace

// `zerofarm bench --manifest-load` (bench::RunManifestLoad): its own options.
int ManifestLoadCommand(int argc, char** argv) {
  cxxopts::Options options("zerofarm bench --manifest-load",
                           "Simulated hosts write shards into one run directory at a set rate while a "
                           "trainer's window follows it; a CSV row per refresh (docs/scale-out.md).");
  bench::ManifestLoadOptions o;
  options.add_options()("manifest-load", "This benchmark")("out", "Run directory to write (must not exist)",
                                                           cxxopts::value<std::string>())(
      "csv", "Raw output (default OUT/manifest-load.csv)", cxxopts::value<std::string>()->default_value(""))(
      "shards", "Shards to write", cxxopts::value<uint64_t>()->default_value(std::to_string(o.shards)))(
      "hosts", "Simulated hosts", cxxopts::value<int>()->default_value(std::to_string(o.hosts)))(
      "rate", "Shards a second, all hosts together",
      cxxopts::value<double>()->default_value(proc::ShowOptionValue(o.rate)))(
      "follow-every", "Seconds between the trainer's refreshes",
      cxxopts::value<double>()->default_value(proc::ShowOptionValue(o.follow_every)))(
      "window", "The trainer's window, positions",
      cxxopts::value<int64_t>()->default_value(std::to_string(o.window)))(
      "games-per-shard", "One-position games per shard",
      cxxopts::value<int>()->default_value(std::to_string(o.games_per_shard)));
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  if (!r.count("out")) throw ConfigError("bench --manifest-load: --out is required (a new directory)");
  o.out = r["out"].as<std::string>();
  o.csv = r["csv"].as<std::string>();
  o.shards = r["shards"].as<uint64_t>();
  o.hosts = r["hosts"].as<int>();
  o.rate = r["rate"].as<double>();
  o.follow_every = r["follow-every"].as<double>();
  o.window = r["window"].as<int64_t>();
  o.games_per_shard = r["games-per-shard"].as<int>();
  return bench::RunManifestLoad(o);
}

int BenchCommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--manifest-load") return ManifestLoadCommand(argc, argv);
  cxxopts::Options options(
      "zerofarm bench",
      "Measures the farm against its bound: the evaluator alone, the farm, the leaf hand-off, "
      "the writer. One JSON line per result, then a table.");
  AddBenchOptions(options);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  bench::BenchOptions o = ReadBenchOptions(r);
  CheckBenchOptions(o);
  return bench::RunBench(o);
}

}  // namespace zerofarm::cli
