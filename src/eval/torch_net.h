#pragma once
// The residual network as LibTorch modules. Private to src/eval: it includes
// LibTorch, so only the eval translation units that already do include it.
#include <torch/torch.h>

#include <memory>
#include <utility>

#include "zerofarm/eval/weights.h"

namespace zerofarm::eval {

struct ResidualBlockImpl : torch::nn::Module {
  explicit ResidualBlockImpl(int filters);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
};
TORCH_MODULE(ResidualBlock);

struct ZeroNetImpl : torch::nn::Module {
  explicit ZeroNetImpl(const NetConfig& config);
  // x: [n, planes, height, width] float. Returns (policy logits [n, actions], value [n]).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x);
  // forward in two halves, for a trainer that puts heads of its own on the
  // tower (the ownership head): the tower's output [n, filters, height, width],
  // and the two heads on it: policy logits and the value head's output, [n] in
  // [-1, 1] (scalar head) or [n, ScoreBins()] logits (score head).
  torch::Tensor Tower(const torch::Tensor& x);
  std::pair<torch::Tensor, torch::Tensor> Heads(const torch::Tensor& h);
  // The value [n] of the value head's output: itself, or a score head's
  // distribution weighed by SetValueDiscount's weights, in fp32.
  torch::Tensor Value(const torch::Tensor& head) const;
  // A score head's value is sum over d of discount^(d - 1) x (p(win at d) -
  // p(loss at d)) (eval/weights.h). The weights are made on the device of the
  // net's parameters: call again after moving the net. 1 until called.
  void SetValueDiscount(double discount);
  const NetConfig& config() const { return config_; }

  NetConfig config_;
  torch::Tensor score_weights_;  // [ScoreBins()] fp32 (score head only); not a parameter or buffer
  torch::nn::Conv2d stem_conv;
  torch::nn::BatchNorm2d stem_bn;
  torch::nn::ModuleList blocks;
  torch::nn::Conv2d policy_conv;
  torch::nn::BatchNorm2d policy_bn;
  torch::nn::Linear policy_fc;
  torch::nn::Conv2d value_conv;
  torch::nn::BatchNorm2d value_bn;
  torch::nn::Linear value_fc1;
  torch::nn::Linear value_fc2;
};
TORCH_MODULE(ZeroNet);

// `t` copied to the host under `name`: int64 tensors (num_batches_tracked)
// into int_data, any other dtype as fp32 into data.
NamedTensor ToNamedTensor(const std::string& name, const torch::Tensor& t);
// Every parameter and buffer under its state_dict name.
WeightSet ExportWeights(ZeroNet& net, uint32_t version);
// Copies `weights` into `net` (on whatever device and in whatever dtype its
// tensors are); ConfigError on a missing, extra or misshapen tensor, found
// before anything is copied, so that `net` is then as it was.
void ImportWeights(ZeroNet& net, const WeightSet& weights);

// A TorchScript model (WeightSet::script, docs/models.md) on `device` in
// `dtype`, in eval mode. The constructor loads it and probes it with a batch
// of 1 and of `probe_rows` zero positions; ConfigError, one line naming the
// file and the broken piece of the contract (load, output count, shapes,
// dtype, a non-finite or out-of-range value, a forward that throws).
class ScriptedNet {
 public:
  ScriptedNet(const WeightSet& weights, torch::Device device, torch::ScalarType dtype, int64_t probe_rows);
  ~ScriptedNet();
  // x: [n, planes, height, width] in the net's dtype on its device. Returns
  // float policy logits [n, actions] and value [n], contiguous. A forward
  // that throws gives NaN outputs (logged), which the farm treats as a NaN
  // model's (proc/evaluator.cpp).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace zerofarm::eval
