#pragma once
// Which GPU each evaluator of a host gets: a pure decision, unit-tested
// without any GPU (tests/unit/proc/gpu_plan_test.cpp), in the spirit of
// batch_policy.h. The supervisor reads the environment once
// (ReadGpuEnvironment), asks EvaluatorDevices for the whole plan before any
// child exists, and execs evaluator e with CUDA_VISIBLE_DEVICES set to entry e,
// so each evaluator sees exactly one device, as its device 0. Workers w with
// w % G == e feed evaluator e (shm::SegmentMap::WorkersOf), so P workers split
// into G groups whose sizes differ by at most one.
#include <optional>
#include <string>
#include <vector>

namespace zerofarm::proc {

// What this host says about its GPUs. Plain data, so tests can make any.
struct GpuEnvironment {
  std::optional<std::string> cuda_visible_devices;  // CUDA_VISIBLE_DEVICES, when set (may be "")
  std::optional<std::string> slurm_gpus;            // SLURM_STEP_GPUS, else SLURM_JOB_GPUS, when set
  std::optional<int> slurm_gpus_on_node;            // SLURM_GPUS_ON_NODE, when a number >= 0
  int devices_found = 0;                            // entries of /proc/driver/nvidia/gpus
};

// Reads the variables above and /proc/driver/nvidia/gpus. Never initialises CUDA.
GpuEnvironment ReadGpuEnvironment();

// The devices this host grants, in order, or nullopt when nothing is known
// (no variable set and no /proc/driver/nvidia). CUDA_VISIBLE_DEVICES's
// entries as given (indices, GPU-UUIDs or MIG ids), else Slurm's list, else
// "0".."found-1"; at most SLURM_GPUS_ON_NODE entries. An empty list means:
// no GPU. A list naming devices that do not exist is taken as given (the
// evaluator's CUDA fails on it), so a simulated layout (--simulate-gpus) may
// name any.
std::optional<std::vector<std::string>> VisibleGpus(const GpuEnvironment& env);

// CUDA_VISIBLE_DEVICES of each of `gpus` (>= 1) evaluators. Evaluator e gets
// visible[e]. With more evaluators than devices: share (--share-gpus) puts
// several on one device, visible[e % n] (on one GPU, `--gpus 2 --share-gpus`
// simulates a two-GPU host); without it, ConfigError. When nothing is known,
// "0".."gpus-1" (CUDA decides in the evaluator). simulate (--simulate-gpus:
// the networks run on the CPU, the farm is laid out as for GPUs) turns an
// empty list into "0".."gpus-1" instead of a ConfigError.
std::vector<std::string> EvaluatorDevices(int gpus, const std::optional<std::vector<std::string>>& visible,
                                          bool share, bool simulate);

}  // namespace zerofarm::proc
