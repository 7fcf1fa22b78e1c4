// zerofarm tune (the command line is read by src/cli/tune.cpp): short real farms (`zerofarm run` children)
// over ring slots, games per worker, max batch and the wait policy, one setting at a time around the
// defaults, each in interleaved rounds; prints the table with medians and spreads, recommends only clear
// winners (JudgeSweep), writes OUT/tune.csv and draws OUT/tune.png (throughput and
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
#include <sstream>
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

// One setting of a sweep and its rounds.
struct Row {
  std::string sweep, value;
  Setting s;
  int effective_ring = 0;
  std::vector<FarmProbe> runs;  // one per round, in the order run
  FarmProbe p;                  // the medians of the runs' figures; ok when every run was
  // positions/s of the runs that worked (JudgeSweep's samples).
  std::vector<double> Positions() const {
    std::vector<double> v;
    for (const FarmProbe& r : runs)
      if (r.ok) v.push_back(r.positions_per_s);
    return v;
  }
  Stats PositionStats() const { return Summarize(Positions()); }
};

// The medians of the runs' figures (over the runs that worked); ok only when
// every run was (the error: the first failure's).
FarmProbe Medians(const std::vector<FarmProbe>& runs) {
  FarmProbe m;
  m.ok = !runs.empty();
  for (const FarmProbe& r : runs)
    if (!r.ok && m.ok) m.ok = false, m.error = r.error;
  auto median = [&](double FarmProbe::*field) {
    std::vector<double> v;
    for (const FarmProbe& r : runs)
      if (r.ok) v.push_back(r.*field);
    return Summarize(v).median;
  };
  m.evals_per_s = median(&FarmProbe::evals_per_s);
  m.positions_per_s = median(&FarmProbe::positions_per_s);
  m.mean_batch = median(&FarmProbe::mean_batch);
  m.latency_p50_us = median(&FarmProbe::latency_p50_us);
  m.latency_p99_us = median(&FarmProbe::latency_p99_us);
  m.evaluator_busy = median(&FarmProbe::evaluator_busy);
  return m;
}

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

// Runs the probe farms of settings, round by round; settings with the same
// Key share their runs (the default appears in every sweep).
class Prober {
 public:
  Prober(const TuneOptions& o, std::string base_config)
      : o_(o), base_config_(std::move(base_config)), l_(o.farm.search.leaves_per_round) {}

  // `rounds` runs of every distinct setting, interleaved: each round runs
  // every setting once, so a slow minute of the machine hits all of them.
  void RunRounds(const std::vector<Setting>& settings, int rounds) {
    for (int round = 1; round <= rounds; ++round) {
      std::map<std::string, bool> this_round;
      for (const Setting& s : settings)
        if (!this_round[s.Key(l_)]) this_round[s.Key(l_)] = true, Run(s, round, rounds);
    }
  }
  const std::vector<FarmProbe>& Runs(const Setting& s) { return done_[s.Key(l_)]; }
  bool Measured(const Setting& s) const { return done_.count(s.Key(l_)) > 0; }

 private:
  void Run(const Setting& s, int round, int rounds) {
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
    // Whole lines: no control codes, whatever stderr is.
    std::cerr << "zerofarm tune: round " << round << "/" << rounds << ": K " << s.games_per_worker
              << ", ring " << s.ring_slots << ", batch " << s.max_batch << ", wait " << s.Wait() << " ..."
              << std::endl;
    FarmProbe p = ProbeFarm(args, o_.seconds, MakeTempDir("tune"));
    if (!p.ok) std::cerr << "zerofarm tune: that run failed: " << p.error << "\n";
    done_[s.Key(l_)].push_back(p);
  }

  const TuneOptions& o_;
  const std::string base_config_;
  const int l_;
  std::map<std::string, std::vector<FarmProbe>> done_;
};

std::string SweepValue(const std::string& sweep, const Setting& s) {
  return sweep == "ring_slots"         ? std::to_string(s.ring_slots)
         : sweep == "games_per_worker" ? std::to_string(s.games_per_worker)
         : sweep == "max_batch"        ? std::to_string(s.max_batch)
                                       : s.Wait();
}

// One row per setting of every sweep, in sweep order, each run `rounds` times.
std::vector<Row> MeasureSweeps(const Sweeps& sweeps, Prober& prober, int l, int rounds) {
  std::vector<Setting> all;
  for (const auto& [name, settings] : sweeps) all.insert(all.end(), settings.begin(), settings.end());
  prober.RunRounds(all, rounds);
  std::vector<Row> rows;
  for (const auto& [name, settings] : sweeps)
    for (const Setting& s : settings) {
      Row row{name,
              SweepValue(name, s),
              s,
              s.ring_slots > 0 ? s.ring_slots : s.games_per_worker * l,
              prober.Runs(s),
              {}};
      row.p = Medians(row.runs);
      rows.push_back(row);
    }
  return rows;
}

// A sweep's verdict and the rows it names (indices into the rows; -1: none).
struct Decision {
  std::string sweep;
  SweepVerdict v;
  int best = -1, runner_up = -1;
  bool Choice() const { return v.clear && runner_up >= 0; }  // a winner among two or more
};

std::vector<Decision> Decide(const Sweeps& sweeps, const std::vector<Row>& rows) {
  std::vector<Decision> out;
  for (const auto& sweep : sweeps) {
    std::vector<int> candidates;
    std::vector<std::vector<double>> samples;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].sweep == sweep.first)
        candidates.push_back(static_cast<int>(i)), samples.push_back(rows[i].Positions());
    Decision d{sweep.first, JudgeSweep(samples)};
    if (d.v.best >= 0) d.best = candidates[static_cast<size_t>(d.v.best)];
    if (d.v.runner_up >= 0) d.runner_up = candidates[static_cast<size_t>(d.v.runner_up)];
    out.push_back(d);
  }
  return out;
}

// The default, with each sweep's clear winner; a sweep without one keeps the default.
Setting Combine(const std::vector<Decision>& decisions, const std::vector<Row>& rows, const Setting& base,
                int k, int l) {
  Setting best = base;
  for (const Decision& d : decisions) {
    if (!d.Choice()) continue;
    const Setting& won = rows[static_cast<size_t>(d.best)].s;
    if (d.sweep == "ring_slots") best.ring_slots = won.ring_slots;
    if (d.sweep == "games_per_worker") best.games_per_worker = won.games_per_worker;
    if (d.sweep == "max_batch") best.max_batch = won.max_batch;
    if (d.sweep == "wait") best.fixed_wait_us = won.fixed_wait_us;
  }
  // Ring slots were swept at the default K; keep the same ratio at the chosen K.
  if (best.ring_slots > 0 && best.games_per_worker != k)
    best.ring_slots = std::max(l, best.ring_slots * best.games_per_worker / k);
  return best;
}

// One row per setting: the medians of its rounds, and its positions/s spread.
void WriteCsv(const std::string& csv, const std::vector<Row>& rows, int workers) {
  std::ofstream os(csv);
  os << "sweep,value,workers,games_per_worker,ring_slots,max_batch,wait,evals_per_s,positions_per_s,"
        "mean_batch,latency_p50_us,latency_p99_us,evaluator_busy,ok,rounds,positions_per_s_min,"
        "positions_per_s_max,positions_per_s_rounds\n";
  for (const Row& row : rows) {
    const Stats pos = row.PositionStats();
    std::string each;
    for (double v : row.Positions()) each += (each.empty() ? "" : ";") + std::to_string(v);
    os << row.sweep << "," << row.value << "," << workers << "," << row.s.games_per_worker << ","
       << row.effective_ring << "," << row.s.max_batch << "," << row.s.Wait() << "," << row.p.evals_per_s
       << "," << row.p.positions_per_s << "," << row.p.mean_batch << "," << row.p.latency_p50_us << ","
       << row.p.latency_p99_us << "," << row.p.evaluator_busy << "," << (row.p.ok ? 1 : 0) << ","
       << row.runs.size() << "," << pos.min << "," << pos.max << "," << each << "\n";
  }
  if (!os) throw Error("cannot write " + csv);
}

void PrintTable(const TuneOptions& o, const std::string& net, const std::vector<Row>& rows) {
  const proc::FarmConfig& f = o.farm;
  std::cout << "zerofarm tune: " << f.game << ", " << net << ", " << (f.search.gumbel ? "gumbel" : "puct")
            << " " << f.search.simulations << " simulations, " << f.workers << " workers, " << o.seconds
            << " s per run, " << o.rounds << " rounds (medians; pos/s also its min-max); " << CpuModel()
            << ", load average " << LoadAverage() << "\n\n";
  std::cout << std::left << std::setw(18) << "sweep" << std::setw(14) << "value" << std::setw(7) << "K"
            << std::setw(7) << "ring" << std::setw(7) << "batch" << std::setw(16) << "wait" << std::right
            << std::setw(10) << "pos/s" << std::setw(16) << "pos/s min-max" << std::setw(11) << "evals/s"
            << std::setw(10) << "meanbatch" << std::setw(9) << "p50 us" << std::setw(9) << "p99 us"
            << std::setw(7) << "busy"
            << "\n";
  for (const Row& row : rows) {
    std::cout << std::left << std::setw(18) << row.sweep << std::setw(14) << row.value << std::setw(7)
              << row.s.games_per_worker << std::setw(7) << row.effective_ring << std::setw(7)
              << row.s.max_batch << std::setw(16) << row.s.Wait() << std::right << std::fixed
              << std::setprecision(1);
    if (row.p.ok) {
      const Stats pos = row.PositionStats();
      std::ostringstream range;
      range << std::fixed << std::setprecision(1) << pos.min << "-" << pos.max;
      std::cout << std::setw(10) << row.p.positions_per_s << std::setw(16) << range.str() << std::setw(11)
                << std::setprecision(0) << row.p.evals_per_s << std::setw(10) << std::setprecision(1)
                << row.p.mean_batch << std::setprecision(0) << std::setw(9) << row.p.latency_p50_us
                << std::setw(9) << row.p.latency_p99_us << std::setw(6) << 100 * row.p.evaluator_busy << "%";
    } else {
      std::cout << "  failed: " << row.p.error;
    }
    std::cout << "\n";
  }
}

// "512 (pos/s 1234.5, 1200.0-1260.0)": a setting, its median and its spread.
std::string Measured(const Row& row, const Stats& s) {
  std::ostringstream os;
  os << row.value << " (pos/s " << std::fixed << std::setprecision(1) << s.median << ", " << s.min << "-"
     << s.max << ")";
  return os.str();
}

// Each sweep's verdict, then the recommended command line, or none when no
// sweep had a clear winner.
void PrintDecisions(const std::vector<Decision>& decisions, const std::vector<Row>& rows, int workers,
                    int rounds, const Setting& best) {
  std::cout << "\n";
  bool any = false;
  for (const Decision& d : decisions) {
    std::cout << d.sweep << ": ";
    const std::string won = d.best < 0 ? "" : Measured(rows[static_cast<size_t>(d.best)], d.v.best_stats);
    const std::string next =
        d.runner_up < 0 ? "" : Measured(rows[static_cast<size_t>(d.runner_up)], d.v.runner_up_stats);
    if (d.best < 0)
      std::cout << "every run failed";
    else if (d.runner_up < 0)
      std::cout << "only " << won << " measured";
    else if (d.v.clear)
      std::cout << won << " beat the runner-up " << next << " in every round";
    else
      std::cout << "no clear winner: " << won << " against " << next
                << ": the spread covers the difference; the default stays";
    std::cout << "\n";
    any = any || d.Choice();
  }
  if (!any) {
    std::cout << "\nno clear winner: in every sweep the spread of " << rounds
              << " rounds covers the differences; keep the defaults (or tune longer: --seconds)\n";
    return;
  }
  std::cout << "\nrecommended: zerofarm run --workers " << workers << " --games-per-worker "
            << best.games_per_worker;
  if (best.ring_slots > 0) std::cout << " --ring-slots " << best.ring_slots;
  std::cout << " --max-batch " << best.max_batch;
  if (best.fixed_wait_us >= 0) std::cout << " --fixed-wait --max-wait-us " << best.fixed_wait_us;
  std::cout << "   (each sweep's clear winner in positions/s; the default where it had none)\n";
}

}  // namespace

SweepVerdict JudgeSweep(const std::vector<std::vector<double>>& samples) {
  SweepVerdict v;
  std::vector<std::pair<double, int>> medians;  // (median, index), the candidates with samples
  for (size_t i = 0; i < samples.size(); ++i)
    if (!samples[i].empty()) medians.emplace_back(Summarize(samples[i]).median, static_cast<int>(i));
  if (medians.empty()) return v;
  // Highest median first; equal medians: the earlier candidate.
  std::stable_sort(medians.begin(), medians.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  v.best = medians[0].second;
  v.best_stats = Summarize(samples[static_cast<size_t>(v.best)]);
  if (medians.size() == 1) {
    v.clear = true;
    return v;
  }
  v.runner_up = medians[1].second;
  v.runner_up_stats = Summarize(samples[static_cast<size_t>(v.runner_up)]);
  v.clear = v.best_stats.min > v.runner_up_stats.max;
  return v;
}

int RunTune(const TuneOptions& options) {
  TuneOptions o = options;
  if (o.rounds == 0) o.rounds = o.quick ? 2 : 3;
  if (o.rounds < 1) throw ConfigError("tune needs at least one round");
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
  std::vector<Row> rows = MeasureSweeps(sweeps, prober, l, o.rounds);
  const std::vector<Decision> decisions = Decide(sweeps, rows);
  const Setting best = Combine(decisions, rows, base, k, l);
  if (!o.quick && !prober.Measured(best)) {
    prober.RunRounds({best}, o.rounds);
    rows.push_back(Row{"recommended",
                       "combined",
                       best,
                       best.ring_slots > 0 ? best.ring_slots : best.games_per_worker * l,
                       prober.Runs(best),
                       {}});
    rows.back().p = Medians(rows.back().runs);
  }

  const std::string csv = o.out + "/tune.csv";
  WriteCsv(csv, rows, f.workers);
  PrintTable(o, net, rows);
  PrintDecisions(decisions, rows, f.workers, o.rounds, best);
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
