#include "zerofarm/proc/binaries.h"

#include <unistd.h>

#include <filesystem>

#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"

namespace zerofarm::proc {

std::string SelfBinary() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot read /proc/self/exe: " + ec.message());
  return self.string();
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

}  // namespace zerofarm::proc
