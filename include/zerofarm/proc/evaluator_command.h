#pragma once
// How the supervisor starts an evaluator, in one place: the argv it execs
// (NetworkBinary(), roles.h) and the parser of that argv in the exec'd
// binary (cli/evaluator_role.cpp). Nothing else spells the internal command
// or its flags.
//
//   zf-eval-N __evaluator --shm SEGMENT --index N --config HOSTDIR/config.txt
//
// argv[0] names the process for ps ("zf-" + its role name, roles.h).
#include <cstdint>
#include <string>
#include <vector>

namespace zerofarm::proc {

// The internal command word: not for users, not in `zerofarm --help`.
inline constexpr const char* kEvaluatorCommand = "__evaluator";

// The internal command that loads and probes a TorchScript model
// (docs/models.md) in NetworkBinary(), for the supervisor, which links no
// LibTorch, before any child starts:
//   zerofarm-torch __probe-model GAME MODEL.pt PRECISION MAX_BATCH
// It exits 0 when the model is fit to run, 2 with one line on stderr when not.
inline constexpr const char* kProbeModelCommand = "__probe-model";

// What an evaluator process needs to find its farm.
struct EvaluatorArgs {
  std::string segment_name;  // the run's shm segment (ShmSegment::name())
  uint32_t index = 0;        // evaluator index, < the segment's num_evaluators
  std::string config_path;   // the run's effective config (io::RunDir::ConfigFile())
};

// The full argv to exec, argv[0] included.
std::vector<std::string> EvaluatorArgv(const EvaluatorArgs& args);

// Parses the argv of the command (argv[0] is kEvaluatorCommand, as cli::Main
// passes it): exactly the flags EvaluatorArgv writes, each once. ConfigError
// (one line) when a flag is missing, repeated, unknown or bad.
EvaluatorArgs ParseEvaluatorArgs(int argc, const char* const* argv);

}  // namespace zerofarm::proc
