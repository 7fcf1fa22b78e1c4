#pragma once
// Training the residual network with LibTorch: one optimiser step per batch
// of (features, policy target, value target). This header does not include
// LibTorch; only src/eval/torch_train.cpp does. Reading shards, sampling and
// checkpoint files are the learn layer's job (learn/train.h): the trainer sees
// plain arrays.
//
// Loss per position: cross-entropy between the policy target and
// softmax(logits) (over all actions; targets are 0 on illegal ones) +
// value_weight x (value - z)^2 (with a score head: x the cross-entropy of its
// bins) [+ ownership_weight x the mean over cells of
// (ownership - its target)^2, with the ownership head]; the batch loss is their mean, and L2 regularisation
// enters as weight decay in the update (equivalent to adding l2/2 * |w|^2 to the loss). The optimiser is SGD
// with (heavy-ball) momentum, written out here so its state is a set of named tensors that a checkpoint can
// store and a resumed trainer can load:
//   g = grad + l2 * w;  m = momentum * m + g;  w -= learning_rate * m
// BatchNorm layers train on batch statistics and keep running averages, which
// the exported weights carry (the evaluator runs in eval mode).
#include <cstdint>
#include <memory>

#include "zerofarm/eval/weights.h"

namespace zerofarm::eval {

struct TrainerOptions {
  double learning_rate = 0.02;
  double momentum = 0.9;
  double l2 = 1e-4;          // weight decay on every parameter
  int intra_op_threads = 1;  // LibTorch threads for the step
  // Forward pass in bfloat16 (LibTorch CPU autocast; weights, gradients,
  // momentum and losses stay fp32). `--precision auto` sets it where bf16
  // measured faster than fp32: AMX, or AVX512-BF16 on AMD (AutoPrefersBf16 in
  // eval/cpu_features.h); on an Intel CPU without AMX it was 0.66-0.70x.
  bool bf16 = false;
  uint64_t seed = 1;  // dropout-free net: seeds only LibTorch's RNG
  // Train on the first CUDA GPU this process sees (weights, momentum and the
  // step there; batches copied in, checkpoints copied out). Error at
  // construction when this LibTorch sees none. bf16 then autocasts on the GPU.
  bool cuda = false;
  // On the CPU, keep convolution weights, activations and their gradients in
  // channels-last (NHWC) memory: oneDNN then skips reordering every tensor to
  // and from its own layout. Same step, within float rounding; exports and
  // checkpoints are NCHW either way. The 4x32 Connect Four net trains 1.37x
  // the samples/s of NCHW on a 2-core AVX2 EPYC (docs/benchmarks.md,
  // "Channels-last"). Ignored with cuda (not measured on a GPU).
  bool channels_last = true;
  // With cuda and fp32: after a few eager steps, capture one step (forward,
  // backward, update) as a CUDA graph and replay it, the batch copied into its
  // fixed input tensors. The same step (the [gpu] test compares them) in one
  // launch where eager mode launches a few hundred kernels, each a few
  // microseconds of CPU, which bound the GPU trainer of small nets
  // (117d650:docs/results/gpu-loop-6x64-2026-11-27). A batch of another size or mask
  // falls back to an eager step; SetLearningRate captures again. ConfigError
  // at construction without cuda, with bf16, or in a build without CUDA.
  bool cuda_graph = false;
  // > 0: train an ownership head beside the policy and value heads, with its
  // loss at this weight. The head (conv1x1 of the tower to one plane, tanh)
  // predicts, cell by cell, who holds it when the game ends: +1 the player to
  // move, -1 the opponent, 0 nobody (TrainBatch::ownership). It is a training
  // aid only, a dense target about which cells each side will get (in Connect
  // Four, the parity the long games turn on): checkpoints (Export) do not hold
  // it and the evaluators never run it; ExportHeads/ImportHeads carry it from
  // one invocation to the next. The CUDA graph step trains it too.
  double ownership_weight = 0.0;
  // The value loss's weight beside the policy's 1 (> 0): the scalar head's
  // squared error or the score head's cross-entropy (about 2 nats, twice the
  // policy's, where the squared error is about 0.16). The losses a Step
  // returns are unweighted.
  double value_weight = 1.0;
};

// Whether this process's LibTorch sees a CUDA GPU (false in CPU-only builds).
bool TrainerCudaAvailable();

// Whether a trainer of these options can run its step as a CUDA graph: on a
// GPU, in fp32, in a build with CUDA. TrainerOptions::cuda_graph is refused
// otherwise (CheckTrainerOptions); `zerofarm train --cuda-graph auto` asks it.
bool TrainerCudaGraphCanRun(const TrainerOptions& options);

// ConfigError for options a Trainer would refuse (the constructor calls it), so
// that a command can refuse them at start, before it waits for data.
void CheckTrainerOptions(const TrainerOptions& options);

// One batch, row-major, owned by the caller for the duration of Step.
struct TrainBatch {
  const uint8_t* features = nullptr;  // count x planes x height x width
  const float* policy = nullptr;      // count x actions, each row sums to 1
  const float* z = nullptr;           // count, in [-1, 1], mover's view
  // count flags, or nullptr for "all 1": rows with 0 (a playout-capped fast
  // search) train the value head only.
  const uint8_t* policy_mask = nullptr;
  // count x height x width, each -1, 0 or +1 (TrainerOptions::ownership_weight):
  // required with the ownership head, ignored without it.
  const int8_t* ownership = nullptr;
  // count bins of the score head (NetConfig::ScoreBins, eval/weights.h's ScoreBin):
  // required with a score head, which learns them in place of z; ignored without.
  const int16_t* score_bin = nullptr;
  int count = 0;
};

struct TrainStepLoss {
  double policy = 0.0;     // mean cross-entropy over rows with a policy target (nats)
  double value = 0.0;      // mean squared error of the value; with a score head, its cross-entropy (nats)
  double ownership = 0.0;  // mean squared error of the ownership head per cell (unweighted); 0 without it
};

class Trainer {
 public:
  // Starts from `start` (its architecture, weights and BatchNorm statistics).
  // Throws ConfigError for weights that do not fit their own config, or bad options.
  Trainer(const WeightSet& start, const TrainerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One optimiser step. Throws Error for an empty batch or missing arrays.
  TrainStepLoss Step(const TrainBatch& batch);

  // The current weights (parameters and BatchNorm buffers) as `version`.
  WeightSet Export(uint32_t version) const;
  // The momentum buffers, one tensor per parameter, named "momentum.<name>".
  // Stored next to checkpoints; config and version are those of Export.
  WeightSet ExportMomentum() const;
  // Loads buffers written by ExportMomentum; ConfigError on a name or shape
  // that does not match this network's parameters.
  // (Momentum for the ownership head is optional: absent, it starts at zero;
  // present without the head, it is ignored.)
  void ImportMomentum(const WeightSet& momentum);

  // The ownership head's weights ("ownership_head.conv.weight" and ".bias");
  // empty tensors without the head. ImportHeads: ConfigError on a missing or
  // misshapen tensor; without the head, nothing to do.
  WeightSet ExportHeads(uint32_t version) const;
  void ImportHeads(const WeightSet& heads);
  bool HasOwnershipHead() const;

  void SetLearningRate(double learning_rate);
  const NetConfig& Config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerofarm::eval
