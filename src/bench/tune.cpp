// zerofarm tune (the command line is read by src/cli/tune.cpp): short real farms (`zerofarm run` children)
// over ring slots, games per worker, max batch and the wait policy, one setting at a time around the
// defaults; prints the table, recommends settings, writes OUT/tune.csv and draws OUT/tune.png (throughput and
// leaf latency against ring size) with tools/plot_tune.py (Python, matplotlib).
#include "zerofarm/bench/tune.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <utility>

#include "zerofarm/bench/bench_util.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::bench {
namespace {

struct Setting {
  int games_per_worker = 32;
  int ring_slots = 0;  // 0: games x leaves per round
  int max_batch = 256;
  int fixed_wait_us = -1;  // -1: adaptive
  // Settings that run the same farm share a key (ring 0 = K x L).
  std::string Key(int leaves_per_round) const {
    const int ring = ring_slots > 0 ? ring_slots : games_per_worker * leaves_per_round;
    return std::to_string(games_per_worker) + "/" + std::to_string(ring) + "/" + std::to_string(max_batch) +
           "/" + std::to_string(fixed_wait_us);
  }
  std::string Wait() const {
    return fixed_wait_us < 0 ? "adaptive" : "fixed " + std::to_string(fixed_wait_us) + " us";
  }
};

struct Row {
  std::string sweep, value;
  Setting s;
  int effective_ring = 0;
  FarmProbe p;
};

std::string FindPlotScript() {
  if (const char* dir = std::getenv("ZF_TOOLS_DIR")) return std::string(dir) + "/plot_tune.py";
  const std::filesystem::path exe = proc::SelfBinary();
  for (const auto& candidate : {exe.parent_path().parent_path() / "tools" / "plot_tune.py",
                                exe.parent_path() / "tools" / "plot_tune.py"})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return "";
}

// Runs python3 SCRIPT CSV PNG; "" on success, else why not.
std::string DrawPlot(const std::string& csv, const std::string& png) {
  const std::string script = FindPlotScript();
  if (script.empty()) return "tools/plot_tune.py not found (set ZF_TOOLS_DIR)";
  const std::string python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  std::vector<std::string> args = {python, script, csv, png};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  proc::ChildProcess child = proc::ChildProcess::Fork("zf-plot", [&]() {
    execvp(argv[0], argv.data());
    return 127;
  });
  int status = -1;
  if (!child.WaitFor(120'000, &status)) return "the plot script did not finish in 120 s";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return python + " " + script + " failed (" + proc::DescribeWaitStatus(status) +
           "; is python3-matplotlib installed?)";
  return "";
}

// The net the probes measure: the weights file and its tower, or the random net.
std::string NetDescription(const proc::FarmConfig& f) {
  if (f.weights.empty())
    return "a random " + std::to_string(f.blocks) + "x" + std::to_string(f.filters) + " net (seed " +
           std::to_string(f.seed) + ")";
  const auto w = io::ReadWeights(f.weights);  // a bad file fails here, before any farm runs
  return "weights " + f.weights + " (model version " + std::to_string(w.version) + ", " +
         (w.config.scripted ? "TorchScript"
                            : std::to_string(w.config.blocks) + "x" + std::to_string(w.config.filters)) +
         ")";
}

using Sweeps = std::vector<std::pair<std::string, std::vector<Setting>>>;

// One setting at a time around `base` (K = k games per worker, L = l leaves
// per round): ring slots, games per worker, max batch, the wait.
Sweeps MakeSweeps(const Setting& base, int k, int l, bool quick) {
  Sweeps sweeps;
  auto sweep = [&](const std::string& name, const std::vector<int>& values, auto set) {
    std::vector<Setting> ss;
    for (int v : values) {
      Setting s = base;
      if (set(s, v)) ss.push_back(s);
    }
    sweeps.push_back({name, ss});
  };
  const std::vector<int> rings = quick ? std::vector<int>{k * l / 2, k * l}
                                       : std::vector<int>{k * l / 8, k * l / 4, k * l / 2, k * l, 2 * k * l};
  sweep("ring_slots", rings, [&](Setting& s, int v) { return v >= l && (s.ring_slots = v); });
  sweep("games_per_worker", quick ? std::vector<int>{k} : std::vector<int>{k / 4, k / 2, k, 2 * k},
        [](Setting& s, int v) { return v >= 1 && (s.games_per_worker = v); });
  sweep("max_batch", quick ? std::vector<int>{256} : std::vector<int>{16, 32, 64, 256},
        [](Setting& s, int v) { return (s.max_batch = v) > 0; });
  sweep("wait", quick ? std::vector<int>{-1, 0} : std::vector<int>{-1, 0, 500, 2000},
        [](Setting& s, int v) { return (s.fixed_wait_us = v), true; });
  return sweeps;
}

// Runs the probe farm of a setting, once per distinct farm (settings with the
// same Key share the run).
class Prober {
 public:
  Prober(const TuneOptions& o, std::string base_config)
      : o_(o), base_config_(std::move(base_config)), l_(o.farm.search.leaves_per_round) {}

  FarmProbe Measure(const Setting& s) {
    auto it = done_.find(s.Key(l_));
    if (it != done_.end()) return it->second;
    std::vector<std::string> args = {"--config",
                                     base_config_,
                                     "--gpus",
                                     "0",
                                     "--workers",
                                     std::to_string(o_.farm.workers),
                                     "--games-per-worker",
                                     std::to_string(s.games_per_worker),
                                     "--ring-slots",
                                     std::to_string(s.ring_slots),
                                     "--max-batch",
                                     std::to_string(s.max_batch)};
    if (o_.farm.allow_foreign_dir) args.push_back("--allow-foreign-dir");  // command line only
    if (s.fixed_wait_us >= 0) {
      args.push_back("--fixed-wait");
      args.push_back("--max-wait-us");
      args.push_back(std::to_string(s.fixed_wait_us));
    }
    std::cerr << "zerofarm tune: K " << s.games_per_worker << ", ring " << s.ring_slots << ", batch "
              << s.max_batch << ", wait " << s.Wait() << " ..." << std::endl;
    FarmProbe p = ProbeFarm(args, o_.seconds, MakeTempDir("tune"));
    if (!p.ok) std::cerr << "zerofarm tune: that run failed: " << p.error << "\n";
    done_[s.Key(l_)] = p;
    return p;
  }
  bool Measured(const Setting& s) const { return done_.count(s.Key(l_)) > 0; }

 private:
  const TuneOptions& o_;
  const std::string base_config_;
  const int l_;
  std::map<std::string, FarmProbe> done_;
};

// One row per setting of every sweep, in sweep order.
std::vector<Row> MeasureSweeps(const Sweeps& sweeps, Prober& prober, int l) {
  std::vector<Row> rows;
  for (const auto& [name, settings] : sweeps)
    for (const Setting& s : settings) {
      Row row{name, "", s, s.ring_slots > 0 ? s.ring_slots : s.games_per_worker * l, prober.Measure(s)};
      row.value = name == "ring_slots"         ? std::to_string(s.ring_slots)
                  : name == "games_per_worker" ? std::to_string(s.games_per_worker)
                  : name == "max_batch"        ? std::to_string(s.max_batch)
                                               : s.Wait();
      rows.push_back(row);
    }
  return rows;
}

// Best per sweep: among settings within 3% of the highest leaf evals/s
// (run-to-run noise), the one with the lowest median leaf latency.
Setting PickBest(const Sweeps& sweeps, const std::vector<Row>& rows, const Setting& base, int k, int l) {
  Setting best = base;
  for (const auto& [name, settings] : sweeps) {
    double top = 0;
    for (const Row& row : rows)
      if (row.sweep == name && row.p.ok) top = std::max(top, row.p.evals_per_s);
    const Row* pick = nullptr;
    for (const Row& row : rows)
      if (row.sweep == name && row.p.ok && row.p.evals_per_s >= 0.97 * top &&
          (!pick || row.p.latency_p50_us < pick->p.latency_p50_us))
        pick = &row;
    if (!pick) continue;
    if (name == "ring_slots") best.ring_slots = pick->s.ring_slots;
    if (name == "games_per_worker") best.games_per_worker = pick->s.games_per_worker;
    if (name == "max_batch") best.max_batch = pick->s.max_batch;
    if (name == "wait") best.fixed_wait_us = pick->s.fixed_wait_us;
  }
  // Ring slots were swept at the default K; keep the same ratio at the chosen K.
  if (best.ring_slots > 0 && best.games_per_worker != k)
    best.ring_slots = std::max(l, best.ring_slots * best.games_per_worker / k);
  return best;
}

void WriteCsv(const std::string& csv, const std::vector<Row>& rows, int workers) {
  std::ofstream os(csv);
  os << "sweep,value,workers,games_per_worker,ring_slots,max_batch,wait,evals_per_s,positions_per_s,"
        "mean_batch,latency_p50_us,latency_p99_us,evaluator_busy,ok\n";
  for (const Row& row : rows)
    os << row.sweep << "," << row.value << "," << workers << "," << row.s.games_per_worker << ","
       << row.effective_ring << "," << row.s.max_batch << "," << row.s.Wait() << "," << row.p.evals_per_s
       << "," << row.p.positions_per_s << "," << row.p.mean_batch << "," << row.p.latency_p50_us << ","
       << row.p.latency_p99_us << "," << row.p.evaluator_busy << "," << (row.p.ok ? 1 : 0) << "\n";
  if (!os) throw Error("cannot write " + csv);
}

void PrintTable(const TuneOptions& o, const std::string& net, const std::vector<Row>& rows) {
  const proc::FarmConfig& f = o.farm;
  std::cout << "zerofarm tune: " << f.game << ", " << net << ", " << (f.search.gumbel ? "gumbel" : "puct")
            << " " << f.search.simulations << " simulations, " << f.workers << " workers, " << o.seconds
            << " s per run; " << CpuModel() << ", load average " << LoadAverage() << "\n\n";
  std::cout << std::left << std::setw(18) << "sweep" << std::setw(14) << "value" << std::setw(8) << "K"
            << std::setw(8) << "ring" << std::setw(8) << "batch" << std::setw(16) << "wait" << std::right
            << std::setw(12) << "evals/s" << std::setw(12) << "pos/s" << std::setw(10) << "meanbatch"
            << std::setw(10) << "p50 us" << std::setw(10) << "p99 us" << std::setw(8) << "busy"
            << "\n";
  for (const Row& row : rows) {
    std::cout << std::left << std::setw(18) << row.sweep << std::setw(14) << row.value << std::setw(8)
              << row.s.games_per_worker << std::setw(8) << row.effective_ring << std::setw(8)
              << row.s.max_batch << std::setw(16) << row.s.Wait() << std::right << std::fixed
              << std::setprecision(0);
    if (row.p.ok)
      std::cout << std::setw(12) << row.p.evals_per_s << std::setw(12) << std::setprecision(1)
                << row.p.positions_per_s << std::setw(10) << row.p.mean_batch << std::setprecision(0)
                << std::setw(10) << row.p.latency_p50_us << std::setw(10) << row.p.latency_p99_us
                << std::setw(7) << 100 * row.p.evaluator_busy << "%";
    else
      std::cout << "  failed: " << row.p.error;
    std::cout << "\n";
  }
}

void PrintRecommendation(int workers, const Setting& best) {
  std::cout << "\nrecommended: zerofarm run --workers " << workers << " --games-per-worker "
            << best.games_per_worker;
  if (best.ring_slots > 0) std::cout << " --ring-slots " << best.ring_slots;
  std::cout << " --max-batch " << best.max_batch;
  if (best.fixed_wait_us >= 0) std::cout << " --fixed-wait --max-wait-us " << best.fixed_wait_us;
  std::cout << "   (the best leaf evals/s of each sweep; within 3% of it, the lowest leaf latency)\n";
}

}  // namespace

int RunTune(const TuneOptions& o) {
  const proc::FarmConfig& f = o.farm;
  std::filesystem::create_directories(o.out);
  // The net, search and game every probe farm runs: f as a config file, the
  // sweep's settings on the command line over it.
  const std::string base_config = o.out + "/tune-config.txt";
  io::WriteTextFileAtomically(base_config, f.ToText());
  const std::string net = NetDescription(f);

  const int k = f.games_per_worker, l = f.search.leaves_per_round;
  Setting base;
  base.games_per_worker = k;
  const Sweeps sweeps = MakeSweeps(base, k, l, o.quick);
  Prober prober(o, base_config);
  std::vector<Row> rows = MeasureSweeps(sweeps, prober, l);
  const Setting best = PickBest(sweeps, rows, base, k, l);
  if (!o.quick && !prober.Measured(best))
    rows.push_back(Row{"recommended", "combined", best,
                       best.ring_slots > 0 ? best.ring_slots : best.games_per_worker * l,
                       prober.Measure(best)});

  const std::string csv = o.out + "/tune.csv";
  WriteCsv(csv, rows, f.workers);
  PrintTable(o, net, rows);
  PrintRecommendation(f.workers, best);
  std::cout << "table: " << csv << "\n";
  if (o.plot) {
    const std::string png = o.out + "/tune.png";
    const std::string why = DrawPlot(csv, png);
    if (why.empty())
      std::cout << "plot: " << png << "\n";
    else
      std::cout << "no plot: " << why << "\n";
  }
  for (const Row& row : rows)
    if (!row.p.ok) return kExitFailure;
  return kExitOk;
}

}  // namespace zerofarm::bench
