// zerofarm __evaluator: the evaluator role, exec'd by the supervisor with
// CUDA_VISIBLE_DEVICES already set. Not for users; its argv is built and parsed
// in proc/evaluator_command.h.
#include <unistd.h>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/evaluator_command.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

int EvaluatorRole(int argc, char** argv) {
  const proc::EvaluatorArgs args = proc::ParseEvaluatorArgs(argc, argv);  // ConfigError: exit 2 (Main)
  proc::BecomeChild(proc::ChildRole{proc::ChildRole::Kind::kEvaluator, args.index}.Name(), getppid());
  try {
    return proc::RunEvaluatorProcess(args.segment_name, args.index, args.config_path);
  } catch (const ConfigError& e) {
    ZF_LOG(ERROR) << e.what();
    return kExitUsage;
  } catch (const std::exception& e) {
    ZF_LOG(ERROR) << e.what();
    return kExitCrash;
  }
}

}  // namespace zerofarm::cli
