#include "zerofarm/proc/binaries.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/proc/options.h"

namespace zerofarm::proc {

std::string RunnablePath(const std::string& exe_link) {
  static const std::string kDeleted = " (deleted)";
  if (exe_link.size() <= kDeleted.size() ||
      exe_link.compare(exe_link.size() - kDeleted.size(), kDeleted.size(), kDeleted) != 0)
    return exe_link;
  const std::string path = exe_link.substr(0, exe_link.size() - kDeleted.size());
  return access(path.c_str(), X_OK) == 0 ? path : exe_link;
}

std::string SelfBinary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot read /proc/self/exe: " + ec.message());
  const std::string path = RunnablePath(self.string());
  static std::atomic<bool> warned{false};
  // relaxed: the flag only keeps the warning to one line; it orders nothing.
  if (path != self.string() && !warned.exchange(true, std::memory_order_relaxed))
    ZF_LOG(WARN) << self.string() << " was replaced while this process ran (a rebuild?): "
                 << "the processes it starts from now on run the new " << path;
  return path;
}

std::string SiblingBinary(const std::string& name) {
  return (std::filesystem::path(SelfBinary()).parent_path() / name).string();
}

std::string NetworkBinary() {
  if (eval::TorchAvailable() || !eval::TorchBuilt()) return SelfBinary();
  const std::string torch = SiblingBinary(eval::kTorchBinary);
  if (access(torch.c_str(), X_OK) != 0)
    throw Error(ErrnoMessage(
        "needs " + torch + " (the binary with LibTorch, built beside " + kFarmBinary + ")", errno));
  return torch;
}

std::string FarmBinary() {
  const std::string farm = SiblingBinary(kFarmBinary);
  return access(farm.c_str(), X_OK) == 0 ? farm : SelfBinary();
}

void MarkHandOver() {
  if (setenv(kHandOverEnv, OptionTableFingerprint().c_str(), 1) != 0)
    throw Error(ErrnoMessage(std::string("cannot set ") + kHandOverEnv, errno));
}

void CheckHandOver(const std::string& command) {
  const char* value = std::getenv(kHandOverEnv);
  if (!value) return;
  const std::string theirs = value;
  unsetenv(kHandOverEnv);
  if (theirs == OptionTableFingerprint()) return;
  const std::string self = std::filesystem::path(SelfBinary()).filename().string();
  const std::string other = self == kFarmBinary ? eval::kTorchBinary : kFarmBinary;
  throw ConfigError(self + " and the " + other + " that handed '" + command +
                    "' over to it come from different builds (their options differ): rebuild both "
                    "(tools/build.sh; ZF_TARGETS must name both)");
}

}  // namespace zerofarm::proc
