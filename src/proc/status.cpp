#include "status.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/log.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/proc/distinct_games.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {
namespace {

constexpr double kLineSeconds = 0.5;
constexpr double kMetricsSeconds = 2.0;

double Rate(uint64_t now, uint64_t before, double dt) { return dt > 0 ? (now - before) / dt : 0.0; }

// Writes every byte of `parts` to `fd`, in one write(2) unless the terminal
// takes less; gives up on an error (a terminal gone). Allocates nothing, so
// the relay thread may call it (see TerminalRelay).
void WriteAll(int fd, iovec* parts, int count) {
  while (count > 0) {
    const ssize_t n = ::writev(fd, parts, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    size_t left = static_cast<size_t>(n);
    for (; count > 0 && left >= parts->iov_len; ++parts, --count) left -= parts->iov_len;
    if (count > 0) {
      parts->iov_base = static_cast<char*>(parts->iov_base) + left;
      parts->iov_len -= left;
    }
  }
}

iovec Part(const char* text, size_t size) { return {const_cast<char*>(text), size}; }
iovec Part(const std::string& text) { return Part(text.data(), text.size()); }

// The status line cut to the terminal's width: a line that wraps could not be
// cleared by "\r" alone, and the next log line would be glued to its rest.
std::string FitToTerminal(int fd, const std::string& text) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col < 2 || text.size() < ws.ws_col) return text;
  return text.substr(0, ws.ws_col - 1);
}

}  // namespace

TerminalRelay::TerminalRelay(bool active) {
  if (!active) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    ZF_LOG(WARN) << "no pipe for the status line's log relay (" << std::strerror(errno)
                 << "); no status line";
    return;
  }
  tty_fd_ = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (tty_fd_ < 0 || ::dup2(fds[1], STDERR_FILENO) < 0) {
    ZF_LOG(WARN) << "cannot redirect stderr for the status line (" << std::strerror(errno)
                 << "); no status line";
    if (tty_fd_ >= 0) ::close(tty_fd_);
    ::close(fds[0]);
    ::close(fds[1]);
    tty_fd_ = -1;
    return;
  }
  ::close(fds[1]);  // fd 2 (no close-on-exec: dup2 clears it) is the write end now, for every child
  read_fd_ = fds[0];
  pending_ = std::make_unique<char[]>(kPendingBytes);  // here: the relay thread never allocates
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
  thread_ = std::thread([this] { Relay(); });
  // acquire: pairs with Relay()'s release, so the new thread's start-up (which
  // allocates under AddressSanitizer) is over, its allocator locks released,
  // before the first child is forked.
  while (!running_.load(std::memory_order_acquire)) std::this_thread::yield();
}

void TerminalRelay::Relay() {
  running_.store(true, std::memory_order_release);  // release: see the constructor
  // relaxed: stop_ carries no data; Finish() joins this thread before it
  // touches pending_ or the pipe itself.
  while (!stop_.load(std::memory_order_relaxed)) {
    pollfd p{read_fd_, POLLIN, 0};
    ::poll(&p, 1, 100);
    Pump(false);
  }
}

bool TerminalRelay::Pump(bool flush) {
  char* const buf = pending_.get();
  while (pending_size_ < kPendingBytes) {
    const ssize_t n = ::read(read_fd_, buf + pending_size_, kPendingBytes - pending_size_);
    if (n > 0)
      pending_size_ += static_cast<size_t>(n);
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;  // EAGAIN: nothing more now; 0: every writer closed the pipe
  }
  const bool full = pending_size_ == kPendingBytes;  // a 64 KiB line: written as it is
  size_t end = pending_size_;
  while (end > 0 && buf[end - 1] != '\n') --end;
  if (flush || full) end = pending_size_;
  if (end == 0) return full;  // no complete line yet
  const MutexLock lock(mu_);
  // Clear the status line, the log lines, then the status line again below them.
  iovec parts[] = {Part("\r\033[K", 4), Part(buf, end), Part("\n", buf[end - 1] != '\n' ? 1 : 0),
                   Part("\r", 1),       Part(status_),  Part("\033[K", 3)};
  WriteAll(tty_fd_, parts, 6);
  std::memmove(buf, buf + end, pending_size_ - end);
  pending_size_ -= end;
  return full;
}

void TerminalRelay::SetStatus(const std::string& text) {
  if (!active()) return;
  const MutexLock lock(mu_);
  status_ = FitToTerminal(tty_fd_, text);
  iovec parts[] = {Part("\r", 1), Part(status_), Part("\033[K", 3)};
  WriteAll(tty_fd_, parts, 3);
}

void TerminalRelay::Finish() {
  if (!active()) return;
  stop_.store(true, std::memory_order_relaxed);  // relaxed: see Relay()
  thread_.join();
  ::dup2(tty_fd_, STDERR_FILENO);  // the supervisor's own log lines go straight to the terminal again
  // What the children and the supervisor left in the pipe (again while a buffer fills up).
  for (bool more = true; more;) more = Pump(true);
  iovec end[] = {Part("\n", 1)};  // the last status line stays, on a line of its own
  WriteAll(tty_fd_, end, 1);
  ::close(tty_fd_);
  ::close(read_fd_);
  tty_fd_ = read_fd_ = -1;
}

std::string FormatSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = std::llround(seconds);
  char text[32];
  if (s >= 3600)
    std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(text, sizeof text, "%llds", s);
  return text;
}

std::string ProgressText(uint64_t games, double elapsed, double games_per_s, int64_t games_goal,
                         double duration) {
  std::string text = "games " + std::to_string(games);
  double eta = -1;  // unknown
  if (games_goal > 0) {
    const uint64_t goal = static_cast<uint64_t>(games_goal);
    const uint64_t left = goal > games ? goal - games : 0;
    text += " of " + std::to_string(goal) + " (" +
            std::to_string(std::min<uint64_t>(100, games * 100 / goal)) + "%)";
    if (left == 0)
      eta = 0;
    else if (games_per_s > 0)
      eta = static_cast<double>(left) / games_per_s;
  }
  if (duration > 0) {
    text += ", " + FormatSeconds(elapsed) + " of " + FormatSeconds(duration);
    const double left = std::max(0.0, duration - elapsed);
    eta = eta < 0 ? left : std::min(eta, left);
  }
  if (games_goal > 0 || duration > 0) text += ", ETA " + FormatSeconds(eta);
  return text;
}

double FarmSnapshot::MeanOccupancy() const {
  double sum = 0;
  for (double o : ring_occupancy) sum += o;
  return ring_occupancy.empty() ? 0 : sum / ring_occupancy.size();
}

FarmSnapshot ReadSnapshot(const shm::SegmentMap& map) {
  // Every load is relaxed: statistics, each written by one process; a
  // slightly stale figure is fine and nothing is published by them.
  constexpr auto kRelaxed = std::memory_order_relaxed;
  FarmSnapshot s;
  s.t = MonotonicSeconds();
  const auto& p = map.params();
  for (uint32_t w = 0; w < p.num_workers; ++w) {
    const shm::WorkerBlock& b = map.Worker(w);
    // Games: the queues' own counters, exact whatever dies when: a game is
    // finished once it is in its queue (head) and written once its shard is
    // renamed and the writer committed it (committed_tail).
    const shm::MessageQueueControl& q = map.GameQueue(w);
    s.games += q.head.load(kRelaxed);
    s.games_written += q.committed_tail.load(kRelaxed);
    s.positions += b.positions.load(kRelaxed);
    s.dropped += b.games_dropped.load(kRelaxed);
    for (uint32_t i = 0; i < shm::kLatencyBuckets; ++i) s.latency_hist[i] += b.latency_hist[i].load(kRelaxed);
    s.full_positions += b.full_positions.load(kRelaxed);
    s.games_resigned += b.games_resigned.load(kRelaxed);
    s.resign_checks += b.resign_checks.load(kRelaxed);
    s.false_resignations += b.false_resignations.load(kRelaxed);
    s.cache_lookups += b.cache_lookups.load(kRelaxed);
    s.cache_hits += b.cache_hits.load(kRelaxed);
    const uint32_t bits = b.resign_threshold_bits.load(kRelaxed);
    float threshold;
    std::memcpy(&threshold, &bits, sizeof threshold);
    s.resign_threshold += threshold / p.num_workers;
    const shm::LeafRingCounts c = shm::ReadCounts(map.Ring(w));
    s.ring_occupancy.push_back(static_cast<double>(c.head - c.done) / p.ring_slots);
    s.restarts_worker += map.WorkerProcess(w).restarts.load(kRelaxed);
    s.hangs_worker += map.WorkerProcess(w).hangs.load(kRelaxed);
    s.dropped_nonfinite += b.games_dropped_nonfinite.load(kRelaxed);
  }
  for (uint32_t e = 0; e < p.num_evaluators; ++e) {
    const shm::EvaluatorBlock& b = map.Evaluator(e);
    s.eval_leaves.push_back(b.leaves.load(kRelaxed));
    s.eval_busy_ns.push_back(b.busy_ns.load(kRelaxed));
    s.leaves += s.eval_leaves.back();
    s.busy_ns += s.eval_busy_ns.back();
    s.batches += b.batches.load(kRelaxed);
    const uint32_t version = b.model_version.load(kRelaxed);
    s.model_min = e == 0 ? version : std::min(s.model_min, version);
    s.model_max = std::max(s.model_max, version);
    for (uint32_t i = 0; i < shm::kBatchHistogramBuckets; ++i)
      s.batch_hist[i] += b.batch_size_log2[i].load(kRelaxed);
    s.restarts_evaluator += map.EvaluatorProcess(e).restarts.load(kRelaxed);
    s.hangs_evaluator += map.EvaluatorProcess(e).hangs.load(kRelaxed);
    s.nonfinite_leaves += b.nonfinite_leaves.load(kRelaxed);
    s.models_nonfinite += b.model_nonfinite.load(kRelaxed) != 0;
  }
  const shm::WriterTotals wt = map.Writer().Totals();  // one consistent copy (WriterBlock)
  s.positions_written = wt.positions;
  s.shards = wt.shards;
  s.bytes = wt.bytes;
  s.sampled_games = wt.sampled_games;
  s.sampled_distinct = std::min(wt.sampled_distinct, wt.sampled_games);
  s.set_aside = map.Writer().games_set_aside.load(kRelaxed);
  // Their messages are committed like written ones (a set-aside game counted
  // before its commit leaves this one lower until the writer's next commit).
  s.games_written -= std::min(s.games_written, s.set_aside);
  s.restarts_writer = map.WriterProcess().restarts.load(kRelaxed);
  s.hangs_writer = map.WriterProcess().hangs.load(kRelaxed);
  return s;
}

double LatencyQuantileUs(const FarmSnapshot& now, const FarmSnapshot& before, double q) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < shm::kLatencyBuckets; ++i) total += now.latency_hist[i] - before.latency_hist[i];
  if (total == 0) return 0;
  const double target = q * static_cast<double>(total);
  uint64_t seen = 0;
  for (uint32_t i = 0; i < shm::kLatencyBuckets; ++i) {
    seen += now.latency_hist[i] - before.latency_hist[i];
    if (static_cast<double>(seen) >= target) return shm::LatencyBucketUpperUs(i);
  }
  return shm::LatencyBucketUpperUs(shm::kLatencyBuckets - 1);
}

StatusReporter::StatusReporter(const shm::SegmentMap& map, const FarmConfig& config, TerminalRelay* terminal)
    : map_(map), config_(config), terminal_(terminal && terminal->active() ? terminal : nullptr) {
  first_ = last_line_ = last_metrics_ = last_progress_ = ReadSnapshot(map);
  window_.push_back(first_);
  // One metrics.csv per run; an earlier run's (in a continued directory)
  // keeps its own file, metrics-EPOCH.csv.
  const std::string path = RunDirOf(config).MetricsCsv();
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && config.epoch > 0)
    std::filesystem::rename(path, RunDirOf(config).RotatedMetricsCsv(config.epoch - 1), ec);
  csv_ = io::OpenFreshStream(path);  // issue 21: never through a planted link
  if (!csv_) {
    ZF_LOG(WARN) << "cannot write " << path << "; no metrics file for this run";
    return;
  }
  {
    std::fprintf(
        csv_,
        "time_s,games_total,positions_total,leaf_evals_total,batches_total,games_per_s,positions_per_s,"
        "leaf_evals_per_s,mean_batch,evaluator_busy,latency_p50_us,latency_p90_us,latency_p99_us,"
        "restarts_total,restarts_worker,restarts_evaluator,restarts_writer,shards_total,bytes_total");
    for (size_t w = 0; w < first_.ring_occupancy.size(); ++w) std::fprintf(csv_, ",ring_occupancy_w%zu", w);
    for (size_t e = 0; e < first_.eval_leaves.size(); ++e) std::fprintf(csv_, ",leaf_evals_per_s_e%zu", e);
    for (uint32_t b = 0; b < shm::kBatchHistogramBuckets; ++b) std::fprintf(csv_, ",batch_hist_%u", b);
    std::fprintf(csv_,
                 ",hangs_total,nonfinite_leaves_total,games_dropped_nonfinite_total,games_set_aside_total\n");
  }
}

StatusReporter::~StatusReporter() {
  if (csv_) std::fclose(csv_);
}

uint64_t StatusReporter::GamesFinished() const { return ReadSnapshot(map_).games; }

void StatusReporter::Tick(bool force) {
  const FarmSnapshot now = ReadSnapshot(map_);
  occupancy_sum_ += now.MeanOccupancy();
  ++occupancy_samples_;
  if (force || now.t - last_metrics_.t >= kMetricsSeconds) {
    WriteMetrics(now);
    last_metrics_ = now;
  }
  // The rate window: a sample every kLineSeconds; the oldest kept is the
  // newest one at least kRateWindowSeconds old (until the run is that old: the start).
  if (now.t - window_.back().t >= kLineSeconds) window_.push_back(now);
  while (window_.size() > 2 && now.t - window_[1].t >= kRateWindowSeconds) window_.pop_front();
  if (terminal_) {
    if (!force && now.t - last_line_.t < kLineSeconds) return;
    terminal_->SetStatus(StatusText(now));
    last_line_ = now;
  } else if (config_.progress_every > 0 && now.t - last_progress_.t >= config_.progress_every) {
    ZF_LOG(INFO) << "progress: " << StatusText(now);
    last_progress_ = now;
  }
  WarnOfRepeats(now);
}

void StatusReporter::WarnOfRepeats(const FarmSnapshot& now) {
  if (repeats_warned_ || now.sampled_games < kDistinctMinGames || DistinctShare(now) >= kDistinctWarnShare)
    return;
  repeats_warned_ = true;
  ZF_LOG(WARN) << "the farm repeats its games: " << DistinctText(now)
               << "; give it more exploration (--random-opening-plies, --temperature-plies, "
                  "--final-temperature, --dirichlet-fraction; docs/search.md)";
}

std::string StatusReporter::StatusText(const FarmSnapshot& now) {
  const FarmSnapshot& base = window_.front().t < now.t ? window_.front() : first_;
  const double dt = now.t - base.t, elapsed = now.t - first_.t;
  const double batches = static_cast<double>(now.batches - base.batches);
  const double games_per_s = Rate(now.games, base.games, dt);
  char line[320];
  std::snprintf(
      line, sizeof line,
      "%5.0fs  %s  games/s %.1f  pos/s %.0f  evals/s %.0f  batch %.1f  latency p50 %.0fus  ring %3.0f%%  "
      "eval busy %3.0f%%  restarts %llu  host %s model %u",
      elapsed, ProgressText(now.games, elapsed, games_per_s, config_.games, config_.duration).c_str(),
      games_per_s, Rate(now.positions, base.positions, dt), Rate(now.leaves, base.leaves, dt),
      batches > 0 ? (now.leaves - base.leaves) / batches : 0.0, LatencyQuantileUs(now, base, 0.5),
      100.0 * now.MeanOccupancy(),
      dt > 0 ? 100.0 * (now.busy_ns - base.busy_ns) * 1e-9 / dt / now.eval_leaves.size() : 0.0,
      static_cast<unsigned long long>(now.restarts()), config_.host_id.c_str(), now.model_max);
  return line;
}

namespace {

// Figures of the interval between two metrics samples.
struct IntervalFigures {
  double busy = 0;                   // mean share of the interval the evaluators ran the network
  double p50 = 0, p90 = 0, p99 = 0;  // leaf latency quantiles, microseconds
};

// One row of metrics.csv: totals at `now`, rates over the interval since `b`;
// `start_t`: the first sample's time.
void AppendCsvRow(std::FILE* csv, const FarmSnapshot& now, const FarmSnapshot& b, double start_t, double dt,
                  const IntervalFigures& f) {
  std::fprintf(
      csv, "%.3f,%llu,%llu,%llu,%llu,%.3f,%.3f,%.1f,%.3f,%.4f,%.1f,%.1f,%.1f,%llu,%llu,%llu,%llu,%llu,%llu",
      now.t - start_t, static_cast<unsigned long long>(now.games),
      static_cast<unsigned long long>(now.positions), static_cast<unsigned long long>(now.leaves),
      static_cast<unsigned long long>(now.batches), Rate(now.games, b.games, dt),
      Rate(now.positions, b.positions, dt), Rate(now.leaves, b.leaves, dt),
      now.batches > b.batches ? static_cast<double>(now.leaves - b.leaves) / (now.batches - b.batches) : 0.0,
      f.busy, f.p50, f.p90, f.p99, static_cast<unsigned long long>(now.restarts()),
      static_cast<unsigned long long>(now.restarts_worker),
      static_cast<unsigned long long>(now.restarts_evaluator),
      static_cast<unsigned long long>(now.restarts_writer), static_cast<unsigned long long>(now.shards),
      static_cast<unsigned long long>(now.bytes));
  for (double o : now.ring_occupancy) std::fprintf(csv, ",%.4f", o);
  for (size_t e = 0; e < now.eval_leaves.size(); ++e)
    std::fprintf(csv, ",%.1f", Rate(now.eval_leaves[e], b.eval_leaves[e], dt));
  for (uint64_t h : now.batch_hist) std::fprintf(csv, ",%llu", static_cast<unsigned long long>(h));
  std::fprintf(csv, ",%llu,%llu,%llu,%llu\n", static_cast<unsigned long long>(now.hangs()),
               static_cast<unsigned long long>(now.nonfinite_leaves),
               static_cast<unsigned long long>(now.dropped_nonfinite),
               static_cast<unsigned long long>(now.set_aside));
  std::fflush(csv);
}

// metrics.prom's text: every counter and gauge at `now`, with the interval's figures.
std::string PrometheusText(const FarmSnapshot& now, const IntervalFigures& f, const std::string& host_id) {
  // The Prometheus textfile: counters with _total, units in the names.
  std::ostringstream m;
  auto metric = [&](const char* name, const char* type, const char* help) {
    m << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
  };
  // A metric without labels: its help, its type and its one value.
  auto single = [&](const char* name, const char* type, const char* help, auto value) {
    metric(name, type, help);
    m << name << " " << value << "\n";
  };
  single("zerofarm_games_total", "counter", "Games finished (queued for the writer).", now.games);
  single("zerofarm_games_written_total", "counter", "Games in renamed HDF5 shards.", now.games_written);
  single("zerofarm_games_dropped_total", "counter", "Games lost in flight (stops and crashes).", now.dropped);
  single("zerofarm_games_set_aside_total", "counter",
         "Finished games set aside: they break the game's contract (RUN/rejected/).", now.set_aside);
  single("zerofarm_positions_total", "counter", "Positions of finished games.", now.positions);
  metric("zerofarm_leaf_evaluations_total", "counter", "Leaves evaluated by the network.");
  for (size_t e = 0; e < now.eval_leaves.size(); ++e)
    m << "zerofarm_leaf_evaluations_total{evaluator=\"" << e << "\"} " << now.eval_leaves[e] << "\n";
  metric("zerofarm_evaluator_busy_seconds_total", "counter", "Time evaluators spent running the network.");
  for (size_t e = 0; e < now.eval_busy_ns.size(); ++e)
    m << "zerofarm_evaluator_busy_seconds_total{evaluator=\"" << e << "\"} " << now.eval_busy_ns[e] * 1e-9
      << "\n";
  single("zerofarm_evaluator_busy_ratio", "gauge", "Share of the last interval evaluators ran the network.",
         f.busy);
  metric("zerofarm_batch_size", "histogram", "Leaves per network call.");
  uint64_t cumulative = 0;
  for (uint32_t i = 0; i < shm::kBatchHistogramBuckets; ++i) {
    cumulative += now.batch_hist[i];
    m << "zerofarm_batch_size_bucket{le=\"" << ((2ull << i) - 1) << "\"} " << cumulative << "\n";
  }
  m << "zerofarm_batch_size_bucket{le=\"+Inf\"} " << cumulative << "\nzerofarm_batch_size_count "
    << now.batches << "\nzerofarm_batch_size_sum " << now.leaves << "\n";
  metric("zerofarm_leaf_latency_seconds", "summary",
         "Leaf written by a worker to its result read, last interval.");
  m << "zerofarm_leaf_latency_seconds{quantile=\"0.5\"} " << f.p50 * 1e-6 << "\n"
    << "zerofarm_leaf_latency_seconds{quantile=\"0.9\"} " << f.p90 * 1e-6 << "\n"
    << "zerofarm_leaf_latency_seconds{quantile=\"0.99\"} " << f.p99 * 1e-6 << "\n";
  metric("zerofarm_ring_occupancy_ratio", "gauge", "Leaves in flight / ring slots, per worker.");
  for (size_t w = 0; w < now.ring_occupancy.size(); ++w)
    m << "zerofarm_ring_occupancy_ratio{worker=\"" << w << "\"} " << now.ring_occupancy[w] << "\n";
  metric("zerofarm_restarts_total", "counter", "Children restarted after dying, per role.");
  m << "zerofarm_restarts_total{role=\"worker\"} " << now.restarts_worker << "\n"
    << "zerofarm_restarts_total{role=\"evaluator\"} " << now.restarts_evaluator << "\n"
    << "zerofarm_restarts_total{role=\"writer\"} " << now.restarts_writer << "\n";
  metric("zerofarm_hung_kills_total", "counter",
         "Children killed and restarted for a stale heartbeat, per role.");
  m << "zerofarm_hung_kills_total{role=\"worker\"} " << now.hangs_worker << "\n"
    << "zerofarm_hung_kills_total{role=\"evaluator\"} " << now.hangs_evaluator << "\n"
    << "zerofarm_hung_kills_total{role=\"writer\"} " << now.hangs_writer << "\n";
  single("zerofarm_nonfinite_leaves_total", "counter", "Leaves the network answered with NaN or Inf.",
         now.nonfinite_leaves);
  single("zerofarm_games_dropped_nonfinite_total", "counter", "Games dropped for a NaN or Inf answer.",
         now.dropped_nonfinite);
  single("zerofarm_positions_written_total", "counter", "Positions in renamed HDF5 shards.",
         now.positions_written);
  single("zerofarm_full_search_positions_total", "counter",
         "Positions searched with the full budget (policy targets).", now.full_positions);
  single("zerofarm_games_resigned_total", "counter", "Games that ended by resignation.", now.games_resigned);
  single("zerofarm_resign_checks_total", "counter", "Play-through games in which a side would have resigned.",
         now.resign_checks);
  single("zerofarm_false_resignations_total", "counter",
         "Of those, games the would-be resigner did not lose.", now.false_resignations);
  single("zerofarm_resign_threshold", "gauge", "Mean resignation threshold of the workers (-1 = off).",
         now.resign_threshold);
  single("zerofarm_eval_cache_lookups_total", "counter", "Leaves looked up in the shared evaluation cache.",
         now.cache_lookups);
  single("zerofarm_eval_cache_hits_total", "counter", "Leaves answered by the shared evaluation cache.",
         now.cache_hits);
  single("zerofarm_eval_cache_hit_ratio", "gauge", "Cache hits / lookups since the start.",
         (now.cache_lookups ? static_cast<double>(now.cache_hits) / now.cache_lookups : 0.0));
  single("zerofarm_shards_written_total", "counter", "HDF5 shards written.", now.shards);
  metric("zerofarm_model_version", "gauge", "Newest model version an evaluator of this host runs.");
  m << "zerofarm_model_version{host=\"" << host_id << "\"} " << now.model_max << "\n";
  single("zerofarm_written_bytes_total", "counter", "Bytes of HDF5 shards written.", now.bytes);
  return m.str();
}

}  // namespace

void StatusReporter::WriteMetrics(const FarmSnapshot& now) {
  const FarmSnapshot& b = last_metrics_;
  const double dt = now.t - b.t;
  if (dt <= 0) return;
  const double evaluators = static_cast<double>(now.eval_leaves.size());
  IntervalFigures f;
  f.p50 = LatencyQuantileUs(now, b, 0.5);
  f.p90 = LatencyQuantileUs(now, b, 0.9);
  f.p99 = LatencyQuantileUs(now, b, 0.99);
  f.busy = (now.busy_ns - b.busy_ns) * 1e-9 / dt / evaluators;
  if (csv_) AppendCsvRow(csv_, now, b, first_.t, dt, f);
  const std::string text = PrometheusText(now, f, config_.host_id);
  const std::string path = RunDirOf(config_).MetricsProm(), tmp = path + ".tmp";
  if (std::FILE* file = io::OpenFreshStream(tmp)) {  // issue 21: never through a planted link
    const bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    // A full disk must not leave a half-written file behind, not even this one.
    if (std::fclose(file) == 0 && ok)
      std::rename(tmp.c_str(), path.c_str());
    else
      std::remove(tmp.c_str());
  }
}

namespace {

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

unsigned long long U(uint64_t v) { return static_cast<unsigned long long>(v); }

// A JSON string literal of `text`.
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char ch : text) {
    if (ch == '"' || ch == '\\')
      out += std::string("\\") + static_cast<char>(ch);
    else if (ch < 0x20)
      out += Format("\\u%04x", ch);
    else
      out += static_cast<char>(ch);
  }
  return out + "\"";
}

// The figures of the summary's first line, as JSON members.
std::string SummaryJsonFigures(const FarmSnapshot& t, const FarmSnapshot& first, double secs,
                               double occupancy, const FarmConfig& config) {
  const double busy = secs > 0 ? 1e-9 * t.busy_ns / secs / t.eval_leaves.size() : 0;
  std::string j = Format(
      "\"seconds\": %.3f, \"games_finished\": %llu, \"games_written\": %llu, \"shards\": %llu, "
      "\"positions_written\": %llu, \"bytes\": %llu, \"games_dropped\": %llu, \"games_per_s\": %.3f, "
      "\"positions_per_s\": %.3f, \"leaf_evals_per_s\": %.1f, \"mean_batch\": %.3f, "
      "\"latency_p50_us\": %.0f, \"latency_p99_us\": %.0f, \"ring_occupancy\": %.4f, "
      "\"evaluator_busy\": %.4f, \"restarts\": %llu, \"hung\": %llu, \"model_min\": %u, "
      "\"model_max\": %u, \"sampled_games\": %llu, \"sampled_distinct\": %llu, \"cache_lookups\": %llu, "
      "\"cache_hits\": %llu, \"nonfinite_leaves\": %llu, \"games_set_aside\": %llu",
      secs, U(t.games), U(t.games_written), U(t.shards), U(t.positions_written), U(t.bytes), U(t.dropped),
      secs > 0 ? t.games / secs : 0, secs > 0 ? t.positions / secs : 0, secs > 0 ? t.leaves / secs : 0,
      t.batches ? static_cast<double>(t.leaves) / t.batches : 0, LatencyQuantileUs(t, first, 0.5),
      LatencyQuantileUs(t, first, 0.99), occupancy, busy, U(t.restarts()), U(t.hangs()), t.model_min,
      t.model_max, U(t.sampled_games), U(t.sampled_distinct), U(t.cache_lookups), U(t.cache_hits),
      U(t.nonfinite_leaves), U(t.set_aside));
  if (t.sampled_games > 0) j += Format(", \"distinct_share\": %.5f", DistinctShare(t));
  return j + ", \"host\": " + JsonString(config.host_id) +
         ", \"dir\": " + JsonString(RunDirOf(config).HostDir());
}

}  // namespace

std::string DistinctText(const FarmSnapshot& t) {
  if (t.sampled_games == 0) return "";
  std::string text = Format("distinct games %.1f%% (%llu distinct move sequences of %llu games",
                            100.0 * DistinctShare(t), U(t.sampled_distinct), U(t.sampled_games));
  if (t.sampled_games < t.games_written) text += ", a sample of the games written";
  return text + ")";
}

std::vector<std::string> StatusReporter::SummaryLines(const FarmSnapshot& t,
                                                      const std::string& stop_reason) const {
  const double secs = t.t - first_.t;
  std::vector<std::string> lines;
  lines.push_back(Format(
      "zerofarm run: %s after %.1f s: %llu games finished, %llu written in %llu shards (%llu positions, %.1f "
      "MB) to %s; %llu in-flight games dropped; %.1f games/s, %.1f positions/s, %.0f leaf evals/s, "
      "mean batch %.1f, leaf latency p50 %.0f us p99 %.0f us, mean ring occupancy %.0f%%, evaluator busy "
      "%.0f%%, restarts %llu (%llu hung); host %s, model version %u..%u",
      stop_reason.c_str(), secs, U(t.games), U(t.games_written), U(t.shards), U(t.positions_written),
      t.bytes / 1e6, RunDirOf(config_).HostDir().c_str(), U(t.dropped), secs > 0 ? t.games / secs : 0,
      secs > 0 ? t.positions / secs : 0, secs > 0 ? t.leaves / secs : 0,
      t.batches ? static_cast<double>(t.leaves) / t.batches : 0, LatencyQuantileUs(t, first_, 0.5),
      LatencyQuantileUs(t, first_, 0.99),
      occupancy_samples_ ? 100.0 * occupancy_sum_ / occupancy_samples_ : 0,
      secs > 0 ? 100.0 * t.busy_ns * 1e-9 / secs / t.eval_leaves.size() : 0, U(t.restarts()), U(t.hangs()),
      config_.host_id.c_str(), t.model_min, t.model_max));
  if (t.sampled_games > 0) lines.push_back("zerofarm run: " + DistinctText(t));
  if (t.hangs() > 0)
    lines.push_back(Format(
        "zerofarm run: %llu hung children killed and restarted (no heartbeat for --hang-timeout %g s): "
        "%llu workers, %llu evaluators, %llu writers",
        U(t.hangs()), config_.hang_timeout, U(t.hangs_worker), U(t.hangs_evaluator), U(t.hangs_writer)));
  if (t.nonfinite_leaves > 0)
    lines.push_back(Format(
        "zerofarm run: the network answered %llu leaves with NaN or Inf; %llu games were dropped for it%s",
        U(t.nonfinite_leaves), U(t.dropped_nonfinite),
        t.models_nonfinite > 0 ? "; the model in use still does (exit code 1): replace it" : ""));
  if (!start_note_.empty()) lines.push_back("zerofarm run: " + start_note_);
  if (config_.search.playout_cap_fraction > 0.0f || config_.search.ResignEnabled())
    lines.push_back(Format(
        "zerofarm run: search: %llu of %llu positions full searches; %llu games resigned; false resignations "
        "%llu of %llu checked (%.1f%%); resign threshold %.3f",
        U(t.full_positions), U(t.positions), U(t.games_resigned), U(t.false_resignations), U(t.resign_checks),
        t.resign_checks ? 100.0 * t.false_resignations / t.resign_checks : 0.0, t.resign_threshold));
  if (config_.eval_cache > 0)
    lines.push_back(Format(
        "zerofarm run: eval cache: %llu of %llu leaves answered (hit rate %.1f%%), %.2f leaf evals per "
        "position",
        U(t.cache_hits), U(t.cache_lookups), t.cache_lookups ? 100.0 * t.cache_hits / t.cache_lookups : 0.0,
        t.positions ? static_cast<double>(t.leaves) / t.positions : 0.0));
  if (t.set_aside > 0)
    lines.push_back(Format(
        "zerofarm run: %llu finished games broke the game's contract and were set aside in %s/ (see the "
        "errors above; the game plugin needs fixing: zerofarm check-game)",
        U(t.set_aside), RunDirOf(config_).RejectedDir().c_str()));
  if (t.games > t.games_written + t.set_aside)
    lines.push_back(Format("zerofarm run: %llu finished games were NOT written (see the errors above)",
                           U(t.games - t.games_written - t.set_aside)));
  return lines;
}

void StatusReporter::PrintSummary(const std::string& stop_reason) {
  const FarmSnapshot t = ReadSnapshot(map_);
  if (terminal_) terminal_->Finish();  // the status line stays above the summary
  WarnOfRepeats(t);                    // the last shard may be the first to count
  const std::vector<std::string> lines = SummaryLines(t, stop_reason);
  std::string text, json_lines;
  for (const auto& line : lines) {
    text += line + "\n";
    json_lines += (json_lines.empty() ? "" : ", ") + JsonString(line);
  }
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  // The same in the host directory, so a lost terminal or a broken pipe loses nothing.
  const double occupancy = occupancy_samples_ ? occupancy_sum_ / occupancy_samples_ : 0;
  const std::string json = "{\"stop_reason\": " + JsonString(stop_reason) + ", " +
                           SummaryJsonFigures(t, first_, t.t - first_.t, occupancy, config_) +
                           ", \"lines\": [" + json_lines + "]}\n";
  try {
    io::WriteTextFileAtomically(RunDirOf(config_).SummaryText(), text);
    io::WriteTextFileAtomically(RunDirOf(config_).SummaryJson(), json);
  } catch (const std::exception& e) {
    ZF_LOG(WARN) << "the summary was not written into the run directory: " << e.what();
  }
}

}  // namespace zerofarm::proc
