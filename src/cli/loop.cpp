// zerofarm loop: parses the options of the whole AlphaZero loop on one
// machine and runs it (learn/loop.h says what it does).
#include "zerofarm/learn/loop.h"

#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::cli {
namespace {

std::vector<std::string> SplitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
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
  options.add_options("loop")("hours",
                              "Stop after this many hours of this invocation (0 = until interrupted)",
                              cxxopts::value<double>()->default_value("0"))(
      "eval-every", "Seconds between evaluations", cxxopts::value<double>()->default_value("600"))(
      "pons",
      "Pons-format files to measure move error on (repeatable; default Test_L2_R1 and Test_L1_R1 of "
      "../shared/data/reference/connect4)",
      cxxopts::value<std::vector<std::string>>())("eval-positions",
                                                  "Use the first N positions of each file (0 = all)",
                                                  cxxopts::value<int>()->default_value("0"))(
      "eval-simulations",
      "MCTS simulations of the evaluation (plain PUCT: the solver off, so the curve measures the net)",
      cxxopts::value<int>()->default_value("100"))(
      "eval-solver-simulations",
      "Also measure PUCT with the MCTS-solver, the farm's search, at this many simulations "
      "(curve.csv rows with solver = 1; 0 = off)",
      cxxopts::value<int>()->default_value("100"))("run-args",
                                                   "More options for `zerofarm run`, as one string",
                                                   cxxopts::value<std::string>()->default_value(""));
  options.add_options("trainer")(
      "train-args", "More options for `zerofarm train`, as one string (e.g. \"--lr 0.01 --window 100000\")",
      cxxopts::value<std::string>()->default_value(""));
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  proc::FarmConfig farm_config = ReadTableOptions(r, proc::kLoop);
  if (farm_config.out.empty()) throw ConfigError("--out is required");
  farm_config.Validate();
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
  if (farm_config.game != "connect4") throw ConfigError("the loop's evaluation needs --game connect4");
  if (r["eval-positions"].as<int>() < 0) throw ConfigError("--eval-positions must be >= 0");
  learn::LoopConfig loop;
  loop.farm = farm_config;
  loop.hours = hours;
  loop.eval_every = eval_every;
  loop.pons = pons;
  loop.eval_positions = r["eval-positions"].as<int>();
  loop.eval_simulations = r["eval-simulations"].as<int>();
  loop.eval_solver_simulations = r["eval-solver-simulations"].as<int>();
  loop.run_args = SplitWords(r["run-args"].as<std::string>());
  loop.train_args = SplitWords(r["train-args"].as<std::string>());
  loop.shipped_ratings = ShippedRatings();
  return learn::RunLoop(loop);
}

}  // namespace zerofarm::cli
