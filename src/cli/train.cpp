// zerofarm train: trains the network on a run's newest shards and writes
// checkpoints into RUN/models, which the running farm hot-reloads.
#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/mcts/search_config.h"
#include "zerofarm/proc/train.h"

namespace zerofarm::cli {

int TrainCommand(int argc, char** argv) {
  const proc::TrainConfig d;
  cxxopts::Options options("zerofarm train",
                           "Train on the newest shards of a run; write RUN/models/model-N.h5 checkpoints.\n"
                           "Resumes from RUN/train/state.txt when the run has one.");
  options.add_options("data")
      ("run", "Run directory (reads RUN/shards, writes RUN/models and RUN/train)", cxxopts::value<std::string>())
      ("window", "Train on the newest this-many positions", cxxopts::value<int64_t>()->default_value(std::to_string(d.window)))
      ("min-positions", "Wait until the window holds this many positions",
       cxxopts::value<int64_t>()->default_value(std::to_string(d.min_positions)))
      ("replay", "Samples per position the farm produced, at most (0 = no limit); when ahead, wait for data",
       cxxopts::value<double>()->default_value("4"))
      ("value-discount", "Value target z x this^(plies to the game's end); use the farm's --value-discount (1 = off)",
       cxxopts::value<double>()->default_value("1"))
      ("no-augment", "Do not apply random symmetries of the game")
      ("no-wait", "Stop instead of waiting for new shards");
  options.add_options("network and optimiser")
      ("weights", "Start from this weights file when the run has no model yet (default: a random net)",
       cxxopts::value<std::string>()->default_value(""))
      ("blocks", "Residual blocks of a random start", cxxopts::value<int>()->default_value(std::to_string(d.blocks)))
      ("filters", "Filters of a random start", cxxopts::value<int>()->default_value(std::to_string(d.filters)))
      ("batch", "Positions per step", cxxopts::value<int>()->default_value(std::to_string(d.batch)))
      ("lr", "SGD learning rate", cxxopts::value<double>()->default_value("0.02"))
      ("momentum", "SGD momentum", cxxopts::value<double>()->default_value("0.9"))
      ("l2", "L2 weight decay", cxxopts::value<double>()->default_value("0.0001"))
      ("threads", "LibTorch threads", cxxopts::value<int>()->default_value("1"))
      ("bf16", "Forward pass in bfloat16 (CPU autocast; weights and updates stay fp32): for CPUs with "
               "AVX512-BF16/AMX")
      ("seed", "Seed of sampling and of a random start", cxxopts::value<uint64_t>()->default_value("1"));
  options.add_options("duration and output")
      ("steps", "Stop after this many steps (0 = no limit)", cxxopts::value<int64_t>()->default_value("0"))
      ("duration", "Stop after this many seconds (0 = no limit)", cxxopts::value<double>()->default_value("0"))
      ("checkpoint-steps", "Write a checkpoint every this many steps",
       cxxopts::value<int>()->default_value(std::to_string(d.checkpoint_steps)))
      ("quiet", "No progress line");
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  if (!r.count("run")) throw ConfigError("--run is required");
  proc::TrainConfig c;
  c.run = r["run"].as<std::string>();
  c.window = r["window"].as<int64_t>();
  c.min_positions = r["min-positions"].as<int64_t>();
  c.replay = r["replay"].as<double>();
  c.value_discount = r["value-discount"].as<double>();
  c.augment = !r.count("no-augment");
  c.wait = !r.count("no-wait");
  c.weights = r["weights"].as<std::string>();
  c.blocks = r["blocks"].as<int>();
  c.filters = r["filters"].as<int>();
  c.batch = r["batch"].as<int>();
  c.optim.learning_rate = r["lr"].as<double>();
  c.optim.momentum = r["momentum"].as<double>();
  c.optim.l2 = r["l2"].as<double>();
  c.optim.intra_op_threads = r["threads"].as<int>();
  c.optim.bf16 = r["bf16"].as<bool>();
  c.seed = r["seed"].as<uint64_t>();
  c.steps = r["steps"].as<int64_t>();
  c.duration = r["duration"].as<double>();
  c.checkpoint_steps = r["checkpoint-steps"].as<int>();
  c.progress = !r.count("quiet");
  if (!(c.value_discount >= mcts::kMinValueDiscount && c.value_discount <= 1.0)) throw ConfigError("--value-discount must be in [0.5, 1]");
  if (c.blocks < 1 || c.blocks > 64) throw ConfigError("--blocks must be in [1, 64]");
  if (c.filters < 1 || c.filters > 1024) throw ConfigError("--filters must be in [1, 1024]");
  if (c.optim.intra_op_threads < 1 || c.optim.intra_op_threads > 256) throw ConfigError("--threads must be in [1, 256]");
  return proc::RunTrainer(c);
}

}  // namespace zerofarm::cli
