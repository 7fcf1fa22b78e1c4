// The LibTorch residual network and its evaluator. With the trainer, the only
// translation unit of zerofarm that includes LibTorch.
#include "zerofarm/eval/torch_evaluator.h"

#include <torch/torch.h>

#include <mutex>

#ifdef ZF_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
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
      value_conv(nn::Conv2dOptions(config.filters, 1, 1).bias(false)),
      value_bn(1),
      value_fc1(config.height * config.width, config.value_hidden),
      value_fc2(config.value_hidden, 1) {
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
}

std::pair<torch::Tensor, torch::Tensor> ZeroNetImpl::forward(const torch::Tensor& x) {
  auto h = torch::relu(stem_bn(stem_conv(x)));
  for (const auto& block : *blocks) h = block->as<ResidualBlock>()->forward(h);
  auto p = torch::relu(policy_bn(policy_conv(h))).flatten(1);
  p = policy_fc(p);
  auto v = torch::relu(value_bn(value_conv(h))).flatten(1);
  v = torch::tanh(value_fc2(torch::relu(value_fc1(v)))).squeeze(1);
  return {p, v};
}

WeightSet ExportWeights(ZeroNet& net, uint32_t version) {
  WeightSet ws;
  ws.config = net->config();
  ws.version = version;
  auto add = [&](const std::string& name, const torch::Tensor& t) {
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
    ws.tensors.push_back(std::move(nt));
  };
  for (const auto& p : net->named_parameters()) add(p.key(), p.value());
  for (const auto& b : net->named_buffers()) add(b.key(), b.value());
  return ws;
}

void ImportWeights(ZeroNet& net, const WeightSet& weights) {
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
    torch::Tensor src;
    if (t.scalar_type() == torch::kLong) {
      if (static_cast<int64_t>(nt->int_data.size()) != t.numel())
        throw ConfigError("weights tensor '" + name + "' has the wrong size");
      src = torch::from_blob(const_cast<int64_t*>(nt->int_data.data()), shape, torch::kLong);
    } else {
      if (static_cast<int64_t>(nt->data.size()) != t.numel())
        throw ConfigError("weights tensor '" + name + "' has the wrong size");
      src = torch::from_blob(const_cast<float*>(nt->data.data()), shape, torch::kFloat);
    }
    t.copy_(src);
    ++used;
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
      : options_(options), net_(weights.config), version_(weights.version) {
    ConfigureThreads(options.intra_op_threads);
    ImportWeights(net_, weights);
    net_->eval();
    if (options_.bf16) net_->to(torch::kBFloat16);
  }

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    c10::InferenceMode guard;
    const NetConfig& c = net_->config();
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
    auto [policy, value] = net_->forward(input);
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

  uint32_t ModelVersion() const override { return version_; }
  const NetConfig& Config() const override { return net_->config(); }
  std::string Describe() const override {
    return "LibTorch CPU " + std::string(options_.bf16 ? "bf16" : "fp32") + ", " + net_->config().Describe() +
           ", model version " + std::to_string(version_);
  }

 private:
  TorchOptions options_;
  ZeroNet net_;
  uint32_t version_;
};

#ifdef ZF_WITH_CUDA
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
        net_(weights.config),
        version_(weights.version),
        device_(torch::kCUDA, 0),
        stream_(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, 0)) {
    if (torch::cuda::device_count() < 1) throw Error("no CUDA device is visible to this evaluator");
    // The CPU side only copies and launches: keep LibTorch's CPU pools small,
    // the cores belong to the workers.
    ConfigureThreads(options.intra_op_threads);
    ImportWeights(net_, weights);
    net_->eval();
    dtype_ = options.bf16 ? torch::kBFloat16 : options.fp16 ? torch::kHalf : torch::kFloat;
    net_->to(device_, dtype_);
  }
  ~CudaTorchEvaluator() override {
    for (void* p : registered_) cudaHostUnregister(p);
  }

  void RegisterHostMemory(void* base, size_t bytes) override {
    const cudaError_t err = cudaHostRegister(base, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
      throw Error(std::string("cudaHostRegister of ") + std::to_string(bytes) +
                  " bytes of shared memory failed: " + cudaGetErrorString(err));
    registered_.push_back(base);
  }

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    c10::InferenceMode guard;
    c10::cuda::CUDAStreamGuard on_side_stream(stream_);
    const NetConfig& c = net_->config();
    int64_t n = 0;
    for (int i = 0; i < num_chunks; ++i) n += chunks[i].count;
    if (n == 0) return;
    // uint8 planes go over the bus; the cast happens on the GPU. One DMA per
    // chunk each way (three a ring's run of leaves), queued by the CUDA runtime
    // itself: a LibTorch copy_ per chunk (a tensor made, dispatched, checked)
    // costs microseconds of CPU, some 40 a batch, and the GPU evaluator is bound
    // by its CPU, not its GPU (docs/results/gpu-loop-6x64-2026-11-27).
    const size_t feature_bytes = static_cast<size_t>(c.planes) * c.height * c.width;
    auto input = torch::empty({n, c.planes, c.height, c.width}, torch::dtype(torch::kUInt8).device(device_));
    auto* in = static_cast<uint8_t*>(input.data_ptr());
    for (int i = 0; i < num_chunks; ++i) {
      const LeafChunk& ch = chunks[i];
      CopyAsync(in, ch.features, ch.count * feature_bytes, cudaMemcpyHostToDevice);
      in += ch.count * feature_bytes;
    }
    auto [policy, value] = net_->forward(input.to(dtype_));
    policy = policy.to(torch::kFloat).contiguous();
    value = value.to(torch::kFloat).reshape({n}).contiguous();
    const float* p = policy.data_ptr<float>();
    const float* v = value.data_ptr<float>();
    for (int i = 0; i < num_chunks; ++i) {
      const LeafChunk& ch = chunks[i];
      CopyAsync(ch.policy, p, ch.count * c.actions * sizeof(float), cudaMemcpyDeviceToHost);
      CopyAsync(ch.value, v, ch.count * sizeof(float), cudaMemcpyDeviceToHost);
      p += static_cast<size_t>(ch.count) * c.actions;
      v += ch.count;
    }
    // Hand the slots back only once the copies into them have landed.
    at::cuda::CUDAEvent copied;
    copied.record(stream_);
    copied.synchronize();
  }

  uint32_t ModelVersion() const override { return version_; }
  const NetConfig& Config() const override { return net_->config(); }
  std::string Describe() const override {
    return "LibTorch CUDA " +
           std::string(options_.bf16   ? "bf16"
                       : options_.fp16 ? "fp16"
                                       : "fp32") +
           ", " + net_->config().Describe() + ", model version " + std::to_string(version_);
  }

 private:
  TorchOptions options_;
  ZeroNet net_;
  uint32_t version_;
  torch::Device device_;
  c10::cuda::CUDAStream stream_;
  torch::ScalarType dtype_ = torch::kFloat;
  std::vector<void*> registered_;

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
