// A TorchScript model probed before a farm starts (docs/models.md): the
// supervisor links no LibTorch, so it asks NetworkBinary() to load it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "zerofarm/core/clock.h"
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
  // Test hook (docs/reliability.md): a load that never returns, its stderr
  // held open by a child of its own too, which only the process group's kill
  // ends. Each appends its pid to the file the hook names.
  if (const char* hook = std::getenv("ZF_FAULT_PROBE_HANG"); hook && *hook) {
    ::fork();
    const std::string pid = std::to_string(::getpid()) + "\n";
    const int fd = ::open(hook, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && ::write(fd, pid.data(), pid.size()) >= 0) ::close(fd);
    for (;;) ::pause();
  }
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

// How long a probe may take to load and probe a model: ZF_MODEL_PROBE_SECONDS
// (docs/models.md), default kDefaultProbeSeconds.
constexpr int kDefaultProbeSeconds = 300;
int ProbeSeconds() {
  const char* env = std::getenv("ZF_MODEL_PROBE_SECONDS");
  const int s = env ? std::atoi(env) : 0;
  return s > 0 ? s : kDefaultProbeSeconds;
}

// Starts `binary` with `args` in a process group of its own, its stderr into
// the pipe whose read end *err_fd gets.
pid_t StartProbe(const std::string& binary, const std::vector<std::string>& args, int* err_fd) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(ErrnoMessage("pipe", errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(ErrnoMessage("fork", errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // killed as a group on timeout: whatever it started goes too
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != parent) _exit(127);
    ::dup2(fds[1], 2);
    ::execv(binary.c_str(), argv.data());
    _exit(127);
  }
  ::setpgid(pid, pid);  // also here: the group exists before any kill(-pid)
  ::close(fds[1]);
  *err_fd = fds[0];
  return pid;
}

// Reads the probe's stderr (its first 64 KiB) until it closes or the
// deadline passes; false on timeout.
bool ReadUntil(int fd, double deadline, std::string* err) {
  char buf[4096];
  for (;;) {
    const double left = deadline - MonotonicSeconds();
    if (left <= 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(left * 1000, 1e6)) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the deadline is checked above
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    if (err->size() < 65536) err->append(buf, static_cast<size_t>(n));
  }
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
  std::vector<std::string> args = {"zf-probe",     kProbeModelCommand, config.game,
                                   config.weights, precision,          std::to_string(config.max_batch)};
  if (!config.game_plugin.empty()) args.push_back(config.game_plugin);
  int fd = -1;
  const pid_t pid = StartProbe(NetworkBinary(), args, &fd);
  const int seconds = ProbeSeconds();
  std::string err;
  const bool done = ReadUntil(fd, MonotonicSeconds() + seconds, &err);
  ::close(fd);
  if (!done) ::kill(-pid, SIGKILL);  // the probe and anything it started
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!done)
    throw ConfigError("--weights " + config.weights + ": loading and probing the model did not finish in " +
                      std::to_string(seconds) + " s (ZF_MODEL_PROBE_SECONDS); refusing it");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) throw ConfigError("--weights: " + LastLine(err));
  throw ConfigError("--weights " + config.weights + ": probing the model failed (" +
                    DescribeWaitStatus(status) + "): " + LastLine(err));
}

}  // namespace zerofarm::proc
