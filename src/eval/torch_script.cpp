// A TorchScript model as the evaluators' forward pass (docs/models.md). With
// torch_evaluator.cpp and torch_train.cpp, the only translation units that
// include LibTorch.
#include <torch/script.h>

#include <sstream>

#include "torch_net.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"

namespace zerofarm::eval {

namespace {

// The gist of a LibTorch error on one line: its last non-empty line (a
// TorchScript traceback ends with the exception raised), at most 300 bytes.
std::string Gist(const std::string& s) {
  size_t end = s.find_last_not_of(" \n");
  if (end == std::string::npos) return "(no message)";
  const size_t nl = s.rfind('\n', end);
  const size_t begin = s.find_first_not_of(' ', nl == std::string::npos ? 0 : nl + 1);
  std::string line = s.substr(begin, end + 1 - begin);
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

std::string ShapeOf(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
  return out + "]";
}

}  // namespace

struct ScriptedNet::Impl {
  torch::jit::Module module;
  NetConfig config;
  std::string source;
  torch::Device device = torch::kCPU;
  torch::ScalarType dtype = torch::kFloat;
  uint64_t failures = 0;

  [[noreturn]] void Refuse(const std::string& what) const { throw ConfigError(source + ": " + what); }

  // forward on x, its outputs checked against the contract; ConfigError naming what breaks it.
  std::pair<torch::Tensor, torch::Tensor> Checked(const torch::Tensor& x) {
    const int64_t n = x.size(0);
    torch::IValue out = module.forward({x});
    std::vector<torch::IValue> parts;
    if (out.isTuple()) {
      for (const auto& e : out.toTupleRef().elements()) parts.push_back(e);
    } else if (out.isList()) {
      for (const auto& e : out.toListRef()) parts.push_back(e);
    } else {
      Refuse("forward must return (policy, value), a tuple or list of two tensors; it returned " +
             out.tagKind());
    }
    if (parts.size() != 2)
      Refuse("forward must return two tensors (policy, value); it returned " + std::to_string(parts.size()));
    for (const auto& p : parts)
      if (!p.isTensor()) Refuse("forward must return two tensors; one is a " + p.tagKind());
    torch::Tensor policy = parts[0].toTensor(), value = parts[1].toTensor();
    if (!policy.is_floating_point() || !value.is_floating_point())
      Refuse("policy and value must be floating point; they are " +
             std::string(c10::toString(policy.scalar_type())) + " and " + c10::toString(value.scalar_type()));
    if (policy.dim() != 2 || policy.size(0) != n || policy.size(1) != config.actions)
      Refuse("policy must be [batch, actions] = [" + std::to_string(n) + ", " +
             std::to_string(config.actions) + "]; it is " + ShapeOf(policy) + " for a batch of " +
             std::to_string(n));
    if (!((value.dim() == 1 && value.size(0) == n) ||
          (value.dim() == 2 && value.size(0) == n && value.size(1) == 1)))
      Refuse("value must be [batch] or [batch, 1] = [" + std::to_string(n) + "]; it is " + ShapeOf(value) +
             " for a batch of " + std::to_string(n));
    return {policy.to(torch::kFloat).contiguous(), value.to(torch::kFloat).reshape({n}).contiguous()};
  }

  // One probe: a batch of `rows` zero positions; the outputs finite, the value in [-1, 1].
  void Probe(int64_t rows) {
    torch::Tensor x =
        torch::zeros({rows, config.planes, config.height, config.width}, torch::dtype(dtype).device(device));
    std::pair<torch::Tensor, torch::Tensor> out;
    try {
      out = Checked(x);
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      Refuse("its forward failed on a probe batch of " + std::to_string(rows) + ": " + Gist(e.what()));
    }
    const auto policy = out.first.cpu(), value = out.second.cpu();
    if (!torch::isfinite(policy).all().item<bool>())
      Refuse("its policy on a probe batch of " + std::to_string(rows) + " is not finite (NaN or inf)");
    if (!torch::isfinite(value).all().item<bool>())
      Refuse("its value on a probe batch of " + std::to_string(rows) + " is not finite (NaN or inf)");
    const float most = value.abs().max().item<float>();
    if (most > 1.0f)
      Refuse("its value on a probe batch of " + std::to_string(rows) + " reaches " + std::to_string(most) +
             ", outside [-1, 1] (end the value head with tanh)");
  }
};

ScriptedNet::ScriptedNet(const WeightSet& weights, torch::Device device, torch::ScalarType dtype,
                         int64_t probe_rows)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.config = weights.config;
  m.source = weights.source.empty() ? "the TorchScript model" : weights.source;
  m.device = device;
  m.dtype = dtype;
  std::istringstream in(weights.script);
  try {
    m.module = torch::jit::load(in, device);
    m.module.eval();
    m.module.to(dtype);
  } catch (const std::exception& e) {
    m.Refuse("LibTorch cannot load it as TorchScript: " + Gist(e.what()));
  }
  c10::InferenceMode guard;
  m.Probe(1);
  if (probe_rows > 1) m.Probe(probe_rows);
}

ScriptedNet::~ScriptedNet() = default;

std::pair<torch::Tensor, torch::Tensor> ScriptedNet::forward(const torch::Tensor& x) {
  try {
    return impl_->Checked(x);
  } catch (const std::exception& e) {
    // Not fatal: NaN outputs, which the farm handles as a NaN model's.
    if (impl_->failures++ % 1000 == 0)
      ZF_LOG(ERROR) << impl_->source << ": forward failed on a batch of " << x.size(0) << " (NaN outputs; "
                    << impl_->failures << " failures so far): " << Gist(e.what());
    const int64_t n = x.size(0);
    const auto opts = torch::dtype(torch::kFloat).device(x.device());
    return {torch::full({n, impl_->config.actions}, NAN, opts), torch::full({n}, NAN, opts)};
  }
}

}  // namespace zerofarm::eval
