#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {

eval::NetConfig NetConfigFor(const game::Game& game, const FarmConfig& config) {
  return eval::GameNetConfig(game, config.blocks, config.filters, eval::NetConfig{}.value_hidden,
                             config.score_head, config.value_channels);
}

eval::WeightSet LoadWeightsFor(const game::Game& game, const std::string& path) {
  try {
    eval::WeightSet weights = io::ReadWeights(path);  // bounded by the file's size (issue 21)
    eval::NetConfig expected = NetConfigFor(game, FarmConfig{});
    // The file decides the tower's size; the game decides its shape.
    expected.blocks = expected.filters = expected.value_hidden = expected.value_channels = 0;
    io::CheckWeightsMatch(weights, expected, path);
    if (weights.config.scripted) return weights;   // checked by its probe when loaded (docs/models.md)
    const int plies = weights.config.score_plies;  // the file decides the head; the game its length
    if (plies != 0 && plies != game.MaxGameLength())
      throw ConfigError(path + ": its score head spans " + std::to_string(plies) + " plies, but a game of " +
                        game.Name() + " lasts at most " + std::to_string(game.MaxGameLength()));
    io::CheckNetWeights(weights, path);  // every tensor exactly as the net needs, all finite
    return weights;
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {  // unreadable weights are bad input in every command: exit 2
    throw ConfigError(e.what());
  }
}

eval::TorchOptions TorchOptionsFor(const FarmConfig& config, bool on_gpu) {
  eval::TorchOptions options;
  options.cuda = on_gpu;
  options.intra_op_threads = config.eval_threads;
  const std::string precision = config.bf16 ? "bf16" : config.fp16 ? "fp16" : config.precision;
  // auto: bf16 on the CPUs where it was measured to pay (eval::AutoPrefersBf16);
  // a GPU stays in fp32 unless asked (the GPU path's bf16 is untested on our machines).
  options.bf16 = precision == "bf16" || (precision == "auto" && !on_gpu && eval::AutoPrefersBf16());
  options.fp16 = precision == "fp16";
  options.cuda_graph = on_gpu && config.gpu_graphs;
  options.depth = config.eval_depth;
  options.value_discount = config.search.value_discount;
  options.probe_batch = config.max_batch;
  return options;
}

std::unique_ptr<eval::Evaluator> MakeEvaluatorFor(const game::Game& game, const FarmConfig& config,
                                                  bool on_gpu) {
  if (config.random_evaluator) return eval::MakeRandomEvaluator(NetConfigFor(game, config), config.seed);
  const eval::TorchOptions options = TorchOptionsFor(config, on_gpu);
  if (!config.weights.empty()) return eval::MakeTorchEvaluator(LoadWeightsFor(game, config.weights), options);
  const eval::NetConfig net = NetConfigFor(game, config);
  if (eval::TorchAvailable()) return eval::MakeTorchEvaluator(eval::RandomWeights(net, config.seed), options);
  ZF_LOG(WARN) << "built without LibTorch: using the random evaluator";
  return eval::MakeRandomEvaluator(net, config.seed);
}

io::RunDir RunDirOf(const FarmConfig& config) {
  return io::RunDir(config.out, config.host_id, config.models);
}

std::string ModelStageDir(const FarmConfig& config) {
  return config.stage_dir.empty() ? "" : config.stage_dir + "/" + config.run_id + "-" + config.host_id;
}

}  // namespace zerofarm::proc
