#pragma once
// `zerofarm tune` (tune.cpp): short real farms (`zerofarm run` children) over
// ring slots, games per worker, max batch and the wait policy, one setting at
// a time around the defaults. The command line is read by src/cli/tune.cpp.
#include <string>
#include <vector>

#include "zerofarm/bench/bench_util.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::bench {

struct TuneOptions {
  proc::FarmConfig farm;  // every probe farm's game, net and search (validated; gpus 0)
  double seconds = 10;    // length of each farm run
  std::string out = "tune";
  bool quick = false;  // two or three short runs (tests)
  bool plot = true;    // draw OUT/tune.png
  // Runs of each setting, interleaved (round r runs every setting once);
  // 0: 3, or 2 with `quick`.
  int rounds = 0;
};

// One sweep's decision. Each candidate's samples are its rounds' positions/s
// (an empty vector: its runs failed; it is left out). The best has the highest
// median, the runner-up the next. The winner is clear only when the best's
// slowest round beat the runner-up's fastest: otherwise the spread covers the
// difference. One candidate is clear by itself; none gives best -1.
struct SweepVerdict {
  int best = -1;       // index into the candidates
  int runner_up = -1;  // -1: the best was the only candidate
  bool clear = false;
  Stats best_stats, runner_up_stats;
};
SweepVerdict JudgeSweep(const std::vector<std::vector<double>>& samples);

// Runs the sweeps (every setting `rounds` times), prints the table with each
// setting's median and spread, and the recommended settings, or "no clear
// winner" for a sweep whose spread covers its differences. Writes
// OUT/tune-config.txt and OUT/tune.csv and draws OUT/tune.png with
// tools/plot_tune.py. Returns kExitOk, or kExitFailure when a probe farm
// failed. Throws Error when OUT or the weights file cannot be used.
int RunTune(const TuneOptions& o);

}  // namespace zerofarm::bench
