// A TorchScript model probed before a farm starts (docs/models.md): the
// supervisor links no LibTorch, so it asks NetworkBinary() to load it.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/game_plugin.h"
#include "zerofarm/io/torchscript_file.h"
#include "zerofarm/proc/binaries.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/evaluator_command.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {

int RunModelProbe(int argc, const char* const* argv) {
  if (argc != 5 && argc != 6)
    throw ConfigError(std::string(kProbeModelCommand) +
                      " GAME MODEL PRECISION MAX_BATCH [PLUGIN] (internal)");
  if (argc == 6) io::LoadGamePlugin(argv[5]);  // the game plugin of --game-plugin
  FarmConfig config;
  config.game = argv[1];
  config.weights = argv[2];
  config.precision = argv[3];
  config.max_batch = std::atoi(argv[4]);
  config.eval_threads = 1;
  const auto game = game::MakeGame(config.game);
  MakeEvaluatorFor(*game, config, /*on_gpu=*/false);  // loads and probes: ConfigError when unfit
  return 0;
}

namespace {

// The last non-empty line of `text`, without the "zerofarm COMMAND: " prefix of cli::Main.
std::string LastLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string line = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  const std::string prefix = std::string("zerofarm ") + kProbeModelCommand + ": ";
  return line.compare(0, prefix.size(), prefix) == 0 ? line.substr(prefix.size()) : line;
}

}  // namespace

void ProbeModelBeforeStart(const FarmConfig& config) {
  const bool package = io::IsPt2Path(config.weights);
  if (config.weights.empty() || !(io::IsTorchScriptPath(config.weights) || package)) return;
  if (!eval::TorchBuilt())
    throw ConfigError("--weights " + config.weights + ": a TorchScript model needs a build with LibTorch");
  // A package runs only on the device it was compiled for: on GPUs, each
  // evaluator probes it there (its file was checked by the caller).
  if (package && config.OnGpu()) return;
  // The precision the evaluator resolves (TorchOptionsFor): --bf16 is bf16.
  const std::string precision = config.OnGpu() ? "fp32" : config.bf16 ? "bf16" : config.precision;
  const std::string binary = NetworkBinary();
  std::vector<std::string> args = {"zf-probe",     kProbeModelCommand, config.game,
                                   config.weights, precision,          std::to_string(config.max_batch)};
  if (!config.game_plugin.empty()) args.push_back(config.game_plugin);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(ErrnoMessage("pipe", errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrnoMessage("fork", errno));
  if (pid == 0) {
    ::dup2(fds[1], 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    _exit(127);
  }
  ::close(fds[1]);
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (err.size() < 65536) err.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) throw ConfigError("--weights: " + LastLine(err));
  throw ConfigError("--weights " + config.weights + ": probing the model failed (" +
                    DescribeWaitStatus(status) + "): " + LastLine(err));
}

}  // namespace zerofarm::proc
