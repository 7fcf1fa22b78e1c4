// The trainer (eval/trainer.h): with torch_evaluator.cpp, the only
// translation units of zerofarm that include LibTorch.
#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <tuple>

#ifdef ZF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include "torch_net.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/eval/trainer.h"

namespace zerofarm::eval {

namespace {
// The ownership head's tensors, in ExportHeads and (prefixed) ExportMomentum.
const char* const kOwnershipWeight = "ownership_head.conv.weight";
const char* const kOwnershipBias = "ownership_head.conv.bias";
bool IsOwnershipName(const std::string& name) { return name.find("ownership_head.") != std::string::npos; }

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

// Copies of kept tensors (momentum, the heads) into the trainer's: each
// target beside its source, already checked to fit (CheckedSource), so that
// a file that does not fit is refused before any copy and changes nothing.
using CheckedCopies = std::vector<std::pair<torch::Tensor, const NamedTensor*>>;

// `set`'s float tensor `name` if it fits `target` (shape and size); nullptr if
// `set` lacks it; ConfigError, naming `what`, if it has it in another shape.
const NamedTensor* CheckedSource(const WeightSet& set, const std::string& name, const torch::Tensor& target,
                                 const std::string& what) {
  const NamedTensor* nt = set.Find(name);
  if (!nt) return nullptr;
  const std::vector<int64_t> shape(target.sizes().begin(), target.sizes().end());
  if (nt->shape != shape || static_cast<int64_t>(nt->data.size()) != target.numel())
    throw ConfigError(what + " has tensor '" + name + "' in the wrong shape");
  return nt;
}

void CopyChecked(const CheckedCopies& copies) {
  torch::NoGradGuard no_grad;
  for (const auto& [target, nt] : copies)
    target.copy_(torch::from_blob(const_cast<float*>(nt->data.data()), target.sizes(), torch::kFloat));
}

// A batch array as a tensor on the trainer's device (copied there).
torch::Tensor OnDevice(const void* data, at::IntArrayRef shape, torch::ScalarType type,
                       const torch::Device& device) {
  return torch::from_blob(const_cast<void*>(data), shape, type).to(device);
}
}  // namespace

bool TrainerCudaAvailable() { return torch::cuda::is_available(); }

bool TrainerCudaGraphCanRun(const TrainerOptions& options) {
#ifdef ZF_WITH_CUDA
  return options.cuda && !options.bf16;
#else
  return false;
#endif
}

#ifdef ZF_WITH_CUDA
// One training step captured as a CUDA graph (TrainerOptions::cuda_graph). Its
// inputs and losses are fixed device tensors that every replay reads and
// writes; the batch reaches them through pinned host copies of the same
// shapes. Warm-up, capture and replays all run on `stream`, a stream of the
// pool: capture needs one that is not the default stream, and cuBLAS and
// cuDNN set up their per-stream state in the warm-up steps, not in capture.
struct GraphedStep {
  static constexpr int kWarmupSteps = 3;  // eager steps on `stream` before the capture
  int warm = 0;                           // eager steps taken on `stream` so far
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  std::unique_ptr<at::cuda::CUDAGraph> graph;  // null until captured, and after SetLearningRate
  int64_t count = 0;                           // the captured batch's size
  bool has_mask = false;                       // whether it had a policy mask
  torch::Tensor features, policy, z, mask;     // on the device, read by the graph
  torch::Tensor ownership;                     // the same, with the ownership head
  torch::Tensor score_bin;                     // the same, with a score head
  torch::Tensor host_features, host_policy, host_z, host_mask, host_ownership, host_score_bin;  // pinned
  torch::Tensor losses;  // {policy, value} on the device, written by it
};
#endif

struct Trainer::Impl {
  explicit Impl(const NetConfig& config) : net(config) {}
  TrainerOptions options;
  torch::Device device{torch::kCPU};
  ZeroNet net;
  // With options.ownership_weight > 0: the ownership head on net's tower. Not
  // a module of net, so that checkpoints (ExportWeights) leave it out.
  torch::nn::Conv2d ownership_conv{nullptr};
  bool ChannelsLast() const { return options.channels_last && !options.cuda; }
  void MakeOwnershipHead(int filters);
  // The head's parameters under their names (kOwnershipWeight, kOwnershipBias); none without it.
  std::vector<std::pair<std::string, torch::Tensor>> OwnershipTensors() const;
  // One momentum buffer per parameter, in named_parameters() order.
  std::vector<std::string> names;
  std::vector<torch::Tensor> params;
  std::vector<torch::Tensor> momentum;
  void SgdUpdate();
  bool HasScoreHead() const { return net->config().score_plies > 0; }
  torch::Tensor StepOn(const torch::Tensor& features, const torch::Tensor& policy, const torch::Tensor& z,
                       const torch::Tensor& mask, const torch::Tensor& ownership,
                       const torch::Tensor& score_bin);
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> Forward(const torch::Tensor& x);
  torch::Tensor EagerStep(const TrainBatch& batch);
#ifdef ZF_WITH_CUDA
  std::unique_ptr<GraphedStep> graphed;  // with options.cuda_graph
  torch::Tensor GraphStep(const TrainBatch& batch);
  void Capture(const TrainBatch& batch);
#endif
};

// SGD with momentum and L2, as PyTorch's SGD (dampening 0, not Nesterov):
//   g = grad + l2 * w;   m = momentum * m + g;   w -= lr * m.
// Multi-tensor (_foreach) kernels: a handful of launches for the whole net
// where one loop over the parameters launched six per parameter, which bound
// the GPU trainer's pace for small nets (117d650:docs/results/gpu-loop-2026-11-26).
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

void CheckTrainerOptions(const TrainerOptions& options) {
  if (!(options.learning_rate > 0) || !std::isfinite(options.learning_rate))
    throw ConfigError("the learning rate must be > 0");
  if (options.momentum < 0 || options.momentum >= 1) throw ConfigError("momentum must be in [0, 1)");
  if (options.l2 < 0) throw ConfigError("l2 must be >= 0");
  if (!(options.ownership_weight >= 0) || !std::isfinite(options.ownership_weight))
    throw ConfigError("the ownership weight must be >= 0");
  if (!(options.value_weight > 0) || !std::isfinite(options.value_weight))
    throw ConfigError("the value weight must be > 0");
  if (options.cuda && !TrainerCudaAvailable())
    throw ConfigError("the trainer was asked for a GPU, but this LibTorch sees none");
  if (options.cuda_graph && !TrainerCudaGraphCanRun(options))
    throw ConfigError(options.cuda && !options.bf16
                          ? "--cuda-graph needs a build with CUDA (a CUDA graph of the step)"
                          : "--cuda-graph needs the trainer on a GPU, in fp32 (a CUDA graph of the step)");
}

// On the trainer's device, in its memory layout, initialised from LibTorch's
// RNG (seeded by the constructor).
void Trainer::Impl::MakeOwnershipHead(int filters) {
  ownership_conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(filters, 1, 1).bias(true));
  ownership_conv->to(device);
  if (!ChannelsLast()) return;
  torch::NoGradGuard no_grad;
  ownership_conv->weight.set_data(ownership_conv->weight.contiguous(at::MemoryFormat::ChannelsLast));
}

std::vector<std::pair<std::string, torch::Tensor>> Trainer::Impl::OwnershipTensors() const {
  if (ownership_conv.is_empty()) return {};
  return {{kOwnershipWeight, ownership_conv->weight}, {kOwnershipBias, ownership_conv->bias}};
}

namespace {
// `w`, unless it is a TorchScript model: the built-in trainer trains the built-in net only.
const WeightSet& Trainable(const WeightSet& w) {
  if (w.config.scripted)
    throw ConfigError((w.source.empty() ? std::string("a TorchScript model") : w.source) +
                      ": zerofarm's trainer trains its own net only; train a TorchScript model in PyTorch "
                      "(examples/train_torch.py, docs/models.md)");
  return w;
}
}  // namespace

Trainer::Trainer(const WeightSet& start, const TrainerOptions& options)
    : impl_(std::make_unique<Impl>(Trainable(start).config)) {
  CheckTrainerOptions(options);
  impl_->options = options;
  if (options.cuda) impl_->device = torch::Device(torch::kCUDA, 0);
  torch::manual_seed(options.seed);
  at::set_num_threads(std::max(1, options.intra_op_threads));
  KeepFreedMemory();
  ImportWeights(impl_->net, start);  // on the CPU, then moved
  impl_->net->to(impl_->device);
  if (impl_->ChannelsLast()) ToChannelsLast(impl_->net);
  impl_->net->train();
  std::vector<std::pair<std::string, torch::Tensor>> params;
  for (auto& p : impl_->net->named_parameters()) params.emplace_back(p.key(), p.value());
  if (options.ownership_weight > 0) impl_->MakeOwnershipHead(start.config.filters);
  for (auto& named : impl_->OwnershipTensors()) params.push_back(named);
  for (auto& [name, p] : params) {
    impl_->names.push_back(name);
    impl_->params.push_back(p);
    impl_->momentum.push_back(torch::zeros_like(p));
  }
#ifdef ZF_WITH_CUDA
  if (options.cuda_graph) impl_->graphed = std::make_unique<GraphedStep>();
#endif
}

Trainer::~Trainer() = default;

// The forward pass: policy logits, the value head's output (a value, or a
// score head's logits) and (with the head, else undefined) ownership
// [n, height x width] in [-1, 1], in fp32 whatever the autocast.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> Trainer::Impl::Forward(const torch::Tensor& x) {
  // Autocast only around the forward pass; its cached bf16 weight copies are
  // dropped after it, since the step changes the weights.
  if (options.bf16) SetAutocastBf16(options.cuda, true);
  const torch::Tensor h = net->Tower(x);
  auto [logits, value] = net->Heads(h);
  torch::Tensor own;
  if (ownership_conv) own = torch::tanh(ownership_conv(h).to(torch::kFloat)).flatten(1);
  if (options.bf16) {
    SetAutocastBf16(options.cuda, false);
    at::autocast::clear_cache();
  }
  return {logits.to(torch::kFloat), value.to(torch::kFloat), own};
}

// Forward, losses, backward and update on batch tensors already on the device
// (mask undefined: every row's policy counts; ownership: the head's targets,
// int8 [n, height, width], with the head; score_bin: int16 [n], with a score
// head, which then learns them by cross-entropy in place of z by squared
// error). Returns {policy, value} loss (and the ownership loss, with the head)
// on the device; the gradients must be unset (None) on entry.
torch::Tensor Trainer::Impl::StepOn(const torch::Tensor& features, const torch::Tensor& policy,
                                    const torch::Tensor& z, const torch::Tensor& mask,
                                    const torch::Tensor& ownership, const torch::Tensor& score_bin) {
  auto x = features.to(torch::kFloat);
  if (ChannelsLast()) x = x.contiguous(at::MemoryFormat::ChannelsLast);
  auto [logits, value, own] = Forward(x);
  auto ce = -(policy * torch::log_softmax(logits, 1)).sum(1);  // [n]
  torch::Tensor policy_loss;
  if (mask.defined()) {
    auto m = mask.to(torch::kFloat);
    policy_loss = (ce * m).sum() / m.sum().clamp_min(1.0);
  } else {
    policy_loss = ce.mean();
  }
  auto value_loss = HasScoreHead() ? torch::nll_loss(torch::log_softmax(value, 1), score_bin.to(torch::kLong))
                                   : (value - z).pow(2).mean();
  if (!own.defined()) {
    (policy_loss + options.value_weight * value_loss).backward();
    SgdUpdate();
    return torch::stack({policy_loss.detach(), value_loss.detach()});
  }
  auto own_loss = (own - ownership.flatten(1).to(torch::kFloat)).pow(2).mean();
  (policy_loss + options.value_weight * value_loss + options.ownership_weight * own_loss).backward();
  SgdUpdate();
  return torch::stack({policy_loss.detach(), value_loss.detach(), own_loss.detach()});
}

torch::Tensor Trainer::Impl::EagerStep(const TrainBatch& batch) {
  const NetConfig& c = net->config();
  const int64_t n = batch.count;
  for (auto& p : params) p.mutable_grad() = torch::Tensor();
  return StepOn(OnDevice(batch.features, {n, c.planes, c.height, c.width}, torch::kUInt8, device),
                OnDevice(batch.policy, {n, c.actions}, torch::kFloat, device),
                OnDevice(batch.z, {n}, torch::kFloat, device),
                batch.policy_mask ? OnDevice(batch.policy_mask, {n}, torch::kUInt8, device) : torch::Tensor(),
                ownership_conv ? OnDevice(batch.ownership, {n, c.height, c.width}, torch::kInt8, device)
                               : torch::Tensor(),
                HasScoreHead() ? OnDevice(batch.score_bin, {n}, torch::kShort, device) : torch::Tensor());
}

#ifdef ZF_WITH_CUDA
// Fixed inputs for a batch like this one, filled with it, and the step on them
// captured (not run: the caller replays it). The gradients are unset first, so
// that backward allocates them in the graph's memory, where replays write them.
void Trainer::Impl::Capture(const TrainBatch& batch) {
  GraphedStep& g = *graphed;
  const NetConfig& c = net->config();
  const int64_t n = batch.count;
  const auto on = torch::TensorOptions().device(device);
  const auto pinned = torch::TensorOptions().pinned_memory(true);
  g.features = torch::empty({n, c.planes, c.height, c.width}, on.dtype(torch::kUInt8));
  g.policy = torch::empty({n, c.actions}, on.dtype(torch::kFloat));
  g.z = torch::empty({n}, on.dtype(torch::kFloat));
  g.mask = batch.policy_mask ? torch::empty({n}, on.dtype(torch::kUInt8)) : torch::Tensor();
  g.host_features = torch::empty(g.features.sizes(), pinned.dtype(torch::kUInt8));
  g.host_policy = torch::empty(g.policy.sizes(), pinned.dtype(torch::kFloat));
  g.host_z = torch::empty(g.z.sizes(), pinned.dtype(torch::kFloat));
  g.host_mask = batch.policy_mask ? torch::empty({n}, pinned.dtype(torch::kUInt8)) : torch::Tensor();
  if (ownership_conv) {
    g.ownership = torch::empty({n, c.height, c.width}, on.dtype(torch::kInt8));
    g.host_ownership = torch::empty(g.ownership.sizes(), pinned.dtype(torch::kInt8));
  }
  if (HasScoreHead()) {
    g.score_bin = torch::empty({n}, on.dtype(torch::kShort));
    g.host_score_bin = torch::empty({n}, pinned.dtype(torch::kShort));
  }
  g.count = n;
  g.has_mask = batch.policy_mask != nullptr;
  for (auto& p : params) p.mutable_grad() = torch::Tensor();
  torch::cuda::synchronize();  // nothing of earlier steps in flight during the capture
  g.graph = std::make_unique<at::cuda::CUDAGraph>();
  g.graph->capture_begin();
  g.losses = StepOn(g.features, g.policy, g.z, g.mask, g.ownership, g.score_bin);
  g.graph->capture_end();
}

// The batch into the graph's inputs (pinned copies, then copies on the
// graph's stream), then one replay. Returns the losses on the CPU: every call
// waits for its step, so the pinned buffers are free again on return.
torch::Tensor Trainer::Impl::GraphStep(const TrainBatch& batch) {
  GraphedStep& g = *graphed;
  // Whatever the caller's stream did to the weights or momentum (an import)
  // comes first.
  at::cuda::CUDAEvent before;
  before.record(c10::cuda::getCurrentCUDAStream());
  before.block(g.stream);
  c10::cuda::CUDAStreamGuard on_stream(g.stream);
  // Eager steps copy their losses out here too, on this stream: a copy on the
  // caller's stream would not wait for them.
  if (g.warm < GraphedStep::kWarmupSteps) {
    ++g.warm;
    return EagerStep(batch).to(torch::kCPU);
  }
  if (!g.graph || g.count != batch.count || g.has_mask != (batch.policy_mask != nullptr)) {
    if (g.graph && g.count != batch.count) return EagerStep(batch).to(torch::kCPU);  // an odd batch
    Capture(batch);
  }
  std::memcpy(g.host_features.data_ptr(), batch.features, g.host_features.nbytes());
  std::memcpy(g.host_policy.data_ptr(), batch.policy, g.host_policy.nbytes());
  std::memcpy(g.host_z.data_ptr(), batch.z, g.host_z.nbytes());
  if (g.has_mask) std::memcpy(g.host_mask.data_ptr(), batch.policy_mask, g.host_mask.nbytes());
  if (g.ownership.defined())
    std::memcpy(g.host_ownership.data_ptr(), batch.ownership, g.host_ownership.nbytes());
  if (g.score_bin.defined())
    std::memcpy(g.host_score_bin.data_ptr(), batch.score_bin, g.host_score_bin.nbytes());
  g.features.copy_(g.host_features, /*non_blocking=*/true);
  g.policy.copy_(g.host_policy, /*non_blocking=*/true);
  g.z.copy_(g.host_z, /*non_blocking=*/true);
  if (g.has_mask) g.mask.copy_(g.host_mask, /*non_blocking=*/true);
  if (g.ownership.defined()) g.ownership.copy_(g.host_ownership, /*non_blocking=*/true);
  if (g.score_bin.defined()) g.score_bin.copy_(g.host_score_bin, /*non_blocking=*/true);
  g.graph->replay();
  return g.losses.to(torch::kCPU);  // waits for the replay (and the copies before it)
}
#endif

TrainStepLoss Trainer::Step(const TrainBatch& batch) {
  if (batch.count <= 0 || !batch.features || !batch.policy || !batch.z)
    throw Error("a training batch needs count > 0 and features, policy and z");
  if (impl_->ownership_conv && !batch.ownership)
    throw Error("a training batch needs ownership targets for the ownership head");
  if (impl_->HasScoreHead() && !batch.score_bin)
    throw Error("a training batch needs score targets for the score head");
  torch::Tensor losses;
#ifdef ZF_WITH_CUDA
  if (impl_->graphed) losses = impl_->GraphStep(batch);
#endif
  // One copy back (one wait for the device) for both losses, not one each.
  if (!losses.defined()) losses = impl_->EagerStep(batch).to(torch::kCPU);
  TrainStepLoss loss;
  loss.policy = losses[0].item<double>();
  loss.value = losses[1].item<double>();
  if (losses.size(0) > 2) loss.ownership = losses[2].item<double>();
  if (!std::isfinite(loss.policy) || !std::isfinite(loss.value))
    throw Error("the loss is not finite (policy " + std::to_string(loss.policy) + ", value " +
                std::to_string(loss.value) + "): lower the learning rate");
  return loss;
}

WeightSet Trainer::Export(uint32_t version) const { return ExportWeights(impl_->net, version); }

WeightSet Trainer::ExportMomentum() const {
  WeightSet ws;
  ws.config = impl_->net->config();
  for (size_t i = 0; i < impl_->params.size(); ++i)
    ws.tensors.push_back(ToNamedTensor("momentum." + impl_->names[i], impl_->momentum[i]));
  return ws;
}

void Trainer::ImportMomentum(const WeightSet& momentum) {
  size_t net_tensors = 0;  // the file's tensors other than the ownership head's
  for (const auto& nt : momentum.tensors) net_tensors += !IsOwnershipName(nt.name);
  size_t net_params = 0;
  for (const auto& name : impl_->names) net_params += !IsOwnershipName(name);
  if (net_tensors != net_params)
    throw ConfigError("momentum state has " + std::to_string(net_tensors) + " tensors; the network has " +
                      std::to_string(net_params) + " parameters");
  CheckedCopies copies;
  for (size_t i = 0; i < impl_->params.size(); ++i) {
    const std::string name = "momentum." + impl_->names[i];
    const NamedTensor* nt = CheckedSource(momentum, name, impl_->momentum[i], "momentum state");
    if (!nt && IsOwnershipName(name)) continue;  // a head new in this invocation: momentum from zero
    if (!nt) throw ConfigError("momentum state lacks tensor '" + name + "'");
    copies.emplace_back(impl_->momentum[i], nt);
  }
  CopyChecked(copies);  // all checked first: momentum that does not fit changes nothing
}

bool Trainer::HasOwnershipHead() const { return !impl_->ownership_conv.is_empty(); }

WeightSet Trainer::ExportHeads(uint32_t version) const {
  WeightSet ws;
  ws.config = impl_->net->config();
  ws.version = version;
  for (const auto& [name, t] : impl_->OwnershipTensors()) ws.tensors.push_back(ToNamedTensor(name, t));
  return ws;
}

void Trainer::ImportHeads(const WeightSet& heads) {
  CheckedCopies copies;
  for (const auto& [name, t] : impl_->OwnershipTensors()) {
    const NamedTensor* nt = CheckedSource(heads, name, t, "the heads' state");
    if (!nt) throw ConfigError("the heads' state lacks tensor '" + name + "'");
    copies.emplace_back(t, nt);
  }
  CopyChecked(copies);  // all checked first: heads that do not fit change nothing
}

void Trainer::SetLearningRate(double learning_rate) {
  if (!(learning_rate > 0)) throw ConfigError("the learning rate must be > 0");
  impl_->options.learning_rate = learning_rate;
#ifdef ZF_WITH_CUDA
  if (impl_->graphed) impl_->graphed->graph.reset();  // the captured update holds the old rate
#endif
}

const NetConfig& Trainer::Config() const { return impl_->net->config(); }

}  // namespace zerofarm::eval
