// A TorchScript model, or an AOTInductor package (.pt2, LibTorch 2.x only), as
// the evaluators' forward pass (docs/models.md). With torch_evaluator.cpp and
// torch_train.cpp, the only translation units that include LibTorch.
#include <torch/script.h>
#include <torch/version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

// The AOTInductor package loader: LibTorch 2.x (2.5+) only. Not compiled with
// Debian's LibTorch 1.13, where io::ReadWeights refuses a .pt2 first.
#if TORCH_VERSION_MAJOR >= 2 && __has_include(<torch/csrc/inductor/aoti_package/model_package_loader.h>)
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#define ZF_AOTI_HERE 1
#else
#define ZF_AOTI_HERE 0
#endif
#if ZF_AOTI_HERE != ZF_AOTI_BUILT
#error "src/CMakeLists.txt's ZF_AOTI_BUILT disagrees with this LibTorch's headers"
#endif

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
#if ZF_AOTI_HERE
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> package;  // a .pt2, instead of module
#endif
  NetConfig config;
  std::string source;
  torch::Device device = torch::kCPU;
  torch::ScalarType dtype = torch::kFloat;
  uint64_t failures = 0;

  [[noreturn]] void Refuse(const std::string& what) const { throw ConfigError(source + ": " + what); }
  // An AOTInductor package (weights.package) into `package`; see below.
  void LoadPackage(const WeightSet& weights);

  // The model's outputs on x. A package runs as it was compiled: fp32 input.
  std::vector<torch::IValue> Outputs(const torch::Tensor& x) {
    std::vector<torch::IValue> parts;
#if ZF_AOTI_HERE
    if (package) {
      std::vector<torch::Tensor> inputs = {x.to(torch::kFloat)};
      for (auto& t : package->run(inputs)) parts.emplace_back(std::move(t));
      return parts;
    }
#endif
    torch::IValue out = module.forward({x});
    if (out.isTuple()) {
      for (const auto& e : out.toTupleRef().elements()) parts.push_back(e);
    } else if (out.isList()) {
      for (const auto& e : out.toListRef()) parts.push_back(e);
    } else {
      Refuse("forward must return (policy, value), a tuple or list of two tensors; it returned " +
             out.tagKind());
    }
    return parts;
  }

  // forward on x, its outputs checked against the contract; ConfigError naming what breaks it.
  std::pair<torch::Tensor, torch::Tensor> Checked(const torch::Tensor& x) {
    const int64_t n = x.size(0);
    const std::vector<torch::IValue> parts = Outputs(x);
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

// The bytes io::ReadWeights checked, written to a private temporary file (the
// loader takes a path), loaded, and the file removed. Its device
// (AOTI_DEVICE_KEY) must be the evaluator's. Not compiled here (LibTorch 1.13).
void ScriptedNet::Impl::LoadPackage(const WeightSet& weights) {
  Impl& m = *this;
#if ZF_AOTI_HERE
  const char* tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/zf-model-XXXXXX.pt2";
  const int fd = ::mkstemps(&name[0], 4);  // mode 0600, a new file
  if (fd < 0) m.Refuse("cannot write a temporary copy for LibTorch's package loader: " + name);
  bool written = true;
  for (size_t at = 0; written && at < weights.script.size();) {
    const ssize_t n = ::write(fd, weights.script.data() + at, weights.script.size() - at);
    written = n > 0;
    if (written) at += static_cast<size_t>(n);
  }
  ::close(fd);
  try {
    if (!written) throw std::runtime_error("cannot write a temporary copy to " + name);
    m.package = std::make_unique<torch::inductor::AOTIModelPackageLoader>(name);
    ::unlink(name.c_str());
  } catch (const std::exception& e) {
    ::unlink(name.c_str());
    m.Refuse("LibTorch cannot load it as an AOTInductor package: " + Gist(e.what()));
  }
  const std::string key = m.package->get_metadata()["AOTI_DEVICE_KEY"];
  if ((key == "cuda") != m.device.is_cuda())
    m.Refuse("it was compiled for " + (key.empty() ? std::string("no device") : key) +
             "; this evaluator runs on " +
             (m.device.is_cuda() ? "a GPU (--gpus >= 1 takes a package compiled for cuda)"
                                 : "the CPU (--gpus 0 takes a package compiled for cpu)"));
#else
  (void)weights;
  m.Refuse("a .pt2 (AOTInductor) package needs a zerofarm built with LibTorch 2.x");
#endif
}

ScriptedNet::ScriptedNet(const WeightSet& weights, torch::Device device, torch::ScalarType dtype,
                         int64_t probe_rows)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.config = weights.config;
  m.source = weights.source.empty() ? "the TorchScript model" : weights.source;
  m.device = device;
  m.dtype = dtype;
  if (weights.package) {
    m.LoadPackage(weights);
  } else {
    std::istringstream in(weights.script);
    try {
      m.module = torch::jit::load(in, device);
      m.module.eval();
      m.module.to(dtype);
    } catch (const std::exception& e) {
      m.Refuse("LibTorch cannot load it as TorchScript: " + Gist(e.what()));
    }
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
