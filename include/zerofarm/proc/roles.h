#pragma once
// The process roles of a farm. Each runs in its own process over the run's
// shared-memory segment and returns its exit code (core/exit_codes.h).
//
//   supervisor  RunFarm             single-threaded; never touches LibTorch
//   worker      RunWorker           fork()ed; K games, MCTS, leaves -> its ring
//   evaluator   RunEvaluatorProcess fork()+exec()ed; batches rings, runs the net
//   writer      RunWriter           fork()ed; finished games -> HDF5 shards
#include <cstdint>
#include <memory>
#include <string>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/proc/binaries.h"  // the binaries (declared here before)
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::shm {
class SegmentMap;
class EvalCacheMemory;
}  // namespace zerofarm::shm

namespace zerofarm::proc {

// Stop reasons written to the segment's stop flag by the supervisor.
inline constexpr uint32_t kStopWorkers = 1;  // workers and evaluators: stop now
inline constexpr uint32_t kStopWriter = 2;   // the workers are gone: drain, flush, exit

// A child of the farm: the supervisor keeps one with each child and tells
// its children apart by it. Name() is the role in the child's log lines
// ("worker-3", "eval-0", "writer"); its process is named "zf-" + Name() for
// ps and top (tests look children up by those names).
struct ChildRole {
  enum class Kind { kWorker, kEvaluator, kWriter };
  Kind kind = Kind::kWorker;
  uint32_t index = 0;  // the worker's or the evaluator's index; 0 for the writer

  std::string Name() const {
    switch (kind) {
      case Kind::kWorker:
        return "worker-" + std::to_string(index);
      case Kind::kEvaluator:
        return "eval-" + std::to_string(index);
      case Kind::kWriter:
        break;
    }
    return "writer";
  }
};

// Runs the whole farm; returns the supervisor's exit code.
int RunFarm(const FarmConfig& config);

// `cache`: the host's shared evaluation cache (--eval-cache), or nullptr.
int RunWorker(const FarmConfig& config, const shm::SegmentMap& map, uint32_t worker,
              const shm::EvalCacheMemory* cache = nullptr);
int RunWriter(const FarmConfig& config, const shm::SegmentMap& map);
// The exec'd evaluator: opens the segment by name, then serves its rings.
int RunEvaluatorProcess(const std::string& segment_name, uint32_t evaluator, const std::string& config_path);

// The network's shape for this run's game and settings.
eval::NetConfig NetConfigFor(const game::Game& game, const FarmConfig& config);
// The evaluator a run asks for: --weights (checked against the game), else a
// random LibTorch net from --seed, else (no LibTorch) the random evaluator.
// Reads a weights file and checks it fits the game (any tower size) and holds
// exactly the tensors its net needs, all finite (io::CheckNetWeights);
// ConfigError (one line) when it does not or cannot be read.
eval::WeightSet LoadWeightsFor(const game::Game& game, const std::string& path);
// The __probe-model command (evaluator_command.h): argv[0] is the command.
// Loads argv[2] for game argv[1] as a CPU evaluator with precision argv[3]
// and probe batch argv[4], after loading the game plugin argv[5] if given;
// ConfigError (exit 2) when it breaks the contract.
int RunModelProbe(int argc, const char* const* argv);
// Runs __probe-model in NetworkBinary() on config.weights, on the CPU (fp32
// where the run's evaluators are on GPUs: they probe again on their device),
// and waits; ConfigError with the child's one line when it refuses the model.
// Before any child of the farm starts; nothing when config.weights is not a
// TorchScript model (.pt) or an AOTInductor package (.pt2; on GPUs only
// each evaluator probes it, on the device it was compiled for).
void ProbeModelBeforeStart(const FarmConfig& config);
// LibTorch settings of this run's evaluators.
eval::TorchOptions TorchOptionsFor(const FarmConfig& config, bool on_gpu);
// on_gpu: CUDA device 0 of this process (an evaluator of a --gpus run).
std::unique_ptr<eval::Evaluator> MakeEvaluatorFor(const game::Game& game, const FarmConfig& config,
                                                  bool on_gpu = false);

// This run's directory (io/run_dir.h: every path of a run): --out, the host
// id (config.host_id must be resolved for the host's paths) and --models.
io::RunDir RunDirOf(const FarmConfig& config);
// Where this host's evaluators load models from under --stage-dir (issue
// 76): STAGE_DIR/RUN_ID-HOST_ID (run id and host id resolved), a host-local
// copy the supervisor keeps (model_watcher.h's ModelStager); "" without it.
std::string ModelStageDir(const FarmConfig& config);

}  // namespace zerofarm::proc
