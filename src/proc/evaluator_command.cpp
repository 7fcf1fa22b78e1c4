#include "zerofarm/proc/evaluator_command.h"

#include <cerrno>
#include <cstdlib>

#include "zerofarm/core/error.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {
namespace {

constexpr const char* kShmFlag = "--shm";
constexpr const char* kIndexFlag = "--index";
constexpr const char* kConfigFlag = "--config";

uint32_t ParseIndex(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || v > UINT32_MAX)
    throw ConfigError(std::string(kIndexFlag) + ": bad value '" + text + "' (an integer)");
  return static_cast<uint32_t>(v);
}

}  // namespace

std::vector<std::string> EvaluatorArgv(const EvaluatorArgs& args) {
  return {"zf-" + ChildRole{ChildRole::Kind::kEvaluator, args.index}.Name(),
          kEvaluatorCommand,
          kShmFlag,
          args.segment_name,
          kIndexFlag,
          std::to_string(args.index),
          kConfigFlag,
          args.config_path};
}

EvaluatorArgs ParseEvaluatorArgs(int argc, const char* const* argv) {
  EvaluatorArgs args;
  bool shm = false, index = false, config = false;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw ConfigError("option '" + flag + "' is missing an argument");
    const std::string value = argv[i + 1];
    bool* seen = flag == kShmFlag      ? &shm
                 : flag == kIndexFlag  ? &index
                 : flag == kConfigFlag ? &config
                                       : nullptr;
    if (seen == nullptr) throw ConfigError("unexpected argument '" + flag + "'");
    if (*seen) throw ConfigError("option '" + flag + "' given twice");
    *seen = true;
    if (flag == kShmFlag)
      args.segment_name = value;
    else if (flag == kIndexFlag)
      args.index = ParseIndex(value);
    else
      args.config_path = value;
  }
  if (!shm || !index || !config)
    throw ConfigError(std::string("needs ") + kShmFlag + ", " + kIndexFlag + " and " + kConfigFlag +
                      " (an internal command: the supervisor starts it)");
  return args;
}

}  // namespace zerofarm::proc
