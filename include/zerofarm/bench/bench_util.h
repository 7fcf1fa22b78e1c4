#pragma once
// Shared by `zerofarm bench` and `zerofarm tune` (module bench): run a
// short real farm as a child `zerofarm run` and read its figures; JSON lines;
// min/median/max.
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace zerofarm::bench {

// What one farm run reached. Rates are over its steady part: from the first
// metrics row with evaluated leaves to the last (so the evaluator's start-up
// does not count), or over the whole run when it was too short for that.
struct FarmProbe {
  bool ok = false;
  std::string error;       // when !ok: why (the child's exit, its last stderr line)
  double seconds = 0;      // the window measured
  double evals_per_s = 0;  // leaf evaluations per second
  double positions_per_s = 0;
  // Steady state (issue #23): positions written after the warm-up window (the
  // first third of the run, the games then in flight finishing), per second
  // of the rest; NaN when the run had too few metrics rows for it. Beside it
  // the whole run's: positions written / seconds from the supervisor's start.
  double positions_per_s_after_warmup = 0;
  double warmup_s = 0;
  double positions_per_s_whole_run = 0;
  double mean_batch = 0;      // leaves per network call
  double evaluator_busy = 0;  // 0..1
  double latency_p50_us = 0;  // leaf latency (whole run, from the summary)
  double latency_p99_us = 0;
  // The share of leaves the eval cache answered (whole run, from the run's
  // "eval cache" line; 0 without a cache). Those leaves never reach the evaluator.
  double cache_hit_rate = 0;
  std::string summary;  // the run's summary line
  // Leaves the search consumed per second: the evaluator's and the cache's.
  double LeavesPerS() const { return cache_hit_rate < 1 ? evals_per_s / (1 - cache_hit_rate) : std::nan(""); }
};

// Runs `zerofarm run ARGS --duration SECONDS+3 --no-status --out DIR` (the
// supervisor's binary beside this one; the 3 s are for the evaluator's start, outside the
// window measured) and waits for it (bounded); DIR is removed after.
FarmProbe ProbeFarm(const std::vector<std::string>& args, double seconds, const std::string& dir);

// Runs `argv` (argv[0] a path) with stdout to a file, waits at most
// `limit_s`, and returns its stdout ("" when it failed; *error says why).
std::string RunCapture(const std::vector<std::string>& argv, const std::string& dir, double limit_s,
                       std::string* error);

// A fresh directory under $TMPDIR (or /tmp), "zf-PREFIX-XXXXXX".
std::string MakeTempDir(const std::string& prefix);

// One JSON object on one line, keys in insertion order (nlohmann::ordered_json):
// integers exact (64-bit ids and counts), doubles to their shortest exact
// decimal, NaN and infinities as null, strings escaped.
class JsonLine {
 public:
  JsonLine& Add(const std::string& key, const std::string& value) { return Set(key, value); }
  JsonLine& Add(const std::string& key, const char* value) { return Set(key, std::string(value)); }
  JsonLine& Add(const std::string& key, double value);
  JsonLine& Add(const std::string& key, int value) { return Set(key, value); }
  JsonLine& Add(const std::string& key, int64_t value) { return Set(key, value); }
  JsonLine& Add(const std::string& key, uint32_t value) { return Set(key, value); }
  JsonLine& Add(const std::string& key, uint64_t value) { return Set(key, value); }
  JsonLine& Add(const std::string& key, bool value) { return Set(key, value); }
  std::string str() const { return body_.dump(); }

 private:
  template <typename T>
  JsonLine& Set(const std::string& key, const T& value) {
    body_[key] = value;
    return *this;
  }
  nlohmann::ordered_json body_ = nlohmann::ordered_json::object();
};

// Farm efficiency against the smaller of the two bounds (issue 77), in
// leaves/s with the cache's answers counted: the farm's leaves/s over
// min(the search alone's leaves/s, the evaluator alone's evals/s at the
// farm's mean batch / (1 - the farm's cache hit rate): the leaves the
// evaluator's rate lets the search consume). NaN (and binding "") where a
// bound is missing or not finite.
struct TwoBounds {
  double evaluator_leaves = std::nan(""), smaller = std::nan(""), efficiency = std::nan("");
  std::string binding;  // "search" or "evaluator": the smaller bound
};
TwoBounds AgainstTwoBounds(const FarmProbe& farm, double evaluator_evals, double search_leaves);

// The evaluator's bound, leaf evals/s by batch size, at a fractional batch:
// interpolated linearly in log2(batch) between the two measured sizes around
// it, clamped to the smallest and largest measured; NaN when nothing was measured.
double BoundAt(const std::map<int, double>& bound, double batch);
// The best the evaluator alone reached at any batch size (0 when none).
double PeakBound(const std::map<int, double>& bound);

// min / median / max of samples (the median of an even count: the lower middle).
struct Stats {
  double min = 0, median = 0, max = 0;
  size_t n = 0;
};
Stats Summarize(std::vector<double> samples);
// "12.3 / 14.0 / 15.2" with `digits` decimals (one sample: just the number).
std::string FormatStats(const Stats& s, int digits);

// The machine: CPU model, cores, load average (for the record).
std::string CpuModel();
std::string LoadAverage();

}  // namespace zerofarm::bench
