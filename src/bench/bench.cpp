// zerofarm bench: how close the farm comes to its limit, in one run, on one net.
//   (a) bound    the evaluator alone (this process; LibTorch CPU, or CUDA with
//                --gpus N) at batch 1..1024, its leaves in pinned memory
//   (b) farm     a real farm (`zerofarm run` as a child) with P workers: leaf
//                evals/s, and efficiency = (b) / (a) at the farm's mean batch;
//                the adaptive wait beside fixed --max-wait-us settings; and
//                positions/s against the number of workers (1, 2, 4, .. cores)
//   (a') machine the machine bound: E evaluator processes x T threads, the
//                farm's own E x T, each running the net alone at the best
//                batch of (a), all at once (exec'd `bench --parts bound`);
//                machine efficiency = farm leaf evals/s / that (issue #23)
//   (c) handoff  the cross-process leaf hand-off per leaf at batch 1..256:
//                the leaf ring against a pipe and a boost spsc_queue
//   (d) writer   the shard writer's positions/s per compression setting
// Each run does every part once, the parts interleaved; --runs N repeats it.
// Every result is one JSON line on stdout (starting with '{'); a table of
// min / median / max over the runs and the targets follow.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include "bench_util.h"
#include "commands.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/handoff_bench.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// Seconds since the epoch (the one clock a set of exec'd children shares with this process).
double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct BenchOptions {
  proc::FarmConfig farm;   // game, net, search, workers, precision
  int runs = 3;
  double farm_seconds = 20;
  double bound_seconds = 0.5;    // per batch size
  double machine_seconds = 3;    // the machine bound's window
  double machine_start_s = 5;    // the machine bound's children load LibTorch in this time
  double start_at = 0;           // wall-clock second at which the bound starts (machine bound children)
  double handoff_seconds = 0.3;  // per transport and batch
  uint64_t writer_positions = 300'000;
  std::vector<int> bound_batches, handoff_batches, fixed_waits, deflate_levels, scaling_workers;
  std::vector<int> handoff_spins_us;  // extra leaf-ring columns, one per spin budget
  std::string parts = "bound,machine,farm,wait,scaling,handoff,writer";
  bool Has(const std::string& part) const { return ("," + parts + ",").find("," + part + ",") != std::string::npos; }
};

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
          const int digits = c.find("efficiency") != std::string::npos || c.find("batch") != std::string::npos ? 2
                             : st.max < 100 ? 1 : 0;
          os << std::setw(30) << FormatStats(st, digits) << "  ";
        }
        os << "\n";
      }
    }
  }
  void Order(std::vector<std::string> order) { section_order_ = std::move(order); }

 private:
  struct Section {
    std::vector<std::string> order, columns;
    std::map<std::string, std::map<std::string, std::vector<double>>> cells;
  };
  std::map<std::string, Section> sections_;
  std::vector<std::string> section_order_;
};

void Emit(const JsonLine& line) {
  std::cout << line.str() << "\n" << std::flush;
}

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

std::map<int, double> MeasureBound(const BenchOptions& o, eval::Evaluator& net, BoundMemory& memory, int run,
                                   Table& table, const std::string& precision) {
  const eval::NetConfig& c = net.Config();
  const size_t feature_bytes = static_cast<size_t>(c.planes) * c.height * c.width;
  const size_t max_batch = static_cast<size_t>(*std::max_element(o.bound_batches.begin(), o.bound_batches.end()));
  if (!memory.base) {
    const size_t page = 4096;
    memory.bytes = (max_batch * (feature_bytes + (c.actions + 1) * sizeof(float)) + 64 + page - 1) / page * page;
    void* p = mmap(nullptr, memory.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw Error(ErrnoMessage("mmap of the bound's leaves", errno));
    memory.base = static_cast<uint8_t*>(p);
    net.RegisterHostMemory(memory.base, memory.bytes);
  }
  uint8_t* features = memory.base;
  float* policy = reinterpret_cast<float*>(memory.base + (max_batch * feature_bytes + 63) / 64 * 64);
  float* value = policy + max_batch * c.actions;
  std::map<int, double> bound;
  std::mt19937 rng(7);
  for (int b : o.bound_batches) {
    for (size_t i = 0; i < static_cast<size_t>(b) * feature_bytes; ++i) features[i] = static_cast<uint8_t>(rng() % 2);
    const eval::LeafChunk chunk{features, policy, value, b};
    net.Evaluate(&chunk, 1);  // warm-up (allocations, oneDNN kernels)
    // A machine-bound child: every child starts measuring at one instant.
    while (o.start_at > 0 && WallSeconds() < o.start_at) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    int calls = 0;
    const auto t0 = Clock::now();
    while (calls < 3 || Since(t0) < o.bound_seconds) {
      net.Evaluate(&chunk, 1);
      ++calls;
    }
    const double secs = Since(t0);
    const double rate = b * calls / secs;
    bound[b] = rate;
    table.Add("(a) evaluator alone, leaf evals/s", "batch " + std::to_string(b), "evals/s", rate);
    Emit(JsonLine().Add("bench", "bound").Add("run", run).Add("precision", precision).Add("batch", b)
             .Add("evals_per_s", rate).Add("ms_per_batch", secs * 1e3 / calls));
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
  std::vector<std::string> argv = {proc::NetworkBinary(), "bench", "--parts", "bound", "--runs", "1",
                                   "--bound-batches", std::to_string(batch), "--game", f.game, "--blocks",
                                   std::to_string(f.blocks), "--filters", std::to_string(f.filters), "--precision",
                                   f.precision, "--eval-threads", std::to_string(threads), "--seed",
                                   std::to_string(f.seed), "--bound-seconds", std::to_string(o.machine_seconds),
                                   "--start-at", std::to_string(start_at), "--gpus", "0"};
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
      if (line.rfind("{\"bench\":\"bound\"", 0) == 0) rate = nlohmann::json::parse(line).value("evals_per_s", std::nan(""));
    if (!std::isfinite(rate)) {
      std::cerr << "zerofarm bench: machine bound child " << e << " failed: " << errors[e] << "\n";
      return std::nan("");
    }
    sum += rate;
  }
  const std::string label = std::to_string(evaluators) + " x " + std::to_string(threads) + " thread(s), batch " +
                            std::to_string(batch);
  table.Add("(a') machine bound, leaf evals/s", label, "evals/s", sum);
  Emit(JsonLine().Add("bench", "machine_bound").Add("run", run).Add("evaluators", evaluators)
           .Add("eval_threads", threads).Add("batch", batch).Add("evals_per_s", sum));
  return sum;
}

// ---- (b) the farm -----------------------------------------------------------

// `zerofarm run` options for every setting of f that run takes (the option
// table), so the farm measured plays what the user asked for; ProbeFarm adds
// the output, host id and duration, MeasureFarm the wait.
std::vector<std::string> FarmArgs(const proc::FarmConfig& f) {
  std::vector<std::string> args;
  for (const auto& o : proc::OptionTable()) {
    if (!(o.commands & proc::kRun) || o.name.empty())
      continue;
    if (o.name == "out" || o.name == "host-id" || o.name == "duration" || o.name == "games" ||
        o.name == "no-status" || o.name == "fixed-wait" || o.name == "max-wait-us")
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

// Runs the farm of setting `s` (or reuses `reuse`, a run of the same
// setting in this round) and records it under `section`.
FarmProbe MeasureFarm(const BenchOptions& o, const FarmSetting& s, const std::map<int, double>& bound, int run,
                      Table& table, const std::string& section, double machine_bound, const FarmProbe* reuse = nullptr) {
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
    std::cerr << "zerofarm bench: farm " << s.label << " failed: " << p.error << "\n";
    Emit(JsonLine().Add("bench", "farm").Add("run", run).Add("setting", s.label).Add("error", p.error));
    return p;
  }
  const double b = BoundAt(bound, p.mean_batch);
  const double eff = b > 0 ? p.evals_per_s / b : std::nan("");
  table.Add(section, s.label, "leaf evals/s", p.evals_per_s);
  table.Add(section, s.label, "positions/s", p.positions_per_s);
  table.Add(section, s.label, "positions/s after warm-up", p.positions_per_s_after_warmup);
  const double machine_eff = machine_bound > 0 ? p.evals_per_s / machine_bound : std::nan("");
  if (machine_bound > 0 && f.cpu_evaluators == o.farm.cpu_evaluators) table.Add(section, s.label, "machine efficiency", machine_eff);
  table.Add(section, s.label, "mean batch", p.mean_batch);
  if (!bound.empty()) table.Add(section, s.label, "efficiency", eff);
  table.Add(section, s.label, "latency p50 us", p.latency_p50_us);
  Emit(JsonLine().Add("bench", "farm").Add("run", run).Add("setting", s.label).Add("workers", s.workers)
           .Add("games_per_worker", f.games_per_worker).Add("cpu_evaluators", f.gpus == 0 ? f.cpu_evaluators : 0)
           .Add("eval_threads", f.eval_threads)
           .Add("wait", s.fixed_wait_us < 0 ? "adaptive" : "fixed")
           .Add("max_wait_us", s.fixed_wait_us < 0 ? f.max_wait_us : s.fixed_wait_us)
           .Add("seconds", p.seconds).Add("evals_per_s", p.evals_per_s).Add("positions_per_s", p.positions_per_s)
           .Add("positions_per_s_whole_run", p.positions_per_s_whole_run)
           .Add("positions_per_s_after_warmup", p.positions_per_s_after_warmup).Add("warmup_s", p.warmup_s)
           .Add("machine_bound_evals_per_s", machine_bound).Add("machine_efficiency", machine_eff)
           .Add("mean_batch", p.mean_batch).Add("bound_evals_per_s", b).Add("efficiency", eff)
           .Add("evaluator_busy", p.evaluator_busy).Add("latency_p50_us", p.latency_p50_us)
           .Add("latency_p99_us", p.latency_p99_us).Add("peak_bound_evals_per_s", PeakBound(bound))
           .Add("efficiency_vs_peak", PeakBound(bound) > 0 ? p.evals_per_s / PeakBound(bound) : std::nan("")));
  return p;
}

// ---- (c) hand-off -------------------------------------------------------------

// Columns: the leaf ring as the farm runs it (spin, then futex), the ring with
// no spin (futex only), each --handoff-spins-us budget, a pipe, the spsc_queue.
void MeasureHandoffs(const BenchOptions& o, int run, Table& table) {
  using T = proc::HandoffTransport;
  std::vector<std::pair<std::string, uint64_t>> rings = {{"leaf_ring", shm::DefaultSpinBudgetNs()},
                                                         {"leaf_ring_futex", 0}};
  for (int us : o.handoff_spins_us) rings.push_back({"leaf_ring_spin_" + std::to_string(us) + "us", us * 1000ULL});
  auto add = [&](int b, T t, const std::string& name, uint64_t spin_ns) {
    const proc::HandoffResult r = proc::MeasureHandoff(t, static_cast<uint32_t>(b), o.handoff_seconds, spin_ns);
    table.Add("(c) hand-off, ns per leaf (there and back)", "batch " + std::to_string(b), name, r.NsPerLeaf());
    JsonLine j;
    j.Add("bench", "handoff").Add("run", run).Add("transport", name).Add("batch", b).Add("leaves", r.leaves)
        .Add("ns_per_leaf", r.NsPerLeaf());
    if (t == T::kLeafRing) j.Add("spin_ns", spin_ns).Add("spins_won", r.spins_won).Add("spins_lost", r.spins_lost);
    Emit(j);
  };
  for (int b : o.handoff_batches) {
    for (const auto& [name, spin_ns] : rings) add(b, T::kLeafRing, name, spin_ns);
    add(b, T::kPipe, proc::TransportName(T::kPipe), 0);
    add(b, T::kBoostSpsc, proc::TransportName(T::kBoostSpsc), 0);
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
    const uint64_t target = s.level >= 6 ? std::max<uint64_t>(o.writer_positions / 10, 1000) : o.writer_positions;
    uint64_t positions = 0, bytes = 0, shard = 0;
    const auto t0 = Clock::now();
    while (positions < target) {
      for (size_t g = 0; writer.PendingPositions() < per_shard && positions + writer.PendingPositions() < target;
           ++g)
        writer.Add(games[g % games.size()]);
      positions += writer.PendingPositions();
      const std::string path = writer.Flush(shard++, {});
      bytes += std::filesystem::file_size(path);
    }
    const double secs = Since(t0);
    io::RemoveTree(dir);
    const std::string label = "deflate " + std::to_string(s.level) + ", " + std::to_string(s.threads) +
                              " thread" + (s.threads > 1 ? "s" : "") +
                              (s.level == io::Compression{}.deflate_level && s.threads == io::Compression{}.threads
                                   ? " (default)" : "");
    table.Add("(d) writer", label, "positions/s", positions / secs);
    table.Add("(d) writer", label, "bytes/position", static_cast<double>(bytes) / positions);
    Emit(JsonLine().Add("bench", "writer").Add("run", run).Add("deflate", s.level).Add("threads", s.threads)
             .Add("positions", positions).Add("positions_per_s", positions / secs)
             .Add("bytes_per_position", static_cast<double>(bytes) / positions));
  }
}

std::vector<int> ParseInts(const std::string& s) {
  std::vector<int> out;
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) {
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (*end != '\0') throw ConfigError("not a list of integers: '" + s + "'");
      out.push_back(static_cast<int>(v));
    }
  return out;
}

void Target(const std::string& name, double value, double target, bool at_least, const std::string& detail) {
  const bool met = std::isfinite(value) && (at_least ? value >= target : value <= target);
  std::cout << "target " << name << ": " << (at_least ? ">= " : "<= ") << target << ", median " << value << " "
            << detail << ": " << (met ? "met" : "MISSED") << "\n";
  Emit(JsonLine().Add("bench", "target").Add("name", name).Add("value", value).Add("target", target)
           .Add("at_least", at_least).Add("met", met));
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  BenchOptions o;
  cxxopts::Options options("zerofarm bench",
                           "Measures the farm against its bound: the evaluator alone, the farm, the leaf hand-off, "
                           "the writer. One JSON line per result, then a table.");
  AddTableOptions(options, proc::kBench);
  options.add_options("bench")
      ("runs", "Repeat every measurement this many times (interleaved)", cxxopts::value<int>()->default_value("3"))
      ("quick", "Small sizes and short runs (a few seconds; for tests)")
      ("parts", "Comma-separated parts: bound, machine, farm, wait, scaling, handoff, writer",
       cxxopts::value<std::string>()->default_value(o.parts))
       ("bound-seconds", "Seconds per batch size of the bound", cxxopts::value<double>()->default_value("0.5"))
       ("start-at", "Start the bound at this wall-clock second (for the machine bound's children)",
        cxxopts::value<double>()->default_value("0"))
      ("farm-seconds", "Length of each farm run", cxxopts::value<double>()->default_value("20"))
      ("fixed-waits", "Fixed --max-wait-us settings shown beside the adaptive wait",
       cxxopts::value<std::string>()->default_value("0,500,2000,10000"))
      ("bound-batches", "Batch sizes of the evaluator-alone bound",
       cxxopts::value<std::string>()->default_value("1,2,4,8,16,32,64,128,256,512,1024"))
      ("handoff-batches", "Batch sizes of the hand-off benchmark",
       cxxopts::value<std::string>()->default_value("1,4,16,64,256"))
      ("handoff-spins-us", "Extra leaf-ring columns of the hand-off benchmark, one per spin budget (us)",
       cxxopts::value<std::string>()->default_value(""))
      ("writer-positions", "Positions written per compression setting",
       cxxopts::value<uint64_t>()->default_value("300000"));
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  o.farm = ReadTableOptions(r, proc::kBench);
  const bool quick = r.count("quick") > 0;
  o.runs = quick && !r.count("runs") ? 1 : r["runs"].as<int>();
  o.parts = r["parts"].as<std::string>();
  CheckTableOptions(o.farm, proc::kBench);
  o.farm.ResolveGpus();  // -1: the GPUs granted, as `zerofarm run` does; the bound runs on GPU 0 then
  o.bound_seconds = r["bound-seconds"].as<double>();
  o.start_at = r["start-at"].as<double>();
  const bool on_gpu = o.farm.gpus > 0;
  if (on_gpu && !eval::CudaBuilt()) throw ConfigError("--gpus: this zerofarm was built without CUDA");
  o.farm_seconds = quick && !r.count("farm-seconds") ? 3 : r["farm-seconds"].as<double>();
  o.fixed_waits = ParseInts(quick && !r.count("fixed-waits") ? "0" : r["fixed-waits"].as<std::string>());
  o.bound_batches =
      ParseInts(quick && !r.count("bound-batches") ? "1,8,64" : r["bound-batches"].as<std::string>());
  o.handoff_batches =
      ParseInts(quick && !r.count("handoff-batches") ? "1,64" : r["handoff-batches"].as<std::string>());
  if (!r["handoff-spins-us"].as<std::string>().empty())
    o.handoff_spins_us = ParseInts(r["handoff-spins-us"].as<std::string>());
  o.writer_positions = quick && !r.count("writer-positions") ? 20'000 : r["writer-positions"].as<uint64_t>();
  o.deflate_levels = quick ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 3, 6, 9};
  if (quick) {
    if (!r.count("bound-seconds")) o.bound_seconds = 0.05;
    o.machine_seconds = 1;
    o.machine_start_s = 2;  // a late child only shortens the overlap
    o.handoff_seconds = 0.05;
  }
  const int cores = proc::CpusGranted();  // the affinity mask: `taskset -c 0-3 zerofarm bench` is a 4-core host
  for (int p = 1; p < cores; p *= 2) o.scaling_workers.push_back(p);
  o.scaling_workers.push_back(std::max(cores, 1));
  if (o.runs < 1 || o.runs > 100) throw ConfigError("--runs must be 1..100");
  if (o.farm_seconds < 1) throw ConfigError("--farm-seconds must be at least 1");
  for (int b : o.bound_batches)
    if (b < 1 || b > 4096) throw ConfigError("--bound-batches must be 1..4096");
  for (int b : o.handoff_batches)
    if (b < 1 || b > 1024) throw ConfigError("--handoff-batches must be 1..1024");
  for (int us : o.handoff_spins_us)
    if (us < 0 || us > 10'000) throw ConfigError("--handoff-spins-us must be 0..10000");
  if (o.farm.fp16 && !on_gpu) throw ConfigError("zerofarm bench --gpus 0 runs on the CPU: fp16 is for GPUs");
  if (o.farm.bf16) o.farm.precision = "bf16", o.farm.bf16 = false;
  if (o.farm.fp16) o.farm.precision = "fp16", o.farm.fp16 = false;
  o.farm.out = "bench";  // each farm run gets its own temporary directory
  o.farm.Validate();
  o.farm.ResolveResources();  // workers, E x T as `zerofarm run` resolves them on this host

  // The precision `auto` resolves to, as the farm's evaluator will resolve it.
  const eval::TorchOptions torch = proc::TorchOptionsFor(o.farm, on_gpu);
  const std::string precision = torch.bf16 ? "bf16" : torch.fp16 ? "fp16" : "fp32";
  BoundMemory bound_memory;  // outlives `net`, which pins it
  std::unique_ptr<eval::Evaluator> net;
  if (o.Has("bound") || o.Has("farm") || o.Has("wait") || o.Has("scaling")) {
    if (!eval::TorchAvailable()) throw ConfigError("zerofarm bench needs LibTorch for the bound and the farm");
  }
  Emit(JsonLine().Add("bench", "machine").Add("cpu", CpuModel()).Add("cores", cores)
           .Add("loadavg", LoadAverage()).Add("cpu_bf16", eval::CpuHasBf16()).Add("precision", precision)
           .Add("gpus", o.farm.gpus).Add("game", o.farm.game).Add("blocks", o.farm.blocks).Add("filters", o.farm.filters)
           .Add("simulations", o.farm.search.simulations).Add("runs", o.runs));

  Table table;
  const std::string farm_section = "(b) farm, " + std::to_string(o.farm.workers) + " workers x " +
                                   std::to_string(o.farm.games_per_worker) + " games, " +
                                   std::to_string(o.farm.Evaluators()) + " evaluator(s) x " +
                                   std::to_string(o.farm.eval_threads) + " thread(s)";
  const std::string wait_section = "adaptive wait against fixed --max-wait-us";
  const std::string scaling_section = "scaling with the number of workers";
  table.Order({"(a) evaluator alone, leaf evals/s", "(a') machine bound, leaf evals/s", farm_section, wait_section, scaling_section,
               "(c) hand-off, ns per leaf (there and back)", "(d) writer"});
  std::map<std::string, std::vector<double>> efficiency;
  for (int run = 1; run <= o.runs; ++run) {
    // Forks and shm first, LibTorch in this process last: the children of
    // the hand-off bench then fork from a process without LibTorch threads.
    if (o.Has("handoff")) MeasureHandoffs(o, run, table);
    if (o.Has("writer")) MeasureWriter(o, run, table);
    std::map<int, double> bound;
    if (o.Has("bound")) {
      if (!net) net = proc::MakeEvaluatorFor(*game::MakeGame(o.farm.game), o.farm, on_gpu);
      bound = MeasureBound(o, *net, bound_memory, run, table, precision);
    }
    double machine = std::nan("");
    if (o.Has("machine") && !on_gpu && !bound.empty()) {
      int best = bound.begin()->first;
      for (const auto& [b, rate] : bound)
        if (rate > bound.at(best)) best = b;
      machine = MeasureMachineBound(o, best, run, table);
    }
    FarmProbe main_farm;
    if (o.Has("farm"))
      main_farm = MeasureFarm(o, {"adaptive wait", o.farm.workers, -1}, bound, run, table, farm_section, machine);
    if (o.Has("wait"))
      for (int w : o.fixed_waits)
        MeasureFarm(o, {"fixed wait " + std::to_string(w) + " us", o.farm.workers, w}, bound, run, table,
                    wait_section, machine);
    if (o.Has("scaling"))
      for (int p : o.scaling_workers)
        MeasureFarm(o, {std::to_string(p) + " worker" + (p > 1 ? "s" : ""), p, -1}, bound, run, table,
                    scaling_section, machine, p == o.farm.workers && main_farm.ok ? &main_farm : nullptr);
  }

  std::cout << "\nzerofarm bench: " << o.farm.game << ", " << o.farm.blocks << " blocks x " << o.farm.filters
            << " filters, " << o.farm.search.simulations << " simulations, " << precision
            << (on_gpu ? " on " + std::to_string(o.farm.gpus) + " GPU evaluator(s)" : std::string(" on the CPU")) << "; "
            << CpuModel() << ", " << cores << " cores, load average now " << LoadAverage() << "; " << o.runs
            << " run(s)\n";
  table.Print(std::cout);
  std::cout << "\n";
  if (o.Has("farm") && o.Has("bound"))
    Target("farm_efficiency", table.Get(farm_section, "adaptive wait", "efficiency").median, 0.90, true,
           "(farm leaf evals/s / evaluator alone at the farm's mean batch)");
  if (o.Has("farm") && o.Has("machine") && o.Has("bound") && !on_gpu)
    Target("machine_efficiency", table.Get(farm_section, "adaptive wait", "machine efficiency").median, 0.85, true,
           "(farm leaf evals/s / the machine bound: " + std::to_string(o.farm.Evaluators()) + " evaluator(s) x " +
               std::to_string(o.farm.eval_threads) + " thread(s) at once at the best batch)");
  if (o.Has("handoff")) {
    double worst = std::nan("");
    for (int b : o.handoff_batches)
      if (b >= 64) {
        const double v = table.Get("(c) hand-off, ns per leaf (there and back)", "batch " + std::to_string(b),
                                   "leaf_ring").median;
        worst = std::isnan(worst) ? v : std::max(worst, v);
      }
    if (!std::isnan(worst)) Target("handoff_ns_per_leaf_batch_ge_64", worst, 150, false, "(leaf ring, worst batch >= 64)");
  }
  if (o.Has("writer")) {
    const io::Compression d;
    const std::string label = "deflate " + std::to_string(d.deflate_level) + ", " + std::to_string(d.threads) +
                              " thread" + (d.threads > 1 ? "s" : "") + " (default)";
    Target("writer_positions_per_s", table.Get("(d) writer", label, "positions/s").median, 1e6, true,
           "(default compression)");
  }
  return kExitOk;
}

}  // namespace zerofarm::cli
