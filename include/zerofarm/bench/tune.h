#pragma once
// `zerofarm tune` (tune.cpp): short real farms (`zerofarm run` children) over
// ring slots, games per worker, max batch and the wait policy, one setting at
// a time around the defaults. The command line is read by src/cli/tune.cpp.
#include <string>

#include "zerofarm/proc/farm_config.h"

namespace zerofarm::bench {

struct TuneOptions {
  proc::FarmConfig farm;  // every probe farm's game, net and search (validated; gpus 0)
  double seconds = 10;    // length of each farm run
  std::string out = "tune";
  bool quick = false;  // two or three short runs (tests)
  bool plot = true;    // draw OUT/tune.png
};

// Runs the sweeps, prints the table and the recommended settings, writes
// OUT/tune-config.txt and OUT/tune.csv and draws OUT/tune.png with
// tools/plot_tune.py. Returns kExitOk, or kExitFailure when a probe farm
// failed. Throws Error when OUT or the weights file cannot be used.
int RunTune(const TuneOptions& o);

}  // namespace zerofarm::bench
