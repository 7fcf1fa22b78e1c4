// zerofarm train: trains the network on a run's newest shards and writes
// checkpoints into RUN/models, which the running farm hot-reloads.
#include "zerofarm/learn/train.h"

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/trainer.h"
#include "zerofarm/mcts/search_config.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

namespace {

// The optimiser's options: the rate, momentum, L2, the device and the precision.
eval::TrainerOptions OptimiserFrom(const cxxopts::ParseResult& r, const proc::FarmConfig& shared) {
  eval::TrainerOptions o;
  o.learning_rate = r["lr"].as<double>();
  o.momentum = r["momentum"].as<double>();
  o.l2 = r["l2"].as<double>();
  o.ownership_weight = r["ownership"].as<double>();
  o.value_weight = r["value-weight"].as<double>();
  o.intra_op_threads = shared.eval_threads;
  const std::string device = r["device"].as<std::string>();
  if (device != "auto" && device != "cpu" && device != "cuda")
    throw ConfigError("--device must be auto, cpu or cuda, not '" + device + "'");
  o.cuda = device == "cuda" || (device == "auto" && eval::TrainerCudaAvailable());
  // The farm's rule (eval::AutoPrefersBf16): auto is bf16 with AMX or on AMD
  // with AVX512-BF16, fp32 on other CPUs (0.66-0.70x on an Intel one with
  // AVX512-BF16 but no AMX, 2.6x slower emulated without it) and on a GPU.
  o.bf16 = proc::TorchOptionsFor(shared, o.cuda).bf16;
  // auto: the graph wherever it can run (a GPU, fp32, a CUDA build); it takes
  // the eager step's place at 3.1x its pace for the 6x64 net on an H200
  // (117d650:docs/results/gpu-loop-6x64-lr01-2026-11-27).
  const std::string graph = r["cuda-graph"].as<std::string>();
  if (graph != "auto" && graph != "on" && graph != "off")
    throw ConfigError("--cuda-graph must be auto, on or off, not '" + PrintableText(graph) + "'");
  o.cuda_graph = graph == "on" || (graph == "auto" && eval::TrainerCudaGraphCanRun(o));
  eval::CheckTrainerOptions(o);  // now, not after waiting for data
  return o;
}

}  // namespace

int TrainCommand(int argc, char** argv) {
  const learn::TrainConfig d;
  cxxopts::Options options("zerofarm train",
                           "Train on the newest shards of a run; write RUN/models/model-N.h5 checkpoints.\n"
                           "Resumes from RUN/train/state.txt when the run has one.");
  // The options it shares with run (the net, its seed, the value discount,
  // threads, precision, duration, --no-status) come from the option table.
  AddTableOptions(options, proc::kTrain);
  options.add_options("data")("run", "Run directory (reads RUN/shards, writes RUN/models and RUN/train)",
                              cxxopts::value<std::string>())(
      "window", "Train on the newest this-many positions",
      cxxopts::value<int64_t>()->default_value(std::to_string(d.window)))(
      "min-positions", "Wait until the window holds this many positions",
      cxxopts::value<int64_t>()->default_value(std::to_string(d.min_positions)))(
      "replay", "Samples per position the farm produced, at most (0 = no limit); when ahead, wait for data",
      cxxopts::value<double>()->default_value("4"))("q-weight",
                                                    "Value target: (1 - W) x the game's result (discounted) "
                                                    "+ W x the search's value of the position, W in [0, 1]",
                                                    cxxopts::value<double>()->default_value("0"))(
      "bootstrap-sampled",
      "Value target before a move that was not the search's best (a sampled one): the search's value "
      "of that move's position, not the game's result")(
      "ownership",
      "Train an ownership head (who holds each cell when the game ends) beside the policy and value, its "
      "loss at weight W (0 = none); a training aid the checkpoints leave out",
      cxxopts::value<double>()->default_value("0"))(
      "no-augment", "Do not apply random symmetries of the game")("no-wait",
                                                                  "Stop instead of waiting for new shards");
  options.add_options("optimiser")("batch", "Positions per step",
                                   cxxopts::value<int>()->default_value(std::to_string(d.batch)))(
      "lr", "SGD learning rate", cxxopts::value<double>()->default_value("0.02"))(
      "momentum", "SGD momentum", cxxopts::value<double>()->default_value("0.9"))(
      "l2", "L2 weight decay", cxxopts::value<double>()->default_value("0.0001"))(
      "value-weight",
      "The value loss's weight beside the policy loss's 1 (the scalar head's squared error or the score "
      "head's cross-entropy)",
      cxxopts::value<double>()->default_value("1"))(
      "device", "Where the step runs: auto (a GPU when this LibTorch sees one), cpu, cuda",
      cxxopts::value<std::string>()->default_value("auto"))(
      "cuda-graph",
      "Replay each step as one captured CUDA graph after 3 eager steps (the same step): auto (on a GPU in "
      "fp32), on, off (--cuda-graph=off); --cuda-graph alone is on",
      cxxopts::value<std::string>()->default_value("auto")->implicit_value("on"));
  options.add_options("duration and output")("steps", "Stop after this many steps (0 = no limit)",
                                             cxxopts::value<int64_t>()->default_value("0"))(
      "checkpoint-steps", "Write a checkpoint every this many steps",
      cxxopts::value<int>()->default_value(std::to_string(d.checkpoint_steps)));
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  if (!r.count("run")) throw ConfigError("--run is required");
  const proc::FarmConfig shared = ReadTableOptions(r, proc::kTrain);
  CheckTableOptions(shared, proc::kTrain);
  if (shared.fp16 || shared.precision == "fp16")
    throw ConfigError("--precision: the trainer runs fp32 or bf16");
  learn::TrainConfig c;
  c.run = r["run"].as<std::string>();
  c.window = r["window"].as<int64_t>();
  c.min_positions = r["min-positions"].as<int64_t>();
  c.replay = r["replay"].as<double>();
  c.value_discount = shared.search.value_discount;
  c.q_weight = r["q-weight"].as<double>();
  if (!(c.q_weight >= 0.0 && c.q_weight <= 1.0)) throw ConfigError("--q-weight must be in [0, 1]");
  c.bootstrap_sampled = r.count("bootstrap-sampled") > 0;
  c.augment = !r.count("no-augment");
  c.wait = !r.count("no-wait");
  c.weights = shared.weights;
  c.blocks = shared.blocks;
  c.filters = shared.filters;
  c.score_head = shared.score_head;
  c.value_channels = shared.value_channels;
  c.batch = r["batch"].as<int>();
  c.optim = OptimiserFrom(r, shared);
  c.seed = shared.seed;
  c.steps = r["steps"].as<int64_t>();
  c.duration = shared.duration;
  c.checkpoint_steps = r["checkpoint-steps"].as<int>();
  c.progress = shared.status_line;
  return learn::RunTrainer(c);
}

}  // namespace zerofarm::cli
