// zerofarm __evaluator: the evaluator role, exec'd by the supervisor with
// CUDA_VISIBLE_DEVICES already set. Not for users; no help text beyond this.
#include <unistd.h>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

int EvaluatorRole(int argc, char** argv) {
  cxxopts::Options options("zerofarm __evaluator", "internal: an evaluator process of a farm");
  options.add_options()("shm", "segment name", cxxopts::value<std::string>())(
      "index", "evaluator index", cxxopts::value<uint32_t>())("config", "config file", cxxopts::value<std::string>());
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  const uint32_t index = r["index"].as<uint32_t>();
  const std::string role = "eval-" + std::to_string(index);
  proc::BecomeChild(role, getppid());
  try {
    return proc::RunEvaluatorProcess(r["shm"].as<std::string>(), index, r["config"].as<std::string>());
  } catch (const ConfigError& e) {
    ZF_LOG(ERROR) << e.what();
    return kExitUsage;
  } catch (const std::exception& e) {
    ZF_LOG(ERROR) << e.what();
    return kExitCrash;
  }
}

}  // namespace zerofarm::cli
