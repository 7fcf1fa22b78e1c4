#include "zerofarm/proc/gpu_plan.h"

#include <cstdlib>
#include <filesystem>

#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"

namespace zerofarm::proc {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

// "0,1, 2" -> {"0", "1", "2"}; blanks around entries and empty entries dropped.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& item : io::SplitFields(text)) {
    const size_t a = item.find_first_not_of(" \t");
    if (a == std::string::npos) continue;
    const size_t b = item.find_last_not_of(" \t");
    out.push_back(item.substr(a, b - a + 1));
  }
  return out;
}

std::vector<std::string> Numbered(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

std::string Joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

GpuEnvironment ReadGpuEnvironment() {
  GpuEnvironment env;
  env.cuda_visible_devices = Env("CUDA_VISIBLE_DEVICES");
  env.slurm_gpus = Env("SLURM_STEP_GPUS");
  if (!env.slurm_gpus) env.slurm_gpus = Env("SLURM_JOB_GPUS");
  if (const auto n = Env("SLURM_GPUS_ON_NODE")) {
    char* end = nullptr;
    const long v = std::strtol(n->c_str(), &end, 10);
    if (end != n->c_str() && *end == '\0' && v >= 0 && v < 1 << 20)
      env.slurm_gpus_on_node = static_cast<int>(v);
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    (void)e;
    ++env.devices_found;
  }
  return env;
}

std::optional<std::vector<std::string>> VisibleGpus(const GpuEnvironment& env) {
  std::vector<std::string> list;
  if (env.cuda_visible_devices) {
    list = SplitList(*env.cuda_visible_devices);
  } else if (env.slurm_gpus) {
    list = SplitList(*env.slurm_gpus);
  } else if (env.devices_found > 0) {
    list = Numbered(env.devices_found);
  } else if (env.slurm_gpus_on_node) {
    list = Numbered(*env.slurm_gpus_on_node);
  } else {
    return std::nullopt;  // nothing known: CUDA will decide
  }
  if (env.slurm_gpus_on_node && static_cast<int>(list.size()) > *env.slurm_gpus_on_node)
    list.resize(*env.slurm_gpus_on_node);
  return list;
}

std::vector<std::string> EvaluatorDevices(int gpus, const std::optional<std::vector<std::string>>& visible,
                                          bool share, bool simulate) {
  if (gpus < 1) throw Error("EvaluatorDevices needs gpus >= 1, got " + std::to_string(gpus));
  if (!visible || (visible->empty() && simulate)) return Numbered(gpus);
  const std::vector<std::string>& devices = *visible;
  const int n = static_cast<int>(devices.size());
  if (n == 0)
    throw ConfigError(
        "--gpus " + std::to_string(gpus) +
        ": no GPU is visible (CUDA_VISIBLE_DEVICES is empty); use --gpus 0 for the CPU evaluator");
  if (gpus > n && !share)
    throw ConfigError("--gpus " + std::to_string(gpus) + " but " + std::to_string(n) + " GPU(s) visible (" +
                      Joined(devices) + "); add --share-gpus to run several evaluators per GPU");
  std::vector<std::string> out;
  for (int e = 0; e < gpus; ++e) out.push_back(devices[e % n]);
  return out;
}

}  // namespace zerofarm::proc
