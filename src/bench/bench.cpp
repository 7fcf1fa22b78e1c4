// zerofarm bench: how close the farm comes to its limit, in one run, on one net.
//   (a) bound    the evaluator alone (this process; LibTorch CPU, or CUDA with
//                --gpus N) at batch 1..1024, its leaves in pinned memory
//   (b) farm     a real farm (`zerofarm run` as a child) with P workers: leaf
//                evals/s, and efficiency = (b) / (a) at the farm's mean batch;
//                with (a''): efficiency vs the smaller bound = farm leaves/s /
//                min((a''), (a) at the farm's mean batch / (1 - cache hit rate));
//                the adaptive wait beside fixed --max-wait-us settings; and
//                positions/s against the number of workers (1, 2, 4, .. cores)
//   (a'') search the search alone: the same farm (workers, evaluators, cores)
//                with `run --random-evaluator`, which answers at once without
//                a network: the leaves/s (cache hits counted) the workers can
//                make (issue 77); beside it the random evaluator's own cost
//   sweep        the evaluator alone at --sweep-batches (up to 8192) in fp32,
//                TF32, bf16 and fp16, eager and as CUDA graphs (GPU); on the
//                CPU fp32, and bf16 where the CPU has it; the rest says skipped
//   (a') machine the machine bound: E evaluator processes x T threads, the
//                farm's own E x T, each running the net alone at the best
//                batch of (a), all at once (exec'd `bench --parts bound`);
//                machine efficiency = farm leaf evals/s / that (issue #23)
//   (c) handoff  the cross-process leaf hand-off per leaf at batch 1..256:
//                the leaf ring against a pipe and a boost spsc_queue
//   (d) writer   the shard writer's positions/s per compression setting
//   (e) waits    the futex's wake-up and timeout, the spin's overshoot
//                (bench/wait_bench.h; not in the default parts)
// Each run does every part once, the parts interleaved; --runs N repeats it.
// Every result is one JSON line on stdout (starting with '{'); a table of
// min / median / max over the runs and the targets follow.
#include "zerofarm/bench/bench.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "zerofarm/bench/bench_util.h"
#include "zerofarm/bench/handoff_bench.h"
#include "zerofarm/bench/wait_bench.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/options.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::bench {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// Seconds since the epoch (the one clock a set of exec'd children shares with this process).
double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Results, keyed by a row label, one sample per run.
class Table {
 public:
  void Add(const std::string& section, const std::string& row, const std::string& column, double v) {
    auto& s = sections_[section];
    if (std::find(s.order.begin(), s.order.end(), row) == s.order.end()) s.order.push_back(row);
    if (std::find(s.columns.begin(), s.columns.end(), column) == s.columns.end()) s.columns.push_back(column);
    s.cells[row][column].push_back(v);
  }
  Stats Get(const std::string& section, const std::string& row, const std::string& column) const {
    auto s = sections_.find(section);
    if (s == sections_.end()) return {};
    auto r = s->second.cells.find(row);
    if (r == s->second.cells.end()) return {};
    auto c = r->second.find(column);
    return c == r->second.end() ? Stats{} : Summarize(c->second);
  }
  void Print(std::ostream& os) const {
    for (const auto& name : section_order_) {
      auto it = sections_.find(name);
      if (it == sections_.end()) continue;
      const Section& s = it->second;
      os << "\n" << name << " (min / median / max over runs)\n";
      os << "  " << std::left << std::setw(34) << "setting";
      for (const auto& c : s.columns) os << std::setw(32) << c;
      os << "\n";
      for (const auto& row : s.order) {
        os << "  " << std::setw(34) << row;
        for (const auto& c : s.columns) {
          auto cell = s.cells.at(row).find(c);
          const Stats st = cell == s.cells.at(row).end() ? Stats{} : Summarize(cell->second);
          const int digits = c.find("efficiency") != std::string::npos || c.find("batch") != std::string::npos
                                 ? 2
                             : st.max < 100 ? 1
                                            : 0;
          os << std::setw(30) << FormatStats(st, digits) << "  ";
        }
        os << "\n";
      }
    }
  }
  void Order(std::vector<std::string> order) { section_order_ = std::move(order); }
  // A part that failed: printed at once as "zerofarm bench: LINE" and counted,
  // so the bench exits non-zero (RunBench).
  void Failed(const std::string& line) {
    std::cerr << "zerofarm bench: " << line << "\n";
    ++failed_;
  }
  int failed() const { return failed_; }

 private:
  int failed_ = 0;
  struct Section {
    std::vector<std::string> order, columns;
    std::map<std::string, std::map<std::string, std::vector<double>>> cells;
  };
  std::map<std::string, Section> sections_;
  std::vector<std::string> section_order_;
};

// The table's sections (the farm's own, named after its layout, is made by Bench).
const char* const kBoundSection = "(a) evaluator alone, leaf evals/s";
const char* const kMachineSection = "(a') machine bound, leaf evals/s";
const char* const kSearchSection = "(a'') search alone (random evaluator, no network), leaves/s";
const char* const kSweepSection = "evaluator alone by precision, leaf evals/s";
const char* const kWaitSection = "adaptive wait against fixed --max-wait-us";
const char* const kScalingSection = "scaling with the number of workers";
const char* const kHandoffSection = "(c) hand-off, ns per leaf (there and back)";
const char* const kWriterSection = "(d) writer";
const char* const kWaitTimesSection = "(e) waits, microseconds (median of 25 tries)";

void Emit(const JsonLine& line) { std::cout << line.str() << "\n" << std::flush; }

// ---- (a) the evaluator alone ------------------------------------------------

// The bound's leaves live in page-aligned memory that the evaluator registers
// once, as a farm's evaluator does its segment (pinned on a GPU, so the
// copies are DMAs as in the farm). Declared before the evaluator, so it is
// unmapped after the evaluator has unregistered it.
struct BoundMemory {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  BoundMemory() = default;
  BoundMemory(const BoundMemory&) = delete;
  BoundMemory& operator=(const BoundMemory&) = delete;
  ~BoundMemory() {
    if (base) munmap(base, bytes);
  }
};

// Calls of `net` on chunks[k % chunks.size()], one per batch in flight
// (eval::Evaluator::Depth), for at least `seconds` and 3 calls, each
// finished; the calls made.
int TimeCalls(eval::Evaluator& net, const std::vector<eval::LeafChunk>& chunks, double seconds,
              double* secs) {
  std::deque<uint64_t> in_flight;
  int calls = 0;
  const auto t0 = Clock::now();
  while (calls < 3 || Since(t0) < seconds) {
    if (in_flight.size() == chunks.size()) {
      net.Finish(in_flight.front());
      in_flight.pop_front();
    }
    in_flight.push_back(net.Start(&chunks[static_cast<size_t>(calls) % chunks.size()], 1));
    ++calls;
  }
  for (; !in_flight.empty(); in_flight.pop_front()) net.Finish(in_flight.front());
  *secs = Since(t0);
  return calls;
}

// `net` alone at each of `batches`: evals/s by batch, a table row per batch
// (under `section`, column `column`) and a JSON line each ("bench": `kind`).
// With depth d (TorchOptions::depth) d batches of leaves of their own are in flight.
std::map<int, double> MeasureBound(const BenchOptions& o, eval::Evaluator& net, BoundMemory& memory, int run,
                                   Table& table, const std::string& precision,
                                   const std::vector<int>& batches, const char* kind = "bound",
                                   const std::string& section = kBoundSection,
                                   const std::string& column = "evals/s") {
  const eval::NetConfig& c = net.Config();
  const size_t feature_bytes = static_cast<size_t>(c.planes) * c.height * c.width;
  const size_t max_batch = static_cast<size_t>(*std::max_element(batches.begin(), batches.end()));
  const size_t outputs_at = (max_batch * feature_bytes + 63) / 64 * 64;
  const size_t lane_bytes = (outputs_at + max_batch * (c.actions + 1) * sizeof(float) + 63) / 64 * 64;
  const size_t depth = static_cast<size_t>(net.Depth());
  if (!memory.base) {
    const size_t page = 4096;
    memory.bytes = (depth * lane_bytes + page - 1) / page * page;
    void* p = mmap(nullptr, memory.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw Error(ErrnoMessage("mmap of the bound's leaves", errno));
    memory.base = static_cast<uint8_t*>(p);
    net.RegisterHostMemory(memory.base, memory.bytes);
  }
  ZF_CHECK(memory.bytes >= depth * lane_bytes) << "the bound's memory was sized for another net";
  std::map<int, double> bound;
  std::mt19937 rng(7);
  for (int b : batches) {
    std::vector<eval::LeafChunk> chunks;
    for (size_t lane = 0; lane < depth; ++lane) {
      uint8_t* features = memory.base + lane * lane_bytes;
      float* policy = reinterpret_cast<float*>(features + outputs_at);
      for (size_t i = 0; i < static_cast<size_t>(b) * feature_bytes; ++i)
        features[i] = static_cast<uint8_t>(rng() % 2);
      chunks.push_back(eval::LeafChunk{features, policy, policy + max_batch * c.actions, b});
      net.Evaluate(&chunks.back(), 1);  // warm-up (allocations, oneDNN kernels)
    }
    // A machine-bound child: every child starts measuring at one instant.
    while (o.start_at > 0 && WallSeconds() < o.start_at)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    double secs = 0;
    const int calls = TimeCalls(net, chunks, o.bound_seconds, &secs);
    const double rate = b * calls / secs;
    bound[b] = rate;
    table.Add(section, "batch " + std::to_string(b), column, rate);
    Emit(JsonLine()
             .Add("bench", kind)
             .Add("run", run)
             .Add("precision", precision)
             .Add("batch", b)
             .Add("depth", static_cast<int>(depth))
             .Add("evals_per_s", rate)
             .Add("ms_per_batch", secs * 1e3 / calls));
  }
  return bound;
}

// ---- (a') the machine bound ------------------------------------------------------

// Sum of the evals/s of E children `bench --parts bound` at `batch` with T
// intra-op threads each, measuring together for machine_seconds; NaN on failure.
double MeasureMachineBound(const BenchOptions& o, int batch, int run, Table& table) {
  const proc::FarmConfig& f = o.farm;
  const int evaluators = f.Evaluators(), threads = f.eval_threads;
  // LibTorch's start takes a second or two on a busy machine: start together after it.
  const double start_at = WallSeconds() + o.machine_start_s + 0.5 * evaluators;
  std::vector<std::string> argv = {proc::NetworkBinary(),
                                   "bench",
                                   "--parts",
                                   "bound",
                                   "--runs",
                                   "1",
                                   "--bound-batches",
                                   std::to_string(batch),
                                   "--game",
                                   f.game,
                                   "--precision",
                                   f.precision,
                                   "--eval-threads",
                                   std::to_string(threads),
                                   "--seed",
                                   std::to_string(f.seed),
                                   "--bound-seconds",
                                   std::to_string(o.machine_seconds),
                                   "--start-at",
                                   std::to_string(start_at),
                                   "--gpus",
                                   "0"};
  // The net measured: the model file (which brings its own shape), or a random net of the farm's shape.
  if (!f.weights.empty())
    argv.insert(argv.end(), {"--weights", f.weights});
  else
    argv.insert(argv.end(), {"--blocks", std::to_string(f.blocks), "--filters", std::to_string(f.filters)});
  std::vector<std::string> dirs;
  std::vector<std::thread> threads_of;
  std::vector<std::string> outs(static_cast<size_t>(evaluators)), errors(static_cast<size_t>(evaluators));
  for (int e = 0; e < evaluators; ++e) {
    dirs.push_back(MakeTempDir("bench-machine"));
    threads_of.emplace_back([&, e]() {
      outs[e] = RunCapture(argv, dirs[e], o.machine_seconds + 120 + start_at - WallSeconds(), &errors[e]);
    });
  }
  for (auto& t : threads_of) t.join();
  double sum = 0;
  for (int e = 0; e < evaluators; ++e) {
    io::RemoveTree(dirs[e]);
    double rate = std::nan("");
    std::istringstream in(outs[e]);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("{\"bench\":\"bound\"", 0) == 0)
        rate = nlohmann::json::parse(line).value("evals_per_s", std::nan(""));
    if (!std::isfinite(rate)) {
      table.Failed("machine bound child " + std::to_string(e) + " failed: " + errors[e]);
      return std::nan("");
    }
    sum += rate;
  }
  const std::string label = std::to_string(evaluators) + " x " + std::to_string(threads) +
                            " thread(s), batch " + std::to_string(batch);
  table.Add(kMachineSection, label, "evals/s", sum);
  Emit(JsonLine()
           .Add("bench", "machine_bound")
           .Add("run", run)
           .Add("evaluators", evaluators)
           .Add("eval_threads", threads)
           .Add("batch", batch)
           .Add("evals_per_s", sum));
  return sum;
}

// ---- (b) the farm -----------------------------------------------------------

// `zerofarm run` options for every setting of f that run takes (the option
// table), so the farm measured plays what the user asked for; ProbeFarm adds
// the output, host id and duration, MeasureFarm the wait.
std::vector<std::string> FarmArgs(const proc::FarmConfig& f) {
  std::vector<std::string> args;
  for (const auto& o : proc::OptionTable()) {
    if (!(o.commands & proc::kRun) || o.name.empty()) continue;
    if (!f.weights.empty() && proc::ShapesRandomNet(o.name)) continue;  // refused beside a model file
    if (o.name == "out" || o.name == "host-id" || o.name == "duration" || o.name == "games" ||
        o.name == "no-status" || o.name == "fixed-wait" || o.name == "max-wait-us")
      continue;
    // A model file brings its own shape: `run` refuses the shape options beside it.
    if (!f.weights.empty() &&
        (o.name == "blocks" || o.name == "filters" || o.name == "score-head" || o.name == "value-channels"))
      continue;
    const std::string v = o.get(f);
    if (o.kind == proc::OptionKind::kFlag) {
      if (v == o.flag_value) args.push_back("--" + o.name);
    } else if (!v.empty()) {
      args.push_back("--" + o.name);
      args.push_back(v);
    }
  }
  return args;
}

struct FarmSetting {
  std::string label;
  int workers;
  int fixed_wait_us;  // -1: adaptive
};

// ---- (a'') the search alone, and the evaluator alone by precision (issue 77) ----

// The random evaluator's own cost, in this process at batch 256: leaves/s it
// answers alone, to show it is no bound on (a'').
double MeasureRandomEvaluatorCost(const BenchOptions& o, int run, Table& table) {
  const auto net =
      eval::MakeRandomEvaluator(proc::NetConfigFor(*game::MakeGame(o.farm.game), o.farm), o.farm.seed);
  BoundMemory memory;
  const std::map<int, double> rate =
      MeasureBound(o, *net, memory, run, table, "none", {256}, "random_evaluator", kSearchSection,
                   "random evaluator alone, leaves/s");
  return rate.at(256);
}

// The farm of `o` (its workers, evaluators, layout and cores) with
// `run --random-evaluator`: the leaves/s its search makes when every leaf is
// answered at once, cache hits counted (FarmProbe::LeavesPerS). NaN when the
// farm failed.
double MeasureSearchBound(const BenchOptions& o, int run, Table& table) {
  proc::FarmConfig f = o.farm;
  f.random_evaluator = true;
  f.weights.clear();  // no network: a model file would only be loaded and probed for nothing
  const FarmProbe p = ProbeFarm(FarmArgs(f), o.farm_seconds, MakeTempDir("bench-search"));
  if (!p.ok) {
    table.Failed("the search alone failed: " + p.error);
    Emit(JsonLine().Add("bench", "search_bound").Add("run", run).Add("error", p.error));
    return std::nan("");
  }
  const std::string row = std::to_string(f.workers) + " workers";
  table.Add(kSearchSection, row, "leaves/s", p.LeavesPerS());
  table.Add(kSearchSection, row, "positions/s", p.positions_per_s);
  table.Add(kSearchSection, row, "cache hit rate", p.cache_hit_rate);
  const double random_cost = MeasureRandomEvaluatorCost(o, run, table);
  Emit(JsonLine()
           .Add("bench", "search_bound")
           .Add("run", run)
           .Add("workers", f.workers)
           .Add("games_per_worker", f.games_per_worker)
           .Add("evaluators", f.Evaluators())
           .Add("seconds", p.seconds)
           .Add("leaves_per_s", p.LeavesPerS())
           .Add("evals_per_s", p.evals_per_s)
           .Add("cache_hit_rate", p.cache_hit_rate)
           .Add("positions_per_s", p.positions_per_s)
           .Add("mean_batch", p.mean_batch)
           .Add("random_evaluator_alone_leaves_per_s", random_cost));
  return p.LeavesPerS();
}

struct SweepVariant {
  std::string name;  // "fp32", "tf32", "bf16" or "fp16", then " eager" or " graphs"
  bool bf16, fp16, graphs;
  int tf32;  // eval::TorchOptions::tf32
};

// Why `v` does not run here ("" when it does): TF32, fp16 and graphs need a
// GPU; bf16 on the CPU needs a CPU with it (eval::CpuHasBf16).
std::string SweepSkip(const SweepVariant& v, bool on_gpu) {
  if (on_gpu) return "";
  if (v.fp16 || v.graphs || v.tf32 == 1) return "needs a GPU (--gpus 1)";
  if (v.bf16 && !eval::CpuHasBf16()) return "this CPU has no bf16 (AVX512-BF16 or AMX)";
  return "";
}

// The evaluator alone (the model of --weights, or a net of the farm's shape
// with random weights) at every --sweep-batches size, in each precision,
// eager and as CUDA graphs: what run or skipped says so, one line each (in
// the first run only).
void MeasureSweep(const BenchOptions& o, bool on_gpu, int run, Table& table) {
  const std::vector<SweepVariant> variants = {
      {"fp32 eager", false, false, false, 0}, {"fp32 graphs", false, false, true, 0},
      {"tf32 eager", false, false, false, 1}, {"tf32 graphs", false, false, true, 1},
      {"bf16 eager", true, false, false, -1}, {"bf16 graphs", true, false, true, -1},
      {"fp16 eager", false, true, false, -1}, {"fp16 graphs", false, true, true, -1}};
  const auto game = game::MakeGame(o.farm.game);
  const eval::NetConfig net = proc::NetConfigFor(*game, o.farm);
  for (const SweepVariant& v : variants) {
    const std::string skip = SweepSkip(v, on_gpu);
    if (!skip.empty()) {
      if (run == 1) {
        std::cout << "zerofarm bench: sweep " << v.name << " skipped: " << skip << "\n";
        Emit(JsonLine().Add("bench", "sweep").Add("variant", v.name).Add("skipped", skip));
      }
      continue;
    }
    eval::TorchOptions t;
    t.cuda = on_gpu;
    t.intra_op_threads = o.farm.eval_threads;
    t.bf16 = v.bf16, t.fp16 = v.fp16, t.cuda_graph = v.graphs, t.tf32 = v.tf32;
    t.depth = o.farm.eval_depth;  // batches in flight: the sweep at --eval-depth 1 against 2
    BoundMemory memory;           // declared first: outlives the evaluator that pins it
    const auto evaluator =
        eval::MakeTorchEvaluator(o.farm.weights.empty() ? eval::RandomWeights(net, o.farm.seed)
                                                        : proc::LoadWeightsFor(*game, o.farm.weights),
                                 t);
    MeasureBound(o, *evaluator, memory, run, table, v.name, o.sweep_batches, "sweep", kSweepSection, v.name);
  }
}

// One JSON line of a farm run.
void EmitFarm(const proc::FarmConfig& f, const FarmSetting& s, const FarmProbe& p, int run,
              double machine_bound, double b, double search, const TwoBounds& two,
              const std::map<int, double>& bound) {
  Emit(
      JsonLine()
          .Add("bench", "farm")
          .Add("run", run)
          .Add("setting", s.label)
          .Add("workers", s.workers)
          .Add("games_per_worker", f.games_per_worker)
          .Add("cpu_evaluators", f.gpus == 0 ? f.cpu_evaluators : 0)
          .Add("eval_threads", f.eval_threads)
          .Add("wait", s.fixed_wait_us < 0 ? "adaptive" : "fixed")
          .Add("max_wait_us", s.fixed_wait_us < 0 ? f.max_wait_us : s.fixed_wait_us)
          .Add("seconds", p.seconds)
          .Add("evals_per_s", p.evals_per_s)
          .Add("cache_hit_rate", p.cache_hit_rate)
          .Add("leaves_per_s", p.LeavesPerS())
          .Add("positions_per_s", p.positions_per_s)
          .Add("positions_per_s_whole_run", p.positions_per_s_whole_run)
          .Add("positions_per_s_after_warmup", p.positions_per_s_after_warmup)
          .Add("warmup_s", p.warmup_s)
          .Add("machine_bound_evals_per_s", machine_bound)
          .Add("machine_efficiency", machine_bound > 0 ? p.evals_per_s / machine_bound : std::nan(""))
          .Add("mean_batch", p.mean_batch)
          .Add("bound_evals_per_s", b)
          .Add("efficiency", b > 0 ? p.evals_per_s / b : std::nan(""))
          .Add("search_bound_leaves_per_s", search)
          .Add("evaluator_bound_leaves_per_s", two.evaluator_leaves)
          .Add("smaller_bound_leaves_per_s", two.smaller)
          .Add("binding_bound", two.binding)
          .Add("efficiency_vs_smaller_bound", two.efficiency)
          .Add("evaluator_busy", p.evaluator_busy)
          .Add("latency_p50_us", p.latency_p50_us)
          .Add("latency_p99_us", p.latency_p99_us)
          .Add("peak_bound_evals_per_s", PeakBound(bound))
          .Add("efficiency_vs_peak", PeakBound(bound) > 0 ? p.evals_per_s / PeakBound(bound) : std::nan("")));
}

// Runs the farm of setting `s` (or reuses `reuse`, a run of the same
// setting in this round) and records it under `section`. `search`: the
// search alone's leaves/s at o.farm.workers (NaN when not measured); the
// efficiency against the smaller bound is computed at that many workers only.
FarmProbe MeasureFarm(const BenchOptions& o, const FarmSetting& s, const std::map<int, double>& bound,
                      int run, Table& table, const std::string& section, double machine_bound, double search,
                      const FarmProbe* reuse = nullptr) {
  proc::FarmConfig f = o.farm;
  f.workers = s.workers;
  if (f.gpus == 0) f.cpu_evaluators = std::min(f.cpu_evaluators, s.workers);  // scaling: fewer workers than E
  std::vector<std::string> args = FarmArgs(f);
  if (s.fixed_wait_us >= 0) {
    args.push_back("--fixed-wait");
    args.push_back("--max-wait-us");
    args.push_back(std::to_string(s.fixed_wait_us));
  }
  const FarmProbe p = reuse ? *reuse : ProbeFarm(args, o.farm_seconds, MakeTempDir("bench-farm"));
  if (!p.ok) {
    table.Failed("farm " + s.label + " failed: " + p.error);
    Emit(JsonLine().Add("bench", "farm").Add("run", run).Add("setting", s.label).Add("error", p.error));
    return p;
  }
  const double b = BoundAt(bound, p.mean_batch);
  const TwoBounds two = AgainstTwoBounds(p, b, s.workers == o.farm.workers ? search : std::nan(""));
  table.Add(section, s.label, "leaf evals/s", p.evals_per_s);
  table.Add(section, s.label, "positions/s", p.positions_per_s);
  table.Add(section, s.label, "positions/s after warm-up", p.positions_per_s_after_warmup);
  if (machine_bound > 0 && f.cpu_evaluators == o.farm.cpu_evaluators)
    table.Add(section, s.label, "machine efficiency", p.evals_per_s / machine_bound);
  table.Add(section, s.label, "mean batch", p.mean_batch);
  if (!bound.empty()) table.Add(section, s.label, "efficiency", b > 0 ? p.evals_per_s / b : std::nan(""));
  if (std::isfinite(two.efficiency)) {
    table.Add(section, s.label, "cache hit rate", p.cache_hit_rate);
    table.Add(section, s.label, "efficiency vs smaller bound", two.efficiency);
    // 1: the search alone is the smaller bound (the workers bind), 0: the evaluator.
    table.Add(section, s.label, "search binds", two.binding == "search" ? 1.0 : 0.0);
  }
  table.Add(section, s.label, "latency p50 us", p.latency_p50_us);
  EmitFarm(f, s, p, run, machine_bound, b, search, two, bound);
  return p;
}

// ---- (c) hand-off -------------------------------------------------------------

// Columns: the leaf ring as the farm runs it (spin, then futex), the ring with
// no spin (futex only), each --handoff-spins-us budget, a pipe, the spsc_queue.
void MeasureHandoffs(const BenchOptions& o, int run, Table& table) {
  using T = HandoffTransport;
  std::vector<std::pair<std::string, uint64_t>> rings = {{"leaf_ring", shm::DefaultSpinBudgetNs()},
                                                         {"leaf_ring_futex", 0}};
  for (int us : o.handoff_spins_us)
    rings.push_back({"leaf_ring_spin_" + std::to_string(us) + "us", us * 1000ULL});
  auto add = [&](int b, T t, const std::string& name, uint64_t spin_ns) {
    const HandoffResult r = MeasureHandoff(t, static_cast<uint32_t>(b), o.handoff_seconds, spin_ns);
    table.Add(kHandoffSection, "batch " + std::to_string(b), name, r.NsPerLeaf());
    JsonLine j;
    j.Add("bench", "handoff")
        .Add("run", run)
        .Add("transport", name)
        .Add("batch", b)
        .Add("leaves", r.leaves)
        .Add("ns_per_leaf", r.NsPerLeaf());
    if (t == T::kLeafRing)
      j.Add("spin_ns", spin_ns).Add("spins_won", r.spins_won).Add("spins_lost", r.spins_lost);
    Emit(j);
  };
  for (int b : o.handoff_batches) {
    for (const auto& [name, spin_ns] : rings) add(b, T::kLeafRing, name, spin_ns);
    add(b, T::kPipe, TransportName(T::kPipe), 0);
    add(b, T::kBoostSpsc, TransportName(T::kBoostSpsc), 0);
  }
}

// ---- (e) waits -------------------------------------------------------------------

void MeasureWaitTimes(int run, Table& table) {
  for (const WaitTime& w : MeasureWaits()) {
    table.Add(kWaitTimesSection, w.name, "median", w.median_us);
    Emit(JsonLine()
             .Add("bench", "waits")
             .Add("run", run)
             .Add("wait", w.name)
             .Add("median_us", w.median_us)
             .Add("max_us", w.max_us)
             .Add("rounds", w.rounds));
  }
}

// ---- (d) the writer ------------------------------------------------------------

void MeasureWriter(const BenchOptions& o, int run, Table& table) {
  const auto game = game::MakeGame(o.farm.game);
  const io::ShardMeta meta = io::ShardMetaForGame(*game);
  const int fb = meta.FeatureBytes();
  // Games of 30 positions of random planes (HDF5 compresses real games better).
  std::mt19937_64 rng(6);
  std::vector<mcts::GameRecord> games(64);
  for (size_t g = 0; g < games.size(); ++g) {
    auto& r = games[g];
    r.game_id = g;
    for (int i = 0; i < 30; ++i) {
      r.moves.push_back(static_cast<int16_t>(rng() % meta.actions));
      for (int b = 0; b < fb; ++b) r.features.push_back(static_cast<uint8_t>(rng() % 2));
      for (int a = 0; a < meta.actions; ++a) r.policy.push_back(1.0f / meta.actions);
      r.z.push_back(static_cast<float>(static_cast<int>(rng() % 3) - 1));
      r.root_value.push_back(static_cast<float>(rng() % 2001) / 1000.0f - 1.0f);
      r.ply.push_back(static_cast<int16_t>(i));
      r.model_version.push_back(1);
    }
  }
  struct Setting {
    int level;
    int threads;
  };
  std::vector<Setting> settings;
  for (int level : o.deflate_levels) settings.push_back({level, io::Compression{}.threads});
  settings.push_back({io::Compression{}.deflate_level, 1});
  for (const Setting& s : settings) {
    const std::string dir = MakeTempDir("bench-writer");
    io::Compression c;
    c.deflate_level = s.level;
    c.threads = s.threads;
    io::ShardWriter writer(dir, "bench", meta, c);
    const uint64_t per_shard = 100'000;
    // deflate 6 and above run at tens of thousands of positions/s: fewer of them.
    const uint64_t target =
        s.level >= 6 ? std::max<uint64_t>(o.writer_positions / 10, 1000) : o.writer_positions;
    uint64_t positions = 0, bytes = 0, shard = 0;
    const auto t0 = Clock::now();
    while (positions < target) {
      for (size_t g = 0;
           writer.PendingPositions() < per_shard && positions + writer.PendingPositions() < target; ++g)
        writer.Add(games[g % games.size()]);
      positions += writer.PendingPositions();
      const std::string path = writer.Flush(shard++, {});
      bytes += std::filesystem::file_size(path);
    }
    const double secs = Since(t0);
    io::RemoveTree(dir);
    const std::string label =
        "deflate " + std::to_string(s.level) + ", " + std::to_string(s.threads) + " thread" +
        (s.threads > 1 ? "s" : "") +
        (s.level == io::Compression{}.deflate_level && s.threads == io::Compression{}.threads ? " (default)"
                                                                                              : "");
    table.Add(kWriterSection, label, "positions/s", positions / secs);
    table.Add(kWriterSection, label, "bytes/position", static_cast<double>(bytes) / positions);
    Emit(JsonLine()
             .Add("bench", "writer")
             .Add("run", run)
             .Add("deflate", s.level)
             .Add("threads", s.threads)
             .Add("positions", positions)
             .Add("positions_per_s", positions / secs)
             .Add("bytes_per_position", static_cast<double>(bytes) / positions));
  }
}

void Target(const std::string& name, double value, double target, bool at_least, const std::string& detail) {
  const bool met = std::isfinite(value) && (at_least ? value >= target : value <= target);
  std::cout << "target " << name << ": " << (at_least ? ">= " : "<= ") << target << ", median " << value
            << " " << detail << ": " << (met ? "met" : "MISSED") << "\n";
  Emit(JsonLine()
           .Add("bench", "target")
           .Add("name", name)
           .Add("value", value)
           .Add("target", target)
           .Add("at_least", at_least)
           .Add("met", met));
}

// ---- the whole bench ------------------------------------------------------------

// One bench: its options, the net of the bound (made at the first round) and
// the table every round adds to.
class Bench {
 public:
  explicit Bench(const BenchOptions& o)
      : o_(o), on_gpu_(o.farm.gpus > 0), precision_(ResolvedPrecision(o.farm, on_gpu_)) {
    if (o_.Has("bound") || o_.Has("farm") || o_.Has("wait") || o_.Has("scaling") || o_.Has("sweep")) {
      if (!eval::TorchAvailable())
        throw ConfigError("zerofarm bench needs LibTorch for the bound and the farm");
    }
    farm_section_ = "(b) farm, " + std::to_string(o_.farm.workers) + " workers x " +
                    std::to_string(o_.farm.games_per_worker) + " games, " +
                    std::to_string(o_.farm.Evaluators()) + " evaluator(s) x " +
                    std::to_string(o_.farm.eval_threads) + " thread(s)";
    table_.Order({kBoundSection, kMachineSection, kSearchSection, kSweepSection, farm_section_, kWaitSection,
                  kScalingSection, kHandoffSection, kWriterSection, kWaitTimesSection});
  }

  void EmitMachine() const {
    Emit(JsonLine()
             .Add("bench", "machine")
             .Add("cpu", CpuModel())
             .Add("cores", proc::CpusGranted())
             .Add("loadavg", LoadAverage())
             .Add("cpu_bf16", eval::CpuHasBf16())
             .Add("precision", precision_)
             .Add("gpus", o_.farm.gpus)
             .Add("game", o_.farm.game)
             .Add("weights", o_.farm.weights)
             .Add("blocks", o_.farm.blocks)
             .Add("filters", o_.farm.filters)
             .Add("simulations", o_.farm.search.simulations)
             .Add("runs", o_.runs));
  }

  // Every part once.
  void Round(int run) {
    // Forks and shm first, LibTorch in this process last: the children of
    // the hand-off bench then fork from a process without LibTorch threads.
    if (o_.Has("handoff")) MeasureHandoffs(o_, run, table_);
    if (o_.Has("writer")) MeasureWriter(o_, run, table_);
    if (o_.Has("waits")) MeasureWaitTimes(run, table_);
    std::map<int, double> bound;
    if (o_.Has("bound")) {
      if (!net_) net_ = proc::MakeEvaluatorFor(*game::MakeGame(o_.farm.game), o_.farm, on_gpu_);
      bound = MeasureBound(o_, *net_, bound_memory_, run, table_, precision_, o_.bound_batches);
    }
    double machine = std::nan("");
    if (o_.Has("machine") && !on_gpu_ && !bound.empty())
      machine = MeasureMachineBound(o_, BestBatch(bound), run, table_);
    const double search = o_.Has("search") ? MeasureSearchBound(o_, run, table_) : std::nan("");
    if (o_.Has("sweep")) MeasureSweep(o_, on_gpu_, run, table_);
    FarmProbe main_farm;
    if (o_.Has("farm"))
      main_farm = MeasureFarm(o_, {"adaptive wait", o_.farm.workers, -1}, bound, run, table_, farm_section_,
                              machine, search);
    if (o_.Has("wait"))
      for (int w : o_.fixed_waits)
        MeasureFarm(o_, {"fixed wait " + std::to_string(w) + " us", o_.farm.workers, w}, bound, run, table_,
                    kWaitSection, machine, search);
    if (o_.Has("scaling"))
      for (int p : o_.scaling_workers)
        MeasureFarm(o_, {std::to_string(p) + " worker" + (p > 1 ? "s" : ""), p, -1}, bound, run, table_,
                    kScalingSection, machine, search,
                    p == o_.farm.workers && main_farm.ok ? &main_farm : nullptr);
  }

  void PrintTable() const {
    const std::string net = o_.farm.weights.empty() ? std::to_string(o_.farm.blocks) + " blocks x " +
                                                          std::to_string(o_.farm.filters) + " filters"
                                                    : "weights " + o_.farm.weights;
    std::cout << "\nzerofarm bench: " << o_.farm.game << ", " << net << ", " << o_.farm.search.simulations
              << " simulations, " << precision_
              << (on_gpu_ ? " on " + std::to_string(o_.farm.gpus) + " GPU evaluator(s)"
                          : std::string(" on the CPU"))
              << "; " << CpuModel() << ", " << proc::CpusGranted() << " cores, load average now "
              << LoadAverage() << "; " << o_.runs << " run(s)\n";
    table_.Print(std::cout);
    std::cout << "\n";
  }

  void PrintTargets() const;
  int failed() const { return table_.failed(); }

 private:
  // The precision `auto` resolves to, as the farm's evaluator will resolve it.
  static std::string ResolvedPrecision(const proc::FarmConfig& f, bool on_gpu) {
    const eval::TorchOptions torch = proc::TorchOptionsFor(f, on_gpu);
    return torch.bf16 ? "bf16" : torch.fp16 ? "fp16" : "fp32";
  }
  // The batch size of the highest evals/s of (a) (the smallest on a tie).
  static int BestBatch(const std::map<int, double>& bound) {
    int best = bound.begin()->first;
    for (const auto& [b, rate] : bound)
      if (rate > bound.at(best)) best = b;
    return best;
  }

  const BenchOptions& o_;
  const bool on_gpu_;
  const std::string precision_;
  std::string farm_section_;
  Table table_;
  BoundMemory bound_memory_;  // outlives `net_`, which pins it
  std::unique_ptr<eval::Evaluator> net_;
};

// The medians against the targets of docs/benchmarks.md, one line and one JSON line each.
void Bench::PrintTargets() const {
  if (o_.Has("farm") && o_.Has("bound"))
    Target("farm_efficiency", table_.Get(farm_section_, "adaptive wait", "efficiency").median, 0.90, true,
           "(farm leaf evals/s / evaluator alone at the farm's mean batch)");
  if (o_.Has("farm") && o_.Has("bound") && o_.Has("search"))
    Target("farm_efficiency_vs_smaller_bound",
           table_.Get(farm_section_, "adaptive wait", "efficiency vs smaller bound").median, 0.85, true,
           "(farm leaves/s / min(search alone, evaluator alone at the farm's mean batch / (1 - cache hit "
           "rate)))");
  if (o_.Has("farm") && o_.Has("machine") && o_.Has("bound") && !on_gpu_)
    Target("machine_efficiency", table_.Get(farm_section_, "adaptive wait", "machine efficiency").median,
           0.85, true,
           "(farm leaf evals/s / the machine bound: " + std::to_string(o_.farm.Evaluators()) +
               " evaluator(s) x " + std::to_string(o_.farm.eval_threads) +
               " thread(s) at once at the best batch)");
  if (o_.Has("handoff")) {
    double worst = std::nan("");
    for (int b : o_.handoff_batches)
      if (b >= 64) {
        const double v = table_.Get(kHandoffSection, "batch " + std::to_string(b), "leaf_ring").median;
        worst = std::isnan(worst) ? v : std::max(worst, v);
      }
    if (!std::isnan(worst))
      Target("handoff_ns_per_leaf_batch_ge_64", worst, 150, false, "(leaf ring, worst batch >= 64)");
  }
  if (o_.Has("writer")) {
    const io::Compression d;
    const std::string label = "deflate " + std::to_string(d.deflate_level) + ", " +
                              std::to_string(d.threads) + " thread" + (d.threads > 1 ? "s" : "") +
                              " (default)";
    Target("writer_positions_per_s", table_.Get(kWriterSection, label, "positions/s").median, 1e6, true,
           "(default compression)");
  }
}

}  // namespace

int RunBench(const BenchOptions& o) {
  Bench bench(o);
  bench.EmitMachine();
  for (int run = 1; run <= o.runs; ++run) bench.Round(run);
  bench.PrintTable();
  bench.PrintTargets();
  if (bench.failed() == 0) return kExitOk;
  std::cerr << "zerofarm bench: " << bench.failed() << " part(s) failed (each said why above)\n";
  return kExitFailure;
}

}  // namespace zerofarm::bench
