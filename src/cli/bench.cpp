// zerofarm bench: reads the command line into bench::BenchOptions and runs
// bench::RunBench (src/bench/bench.cpp), which prints the results.
#include "zerofarm/bench/bench.h"

#include <algorithm>
#include <cstdlib>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/files.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {
namespace {

std::vector<int> ParseInts(const std::string& s) {
  std::vector<int> out;
  for (const std::string& item : io::SplitFields(s))
    if (!item.empty()) {
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (*end != '\0') throw ConfigError("not a list of integers: '" + s + "'");
      out.push_back(static_cast<int>(v));
    }
  return out;
}

void AddBenchOptions(cxxopts::Options& options, const std::string& parts) {
  AddTableOptions(options, proc::kBench);
  options.add_options("bench")("runs", "Repeat every measurement this many times (interleaved)",
                               cxxopts::value<int>()->default_value("3"))(
      "quick", "Small sizes and short runs (a few seconds; for tests)")(
      "parts",
      "Comma-separated parts: bound, machine, search, farm, wait, scaling, handoff, writer, sweep, waits "
      "(the last two not by default)",
      cxxopts::value<std::string>()->default_value(parts))(
      "bound-seconds", "Seconds per batch size of the bound", cxxopts::value<double>()->default_value("0.5"))(
      "start-at", "Start the bound at this wall-clock second (for the machine bound's children)",
      cxxopts::value<double>()->default_value("0"))("farm-seconds", "Length of each farm run",
                                                    cxxopts::value<double>()->default_value("20"))(
      "fixed-waits", "Fixed --max-wait-us settings shown beside the adaptive wait",
      cxxopts::value<std::string>()->default_value("0,500,2000,10000"))(
      "bound-batches", "Batch sizes of the evaluator-alone bound",
      cxxopts::value<std::string>()->default_value("1,2,4,8,16,32,64,128,256,512,1024"))(
      "sweep-batches", "Batch sizes of the part sweep (the evaluator alone by precision)",
      cxxopts::value<std::string>()->default_value("1,8,64,256,1024,2048,4096,8192"))(
      "handoff-batches", "Batch sizes of the hand-off benchmark",
      cxxopts::value<std::string>()->default_value("1,4,16,64,256"))(
      "handoff-spins-us", "Extra leaf-ring columns of the hand-off benchmark, one per spin budget (us)",
      cxxopts::value<std::string>()->default_value(""))("writer-positions",
                                                        "Positions written per compression setting",
                                                        cxxopts::value<uint64_t>()->default_value("300000"));
}

// The value of a list option, or `quick_value` under --quick when it was not given.
std::vector<int> IntsOption(const cxxopts::ParseResult& r, const std::string& name, bool quick,
                            const std::string& quick_value) {
  return ParseInts(quick && !r.count(name) ? quick_value : r[name].as<std::string>());
}

// The options as given, --quick's smaller sizes where an option was not given.
bench::BenchOptions ReadBenchOptions(const cxxopts::ParseResult& r) {
  bench::BenchOptions o;
  o.farm = ReadTableOptions(r, proc::kBench);
  const bool quick = r.count("quick") > 0;
  o.runs = quick && !r.count("runs") ? 1 : r["runs"].as<int>();
  o.parts = r["parts"].as<std::string>();
  CheckTableOptions(o.farm, proc::kBench);
  o.farm.ResolveGpus();  // -1: the GPUs granted, as `zerofarm run` does; the bound runs on GPU 0 then
  o.bound_seconds = r["bound-seconds"].as<double>();
  o.start_at = r["start-at"].as<double>();
  if (o.farm.gpus > 0 && !eval::CudaBuilt())
    throw ConfigError("--gpus: this zerofarm was built without CUDA");
  o.farm_seconds = quick && !r.count("farm-seconds") ? 3 : r["farm-seconds"].as<double>();
  o.fixed_waits = IntsOption(r, "fixed-waits", quick, "0");
  o.bound_batches = IntsOption(r, "bound-batches", quick, "1,8,64");
  o.handoff_batches = IntsOption(r, "handoff-batches", quick, "1,64");
  o.sweep_batches = IntsOption(r, "sweep-batches", quick, "1,64");
  if (!r["handoff-spins-us"].as<std::string>().empty())
    o.handoff_spins_us = ParseInts(r["handoff-spins-us"].as<std::string>());
  o.writer_positions = quick && !r.count("writer-positions") ? 20'000 : r["writer-positions"].as<uint64_t>();
  o.deflate_levels = quick ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 3, 6, 9};
  if (quick) {
    if (!r.count("bound-seconds")) o.bound_seconds = 0.05;
    o.machine_seconds = 1;
    o.machine_start_s = 2;  // a late child only shortens the overlap
    o.handoff_seconds = 0.05;
  }
  const int cores =
      proc::CpusGranted();  // the affinity mask: `taskset -c 0-3 zerofarm bench` is a 4-core host
  for (int p = 1; p < cores; p *= 2) o.scaling_workers.push_back(p);
  o.scaling_workers.push_back(std::max(cores, 1));
  return o;
}

// The ranges of the bench's own options; the farm's settings resolved as
// `zerofarm run` resolves them on this host.
void CheckBenchOptions(bench::BenchOptions& o) {
  if (o.runs < 1 || o.runs > 100) throw ConfigError("--runs must be 1..100");
  if (o.farm_seconds < 1) throw ConfigError("--farm-seconds must be at least 1");
  for (int b : o.bound_batches)
    if (b < 1 || b > 4096) throw ConfigError("--bound-batches must be 1..4096");
  for (int b : o.sweep_batches)
    if (b < 1 || b > 8192) throw ConfigError("--sweep-batches must be 1..8192");
  for (int b : o.handoff_batches)
    if (b < 1 || b > 1024) throw ConfigError("--handoff-batches must be 1..1024");
  for (int us : o.handoff_spins_us)
    if (us < 0 || us > 10'000) throw ConfigError("--handoff-spins-us must be 0..10000");
  if (o.farm.fp16 && o.farm.gpus == 0)
    throw ConfigError("zerofarm bench --gpus 0 runs on the CPU: fp16 is for GPUs");
  if (o.farm.bf16) o.farm.precision = "bf16", o.farm.bf16 = false;
  if (o.farm.fp16) o.farm.precision = "fp16", o.farm.fp16 = false;
  o.farm.out = "bench";  // each farm run gets its own temporary directory
  o.farm.Validate();
  o.farm.ResolveResources();  // workers, E x T as `zerofarm run` resolves them on this host
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
      "rate", "Shards a second, all hosts together", cxxopts::value<double>()->default_value("244"))(
      "follow-every", "Seconds between the trainer's refreshes",
      cxxopts::value<double>()->default_value("1"))(
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
  AddBenchOptions(options, bench::BenchOptions{}.parts);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  bench::BenchOptions o = ReadBenchOptions(r);
  CheckBenchOptions(o);
  return bench::RunBench(o);
}

}  // namespace zerofarm::cli
