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

// The optimiser's options: the rate, momentum, L2 and loss weights as given,
// and the device, precision and CUDA graph resolved on this host.
eval::TrainerOptions OptimiserFrom(const CommandConfig& cc, const proc::FarmConfig& shared) {
  eval::TrainerOptions o = cc.train.optim;
  o.intra_op_threads = shared.eval_threads;
  const std::string& device = cc.train_device;
  o.cuda = device == "cuda" || (device == "auto" && eval::TrainerCudaAvailable());
  // The farm's rule (eval::AutoPrefersBf16): auto is bf16 with AMX or on AMD
  // with AVX512-BF16, fp32 on other CPUs (0.66-0.70x on an Intel one with
  // AVX512-BF16 but no AMX, 2.6x slower emulated without it) and on a GPU.
  o.bf16 = proc::TorchOptionsFor(shared, o.cuda).bf16;
  // auto: the graph wherever it can run (a GPU, fp32, a CUDA build); it takes
  // the eager step's place at 3.1x its pace for the 6x64 net on an H200
  // (117d650:docs/results/gpu-loop-6x64-lr01-2026-11-27).
  const std::string& graph = cc.train_cuda_graph;
  o.cuda_graph = graph == "on" || (graph == "auto" && eval::TrainerCudaGraphCanRun(o));
  eval::CheckTrainerOptions(o);  // now, not after waiting for data
  return o;
}

}  // namespace

learn::TrainConfig TrainConfigFrom(const cxxopts::ParseResult& r) {
  if (!r.count("run")) throw ConfigError("--run is required");
  const proc::FarmConfig shared = ReadTableOptions(r, proc::kTrain);
  CheckTableOptions(shared, proc::kTrain);
  if (shared.fp16 || shared.precision == "fp16")
    throw ConfigError("--precision: the trainer runs fp32 or bf16");
  const CommandConfig cc = ReadCommandOptions(r, proc::kTrain);
  learn::TrainConfig c = cc.train;
  c.value_discount = shared.search.value_discount;
  c.weights = shared.weights;
  c.blocks = shared.blocks;
  c.filters = shared.filters;
  c.score_head = shared.score_head;
  c.value_channels = shared.value_channels;
  // A resumed trainer goes on with its model's net: a shape given here is checked against it.
  c.blocks_given = r.count("blocks") > 0;
  c.filters_given = r.count("filters") > 0;
  c.score_head_given = r.count("score-head") > 0;
  c.value_channels_given = r.count("value-channels") > 0;
  c.optim = OptimiserFrom(cc, shared);
  c.seed = shared.seed;
  c.duration = shared.duration;
  c.progress = shared.status_line;
  return c;
}

void AddTrainOptions(cxxopts::Options& options) {
  // The options it shares with run (the net, its seed, the value discount,
  // threads, precision, duration, --no-status) come from the option table.
  AddTableOptions(options, proc::kTrain);
  AddCommandOptions(options, proc::kTrain);
}

int TrainCommand(int argc, char** argv) {
  cxxopts::Options options("zerofarm train",
                           "Train on the newest shards of a run; write RUN/models/model-N.h5 checkpoints.\n"
                           "Resumes from RUN/train/state.txt when the run has one.");
  AddTrainOptions(options);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  return learn::RunTrainer(TrainConfigFrom(r));
}

}  // namespace zerofarm::cli
