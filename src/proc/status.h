#pragma once
// What the supervisor shows of a running farm. One snapshot of the segment's
// counters feeds all three outputs, so they always agree:
//   - a live status line on a terminal (a few times a second),
//   - RUN/metrics.csv (a row every few seconds) and RUN/metrics.prom (a
//     Prometheus textfile, rewritten atomically),
//   - the final summary line, always printed.
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zerofarm/core/thread_annotations.h"
#include "zerofarm/proc/farm_config.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::proc {

// Totals since the start of the run, read from the segment (relaxed loads:
// statistics, each written by one process).
struct FarmSnapshot {
  double t = 0;  // MonotonicSeconds()
  uint64_t games = 0, games_written = 0, positions = 0, positions_written = 0, dropped = 0;
  uint64_t leaves = 0, batches = 0, busy_ns = 0, shards = 0, bytes = 0;
  std::vector<double> ring_occupancy;  // per worker: in-flight / slots, now
  std::vector<uint64_t> eval_leaves;   // per evaluator
  std::vector<uint64_t> eval_busy_ns;  // per evaluator
  std::array<uint64_t, shm::kBatchHistogramBuckets> batch_hist{};
  std::array<uint64_t, shm::kLatencyBuckets> latency_hist{};
  uint64_t restarts_worker = 0, restarts_evaluator = 0, restarts_writer = 0;
  // Of the restarts, those of a child killed as hung (stale heartbeat), per role.
  uint64_t hangs_worker = 0, hangs_evaluator = 0, hangs_writer = 0;
  // Leaves the network answered with NaN or Inf, and the games dropped for it.
  uint64_t nonfinite_leaves = 0, dropped_nonfinite = 0;
  // Finished games set aside by the writer: they break the game's contract
  // (RUN/rejected/; not in games_written).
  uint64_t set_aside = 0;
  uint32_t models_nonfinite = 0;          // evaluators whose model in use produces NaN/Inf
  uint32_t model_min = 0, model_max = 0;  // model versions the evaluators run now

  // Search quality (docs/search.md): summed over workers; the threshold is the workers' mean.
  uint64_t full_positions = 0, games_resigned = 0, resign_checks = 0, false_resignations = 0;
  uint64_t cache_lookups = 0, cache_hits = 0;
  double resign_threshold = 0;
  // Of the games written since the writer's last start: those in its sample of
  // move sequences and the distinct ones among them (proc/distinct_games.h).
  uint64_t sampled_games = 0, sampled_distinct = 0;
  uint64_t restarts() const { return restarts_worker + restarts_evaluator + restarts_writer; }
  uint64_t hangs() const { return hangs_worker + hangs_evaluator + hangs_writer; }
  double MeanOccupancy() const;
};

FarmSnapshot ReadSnapshot(const shm::SegmentMap& map);
// The share of distinct games (1 before any game is counted).
inline double DistinctShare(const FarmSnapshot& s) {
  return s.sampled_games ? static_cast<double>(s.sampled_distinct) / s.sampled_games : 1.0;
}
// "distinct games 99.8% (4990 distinct move sequences of 5000 games)"; "" before any.
std::string DistinctText(const FarmSnapshot& s);
// Latency quantile q (0..1) in microseconds over the leaves counted in
// `now - before` (upper edge of the bucket holding it); 0 if none.
double LatencyQuantileUs(const FarmSnapshot& now, const FarmSnapshot& before, double q);

// The terminal of a farm with a status line (issue 24): every log line, the
// supervisor's and its children's, appears ABOVE the status line, which is
// redrawn below it; the two never share a line.
//
// How: constructed before any child exists, it makes fd 2 of the supervisor
// the write end of a pipe (inherited by every forked and exec'd child) and
// keeps the terminal to itself. A relay thread of the supervisor reads the
// pipe and, for each batch of complete lines, clears the status line, writes
// the lines and redraws the status below them, in one write(2). Why a pipe and
// not a lock shared with the children: a child that crashes holding a lock
// would wedge every other writer; a pipe has no lock, ZF_LOG's single write(2)
// of less than PIPE_BUF bytes arrives whole, and a child that dies mid-line
// only leaves a partial line (ended by a newline at the next one).
// The relay never waits for a child; a child waits only while the pipe
// (64 KiB) is full, i.e. while the terminal itself does not take output.
// The relay thread allocates nothing and takes no lock a child uses: workers
// and the writer are forked from this process (no exec) while it runs, and a
// lock another thread holds at fork() stays held forever in the child. glibc's
// malloc resets its locks at fork; AddressSanitizer's allocator (GCC 12) does
// not, and a writer forked while this thread was starting (ASan's thread
// start-up allocates) hung in its last shard flush (CI, 2026-11-25). So the
// constructor returns only once the thread runs, and then it never allocates.
//
// Inactive (no terminal on stderr, or no status line wanted): does nothing and
// SetStatus() is not called. Thread safety: SetStatus and Finish are called by
// the supervisor's main thread only; the relay thread shares status_ under mu_.
class TerminalRelay {
 public:
  explicit TerminalRelay(bool active);
  ~TerminalRelay() { Finish(); }
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;
  bool active() const { return tty_fd_ >= 0; }
  // Replaces the status line and draws it (no newline).
  void SetStatus(const std::string& text);
  // Relays every line still in the pipe, leaves the status line as the last
  // line (ended by a newline) and gives fd 2 back to the terminal. Call it
  // once every child has stopped; later calls do nothing.
  void Finish();

 private:
  void Relay();  // the relay thread's loop
  // Reads what the pipe holds and writes its complete lines (all of it when
  // `flush`) above the status line. The relay thread's until Finish() joins it.
  // Returns true when the buffer filled up: the pipe may hold more.
  bool Pump(bool flush);

  static constexpr size_t kPendingBytes = 64 * 1024;  // the pipe's own capacity

  int tty_fd_ = -1;   // the terminal (a dup of the original fd 2), close-on-exec
  int read_fd_ = -1;  // the pipe's read end, non-blocking, close-on-exec
  // What was read and not yet written: a partial line (the relay thread's, then
  // Finish's). A fixed buffer, allocated by the constructor.
  std::unique_ptr<char[]> pending_;
  size_t pending_size_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};  // set by the relay thread once its start-up is over
  Mutex mu_;                          // one write to the terminal at a time
  std::string status_ ZF_GUARDED_BY(mu_);
};

// The text the status line and the progress log line share: what is done of
// --games / --duration and when the run will end. `games` finished so far,
// `elapsed` seconds since the start, `games_per_s` the smoothed rate.
// E.g. "games 120 of 1000 (12%, ETA 7m20s)", "games 120, 40s of 60s (ETA 20s)".
std::string ProgressText(uint64_t games, double elapsed, double games_per_s, int64_t games_goal,
                         double duration);
// "1h02m", "7m20s", "42s"; "?" for a negative or non-finite number.
std::string FormatSeconds(double seconds);

class StatusReporter {
 public:
  // Rates in the status line and progress lines are means over the last
  // kRateWindowSeconds (a sliding window of samples), not per half second.
  static constexpr double kRateWindowSeconds = 10.0;
  // `terminal`: where the status line goes (null or inactive: no status line;
  // then a progress line is logged every config.progress_every seconds).
  StatusReporter(const shm::SegmentMap& map, const FarmConfig& config, TerminalRelay* terminal = nullptr);
  ~StatusReporter();
  // Samples the counters; prints the status line when due and appends a
  // metrics row when due (or both when `force`).
  void Tick(bool force);
  // The summary lines, printed on stdout and written to HOST/summary.txt, with
  // a JSON twin HOST/summary.json (figures, and the lines), both atomically.
  void PrintSummary(const std::string& stop_reason);
  // The summary's lines (no newlines) for the snapshot `t`.
  std::vector<std::string> SummaryLines(const FarmSnapshot& t, const std::string& stop_reason) const;
  // A line the summary adds about what this start found of an earlier run
  // (shards it finished or removed); empty: none.
  void SetStartNote(std::string note) { start_note_ = std::move(note); }
  uint64_t GamesFinished() const;

 private:
  void WriteMetrics(const FarmSnapshot& now);
  // The status line (or progress line) text over the rate window ending at `now`.
  std::string StatusText(const FarmSnapshot& now);
  // Warns once when the share of distinct games falls under kDistinctWarnShare.
  void WarnOfRepeats(const FarmSnapshot& now);

  const shm::SegmentMap& map_;
  const FarmConfig& config_;
  TerminalRelay* terminal_;  // null when there is no status line
  FarmSnapshot first_, last_line_, last_metrics_, last_progress_;
  std::deque<FarmSnapshot> window_;  // samples of the last kRateWindowSeconds, oldest first
  double occupancy_sum_ = 0;
  uint64_t occupancy_samples_ = 0;
  std::FILE* csv_ = nullptr;
  std::string start_note_;
  bool repeats_warned_ = false;
};

}  // namespace zerofarm::proc
