// The trainer (eval/trainer.h): with torch_evaluator.cpp, the only
// translation units of zerofarm that include LibTorch.
#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <tuple>

#include "torch_net.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/eval/trainer.h"

namespace zerofarm::eval {

namespace {
// Autocast to bf16 on or off, on the CPU or the GPU. LibTorch 2.4 replaced
// the per-device calls (set_cpu_enabled, set_autocast_cpu_dtype: deprecated
// since, with a warning) by calls that take the device type; 1.13 (Debian 12,
// CPU-only) has only the old ones.
void SetAutocastBf16(bool cuda, bool enabled) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  const auto type = cuda ? at::kCUDA : at::kCPU;
  at::autocast::set_autocast_dtype(type, at::kBFloat16);
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (cuda) throw Error("bf16 training on a GPU needs LibTorch 2.4 or later");
  at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  at::autocast::set_cpu_enabled(enabled);
#endif
}

// The network's 4-d (convolution) weights in channels-last (NHWC) memory
// (TrainerOptions::channels_last). Values and names are unchanged, and so is
// what ExportWeights and ExportMomentum write: contiguous() there is NCHW.
// The CPU evaluator stays NCHW: inference in channels-last gained 3-12 % for
// 4x32 and lost 5 % for 6x64 at batch 32 (docs/benchmarks.md, "Channels-last").
void ToChannelsLast(ZeroNet& net) {
  torch::NoGradGuard no_grad;
  for (auto& p : net->parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
}

// A batch array as a tensor on the trainer's device (copied there).
torch::Tensor OnDevice(const void* data, at::IntArrayRef shape, torch::ScalarType type,
                       const torch::Device& device) {
  return torch::from_blob(const_cast<void*>(data), shape, type).to(device);
}
}  // namespace

bool TrainerCudaAvailable() { return torch::cuda::is_available(); }

struct Trainer::Impl {
  explicit Impl(const NetConfig& config) : net(config) {}
  TrainerOptions options;
  torch::Device device{torch::kCPU};
  ZeroNet net;
  bool ChannelsLast() const { return options.channels_last && !options.cuda; }
  // One momentum buffer per parameter, in named_parameters() order.
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
  std::vector<torch::Tensor> momentum;
  void SgdUpdate();
};

// SGD with momentum and L2, as PyTorch's SGD (dampening 0, not Nesterov):
//   g = grad + l2 * w;   m = momentum * m + g;   w -= lr * m.
// Multi-tensor (_foreach) kernels: a handful of launches for the whole net
// where one loop over the parameters launched six per parameter, which bound
// the GPU trainer's pace for small nets (docs/results/gpu-loop-2026-11-26).
// A parameter without a gradient (not in the loss) is left alone.
void Trainer::Impl::SgdUpdate() {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> w, grad, m;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].grad().defined()) continue;
    w.push_back(params[i]);
    grad.push_back(params[i].grad());
    m.push_back(momentum[i]);
  }
  if (w.empty()) return;
  std::vector<torch::Tensor> g = at::_foreach_add(grad, w, options.l2);
  at::_foreach_mul_(m, options.momentum);
  at::_foreach_add_(m, g);
  at::_foreach_add_(w, m, -options.learning_rate);
}

Trainer::Trainer(const WeightSet& start, const TrainerOptions& options)
    : impl_(std::make_unique<Impl>(start.config)) {
  if (!(options.learning_rate > 0) || !std::isfinite(options.learning_rate))
    throw ConfigError("the learning rate must be > 0");
  if (options.momentum < 0 || options.momentum >= 1) throw ConfigError("momentum must be in [0, 1)");
  if (options.l2 < 0) throw ConfigError("l2 must be >= 0");
  if (options.cuda && !TrainerCudaAvailable())
    throw ConfigError("the trainer was asked for a GPU, but this LibTorch sees none");
  impl_->options = options;
  if (options.cuda) impl_->device = torch::Device(torch::kCUDA, 0);
  torch::manual_seed(options.seed);
  at::set_num_threads(std::max(1, options.intra_op_threads));
  KeepFreedMemory();
  ImportWeights(impl_->net, start);  // on the CPU, then moved
  impl_->net->to(impl_->device);
  if (impl_->ChannelsLast()) ToChannelsLast(impl_->net);
  impl_->net->train();
  for (auto& p : impl_->net->named_parameters()) {
    impl_->names.push_back(p.key());
    impl_->params.push_back(p.value());
    impl_->momentum.push_back(torch::zeros_like(p.value()));
  }
}

Trainer::~Trainer() = default;

TrainStepLoss Trainer::Step(const TrainBatch& batch) {
  if (batch.count <= 0 || !batch.features || !batch.policy || !batch.z)
    throw Error("a training batch needs count > 0 and features, policy and z");
  const NetConfig& c = impl_->net->config();
  const int64_t n = batch.count;
  const torch::Device& device = impl_->device;
  auto x =
      OnDevice(batch.features, {n, c.planes, c.height, c.width}, torch::kUInt8, device).to(torch::kFloat);
  if (impl_->ChannelsLast()) x = x.contiguous(at::MemoryFormat::ChannelsLast);
  auto pi = OnDevice(batch.policy, {n, c.actions}, torch::kFloat, device);
  auto z = OnDevice(batch.z, {n}, torch::kFloat, device);

  for (auto& p : impl_->params) p.mutable_grad() = torch::Tensor();
  torch::Tensor logits, value;
  if (impl_->options.bf16) {
    // Autocast only around the forward pass; its cached bf16 weight copies are
    // dropped after it, since the step below changes the weights.
    SetAutocastBf16(impl_->options.cuda, true);
    std::tie(logits, value) = impl_->net->forward(x);
    SetAutocastBf16(impl_->options.cuda, false);
    at::autocast::clear_cache();
    logits = logits.to(torch::kFloat);
    value = value.to(torch::kFloat);
  } else {
    std::tie(logits, value) = impl_->net->forward(x);
  }
  auto ce = -(pi * torch::log_softmax(logits, 1)).sum(1);  // [n]
  torch::Tensor policy_loss;
  if (batch.policy_mask) {
    auto mask = OnDevice(batch.policy_mask, {n}, torch::kUInt8, device).to(torch::kFloat);
    policy_loss = (ce * mask).sum() / mask.sum().clamp_min(1.0);
  } else {
    policy_loss = ce.mean();
  }
  auto value_loss = (value - z).pow(2).mean();
  (policy_loss + value_loss).backward();

  impl_->SgdUpdate();
  // One copy back (one wait for the device) for both losses, not one each.
  const auto losses = torch::stack({policy_loss.detach(), value_loss.detach()}).to(torch::kCPU);
  TrainStepLoss loss;
  loss.policy = losses[0].item<double>();
  loss.value = losses[1].item<double>();
  if (!std::isfinite(loss.policy) || !std::isfinite(loss.value))
    throw Error("the loss is not finite (policy " + std::to_string(loss.policy) + ", value " +
                std::to_string(loss.value) + "): lower the learning rate");
  return loss;
}

WeightSet Trainer::Export(uint32_t version) const { return ExportWeights(impl_->net, version); }

WeightSet Trainer::ExportMomentum() const {
  WeightSet ws;
  ws.config = impl_->net->config();
  for (size_t i = 0; i < impl_->params.size(); ++i) {
    NamedTensor nt;
    nt.name = "momentum." + impl_->names[i];
    const auto t = impl_->momentum[i].to(torch::kCPU).contiguous();
    nt.shape.assign(t.sizes().begin(), t.sizes().end());
    nt.data.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    ws.tensors.push_back(std::move(nt));
  }
  return ws;
}

void Trainer::ImportMomentum(const WeightSet& momentum) {
  if (momentum.tensors.size() != impl_->params.size())
    throw ConfigError("momentum state has " + std::to_string(momentum.tensors.size()) +
                      " tensors; the network has " + std::to_string(impl_->params.size()) + " parameters");
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < impl_->params.size(); ++i) {
    const std::string name = "momentum." + impl_->names[i];
    const NamedTensor* nt = momentum.Find(name);
    const auto& m = impl_->momentum[i];
    std::vector<int64_t> shape(m.sizes().begin(), m.sizes().end());
    if (!nt || nt->shape != shape || static_cast<int64_t>(nt->data.size()) != m.numel())
      throw ConfigError("momentum state lacks tensor '" + name + "' or has it in the wrong shape");
    impl_->momentum[i].copy_(torch::from_blob(const_cast<float*>(nt->data.data()), shape, torch::kFloat));
  }
}

void Trainer::SetLearningRate(double learning_rate) {
  if (!(learning_rate > 0)) throw ConfigError("the learning rate must be > 0");
  impl_->options.learning_rate = learning_rate;
}

const NetConfig& Trainer::Config() const { return impl_->net->config(); }

}  // namespace zerofarm::eval
