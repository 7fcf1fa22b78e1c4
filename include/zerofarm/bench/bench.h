#pragma once
// `zerofarm bench` (bench.cpp): how close the farm comes to its limit, in one
// run, on one net: (a) the evaluator alone, (a') the machine bound, (a'') the
// search alone, (b) a real farm against them, (c) the cross-process leaf
// hand-off, (d) the writer; and the evaluator alone by precision (sweep). The
// command line is read by src/cli/bench.cpp; the work is here.
#include <cstdint>
#include <string>
#include <vector>

#include "zerofarm/proc/farm_config.h"

namespace zerofarm::bench {

// The settings of one bench, as the command line resolved them (game, net,
// search, workers, E x T and precision in `farm`, already validated).
struct BenchOptions {
  proc::FarmConfig farm;  // game, net, search, workers, precision
  int runs = 3;
  double farm_seconds = 20;
  double bound_seconds = 0.5;    // per batch size
  double machine_seconds = 3;    // the machine bound's window
  double machine_start_s = 5;    // the machine bound's children load LibTorch in this time
  double start_at = 0;           // wall-clock second at which the bound starts (machine bound children)
  double handoff_seconds = 0.3;  // per transport and batch
  uint64_t writer_positions = 300'000;
  std::vector<int> bound_batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};  // the bound's batch sizes
  std::vector<int> handoff_batches = {1, 4, 16, 64, 256};
  std::vector<int> fixed_waits = {0, 500, 2000, 10000};  // fixed --max-wait-us beside the adaptive wait
  std::vector<int> deflate_levels, scaling_workers;
  // The part `sweep`: the evaluator alone by precision, at these batch sizes.
  std::vector<int> sweep_batches = {1, 8, 64, 256, 1024, 2048, 4096, 8192};
  std::vector<int> handoff_spins_us;  // extra leaf-ring columns, one per spin budget
  // Parts: bound, machine, search, farm, wait, scaling, handoff, writer (the
  // default) and sweep (bench.cpp says what each measures).
  std::string parts = "bound,machine,search,farm,wait,scaling,handoff,writer";
  bool Has(const std::string& part) const {
    return ("," + parts + ",").find("," + part + ",") != std::string::npos;
  }
};

// Runs every part of `o.parts` `o.runs` times, interleaved; prints one JSON
// line per result on stdout as it comes, then the table of min / median / max
// over the runs and the targets. Returns kExitOk. Throws ConfigError when a
// part needs LibTorch and this binary has none; Error on a failed fork, mmap
// or file.
int RunBench(const BenchOptions& o);

// `zerofarm bench --manifest-load` (manifest_load.cpp; issue 76): `hosts`
// simulated hosts write `shards` shards into one run directory at `rate`
// shards a second, as a writer does (a copy of one real shard: .tmp, fsync,
// rename, the directory's fsync, a manifest line), while a trainer's
// learn::ShardWindow follows the run (Refresh every `follow_every` s).
// Each refresh is a CSV row: the run's size and the time the trainer took to
// find and read its next window. At the end every shard must have been found
// once (none lost, none counted twice).
struct ManifestLoadOptions {
  std::string out;  // the run directory to write (must not exist)
  std::string csv;  // raw output; "" = OUT/manifest-load.csv
  uint64_t shards = 20'000;
  int hosts = 64;
  double rate = 244;  // shards a second, all hosts together
  double follow_every = 1.0;
  int64_t window = 100'000;  // the trainer's window, positions
  int games_per_shard = 8;   // one-position games
};
// Returns kExitOk, or kExitFailure when a shard was lost or counted twice;
// prints one summary JSON line. Throws ConfigError for a bad option or an
// existing OUT, Error on a disk error.
int RunManifestLoad(const ManifestLoadOptions& o);

}  // namespace zerofarm::bench
