#include "status.h"

#include <unistd.h>

#include <cstdio>

#include "zerofarm/core/clock.h"

namespace zerofarm::proc {

StatusReporter::StatusReporter(const shm::SegmentMap& map, const FarmConfig& config)
    : map_(map), config_(config), tty_(config.status_line && isatty(STDERR_FILENO)), start_(MonotonicSeconds()) {
  last_ = Read();
  last_print_ = start_;
}

StatusReporter::Totals StatusReporter::Read() const {
  // Every load below is relaxed: these are statistics, each written by one
  // process; a slightly stale figure is fine and nothing is published by them.
  Totals t;
  t.t = MonotonicSeconds();
  const auto& p = map_.params();
  double occupancy = 0;
  for (uint32_t w = 0; w < p.num_workers; ++w) {
    const shm::WorkerBlock& b = map_.Worker(w);
    // Games: the queues' own counters, exact whatever dies when: a game is
    // finished once it is in its queue (head) and written once its shard is
    // renamed and the writer committed it (committed_tail).
    const shm::MessageQueueControl& q = map_.GameQueue(w);
    t.games += q.head.load(std::memory_order_relaxed);
    t.games_written += q.committed_tail.load(std::memory_order_relaxed);
    t.positions += b.positions.load(std::memory_order_relaxed);
    t.dropped += b.games_dropped.load(std::memory_order_relaxed);
    const shm::LeafRingCounts c = shm::ReadCounts(map_.Ring(w));
    occupancy += static_cast<double>(c.head - c.done) / p.ring_slots;
  }
  t.occupancy = p.num_workers ? occupancy / p.num_workers : 0;
  for (uint32_t e = 0; e < p.num_evaluators; ++e) {
    const shm::EvaluatorBlock& b = map_.Evaluator(e);
    t.leaves += b.leaves.load(std::memory_order_relaxed);
    t.batches += b.batches.load(std::memory_order_relaxed);
    t.busy_ns += b.busy_ns.load(std::memory_order_relaxed);
  }
  const shm::WriterBlock& wb = map_.Writer();
  t.positions_written = wb.positions_written.load(std::memory_order_relaxed);
  t.shards = wb.shards_written.load(std::memory_order_relaxed);
  t.bytes = wb.bytes_written.load(std::memory_order_relaxed);
  for (uint64_t i = 0; i < map_.layout().num_processes; ++i)
    t.restarts += map_.Process(static_cast<uint32_t>(i)).restarts.load(std::memory_order_relaxed);
  return t;
}

uint64_t StatusReporter::GamesFinished() const { return Read().games; }

void StatusReporter::Tick(bool force) {
  const Totals now = Read();
  occupancy_sum_ += now.occupancy;
  ++occupancy_samples_;
  if (!tty_ || (!force && now.t - last_print_ < 0.5)) return;
  const double dt = now.t - last_.t;
  if (dt <= 0) return;
  const double batches = static_cast<double>(now.batches - last_.batches);
  char line[256];
  std::snprintf(line, sizeof line,
                "\r%6.0fs  games %llu (%.1f/s)  pos/s %.0f  evals/s %.0f  batch %.1f  ring %3.0f%%  "
                "eval busy %3.0f%%  shards %llu\033[K",
                now.t - start_, static_cast<unsigned long long>(now.games), (now.games - last_.games) / dt,
                (now.positions - last_.positions) / dt, (now.leaves - last_.leaves) / dt,
                batches > 0 ? (now.leaves - last_.leaves) / batches : 0.0, 100.0 * now.occupancy,
                100.0 * (now.busy_ns - last_.busy_ns) * 1e-9 / dt / map_.params().num_evaluators,
                static_cast<unsigned long long>(now.shards));
  std::fputs(line, stderr);
  std::fflush(stderr);
  last_ = now;
  last_print_ = now.t;
}

void StatusReporter::PrintSummary(const std::string& stop_reason) {
  const Totals t = Read();
  const double secs = t.t - start_;
  if (tty_) std::fputs("\n", stderr);
  std::printf(
      "zerofarm run: %s after %.1f s: %llu games finished, %llu written in %llu shards (%llu positions, %.1f MB) "
      "to %s/shards; %llu in-flight games dropped; %.1f games/s, %.1f positions/s, %.0f leaf evals/s, "
      "mean batch %.1f, mean ring occupancy %.0f%%, evaluator busy %.0f%%, restarts %llu\n",
      stop_reason.c_str(), secs, static_cast<unsigned long long>(t.games),
      static_cast<unsigned long long>(t.games_written), static_cast<unsigned long long>(t.shards),
      static_cast<unsigned long long>(t.positions_written), t.bytes / 1e6, config_.out.c_str(),
      static_cast<unsigned long long>(t.dropped), secs > 0 ? t.games / secs : 0, secs > 0 ? t.positions / secs : 0,
      secs > 0 ? t.leaves / secs : 0, t.batches ? static_cast<double>(t.leaves) / t.batches : 0,
      occupancy_samples_ ? 100.0 * occupancy_sum_ / occupancy_samples_ : 0,
      secs > 0 ? 100.0 * t.busy_ns * 1e-9 / secs / map_.params().num_evaluators : 0,
      static_cast<unsigned long long>(t.restarts));
  if (t.games > t.games_written)
    std::printf("zerofarm run: %llu finished games were NOT written (see the errors above)\n",
                static_cast<unsigned long long>(t.games - t.games_written));
  std::fflush(stdout);
}

}  // namespace zerofarm::proc
