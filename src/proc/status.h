#pragma once
// What the supervisor shows of a running farm. One snapshot of the segment's
// counters feeds all three outputs, so they always agree:
//   - a live status line on a terminal (a few times a second),
//   - RUN/metrics.csv (a row every few seconds) and RUN/metrics.prom (a
//     Prometheus textfile, rewritten atomically),
//   - the final summary line, always printed.
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "zerofarm/proc/farm_config.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::proc {

// Totals since the start of the run, read from the segment (relaxed loads:
// statistics, each written by one process).
struct FarmSnapshot {
  double t = 0;  // MonotonicSeconds()
  uint64_t games = 0, games_written = 0, positions = 0, positions_written = 0, dropped = 0;
  uint64_t leaves = 0, batches = 0, busy_ns = 0, shards = 0, bytes = 0;
  std::vector<double> ring_occupancy;    // per worker: in-flight / slots, now
  std::vector<uint64_t> eval_leaves;     // per evaluator
  std::vector<uint64_t> eval_busy_ns;    // per evaluator
  std::array<uint64_t, shm::kBatchHistogramBuckets> batch_hist{};
  std::array<uint64_t, shm::kLatencyBuckets> latency_hist{};
  uint64_t restarts_worker = 0, restarts_evaluator = 0, restarts_writer = 0;
  // Of the restarts, those of a child killed as hung (stale heartbeat), per role.
  uint64_t hangs_worker = 0, hangs_evaluator = 0, hangs_writer = 0;
  // Leaves the network answered with NaN or Inf, and the games dropped for it.
  uint64_t nonfinite_leaves = 0, dropped_nonfinite = 0;
  uint32_t models_nonfinite = 0;  // evaluators whose model in use produces NaN/Inf
  uint32_t model_min = 0, model_max = 0;  // model versions the evaluators run now

  // Search quality (docs/search.md): summed over workers; the threshold is the workers' mean.
  uint64_t full_positions = 0, games_resigned = 0, resign_checks = 0, false_resignations = 0;
  uint64_t cache_lookups = 0, cache_hits = 0;
  double resign_threshold = 0;
  uint64_t restarts() const { return restarts_worker + restarts_evaluator + restarts_writer; }
  uint64_t hangs() const { return hangs_worker + hangs_evaluator + hangs_writer; }
  double MeanOccupancy() const;
};

FarmSnapshot ReadSnapshot(const shm::SegmentMap& map);
// Latency quantile q (0..1) in microseconds over the leaves counted in
// `now - before` (upper edge of the bucket holding it); 0 if none.
double LatencyQuantileUs(const FarmSnapshot& now, const FarmSnapshot& before, double q);

class StatusReporter {
 public:
  StatusReporter(const shm::SegmentMap& map, const FarmConfig& config);
  ~StatusReporter();
  // Samples the counters; prints the status line when due and appends a
  // metrics row when due (or both when `force`).
  void Tick(bool force);
  // The one-line summary, printed on stdout.
  void PrintSummary(const std::string& stop_reason);
  // A line the summary adds about what this start found of an earlier run
  // (shards it finished or removed); empty: none.
  void SetStartNote(std::string note) { start_note_ = std::move(note); }
  uint64_t GamesFinished() const;

 private:
  void WriteMetrics(const FarmSnapshot& now);

  const shm::SegmentMap& map_;
  const FarmConfig& config_;
  bool tty_;
  FarmSnapshot first_, last_line_, last_metrics_;
  double occupancy_sum_ = 0;
  uint64_t occupancy_samples_ = 0;
  std::FILE* csv_ = nullptr;
  std::string start_note_;
};

}  // namespace zerofarm::proc
