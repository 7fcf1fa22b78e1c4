#pragma once
// The LibTorch network and evaluator. This header does not include LibTorch;
// only src/eval/torch_evaluator.cpp does. Its functions come from the eval
// backend a binary links (src/CMakeLists.txt): LibTorch in zerofarm-torch and
// the tests, none in `zerofarm` (the supervisor's binary) and in builds
// without LibTorch, where TorchAvailable() is false and the factories throw
// zerofarm::Error.
#include <cstdint>
#include <memory>
#include <string>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/eval/weights.h"

namespace zerofarm::eval {

struct TorchOptions {
  int intra_op_threads = 1;  // the cores belong to the workers
  bool bf16 = false;         // run the network in bfloat16 (CPU with AVX512_BF16, or GPU)
  bool fp16 = false;         // run the network in float16 (GPU only)
  bool cuda = false;         // run on CUDA device 0 (the evaluator's CUDA_VISIBLE_DEVICES)
  // With cuda: run the network as CUDA graphs, one captured per batch size
  // rounded up to a power of two (at least 16, at most 4096; larger batches
  // run eagerly), the leaves copied into its fixed input and its outputs
  // copied out. The same forward pass in a few launches where an eager one
  // makes some fifty, each microseconds of CPU, which bound the GPU evaluator
  // (117d650:docs/results/gpu-loop-6x64-lr01-2026-11-27). Ignored without cuda.
  bool cuda_graph = false;
  // With cuda and fp32: TensorFloat-32 for convolutions and matmuls (1), for
  // neither (0: strict fp32), or LibTorch's default (-1: convolutions only).
  // Set before every batch (the flags are LibTorch's, process-wide).
  int tf32 = -1;
  // A score head's value: its distribution weighed by this^(plies to the end - 1)
  // (eval/weights.h); the search's value_discount. Ignored by a scalar head.
  double value_discount = 1.0;
  // A TorchScript model (WeightSet::script) is probed at load with a batch of
  // 1 and one of this many leaves (the farm's largest), on its own device and
  // precision (docs/models.md).
  int probe_batch = 1;
  // Batches in flight (Evaluator::Depth, BatchTickets::kMaxDepth; issue 77).
  // 1: each batch is answered by the time Start returns, as before. More: on
  // a GPU each in-flight batch has its own stream, device input and graphs,
  // so the next batch is copied and launched while this one runs; on the CPU
  // its forward pass waits for Finish (no overlap: the same logic, testable).
  int depth = 1;
};

// True when this binary links LibTorch.
bool TorchAvailable();
// True when the build has LibTorch, whichever binary asks: `zerofarm` links
// none but hands the commands that need it to kTorchBinary beside it.
bool TorchBuilt();
inline constexpr const char* kTorchBinary = "zerofarm-torch";
// True when this build's LibTorch has CUDA. A fact of the build, the same in
// every binary: asking it initialises nothing (the supervisor may call it).
bool CudaBuilt();
// True when this build's LibTorch (2.x) loads AOTInductor packages (.pt2,
// docs/models.md); a fact of the build, as CudaBuilt. Debian's 1.13: false.
bool AotiBuilt();
// The LibTorch version built against ("1.13.1"; "" without LibTorch).
std::string TorchVersionBuilt();
// CUDA devices this process sees. Initialises CUDA: call it only in an
// evaluator or a test, never in the supervisor. 0 when !CudaBuilt().
int CudaDeviceCount();

// Fresh weights for `config` with PyTorch's default initialisation, seeded.
// version 0 means "random".
WeightSet RandomWeights(const NetConfig& config, uint64_t seed);

// An evaluator running `weights` on the CPU under InferenceMode. Throws
// ConfigError when a tensor is missing, extra or of the wrong shape. For a
// TorchScript model (weights.script), the module is loaded and probed
// (TorchOptions::probe_batch): ConfigError with one line naming what breaks
// the contract of docs/models.md. Its forward throwing later, in a farm,
// gives NaN outputs for that batch (logged), handled as a NaN model's.
std::unique_ptr<Evaluator> MakeTorchEvaluator(const WeightSet& weights, const TorchOptions& options);

}  // namespace zerofarm::eval
