// zerofarm tune: reads the command line into bench::TuneOptions and runs
// bench::RunTune (src/bench/tune.cpp), which prints the table and the
// recommendation.
#include "zerofarm/bench/tune.h"

#include <algorithm>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

void AddTuneOptions(cxxopts::Options& options) {
  // Every game, search and network option of `run` (and --workers, and
  // --games-per-worker: the K the others are swept around) reaches each probe
  // farm through one config file (issue 24).
  AddTableOptions(options, proc::kTune);
  AddCommandOptions(options, proc::kTune);
}

bench::TuneOptions TuneOptionsFrom(const cxxopts::ParseResult& r) {
  bench::TuneOptions o = ReadCommandOptions(r, proc::kTune).tune;  // each in its range
  proc::FarmConfig& f = o.farm;
  f = ReadTableOptions(r, proc::kTune);
  if (f.fp16) throw ConfigError("zerofarm tune runs CPU farms: fp16 is for GPUs");
  if (f.bf16) f.precision = "bf16", f.bf16 = false;
  if (f.workers == 0) f.workers = std::clamp(proc::CpusGranted(), 1, 1024);  // as `zerofarm run` does
  f.gpus = 0;
  f.out = "tune";  // each farm run gets its own temporary directory
  f.Validate();
  if (o.quick && !r.count("seconds")) o.seconds = 2.0;
  return o;
}

int TuneCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm tune",
      "Sweeps ring slots, games per worker, max batch and the wait on short farm runs, one "
      "at a time around the defaults; prints a table, recommends settings and plots "
      "throughput and leaf latency against ring size.");
  AddTuneOptions(options);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  return bench::RunTune(TuneOptionsFrom(r));
}

}  // namespace zerofarm::cli
