#pragma once
// The supervisor's view of the farm's figures: a live status line on a
// terminal (a few times a second) and a final summary line, always. Both
// are built from the same counters in the segment.
#include <cstdint>
#include <string>

#include "zerofarm/proc/farm_config.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::proc {

class StatusReporter {
 public:
  StatusReporter(const shm::SegmentMap& map, const FarmConfig& config);
  // Samples the counters; prints the status line when due (or when `force`).
  void Tick(bool force);
  // The one-line summary, printed on stdout.
  void PrintSummary(const std::string& stop_reason);
  uint64_t GamesFinished() const;

 private:
  struct Totals {
    double t = 0;
    uint64_t games = 0, positions = 0, leaves = 0, batches = 0, busy_ns = 0, dropped = 0;
    uint64_t games_written = 0, positions_written = 0, shards = 0, bytes = 0, restarts = 0;
    double occupancy = 0;  // mean over rings of in-flight / slots, sampled now
  };
  Totals Read() const;

  const shm::SegmentMap& map_;
  const FarmConfig& config_;
  bool tty_;
  double start_;
  double last_print_ = 0;
  Totals last_;
  double occupancy_sum_ = 0;
  uint64_t occupancy_samples_ = 0;
};

}  // namespace zerofarm::proc
