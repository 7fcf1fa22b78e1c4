// zerofarm loop: the whole AlphaZero loop on one machine. Starts a farm
// (`zerofarm run`) and a trainer (`zerofarm train`) as child processes on one
// run directory, and every --eval-every seconds measures the newest model
// (move error against the exact Connect Four solver) in this process,
// appending to RUN/eval/curve.csv and printing the curve so far.
//
// Resuming: run the same command again. The farm continues the directory
// (new epoch), the trainer resumes from RUN/train/state.txt, and the curve's
// hours continue from RUN/eval/loop-seconds.txt (farm time of earlier pieces)
// and its CPU hours (the whole process tree's) from RUN/eval/loop-cpu-seconds.txt.
#include <sys/wait.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <future>
#include <thread>

#include "commands.h"
#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/files.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/farm_config.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/proc/strength.h"
#include "zerofarm/proc/train.h"

namespace zerofarm::cli {
namespace fs = std::filesystem;
namespace {

volatile std::sig_atomic_t g_loop_stop = 0;
void OnLoopSignal(int sig) { g_loop_stop = sig; }

std::vector<std::string> SplitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

double ReadSeconds(const std::string& path) {
  std::ifstream in(path);
  double s = 0;
  return (in >> s) ? s : 0.0;
}

// The loop's exit code for a child that stopped: its own when it says bad
// input (2) or a full disk (4), as `zerofarm run` would; else 1 (issue 21).
int ChildFailureCode(int status) {
  if (WIFEXITED(status) && (WEXITSTATUS(status) == kExitUsage || WEXITSTATUS(status) == kExitNoSpace))
    return WEXITSTATUS(status);
  return kExitFailure;
}
}  // namespace

int LoopCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm loop",
      "The AlphaZero loop on one machine: a farm and a trainer on one run directory, with a periodic\n"
      "evaluation of the newest model against the exact Connect Four solver. Run it again to resume.");
  // The farm's options are `run`'s (the option table); the loop hands them to
  // its farm as RUN/eval/farm-config.txt, and the net's shape, seed, weights and
  // value discount to its trainer too.
  AddTableOptions(options, proc::kLoop);
  options.add_options("loop")
      ("hours", "Stop after this many hours of this invocation (0 = until interrupted)",
       cxxopts::value<double>()->default_value("0"))
      ("eval-every", "Seconds between evaluations", cxxopts::value<double>()->default_value("600"))
      ("pons", "Pons-format files to measure move error on (repeatable; default Test_L2_R1 and Test_L1_R1 of "
               "../shared/data/reference/connect4)", cxxopts::value<std::vector<std::string>>())
      ("eval-positions", "Use the first N positions of each file (0 = all)", cxxopts::value<int>()->default_value("0"))
      ("eval-simulations", "MCTS simulations of the evaluation (plain PUCT: the solver off, so the curve measures the net)",
       cxxopts::value<int>()->default_value("100"))
      ("eval-solver-simulations", "Also measure PUCT with the MCTS-solver, the farm's search, at this many simulations "
                                  "(curve.csv rows with solver = 1; 0 = off)",
       cxxopts::value<int>()->default_value("100"))
      ("run-args", "More options for `zerofarm run`, as one string", cxxopts::value<std::string>()->default_value(""));
  options.add_options("trainer")
      ("train-args", "More options for `zerofarm train`, as one string (e.g. \"--lr 0.01 --window 100000\")",
       cxxopts::value<std::string>()->default_value(""));
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  proc::FarmConfig farm_config = ReadTableOptions(r, proc::kLoop);
  if (farm_config.out.empty()) throw ConfigError("--out is required");
  farm_config.Validate();
  const std::string run = farm_config.out;
  const double hours = r["hours"].as<double>();
  const double eval_every = r["eval-every"].as<double>();
  if (hours < 0) throw ConfigError("--hours must be >= 0");
  if (eval_every < 10) throw ConfigError("--eval-every must be >= 10 seconds");
  if (r["eval-simulations"].as<int>() < 0) throw ConfigError("--eval-simulations must be >= 0");
  if (r["eval-solver-simulations"].as<int>() < 0) throw ConfigError("--eval-solver-simulations must be >= 0");
  std::vector<std::string> pons;
  if (r.count("pons")) {
    pons = r["pons"].as<std::vector<std::string>>();
  } else {
    const std::string ref = std::string(ZF_SOURCE_DIR_HINT) + "/../shared/data/reference/connect4/";
    pons = {ref + "Test_L2_R1", ref + "Test_L1_R1"};
  }
  const std::string game_name = farm_config.game;
  if (game_name != "connect4") throw ConfigError("the loop's evaluation needs --game connect4");
  // Read every evaluation file now: a typo fails in a second, not after an hour.
  std::vector<std::vector<proc::PonsPosition>> sets;
  if (r["eval-positions"].as<int>() < 0) throw ConfigError("--eval-positions must be >= 0");
  for (const auto& f : pons) sets.push_back(proc::ReadPonsFile(f, r["eval-positions"].as<int>()));

  fs::create_directories(run + "/eval");
  const std::string exe = proc::SelfBinary(), farm_exe = proc::FarmBinary();
  const float value_discount = farm_config.search.value_discount;
  const std::string loop_config = run + "/eval/farm-config.txt";
  farm_config.status_line = false;
  io::WriteTextFileAtomically(loop_config, farm_config.ToText());
  std::vector<std::string> farm_argv = {farm_exe, "run", "--config", loop_config};
  if (farm_config.allow_foreign_dir) farm_argv.push_back("--allow-foreign-dir");  // command line only
  if (hours > 0) {  // a bound of its own, should this process die without stopping it
    farm_argv.push_back("--duration");
    farm_argv.push_back(std::to_string(hours * 3600 + 120));
  }
  for (const auto& w : SplitWords(r["run-args"].as<std::string>())) farm_argv.push_back(w);
  // Options both children take: the trainer's net is the farm's.
  std::ostringstream net_args;
  net_args << "--blocks " << farm_config.blocks << " --filters " << farm_config.filters << " --value-discount "
           << value_discount << " --eval-threads " << farm_config.eval_threads;
  if (!farm_config.weights.empty()) net_args << " --weights " << farm_config.weights;
  std::vector<std::string> train_argv = {exe, "train", "--run", run, "--seed", std::to_string(farm_config.seed)};
  for (const auto& w : SplitWords(net_args.str() + " " + r["train-args"].as<std::string>())) train_argv.push_back(w);

  // Solver verdicts (cached in RUN/eval and shipped in data/connect4) on a
  // thread per file: a file not yet rated joins the evaluations once it is.
  // On the way out, a rating still running is abandoned (its cache keeps
  // what it did, saved every 30 s).
  std::atomic<bool> abandon{false};
  std::vector<std::future<void>> rated;
  std::vector<char> ready(sets.size(), 0);
  for (size_t i = 0; i < sets.size(); ++i)
    rated.push_back(std::async(std::launch::async, [&, i, shipped = ShippedRatings()] {
      proc::RatePositions(&sets[i], run + "/eval/" + fs::path(pons[i]).filename().string() + ".rated", shipped,
                          [&](int, int) {
                            // relaxed: a stop request; the thread publishes nothing through it.
                            if (abandon.load(std::memory_order_relaxed)) throw Error("rating abandoned");
                          });
    }));
  auto is_rated = [&](size_t i) {
    if (!ready[i] && rated[i].wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      rated[i].get();  // rethrows a corrupt file's error
      ready[i] = 1;
    }
    return ready[i] != 0;
  };

  struct sigaction sa {};
  sa.sa_handler = OnLoopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const std::string seconds_file = run + "/eval/loop-seconds.txt";
  const double earlier = ReadSeconds(seconds_file);
  const double t0 = MonotonicSeconds();
  auto hours_so_far = [&] { return (earlier + MonotonicSeconds() - t0) / 3600.0; };
  ZF_LOG(INFO) << "loop on " << run << ": " << earlier / 3600.0 << " h of earlier pieces";
  // CPU time of the loop's whole process tree (farm, trainer, evaluations), the
  // fair clock on a shared machine. Pieces from before this was kept count as
  // every granted CPU busy for their wall time: an upper bound.
  const std::string cpu_file = run + "/eval/loop-cpu-seconds.txt";
  double earlier_cpu = ReadSeconds(cpu_file);
  if (earlier > 0 && !fs::exists(cpu_file)) {
    earlier_cpu = earlier * proc::CpusGranted();
    ZF_LOG(INFO) << "earlier pieces kept no CPU time: counting them as " << proc::CpusGranted() << " CPUs busy, "
                 << earlier_cpu / 3600.0 << " CPU hours";
  }
  auto cpu_hours_so_far = [&] { return (earlier_cpu + proc::TreeCpuSeconds(getpid())) / 3600.0; };

  proc::ChildProcess farm = proc::ChildProcess::Exec("farm", farm_exe, farm_argv, {});
  proc::ChildProcess trainer = proc::ChildProcess::Exec("trainer", exe, train_argv, {});

  const std::string curve = run + "/eval/curve.csv";
  uint32_t last_evaluated = 0;
  std::ostringstream table;
  auto evaluate = [&] {
    const double cpu_hours = cpu_hours_so_far();
    io::WriteTextFileAtomically(seconds_file, std::to_string(earlier + MonotonicSeconds() - t0) + "\n");
    io::WriteTextFileAtomically(cpu_file, std::to_string(cpu_hours * 3600.0) + "\n");
    const auto [best, model] = proc::NewestModel(run + "/models");
    if (model.empty() || static_cast<uint32_t>(best) == last_evaluated) return;
    const auto game = game::MakeGame(game_name);
    eval::TorchOptions topt;
    auto net = eval::MakeTorchEvaluator(proc::LoadWeightsFor(*game, model), topt);
    last_evaluated = static_cast<uint32_t>(best);
    // Two measures: plain PUCT, what the network adds (with the solver on,
    // Test_L2_R1's move error is mostly the solver's, docs/search.md; points
    // from before the solver stay comparable), and PUCT with the solver, the
    // search the farm plays with. curve.csv's `solver` column tells them apart.
    std::vector<mcts::SearchConfig> searches(1);
    searches[0].simulations = r["eval-simulations"].as<int>();
    searches[0].solver = false;
    if (r["eval-solver-simulations"].as<int>() > 0) {
      searches.emplace_back();
      searches[1].simulations = r["eval-solver-simulations"].as<int>();
      searches[1].solver = true;
    }
    char line[256];
    std::snprintf(line, sizeof line, "%7.2f h %7.2f CPU h  model v%-5u", hours_so_far(), cpu_hours,
                  net->ModelVersion());
    table << line;
    for (size_t i = 0; i < sets.size(); ++i) {
      if (!is_rated(i)) {
        std::snprintf(line, sizeof line, "  %s: (the solver is still rating it)", fs::path(pons[i]).filename().c_str());
        table << line;
        continue;
      }
      const std::string name = fs::path(pons[i]).filename().string();
      for (mcts::SearchConfig search : searches) {
        search.value_discount = value_discount;
        search.temperature_plies = 0;
        const proc::MoveErrorResult m = proc::MoveError(*game, *net, sets[i], search);
        try {
          io::AppendCsvRow(curve,
                           std::string("hours,model_version,file,") + proc::kMoveErrorCsvColumns + ",cpu_hours,solver",
                           std::to_string(hours_so_far()) + ',' + std::to_string(net->ModelVersion()) + ',' + name +
                               ',' + proc::MoveErrorCsvFields(m) + ',' + std::to_string(cpu_hours) + ',' +
                               (search.solver ? "1" : "0"));
        } catch (const Error& e) {
          ZF_LOG(WARN) << e.what();  // the table below still shows it
        }
        if (!search.solver)
          std::snprintf(line, sizeof line, "  %s: net %5.1f%% (%4.1f%%)  mcts %5.1f%% (%4.1f%%)", name.c_str(),
                        100 * m.NetRate(), 100 * m.NetOutcomeRate(), 100 * m.MctsRate(), 100 * m.MctsOutcomeRate());
        else
          std::snprintf(line, sizeof line, "  +solver %5.1f%% (%4.1f%%)", 100 * m.MctsRate(), 100 * m.MctsOutcomeRate());
        table << line;
      }
    }
    table << "\n";
    std::cout << "zerofarm loop: move error against the exact solver (net alone; plain PUCT MCTS at "
              << searches[0].simulations << " simulations";
    if (searches.size() > 1) std::cout << "; +solver: PUCT with the MCTS-solver at " << searches[1].simulations;
    std::cout << "; in brackets: moves that give away the outcome)\n" << table.str() << std::flush;
  };

  int exit_code = kExitOk;
  double next_eval = MonotonicSeconds() + eval_every;
  while (g_loop_stop == 0) {
    if (hours > 0 && MonotonicSeconds() - t0 >= hours * 3600) break;
    int status = 0;
    if (farm.TryReap(&status)) {
      ZF_LOG(ERROR) << "the farm stopped: " << proc::DescribeWaitStatus(status);
      exit_code = ChildFailureCode(status);
      break;
    }
    if (trainer.TryReap(&status)) {
      ZF_LOG(ERROR) << "the trainer stopped: " << proc::DescribeWaitStatus(status);
      exit_code = ChildFailureCode(status);
      break;
    }
    if (MonotonicSeconds() >= next_eval) {
      evaluate();
      next_eval = MonotonicSeconds() + eval_every;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // The farm flushes its finished games and the trainer writes a checkpoint on SIGTERM.
  if (trainer.running()) trainer.Stop(60'000);
  if (farm.running()) farm.Stop(120'000);
  evaluate();
  // relaxed: see the rating threads.
  abandon.store(true, std::memory_order_relaxed);
  for (auto& f : rated)
    if (f.valid()) try {
        f.get();
      } catch (const std::exception&) {
      }
  return exit_code;
}

}  // namespace zerofarm::cli
