// The LibTorch residual network and its evaluator. With the trainer, the only
// translation unit of zerofarm that includes LibTorch.
#include "zerofarm/eval/torch_evaluator.h"

#include <torch/torch.h>

#include <cmath>
#include <mutex>

#ifdef ZF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <torch/cuda.h>
#endif

#include "torch_net.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/cpu_features.h"

namespace zerofarm::eval {

namespace nn = torch::nn;

// ---- the network ---------------------------------------------------------

ResidualBlockImpl::ResidualBlockImpl(int filters)
    : conv1(nn::Conv2dOptions(filters, filters, 3).padding(1).bias(false)),
      bn1(filters),
      conv2(nn::Conv2dOptions(filters, filters, 3).padding(1).bias(false)),
      bn2(filters) {
  register_module("conv1", conv1);
  register_module("bn1", bn1);
  register_module("conv2", conv2);
  register_module("bn2", bn2);
}

torch::Tensor ResidualBlockImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(bn1(conv1(x)));
  y = bn2(conv2(y));
  return torch::relu(y + x);
}

ZeroNetImpl::ZeroNetImpl(const NetConfig& config)
    : config_(config),
      stem_conv(nn::Conv2dOptions(config.planes, config.filters, 3).padding(1).bias(false)),
      stem_bn(config.filters),
      policy_conv(nn::Conv2dOptions(config.filters, 2, 1).bias(false)),
      policy_bn(2),
      policy_fc(2 * config.height * config.width, config.actions),
      value_conv(nn::Conv2dOptions(config.filters, config.value_channels, 1).bias(false)),
      value_bn(config.value_channels),
      value_fc1(config.value_channels * config.height * config.width, config.value_hidden),
      value_fc2(config.value_hidden, config.ScoreBins()) {
  // Names follow a PyTorch module tree: stem.conv, stem.bn, blocks.N.*,
  // policy_head.{conv,bn,fc}, value_head.{conv,bn,fc1,fc2}.
  auto stem = register_module("stem", std::make_shared<nn::Module>());
  stem->register_module("conv", stem_conv);
  stem->register_module("bn", stem_bn);
  blocks = register_module("blocks", nn::ModuleList());
  for (int i = 0; i < config.blocks; ++i) blocks->push_back(ResidualBlock(config.filters));
  auto policy = register_module("policy_head", std::make_shared<nn::Module>());
  policy->register_module("conv", policy_conv);
  policy->register_module("bn", policy_bn);
  policy->register_module("fc", policy_fc);
  auto value = register_module("value_head", std::make_shared<nn::Module>());
  value->register_module("conv", value_conv);
  value->register_module("bn", value_bn);
  value->register_module("fc1", value_fc1);
  value->register_module("fc2", value_fc2);
  SetValueDiscount(1.0);
}

std::pair<torch::Tensor, torch::Tensor> ZeroNetImpl::forward(const torch::Tensor& x) {
  auto [policy, head] = Heads(Tower(x));
  return {policy, Value(head)};
}

void ZeroNetImpl::SetValueDiscount(double discount) {
  if (config_.score_plies <= 0) return;
  const int plies = config_.score_plies;
  std::vector<float> w(static_cast<size_t>(config_.ScoreBins()), 0.0f);  // the draw bin stays 0
  for (int d = 1; d <= plies; ++d) {
    const auto weight = static_cast<float>(std::pow(discount, d - 1));
    w[static_cast<size_t>(ScoreBin(plies, d, +1))] = weight;
    w[static_cast<size_t>(ScoreBin(plies, d, -1))] = -weight;
  }
  torch::NoGradGuard no_grad;
  score_weights_ = torch::tensor(w).to(value_fc2->weight.device());
}

torch::Tensor ZeroNetImpl::Value(const torch::Tensor& head) const {
  if (config_.score_plies <= 0) return head;
  return torch::mv(torch::softmax(head.to(torch::kFloat), 1), score_weights_);
}

torch::Tensor ZeroNetImpl::Tower(const torch::Tensor& x) {
  auto h = torch::relu(stem_bn(stem_conv(x)));
  for (const auto& block : *blocks) h = block->as<ResidualBlock>()->forward(h);
  return h;
}

std::pair<torch::Tensor, torch::Tensor> ZeroNetImpl::Heads(const torch::Tensor& h) {
  auto p = torch::relu(policy_bn(policy_conv(h))).flatten(1);
  p = policy_fc(p);
  auto v = torch::relu(value_bn(value_conv(h))).flatten(1);
  v = value_fc2(torch::relu(value_fc1(v)));
  if (config_.score_plies <= 0) v = torch::tanh(v).squeeze(1);
  return {p, v};
}

NamedTensor ToNamedTensor(const std::string& name, const torch::Tensor& t) {
  NamedTensor nt;
  nt.name = name;
  nt.shape.assign(t.sizes().begin(), t.sizes().end());
  auto c = t.detach().to(torch::kCPU).contiguous();
  if (c.scalar_type() == torch::kLong) {
    nt.int_data.assign(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
  } else {
    c = c.to(torch::kFloat);
    nt.data.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return nt;
}

WeightSet ExportWeights(ZeroNet& net, uint32_t version) {
  WeightSet ws;
  ws.config = net->config();
  ws.version = version;
  for (const auto& p : net->named_parameters()) ws.tensors.push_back(ToNamedTensor(p.key(), p.value()));
  for (const auto& b : net->named_buffers()) ws.tensors.push_back(ToNamedTensor(b.key(), b.value()));
  return ws;
}

namespace {
// Every tensor of `weights` checked against the net's (names, shapes, sizes;
// none missing, none extra), then, with `copy`, copied in.
void VisitWeights(ZeroNet& net, const WeightSet& weights, bool copy) {
  if (!weights.config.SameShape(net->config()))
    throw ConfigError("weights are for " + weights.config.Describe() + " but the network is " +
                      net->config().Describe());
  torch::NoGradGuard no_grad;
  size_t used = 0;
  auto load = [&](const std::string& name, torch::Tensor& t) {
    const NamedTensor* nt = weights.Find(name);
    if (!nt) throw ConfigError("weights lack tensor '" + name + "'");
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    if (nt->shape != shape) throw ConfigError("weights tensor '" + name + "' has the wrong shape");
    // An integer tensor (num_batches_tracked) by the file's kind, not the
    // net's: a net moved to bf16 or fp16 holds it in that dtype too.
    const bool integral = t.scalar_type() == torch::kLong || !nt->int_data.empty();
    const size_t size = integral ? nt->int_data.size() : nt->data.size();
    if (static_cast<int64_t>(size) != t.numel())
      throw ConfigError("weights tensor '" + name + "' has the wrong size");
    ++used;
    if (!copy) return;
    t.copy_(integral ? torch::from_blob(const_cast<int64_t*>(nt->int_data.data()), shape, torch::kLong)
                     : torch::from_blob(const_cast<float*>(nt->data.data()), shape, torch::kFloat));
  };
  for (auto& p : net->named_parameters()) load(p.key(), p.value());
  for (auto& b : net->named_buffers()) load(b.key(), b.value());
  if (used != weights.tensors.size()) {
    for (const auto& nt : weights.tensors) {
      bool found = false;
      for (const auto& p : net->named_parameters()) found |= p.key() == nt.name;
      for (const auto& b : net->named_buffers()) found |= b.key() == nt.name;
      if (!found) throw ConfigError("weights have an unexpected tensor '" + nt.name + "'");
    }
  }
}
}  // namespace

void ImportWeights(ZeroNet& net, const WeightSet& weights) {
  VisitWeights(net, weights, /*copy=*/false);  // all checks first: weights that do not fit change nothing
  VisitWeights(net, weights, /*copy=*/true);
}

// ---- the evaluator -------------------------------------------------------

namespace {

void ConfigureThreads(int intra_op_threads) {
  static std::once_flag once;
  std::call_once(once, [] {
    // Inter-op parallelism is never used; a pool of 1 avoids idle threads.
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception&) {
    }
  });
  at::set_num_threads(std::max(1, intra_op_threads));
  // OpenBLAS keeps its own pool (Debian's LibTorch calls the BLAS by its
  // generic name, so set_num_threads does not reach it); warn if the BLAS is
  // the reference one.
  ConfigureBlas(intra_op_threads);
  KeepFreedMemory();
}

class TorchEvaluator final : public Evaluator {
 public:
  TorchEvaluator(const WeightSet& weights, const TorchOptions& options)
      : options_(options), config_(weights.config), version_(weights.version) {
    ConfigureThreads(options.intra_op_threads);
    const auto dtype = options_.bf16 ? torch::kBFloat16 : torch::kFloat;
    if (!weights.script.empty()) {
      script_ = std::make_unique<ScriptedNet>(weights, torch::kCPU, dtype, options.probe_batch);
      return;
    }
    net_ = ZeroNet(weights.config);
    ImportWeights(net_, weights);
    net_->eval();
    if (options_.bf16) net_->to(torch::kBFloat16);
    net_->SetValueDiscount(options_.value_discount);
  }

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    c10::InferenceMode guard;
    const NetConfig& c = config_;
    int64_t n = 0;
    for (int i = 0; i < num_chunks; ++i) n += chunks[i].count;
    if (n == 0) return;
    const auto dtype = options_.bf16 ? torch::kBFloat16 : torch::kFloat;
    // The one conversion: uint8 planes read in place -> the network's dtype.
    auto input = torch::empty({n, c.planes, c.height, c.width}, torch::dtype(dtype));
    int64_t row = 0;
    for (int i = 0; i < num_chunks; ++i) {
      const LeafChunk& ch = chunks[i];
      if (ch.count == 0) continue;
      auto blob = torch::from_blob(const_cast<uint8_t*>(ch.features), {ch.count, c.planes, c.height, c.width},
                                   torch::kUInt8);
      input.narrow(0, row, ch.count).copy_(blob);
      row += ch.count;
    }
    auto [policy, value] = script_ ? script_->forward(input) : net_->forward(input);
    // Outputs go straight into the callers' memory (ring slots); in bf16 the
    // copy into the float slots is the conversion (no intermediate tensor).
    row = 0;
    for (int i = 0; i < num_chunks; ++i) {
      const LeafChunk& ch = chunks[i];
      if (ch.count == 0) continue;
      torch::from_blob(ch.policy, {ch.count, c.actions}, torch::kFloat)
          .copy_(policy.narrow(0, row, ch.count));
      torch::from_blob(ch.value, {ch.count}, torch::kFloat).copy_(value.narrow(0, row, ch.count));
      row += ch.count;
    }
  }

  bool UpdateWeights(const WeightSet& weights) override {
    if (script_ || !weights.script.empty()) return false;  // a model file of code: a new evaluator
    ImportWeights(net_, weights);                          // into the net's dtype
    version_ = weights.version;
    return true;
  }

  uint32_t ModelVersion() const override { return version_; }
  const NetConfig& Config() const override { return config_; }
  std::string Describe() const override {
    return "LibTorch CPU " + std::string(options_.bf16 ? "bf16" : "fp32") + ", " + config_.Describe() +
           ", model version " + std::to_string(version_);
  }

 private:
  TorchOptions options_;
  NetConfig config_;
  ZeroNet net_{nullptr};                 // the built-in net, or
  std::unique_ptr<ScriptedNet> script_;  // a TorchScript model
  uint32_t version_;
};

#ifdef ZF_WITH_CUDA
// TorchOptions::tf32 into LibTorch's process-wide flags (issue 77): -1 its
// default (TF32 convolutions, fp32 matmuls), 0 strict fp32, 1 TF32 for both.
void ApplyTf32(int tf32) {
  at::globalContext().setAllowTF32CuDNN(tf32 != 0);
  at::globalContext().setAllowTF32CuBLAS(tf32 == 1);
}

// One forward pass captured as a CUDA graph for batches of up to `rows`
// leaves (TorchOptions::cuda_graph). Replays read `input` and write `policy`
// and `value`, fixed device tensors; rows past a batch's own hold stale
// leaves, whose outputs nobody reads (every row's forward is its own: the
// batch norms run on their stored statistics).
struct GraphedForward {
  static constexpr int64_t kMinRows = 16, kMaxRows = 4096;
  int64_t rows = 0;
  torch::Tensor input;          // uint8, rows x planes x height x width
  torch::Tensor policy, value;  // float, rows x actions and rows
  std::unique_ptr<at::cuda::CUDAGraph> graph;
};

// The GPU evaluator. The process sees one device (CUDA_VISIBLE_DEVICES was
// set before exec), so it uses device 0. The shared-memory segment is
// registered (pinned) once, so the copies of features in and of outputs back
// are DMAs straight from and to the ring slots, asynchronous on a side
// stream; Evaluate returns only after a CUDA event recorded after the last
// copy has passed, so the caller may hand the slots back at once.
class CudaTorchEvaluator final : public Evaluator {
 public:
  CudaTorchEvaluator(const WeightSet& weights, const TorchOptions& options)
      : options_(options),
        config_(weights.config),
        version_(weights.version),
        device_(torch::kCUDA, 0),
        stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, 0)) {
    if (torch::cuda::device_count() < 1) throw Error("no CUDA device is visible to this evaluator");
    // The CPU side only copies and launches: keep LibTorch's CPU pools small,
    // the cores belong to the workers.
    ConfigureThreads(options.intra_op_threads);
    dtype_ = options.bf16 ? torch::kBFloat16 : options.fp16 ? torch::kHalf : torch::kFloat;
    if (!weights.script.empty()) {
      c10::cuda::CUDAStreamGuard on_side_stream(stream_);
      script_ = std::make_unique<ScriptedNet>(weights, device_, dtype_, options.probe_batch);
      return;
    }
    net_ = ZeroNet(weights.config);
    ImportWeights(net_, weights);
    net_->eval();
    net_->to(device_, dtype_);
    net_->SetValueDiscount(options_.value_discount);
  }
  ~CudaTorchEvaluator() override {
    graphs_.clear();  // before the pinned memory the last replays copied from goes
    for (void* p : registered_) cudaHostUnregister(p);
  }

  void RegisterHostMemory(void* base, size_t bytes) override {
    const cudaError_t err = cudaHostRegister(base, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
      throw Error(std::string("cudaHostRegister of ") + std::to_string(bytes) +
                  " bytes of shared memory failed: " + cudaGetErrorString(err));
    registered_.push_back(base);
  }

  // Into the device's parameters, on the side stream, waited for: the
  // captured graphs read the same tensors, so they stay valid.
  bool UpdateWeights(const WeightSet& weights) override {
    if (script_ || !weights.script.empty()) return false;  // a model file of code: a new evaluator
    c10::cuda::CUDAStreamGuard on_side_stream(stream_);
    ImportWeights(net_, weights);
    stream_.synchronize();
    version_ = weights.version;
    return true;
  }

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    c10::InferenceMode guard;
    c10::cuda::CUDAStreamGuard on_side_stream(stream_);
    ApplyTf32(options_.tf32);
    int64_t n = 0;
    for (int i = 0; i < num_chunks; ++i) n += chunks[i].count;
    if (n == 0) return;
    if (options_.cuda_graph && n <= GraphedForward::kMaxRows) {
      const GraphedForward& g = GraphFor(n);
      CopyIn(chunks, num_chunks, g.input);
      g.graph->replay();
      CopyOut(chunks, num_chunks, g.policy, g.value);
    } else {
      const NetConfig& c = config_;
      auto input =
          torch::empty({n, c.planes, c.height, c.width}, torch::dtype(torch::kUInt8).device(device_));
      CopyIn(chunks, num_chunks, input);
      const auto [policy, value] = Forward(input);
      CopyOut(chunks, num_chunks, policy, value);
    }
    // Hand the slots back only once the copies into them have landed.
    at::cuda::CUDAEvent copied;
    copied.record(stream_);
    copied.synchronize();
  }

  uint32_t ModelVersion() const override { return version_; }
  const NetConfig& Config() const override { return config_; }
  std::string Describe() const override {
    return "LibTorch CUDA " +
           std::string(options_.bf16   ? "bf16"
                       : options_.fp16 ? "fp16"
                                       : "fp32") +
           (options_.cuda_graph ? " as CUDA graphs" : "") + ", " + config_.Describe() + ", model version " +
           std::to_string(version_);
  }

 private:
  TorchOptions options_;
  NetConfig config_;
  ZeroNet net_{nullptr};                 // the built-in net, or
  std::unique_ptr<ScriptedNet> script_;  // a TorchScript model
  uint32_t version_;
  torch::Device device_;
  c10::cuda::CUDAStream stream_;
  torch::ScalarType dtype_ = torch::kFloat;
  std::vector<void*> registered_;
  std::vector<GraphedForward> graphs_;  // by rows, captured on first use

  // The network on a uint8 batch on the device: float policy (n x actions) and value (n).
  std::pair<torch::Tensor, torch::Tensor> Forward(const torch::Tensor& input) {
    auto [policy, value] = script_ ? script_->forward(input.to(dtype_)) : net_->forward(input.to(dtype_));
    return {policy.to(torch::kFloat).contiguous(),
            value.to(torch::kFloat).reshape({input.size(0)}).contiguous()};
  }

  // The graph for n leaves: the smallest power of two >= n (and >= kMinRows),
  // captured the first time. Two eager passes at that size come first, on the
  // side stream, so that cuDNN and cuBLAS set up their state there and not
  // inside the capture.
  const GraphedForward& GraphFor(int64_t n) {
    int64_t rows = GraphedForward::kMinRows;
    while (rows < n) rows *= 2;
    for (const auto& g : graphs_)
      if (g.rows == rows) return g;
    const NetConfig& c = config_;
    GraphedForward g;
    g.rows = rows;
    g.input = torch::zeros({rows, c.planes, c.height, c.width}, torch::dtype(torch::kUInt8).device(device_));
    for (int i = 0; i < 2; ++i) Forward(g.input);
    stream_.synchronize();
    g.graph = std::make_unique<at::cuda::CUDAGraph>();
    g.graph->capture_begin();
    std::tie(g.policy, g.value) = Forward(g.input);
    g.graph->capture_end();
    graphs_.push_back(std::move(g));
    return graphs_.back();
  }

  // Every chunk's features into consecutive rows of `input` (uint8 on the device), one DMA a chunk.
  void CopyIn(const LeafChunk* chunks, int num_chunks, const torch::Tensor& input) const {
    // One DMA per chunk each way (three a ring's run of leaves), queued by the
    // CUDA runtime itself: a LibTorch copy_ per chunk (a tensor made,
    // dispatched, checked) costs microseconds of CPU, some 40 a batch, and the
    // GPU evaluator is bound by its CPU, not its GPU
    // (117d650:docs/results/gpu-loop-6x64-2026-11-27).
    const NetConfig& c = config_;
    const size_t feature_bytes = static_cast<size_t>(c.planes) * c.height * c.width;
    auto* in = static_cast<uint8_t*>(input.data_ptr());
    for (int i = 0; i < num_chunks; ++i) {
      CopyAsync(in, chunks[i].features, chunks[i].count * feature_bytes, cudaMemcpyHostToDevice);
      in += chunks[i].count * feature_bytes;
    }
  }

  // The first rows of `policy` and `value` (float on the device) into the chunks, in order.
  void CopyOut(const LeafChunk* chunks, int num_chunks, const torch::Tensor& policy,
               const torch::Tensor& value) const {
    const int actions = config_.actions;
    const float* p = policy.data_ptr<float>();
    const float* v = value.data_ptr<float>();
    for (int i = 0; i < num_chunks; ++i) {
      const LeafChunk& ch = chunks[i];
      CopyAsync(ch.policy, p, ch.count * actions * sizeof(float), cudaMemcpyDeviceToHost);
      CopyAsync(ch.value, v, ch.count * sizeof(float), cudaMemcpyDeviceToHost);
      p += static_cast<size_t>(ch.count) * actions;
      v += ch.count;
    }
  }

  // bytes from src to dst on the side stream, after what is queued there (none for 0 bytes).
  void CopyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) const {
    if (bytes == 0) return;
    const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, stream_.stream());
    if (err != cudaSuccess) throw Error(std::string("cudaMemcpyAsync: ") + cudaGetErrorString(err));
  }
};
#endif  // ZF_WITH_CUDA

}  // namespace

bool TorchAvailable() { return true; }

int CudaDeviceCount() {
#ifdef ZF_WITH_CUDA
  return static_cast<int>(torch::cuda::device_count());
#else
  return 0;
#endif
}

WeightSet RandomWeights(const NetConfig& config, uint64_t seed) {
  torch::manual_seed(seed);
  ZeroNet net(config);
  return ExportWeights(net, 0);
}

std::unique_ptr<Evaluator> MakeTorchEvaluator(const WeightSet& weights, const TorchOptions& options) {
  if (options.cuda) {
#ifdef ZF_WITH_CUDA
    return std::make_unique<CudaTorchEvaluator>(weights, options);
#else
    throw Error("this zerofarm was built without CUDA (its LibTorch is CPU-only)");
#endif
  }
  if (options.fp16) throw ConfigError("fp16 runs on a GPU only; use bf16 on the CPU");
  return std::make_unique<TorchEvaluator>(weights, options);
}

}  // namespace zerofarm::eval
