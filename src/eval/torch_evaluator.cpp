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
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <torch/cuda.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>  // header-only NVTX 3: no library to link
#define ZF_HAVE_NVTX 1
#endif
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

// The CPU evaluator. With depth > 1 (TorchOptions::depth) Start only gathers
// and converts a batch's features into its lane; Finish runs the network and
// writes the outputs, and UpdateWeights first answers the batches in flight
// with the old weights: the GPU evaluator's contract, without the overlap.
class TorchEvaluator final : public Evaluator {
 public:
  TorchEvaluator(const WeightSet& weights, const TorchOptions& options)
      : options_(options), config_(weights.config), version_(weights.version), tickets_(options.depth) {
    ConfigureThreads(options.intra_op_threads);
    lanes_.resize(static_cast<size_t>(tickets_.Depth()));
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

  // At once, outside the lanes (with batches in flight or not).
  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    Lane lane;
    Gather(chunks, num_chunks, lane);
    Answer(lane);
  }

  int Depth() const override { return tickets_.Depth(); }
  uint64_t Start(const LeafChunk* chunks, int num_chunks) override {
    const uint64_t ticket = tickets_.Begin();
    Lane& lane = lanes_[static_cast<size_t>(tickets_.Lane(ticket))];
    Gather(chunks, num_chunks, lane);
    if (tickets_.Depth() == 1) Answer(lane);  // today's path: answered in Start
    return ticket;
  }
  void Finish(uint64_t ticket) override {
    tickets_.End(ticket);
    Answer(lanes_[static_cast<size_t>(tickets_.Lane(ticket))]);
  }

  bool UpdateWeights(const WeightSet& weights) override {
    if (script_ || !weights.script.empty()) return false;  // a model file of code: a new evaluator
    for (Lane& lane : lanes_) Answer(lane);  // the batches in flight get the weights of their Start
    ImportWeights(net_, weights);            // into the net's dtype
    version_ = weights.version;
    return true;
  }

  uint32_t ModelVersion() const override { return version_; }
  const NetConfig& Config() const override { return config_; }
  std::string Describe() const override {
    return "LibTorch CPU " + std::string(options_.bf16 ? "bf16" : "fp32") + ", " + config_.Describe() +
           ", model version " + std::to_string(version_) +
           (tickets_.Depth() > 1 ? ", depth " + std::to_string(tickets_.Depth()) : "");
  }

 private:
  // A batch gathered and not yet answered: its converted features and where its outputs go.
  struct Lane {
    std::vector<LeafChunk> chunks;
    torch::Tensor input;  // undefined once answered (or for an empty batch)
  };

  TorchOptions options_;
  NetConfig config_;
  ZeroNet net_{nullptr};                 // the built-in net, or
  std::unique_ptr<ScriptedNet> script_;  // a TorchScript model
  uint32_t version_;
  BatchTickets tickets_;
  std::vector<Lane> lanes_;  // lanes_[tickets_.Lane(t)]: batch t while in flight

  // The one conversion: uint8 planes read in place -> the network's dtype, into lane.input.
  void Gather(const LeafChunk* chunks, int num_chunks, Lane& lane) const {
    c10::InferenceMode guard;
    const NetConfig& c = config_;
    lane.chunks.assign(chunks, chunks + num_chunks);
    lane.input = torch::Tensor();
    int64_t n = 0;
    for (int i = 0; i < num_chunks; ++i) n += chunks[i].count;
    if (n == 0) return;
    const auto dtype = options_.bf16 ? torch::kBFloat16 : torch::kFloat;
    lane.input = torch::empty({n, c.planes, c.height, c.width}, torch::dtype(dtype));
    int64_t row = 0;
    for (const LeafChunk& ch : lane.chunks) {
      if (ch.count == 0) continue;
      auto blob = torch::from_blob(const_cast<uint8_t*>(ch.features), {ch.count, c.planes, c.height, c.width},
                                   torch::kUInt8);
      lane.input.narrow(0, row, ch.count).copy_(blob);
      row += ch.count;
    }
  }

  // The network on a gathered lane, its outputs straight into the callers'
  // memory (ring slots); in bf16 the copy into the float slots is the
  // conversion (no intermediate tensor). Nothing for an answered lane.
  void Answer(Lane& lane) {
    if (!lane.input.defined()) return;
    c10::InferenceMode guard;
    const torch::Tensor input = std::move(lane.input);
    lane.input = torch::Tensor();
    auto [policy, value] = script_ ? script_->forward(input) : net_->forward(input);
    int64_t row = 0;
    for (const LeafChunk& ch : lane.chunks) {
      if (ch.count == 0) continue;
      torch::from_blob(ch.policy, {ch.count, config_.actions}, torch::kFloat)
          .copy_(policy.narrow(0, row, ch.count));
      torch::from_blob(ch.value, {ch.count}, torch::kFloat).copy_(value.narrow(0, row, ch.count));
      row += ch.count;
    }
  }
};

#ifdef ZF_WITH_CUDA
// TorchOptions::tf32 into LibTorch's process-wide flags (issue 77): -1 its
// default (TF32 convolutions, fp32 matmuls), 0 strict fp32, 1 TF32 for both.
void ApplyTf32(int tf32) {
  at::globalContext().setAllowTF32CuDNN(tf32 != 0);
  at::globalContext().setAllowTF32CuBLAS(tf32 == 1);
}

// Per-batch profiling hooks (issue 77), free when no profiler is attached:
// NVTX ranges name each batch's Start and Finish, and ZF_CUDA_PROFILE=FIRST:COUNT
// brackets batches FIRST to FIRST + COUNT - 1 (an evaluator's tickets, from 1)
// with cudaProfilerStart/Stop, for `nsys profile --capture-range=cudaProfilerApi`.
struct NvtxRange {
#ifdef ZF_HAVE_NVTX
  explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
  ~NvtxRange() { nvtxRangePop(); }
#else
  explicit NvtxRange(const char*) {}
#endif
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};
#define ZF_CUDA_RANGE(name) const NvtxRange zf_nvtx_range(name)

class CudaProfileRange {
 public:
  // ConfigError for a ZF_CUDA_PROFILE that is not FIRST:COUNT (both > 0).
  static CudaProfileRange FromEnvironment() {
    CudaProfileRange r;
    const char* v = std::getenv("ZF_CUDA_PROFILE");
    if (v == nullptr || *v == 0) return r;
    unsigned long long first = 0, count = 0;
    char end = 0;
    if (std::sscanf(v, "%llu:%llu%c", &first, &count, &end) != 2 || first == 0 || count == 0)
      throw ConfigError("ZF_CUDA_PROFILE='" + std::string(v) +
                        "' is not FIRST:COUNT (batches, e.g. 1000:200)");
    r.first_ = first;
    r.end_ = first + count;
    return r;
  }
  // Before batch `ticket` starts.
  void AtBatch(uint64_t ticket) const {
    if (ticket == first_) cudaProfilerStart();
    if (ticket == end_) cudaProfilerStop();
  }

 private:
  uint64_t first_ = 0, end_ = 0;  // none: ticket 0 never starts
};

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

// One batch in flight on the GPU (TorchOptions::depth): its own stream, so
// that batch N + 1 is copied in and launched while batch N runs, its own
// device tensors (held until Finish) and its own CUDA graphs, and the event
// recorded after its last copy out.
struct CudaLane {
  explicit CudaLane(c10::cuda::CUDAStream s) : stream(s) {}
  c10::cuda::CUDAStream stream;
  at::cuda::CUDAEvent copied;          // after the batch's last copy into the ring slots
  torch::Tensor input, policy, value;  // an eager batch's, until its Finish
  std::vector<GraphedForward> graphs;  // by rows, captured on first use on `stream`
};

// The GPU evaluator. The process sees one device (CUDA_VISIBLE_DEVICES was
// set before exec), so it uses device 0. The shared-memory segment is
// registered (pinned) once, so the copies of features in (uint8, converted
// to the network's dtype on the device) and of outputs back are DMAs
// straight from and to the ring slots, asynchronous on the batch's lane
// stream; Finish returns only after a CUDA event recorded after the last
// copy has passed, so the caller may hand the slots back at once.
class CudaTorchEvaluator final : public Evaluator {
 public:
  CudaTorchEvaluator(const WeightSet& weights, const TorchOptions& options)
      : options_(options),
        config_(weights.config),
        version_(weights.version),
        device_(torch::kCUDA, 0),
        tickets_(options.depth) {
    if (torch::cuda::device_count() < 1) throw Error("no CUDA device is visible to this evaluator");
    for (int i = 0; i < tickets_.Depth(); ++i)
      lanes_.emplace_back(c10::cuda::getStreamFromPool(/*isHighPriority=*/true, 0));
    // The CPU side only copies and launches: keep LibTorch's CPU pools small,
    // the cores belong to the workers.
    ConfigureThreads(options.intra_op_threads);
    dtype_ = options.bf16 ? torch::kBFloat16 : options.fp16 ? torch::kHalf : torch::kFloat;
    c10::cuda::CUDAStreamGuard on_side_stream(lanes_[0].stream);
    if (!weights.script.empty()) {
      script_ = std::make_unique<ScriptedNet>(weights, device_, dtype_, options.probe_batch);
      return;
    }
    net_ = ZeroNet(weights.config);
    ImportWeights(net_, weights);
    net_->eval();
    net_->to(device_, dtype_);
    net_->SetValueDiscount(options_.value_discount);
    lanes_[0].stream.synchronize();
  }
  ~CudaTorchEvaluator() override {
    // Nothing in flight may copy into the segment once it is unpinned.
    for (CudaLane& lane : lanes_) cudaStreamSynchronize(lane.stream.stream());
    lanes_.clear();  // the graphs, before the pinned memory the last replays copied from goes
    for (void* p : registered_) cudaHostUnregister(p);
  }

  void RegisterHostMemory(void* base, size_t bytes) override {
    const cudaError_t err = cudaHostRegister(base, bytes, cudaHostRegisterDefault);
    if (err != cudaSuccess)
      throw Error(std::string("cudaHostRegister of ") + std::to_string(bytes) +
                  " bytes of shared memory failed: " + cudaGetErrorString(err));
    registered_.push_back(base);
  }

  // Into the device's parameters once the batches in flight (launched with
  // the old ones) have run, on lane 0's stream, waited for: the captured
  // graphs read the same tensors, so they stay valid.
  bool UpdateWeights(const WeightSet& weights) override {
    if (script_ || !weights.script.empty()) return false;  // a model file of code: a new evaluator
    for (CudaLane& lane : lanes_) lane.copied.synchronize();
    c10::cuda::CUDAStreamGuard on_side_stream(lanes_[0].stream);
    ImportWeights(net_, weights);
    lanes_[0].stream.synchronize();
    version_ = weights.version;
    return true;
  }

  // Start then Finish: with no batch in flight.
  void Evaluate(const LeafChunk* chunks, int num_chunks) override { Finish(Start(chunks, num_chunks)); }

  int Depth() const override { return tickets_.Depth(); }

  // Queues the batch on its lane's stream: the copies in, the forward pass
  // (a graph's replay or eager kernels), the copies out, then its event.
  uint64_t Start(const LeafChunk* chunks, int num_chunks) override {
    const uint64_t ticket = tickets_.Begin();
    CudaLane& lane = lanes_[static_cast<size_t>(tickets_.Lane(ticket))];
    c10::InferenceMode guard;
    c10::cuda::CUDAStreamGuard on_lane_stream(lane.stream);
    ZF_CUDA_RANGE("zf start");
    profile_.AtBatch(ticket);
    ApplyTf32(options_.tf32);
    int64_t n = 0;
    for (int i = 0; i < num_chunks; ++i) n += chunks[i].count;
    if (n > 0 && options_.cuda_graph && n <= GraphedForward::kMaxRows) {
      const GraphedForward& g = GraphFor(n, lane);
      CopyIn(chunks, num_chunks, g.input, lane);
      g.graph->replay();
      CopyOut(chunks, num_chunks, g.policy, g.value, lane);
    } else if (n > 0) {
      const NetConfig& c = config_;
      lane.input =
          torch::empty({n, c.planes, c.height, c.width}, torch::dtype(torch::kUInt8).device(device_));
      CopyIn(chunks, num_chunks, lane.input, lane);
      std::tie(lane.policy, lane.value) = Forward(lane.input);
      CopyOut(chunks, num_chunks, lane.policy, lane.value, lane);
    }
    lane.copied.record(lane.stream);
    return ticket;
  }

  // Hands the slots back only once the copies into them have landed.
  void Finish(uint64_t ticket) override {
    tickets_.End(ticket);
    CudaLane& lane = lanes_[static_cast<size_t>(tickets_.Lane(ticket))];
    ZF_CUDA_RANGE("zf finish");
    lane.copied.synchronize();
    lane.input = lane.policy = lane.value = torch::Tensor();
  }

  uint32_t ModelVersion() const override { return version_; }
  const NetConfig& Config() const override { return config_; }
  std::string Describe() const override {
    return "LibTorch CUDA " +
           std::string(options_.bf16   ? "bf16"
                       : options_.fp16 ? "fp16"
                                       : "fp32") +
           (options_.cuda_graph ? " as CUDA graphs" : "") + ", " + config_.Describe() + ", model version " +
           std::to_string(version_) +
           (tickets_.Depth() > 1 ? ", depth " + std::to_string(tickets_.Depth()) : "");
  }

 private:
  TorchOptions options_;
  NetConfig config_;
  ZeroNet net_{nullptr};                 // the built-in net, or
  std::unique_ptr<ScriptedNet> script_;  // a TorchScript model
  uint32_t version_;
  torch::Device device_;
  torch::ScalarType dtype_ = torch::kFloat;
  BatchTickets tickets_;
  std::deque<CudaLane> lanes_;  // lanes_[tickets_.Lane(t)]: batch t while in flight (a deque: never moved)
  std::vector<void*> registered_;
  const CudaProfileRange profile_ = CudaProfileRange::FromEnvironment();

  // The network on a uint8 batch on the device: float policy (n x actions) and value (n).
  std::pair<torch::Tensor, torch::Tensor> Forward(const torch::Tensor& input) {
    auto [policy, value] = script_ ? script_->forward(input.to(dtype_)) : net_->forward(input.to(dtype_));
    return {policy.to(torch::kFloat).contiguous(),
            value.to(torch::kFloat).reshape({input.size(0)}).contiguous()};
  }

  // The lane's graph for n leaves: the smallest power of two >= n (and >=
  // kMinRows), captured the first time. Two eager passes at that size come
  // first, on the lane's stream, so that cuDNN and cuBLAS set up their state
  // there and not inside the capture.
  const GraphedForward& GraphFor(int64_t n, CudaLane& lane) {
    int64_t rows = GraphedForward::kMinRows;
    while (rows < n) rows *= 2;
    for (const auto& g : lane.graphs)
      if (g.rows == rows) return g;
    const NetConfig& c = config_;
    GraphedForward g;
    g.rows = rows;
    g.input = torch::zeros({rows, c.planes, c.height, c.width}, torch::dtype(torch::kUInt8).device(device_));
    for (int i = 0; i < 2; ++i) Forward(g.input);
    lane.stream.synchronize();
    g.graph = std::make_unique<at::cuda::CUDAGraph>();
    g.graph->capture_begin();
    std::tie(g.policy, g.value) = Forward(g.input);
    g.graph->capture_end();
    lane.graphs.push_back(std::move(g));
    return lane.graphs.back();
  }

  // Every chunk's features into consecutive rows of `input` (uint8 on the device), one DMA a chunk.
  void CopyIn(const LeafChunk* chunks, int num_chunks, const torch::Tensor& input,
              const CudaLane& lane) const {
    // One DMA per chunk each way (three a ring's run of leaves), queued by the
    // CUDA runtime itself: a LibTorch copy_ per chunk (a tensor made,
    // dispatched, checked) costs microseconds of CPU, some 40 a batch, and the
    // GPU evaluator is bound by its CPU, not its GPU
    // (117d650:docs/results/gpu-loop-6x64-2026-11-27).
    const NetConfig& c = config_;
    const size_t feature_bytes = static_cast<size_t>(c.planes) * c.height * c.width;
    auto* in = static_cast<uint8_t*>(input.data_ptr());
    for (int i = 0; i < num_chunks; ++i) {
      CopyAsync(in, chunks[i].features, chunks[i].count * feature_bytes, cudaMemcpyHostToDevice, lane);
      in += chunks[i].count * feature_bytes;
    }
  }

  // The first rows of `policy` and `value` (float on the device) into the chunks, in order.
  void CopyOut(const LeafChunk* chunks, int num_chunks, const torch::Tensor& policy,
               const torch::Tensor& value, const CudaLane& lane) const {
    const int actions = config_.actions;
    const float* p = policy.data_ptr<float>();
    const float* v = value.data_ptr<float>();
    for (int i = 0; i < num_chunks; ++i) {
      const LeafChunk& ch = chunks[i];
      CopyAsync(ch.policy, p, ch.count * actions * sizeof(float), cudaMemcpyDeviceToHost, lane);
      CopyAsync(ch.value, v, ch.count * sizeof(float), cudaMemcpyDeviceToHost, lane);
      p += static_cast<size_t>(ch.count) * actions;
      v += ch.count;
    }
  }

  // bytes from src to dst on the lane's stream, after what is queued there (none for 0 bytes).
  static void CopyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, const CudaLane& lane) {
    if (bytes == 0) return;
    const cudaError_t err = cudaMemcpyAsync(dst, src, bytes, kind, lane.stream.stream());
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
