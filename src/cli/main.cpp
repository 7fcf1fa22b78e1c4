#include "zerofarm/cli/main.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core_version.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/proc/binaries.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/evaluator_command.h"
#include "zerofarm/proc/options.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {
namespace {

void Usage(std::ostream& os) {
  os << "zerofarm " << ZF_VERSION_STRING
     << ": AlphaZero self-play data, fast, on processes and shared memory\n\n"
     << "usage: zerofarm COMMAND [options]   (zerofarm COMMAND --help for its options)\n\n"
     << "commands:\n"
     << "  run        start a self-play farm: workers, evaluators and a writer of HDF5 shards\n"
     << "  selfplay   single-process self-play (K games batched into one evaluator)\n"
     << "  inspect    summarise HDF5 shards and draw positions\n"
     << "  train      train the network on a run's newest shards (checkpoints hot-reload into the farm)\n"
     << "  loop       farm + trainer + periodic evaluation on one machine (the whole AlphaZero loop)\n"
     << "  eval       measure strength: move error against the exact Connect Four solver, or an arena\n"
     << "  bench      measure the farm against the evaluator alone, the leaf hand-off and the writer\n"
     << "  tune       sweep ring size, games per worker, batch and wait on short runs; recommend settings\n"
     << "  export     write a run's games as SGF (Go, Othello, Gomoku) or JSON lines\n"
     << "  gtp        play Go through the Go Text Protocol (GoGui, Sabaki, gnugo twogtp)\n"
     << "  match      play Go or Othello against any GTP engine (gnugo, gtp-rhino); SGFs and a JSON line\n"
     << "  check-game check that a game keeps the promises of the game interface (docs/adding-a-game.md)\n"
     << "  config     print an example config file (--example) or the effective config of one (--show FILE)\n"
     << "  version    print the version\n\n"
     << "every command but inspect, export, config, check-game and version takes --config FILE (key = value "
        "lines; see "
        "docs/config-example.conf)\n";
}

// The commands that run a network, and so need LibTorch.
bool RunsNetwork(const std::string& command) {
  for (const char* c : {"selfplay", "train", "eval", "loop", "bench", "gtp", "match", proc::kEvaluatorCommand,
                        proc::kProbeModelCommand})
    if (command == c) return true;
  return false;
}

// A build has two binaries (proc/binaries.h): `zerofarm` links no LibTorch, so the
// supervisor and the workers and writer it forks never load it; zerofarm-torch
// links it. Each hands the other's commands over by exec, same pid and
// arguments. Returns only when this binary runs `command` itself.
void HandOverIfNotMine(const std::string& command, char** argv) {
  std::string target;
  if (RunsNetwork(command) && !eval::TorchAvailable() && eval::TorchBuilt())
    target = proc::NetworkBinary();
  else if (command == "run" && eval::TorchAvailable())
    target = proc::FarmBinary();
  if (target.empty() || target == proc::SelfBinary()) return;
  proc::MarkHandOver();
  execv(target.c_str(), argv);
  throw Error(ErrnoMessage("cannot exec " + target, errno));
}

// HDF5 files from others are read first by `zerofarm __check-h5` (io/h5_check.h),
// the binary without LibTorch (it starts fast), told this build's options.
io::H5Checker FarmChecker() {
  return {{proc::FarmBinary(), io::kCheckH5Command},
          {std::string(proc::kHandOverEnv) + "=" + proc::OptionTableFingerprint()}};
}

}  // namespace

int Main(int argc, char** argv) {
  proc::InitProcessTitle(argc, argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    Usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  const std::string command = argv[1];
  try {
    proc::CheckHandOver(command);
    HandOverIfNotMine(command, argv);
    if (command == io::kCheckH5Command) return io::RunH5Check(argc - 1, argv + 1);
    io::SetH5Checker(FarmChecker);
    if (command == "run") return RunCommand(argc - 1, argv + 1);
    if (command == "selfplay") return SelfplayCommand(argc - 1, argv + 1);
    if (command == "inspect") return InspectCommand(argc - 1, argv + 1);
    if (command == "train") return TrainCommand(argc - 1, argv + 1);
    if (command == "eval") return EvalCommand(argc - 1, argv + 1);
    if (command == "loop") return LoopCommand(argc - 1, argv + 1);
    if (command == "bench") return BenchCommand(argc - 1, argv + 1);
    if (command == "tune") return TuneCommand(argc - 1, argv + 1);
    if (command == "export") return ExportCommand(argc - 1, argv + 1);
    if (command == "gtp") return GtpCommand(argc - 1, argv + 1);
    if (command == "match") return MatchCommand(argc - 1, argv + 1);
    if (command == "config") return ConfigCommand(argc - 1, argv + 1);
    if (command == "check-game") return CheckGameCommand(argc - 1, argv + 1);
    if (command == proc::kEvaluatorCommand) return EvaluatorRole(argc - 1, argv + 1);
    if (command == proc::kProbeModelCommand) return proc::RunModelProbe(argc - 1, argv + 1);
    if (command == "version" || command == "--version") {
      std::cout << "zerofarm " << ZF_VERSION_STRING << "\n";
      return kExitOk;
    }
    std::cerr << "zerofarm: unknown command '" << command << "' (try zerofarm --help)\n";
    return kExitUsage;
  } catch (const ConfigError& e) {
    std::cerr << "zerofarm " << command << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const io::NoSpaceError& e) {  // a full disk before or during the run: exit 4
    std::cerr << "zerofarm " << command << ": " << e.what() << "\n";
    return kExitNoSpace;
  } catch (const cxxopts::exceptions::exception& e) {
    std::cerr << "zerofarm " << command << ": " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "zerofarm " << command << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace zerofarm::cli
