#include "zerofarm/bench/bench_util.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>

#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::bench {
namespace {

constexpr double kStartSeconds = 3;  // added to every farm run for the evaluator's start

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// The number just before `unit` in `line` ("12.5 leaf evals/s"), or NaN.
double NumberBefore(const std::string& line, const std::string& unit) {
  const size_t at = line.find(unit);
  if (at == std::string::npos || at < 2) return std::nan("");
  size_t start = at - 1;  // the space before the unit
  while (start > 0 && (std::isdigit(static_cast<unsigned char>(line[start - 1])) || line[start - 1] == '.'))
    --start;
  return std::atof(line.c_str() + start);
}
// The number just after `label` ("mean batch 12.5").
double NumberAfter(const std::string& line, const std::string& label) {
  const size_t at = line.find(label);
  if (at == std::string::npos) return std::nan("");
  return std::atof(line.c_str() + at + label.size());
}

// Steady-state rates from RUN/metrics.csv; false when it has too few rows.
bool SteadyRates(const std::string& csv_path, FarmProbe* p) {
  std::ifstream in(csv_path);
  std::string header;
  if (!std::getline(in, header)) return false;
  const std::vector<std::string> names = io::SplitFields(header);
  auto col = [&](const std::string& name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const int t = col("time_s"), pos = col("positions_total"), ev = col("leaf_evals_total"),
            ba = col("batches_total"), busy = col("evaluator_busy");
  const int n = static_cast<int>(names.size());
  if (t >= n || pos >= n || ev >= n || ba >= n) return false;
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (const auto& f : io::SplitFields(line)) row.push_back(std::atof(f.c_str()));
    if (static_cast<int>(row.size()) >= n) rows.push_back(std::move(row));
  }
  size_t first = 0;
  while (first < rows.size() && rows[first][static_cast<size_t>(ev)] <= 0) ++first;
  if (first + 2 > rows.size()) return false;  // need two rows with leaves
  const auto& a = rows[first];
  const auto& b = rows.back();
  const double dt = b[static_cast<size_t>(t)] - a[static_cast<size_t>(t)];
  if (dt <= 0.5) return false;
  p->seconds = dt;
  p->evals_per_s = (b[static_cast<size_t>(ev)] - a[static_cast<size_t>(ev)]) / dt;
  p->positions_per_s = (b[static_cast<size_t>(pos)] - a[static_cast<size_t>(pos)]) / dt;
  const double batches = b[static_cast<size_t>(ba)] - a[static_cast<size_t>(ba)];
  p->mean_batch = batches > 0 ? (b[static_cast<size_t>(ev)] - a[static_cast<size_t>(ev)]) / batches : 0;
  // Steady state: from the first row at or after a third of the run.
  const double total = b[static_cast<size_t>(t)];
  p->positions_per_s_whole_run = total > 0 ? b[static_cast<size_t>(pos)] / total : std::nan("");
  p->warmup_s = total / 3;
  p->positions_per_s_after_warmup = std::nan("");
  for (const auto& w : rows)
    if (w[static_cast<size_t>(t)] >= p->warmup_s) {
      const double span = total - w[static_cast<size_t>(t)];
      if (span > 0.5)
        p->positions_per_s_after_warmup = (b[static_cast<size_t>(pos)] - w[static_cast<size_t>(pos)]) / span;
      p->warmup_s = w[static_cast<size_t>(t)];
      break;
    }
  if (busy < n) {
    double sum = 0;
    for (size_t i = first + 1; i < rows.size(); ++i) sum += rows[i][static_cast<size_t>(busy)];
    p->evaluator_busy = sum / static_cast<double>(rows.size() - first - 1);
  }
  return true;
}

}  // namespace

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/zf-" + prefix + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw Error("cannot create a directory " + templ + ": " + std::strerror(errno));
  return buf.data();
}

namespace {

// Forks `name`, which runs argv[0] with its stdout and stderr in the two
// files (created in a scratch directory of the bench's own).
proc::ChildProcess ForkRedirected(const char* name, std::vector<std::string> argv,
                                  const std::string& out_path, const std::string& err_path) {
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  return proc::ChildProcess::Fork(name, [&]() {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0) return 1;
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execv(cargv[0], cargv.data());
    return 127;
  });
}

}  // namespace

std::string RunCapture(const std::vector<std::string>& args, const std::string& dir, double limit_s,
                       std::string* error) {
  const std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  proc::ChildProcess child = ForkRedirected("zf-bench-child", args, out_path, err_path);
  int status = -1;
  if (!child.WaitFor(static_cast<int>(limit_s * 1000), &status)) {
    child.Stop(5000);
    *error = "did not finish within " + std::to_string(static_cast<int>(limit_s)) + " s";
    return "";
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string err = Slurp(err_path);
    while (!err.empty() && err.back() == '\n') err.pop_back();
    const size_t nl = err.rfind('\n');
    *error = proc::DescribeWaitStatus(status) + ": " + (nl == std::string::npos ? err : err.substr(nl + 1));
    return "";
  }
  return Slurp(out_path);
}

FarmProbe ProbeFarm(const std::vector<std::string>& args, double seconds, const std::string& dir) {
  FarmProbe p;
  std::vector<std::string> argv = {proc::FarmBinary(), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  // The evaluator's start (loading LibTorch, building the net) is not part
  // of the window measured; give it a few seconds on top.
  std::ostringstream secs;
  secs << seconds + kStartSeconds;
  // A fixed host id, so the farm's metrics are at DIR/shards/bench/metrics.csv.
  for (const std::string& a : {std::string("--duration"), secs.str(), std::string("--no-status"),
                               std::string("--out"), dir, std::string("--host-id"), std::string("bench")})
    argv.push_back(a);
  const std::string out_path = dir + ".out", err_path = dir + ".err";
  proc::ChildProcess child = ForkRedirected("zf-bench-farm", argv, out_path, err_path);
  int status = -1;
  const int limit_ms = static_cast<int>((seconds + kStartSeconds + 120) * 1000);
  if (!child.WaitFor(limit_ms, &status)) {
    child.Stop(5000);
    p.error = "the farm did not stop within " + std::to_string(limit_ms / 1000) + " s";
  }
  const std::string out = Slurp(out_path);
  std::error_code ec;
  std::filesystem::remove(out_path, ec);
  if (p.error.empty() && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
    std::string err = Slurp(err_path);
    while (!err.empty() && err.back() == '\n') err.pop_back();
    const size_t nl = err.rfind('\n');
    p.error = "zerofarm run: " + proc::DescribeWaitStatus(status) + ": " +
              (nl == std::string::npos ? err : err.substr(nl + 1));
  }
  std::filesystem::remove(err_path, ec);
  const size_t at = out.find("zerofarm run: ");
  if (p.error.empty() && at == std::string::npos) p.error = "no summary line from zerofarm run";
  if (p.error.empty()) {
    p.summary = out.substr(at, out.find('\n', at) - at);
    p.latency_p50_us = NumberAfter(p.summary, "latency p50 ");
    p.latency_p99_us = NumberAfter(p.summary, " p99 ");
    const size_t hits = out.find("(hit rate ");
    if (hits != std::string::npos) p.cache_hit_rate = std::atof(out.c_str() + hits + 10) / 100.0;
    if (!SteadyRates(io::RunDir(dir, "bench").MetricsCsv(), &p)) {
      p.seconds = NumberAfter(p.summary, " after ");
      p.evals_per_s = NumberBefore(p.summary, " leaf evals/s");
      p.positions_per_s = NumberBefore(p.summary, " positions/s");
      p.positions_per_s_whole_run = p.positions_per_s;
      p.positions_per_s_after_warmup = std::nan("");  // too short a run for a warm-up window
      p.mean_batch = NumberAfter(p.summary, "mean batch ");
      p.evaluator_busy = NumberAfter(p.summary, "evaluator busy ") / 100.0;
    }
    p.ok = std::isfinite(p.evals_per_s) && std::isfinite(p.mean_batch) && p.evals_per_s > 0;
    if (!p.ok) p.error = "no leaf evaluated (too short a run?): " + p.summary;
  }
  io::RemoveTree(dir);
  return p;
}

TwoBounds AgainstTwoBounds(const FarmProbe& farm, double evaluator_evals, double search_leaves) {
  TwoBounds t;
  if (farm.cache_hit_rate < 1) t.evaluator_leaves = evaluator_evals / (1 - farm.cache_hit_rate);
  if (!(std::isfinite(t.evaluator_leaves) && std::isfinite(search_leaves))) return t;
  t.binding = search_leaves < t.evaluator_leaves ? "search" : "evaluator";
  t.smaller = std::min(search_leaves, t.evaluator_leaves);
  t.efficiency = farm.LeavesPerS() / t.smaller;
  return t;
}

JsonLine& JsonLine::Add(const std::string& key, double value) {
  if (std::isfinite(value)) return Set(key, value);
  body_[key] = nullptr;
  return *this;
}

Stats Summarize(std::vector<double> samples) {
  Stats s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.median = samples[(samples.size() - 1) / 2];
  return s;
}

std::string FormatStats(const Stats& s, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits);
  if (s.n == 0) return "-";
  if (s.n == 1) {
    os << s.median;
  } else {
    os << s.min << " / " << s.median << " / " << s.max;
  }
  return os.str();
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}

std::string LoadAverage() {
  std::string s = Slurp("/proc/loadavg");
  const auto parts = io::SplitFields(s, ' ');
  return parts.size() >= 3 ? parts[0] + " " + parts[1] + " " + parts[2] : s;
}

double BoundAt(const std::map<int, double>& bound, double batch) {
  if (bound.empty()) return std::nan("");
  if (batch <= bound.begin()->first) return bound.begin()->second;
  if (batch >= bound.rbegin()->first) return bound.rbegin()->second;
  auto hi = bound.lower_bound(static_cast<int>(std::ceil(batch)));
  auto lo = std::prev(hi);
  if (hi->first == lo->first) return hi->second;
  const double f = (std::log2(batch) - std::log2(lo->first)) / (std::log2(hi->first) - std::log2(lo->first));
  return lo->second + f * (hi->second - lo->second);
}

double PeakBound(const std::map<int, double>& bound) {
  double best = 0;
  for (const auto& [b, rate] : bound) best = std::max(best, rate);
  return best;
}

}  // namespace zerofarm::bench
