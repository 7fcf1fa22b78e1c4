// zerofarm tune: reads the command line into bench::TuneOptions and runs
// bench::RunTune (src/bench/tune.cpp), which prints the table and the
// recommendation.
#include "zerofarm/bench/tune.h"

#include <algorithm>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

int TuneCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm tune",
      "Sweeps ring slots, games per worker, max batch and the wait on short farm runs, one "
      "at a time around the defaults; prints a table, recommends settings and plots "
      "throughput and leaf latency against ring size.");
  // Every game, search and network option of `run` (and --workers, and
  // --games-per-worker: the K the others are swept around) reaches each probe
  // farm through one config file (issue 24).
  AddTableOptions(options, proc::kTune);
  options.add_options("tune")("seconds", "Length of each farm run",
                              cxxopts::value<double>()->default_value("10"))(
      "out", "Directory for tune.csv and tune.png", cxxopts::value<std::string>()->default_value("tune"))(
      "quick", "Two or three short runs (for tests)")("no-plot", "Do not draw tune.png");
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  bench::TuneOptions o;
  proc::FarmConfig& f = o.farm;
  f = ReadTableOptions(r, proc::kTune);
  if (f.fp16) throw ConfigError("zerofarm tune runs CPU farms: fp16 is for GPUs");
  if (f.bf16) f.precision = "bf16", f.bf16 = false;
  if (f.workers == 0) f.workers = std::clamp(proc::CpusGranted(), 1, 1024);  // as `zerofarm run` does
  f.gpus = 0;
  f.out = "tune";  // each farm run gets its own temporary directory
  f.Validate();
  o.quick = r.count("quick") > 0;
  o.seconds = o.quick && !r.count("seconds") ? 2.0 : r["seconds"].as<double>();
  if (o.seconds < 1) throw ConfigError("--seconds must be at least 1");
  o.out = r["out"].as<std::string>();
  o.plot = !r.count("no-plot");
  return bench::RunTune(o);
}

}  // namespace zerofarm::cli
