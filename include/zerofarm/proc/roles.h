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
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::shm {
class SegmentMap;
class EvalCacheMemory;
}

namespace zerofarm::proc {

// Stop reasons written to the segment's stop flag by the supervisor.
inline constexpr uint32_t kStopWorkers = 1;  // workers and evaluators: stop now
inline constexpr uint32_t kStopWriter = 2;   // the workers are gone: drain, flush, exit

// Runs the whole farm; returns the supervisor's exit code.
int RunFarm(const FarmConfig& config);

// `cache`: the host's shared evaluation cache (--eval-cache), or nullptr.
int RunWorker(const FarmConfig& config, const shm::SegmentMap& map, uint32_t worker,
              const shm::EvalCacheMemory* cache = nullptr);
int RunWriter(const FarmConfig& config, const shm::SegmentMap& map);
// The exec'd evaluator: opens the segment by name, then serves its rings.
int RunEvaluatorProcess(const std::string& segment_name, uint32_t evaluator,
                        const std::string& config_path);

// The network's shape for this run's game and settings.
eval::NetConfig NetConfigFor(const game::Game& game, const FarmConfig& config);
// The evaluator a run asks for: --weights (checked against the game), else a
// random LibTorch net from --seed, else (no LibTorch) the random evaluator.
// Reads a weights file and checks it fits the game (any tower size) and holds
// exactly the tensors its net needs, all finite (io::CheckNetWeights);
// ConfigError (one line) when it does not or cannot be read.
eval::WeightSet LoadWeightsFor(const game::Game& game, const std::string& path);
// LibTorch settings of this run's evaluators.
eval::TorchOptions TorchOptionsFor(const FarmConfig& config, bool on_gpu);
// on_gpu: CUDA device 0 of this process (an evaluator of a --gpus run).
std::unique_ptr<eval::Evaluator> MakeEvaluatorFor(const game::Game& game, const FarmConfig& config,
                                                  bool on_gpu = false);

// The two binaries of a build (src/CMakeLists.txt): `zerofarm`, with no
// LibTorch, runs the supervisor and forks the workers and the writer; the
// commands that run a network, the evaluator role among them, run in
// eval::kTorchBinary. Each hands the other's commands over by exec (same pid,
// same arguments).
inline constexpr const char* kFarmBinary = "zerofarm";
// This process's binary (/proc/self/exe); Error when unreadable.
std::string SelfBinary();
// NAME in the directory of this process's binary.
std::string SiblingBinary(const std::string& name);
// The binary that runs a network: this one when it links LibTorch; else
// eval::kTorchBinary beside it when the build has LibTorch (Error when that
// file is missing); else this one (a build without LibTorch: the random
// evaluator).
std::string NetworkBinary();
// The binary that runs a farm's supervisor: kFarmBinary beside this one when
// it is there, else this one.
std::string FarmBinary();

// This run's directory (io/run_dir.h: every path of a run): --out, the host
// id (config.host_id must be resolved for the host's paths) and --models.
io::RunDir RunDirOf(const FarmConfig& config);

}  // namespace zerofarm::proc
