#include "zerofarm/proc/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"

namespace zerofarm::proc {

namespace {
char* g_title_area = nullptr;  // argv[0] .. end of the last argv string
size_t g_title_capacity = 0;
}  // namespace

void InitProcessTitle(int argc, char** argv) {
  if (argc <= 0 || !argv || !argv[0]) return;
  char* end = argv[0] + std::strlen(argv[0]);
  for (int i = 1; i < argc; ++i)
    if (argv[i] == end + 1) end = argv[i] + std::strlen(argv[i]);
  g_title_area = argv[0];
  g_title_capacity = static_cast<size_t>(end - argv[0]);
}

void SetProcessTitle(const std::string& title) {
  prctl(PR_SET_NAME, title.substr(0, 15).c_str(), 0, 0, 0);
  if (!g_title_area || g_title_capacity == 0) return;
  const size_t n = std::min(title.size(), g_title_capacity);
  std::memcpy(g_title_area, title.data(), n);
  std::memset(g_title_area + n, 0, g_title_capacity - n + 1);
}

namespace {
// A child's SIGTERM: from its supervisor (ChildProcess::Stop) it ends the
// child as SIG_DFL would. From anyone else it is ignored: a batch system
// (Slurm at a time limit or preemption, systemd) signals every process of
// the job at once, and the supervisor, which got the same signal, stops the
// farm in order, so the writer still drains every finished game.
void OnChildTerm(int sig, siginfo_t* info, void*) {
  if (info == nullptr || info->si_pid == 0 || info->si_pid == getppid()) {
    signal(sig, SIG_DFL);  // async-signal-safe, as are getppid and raise
    raise(sig);
  }
}
}  // namespace

void BecomeChild(const std::string& role, pid_t expected_parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != expected_parent) _exit(kExitPeerGone);  // parent died before prctl
  SetLogRole(role);
  SetProcessTitle("zf-" + role);
  // Test hook for the fault tests: ZF_FAULT_CRASH=worker (or eval, writer,
  // worker-1 ...) makes every matching child crash at start, as a bug would.
  if (const char* fault = std::getenv("ZF_FAULT_CRASH"))
    if (*fault && role.rfind(fault, 0) == 0) {
      ZF_LOG(ERROR) << "ZF_FAULT_CRASH=" << fault << ": crashing on purpose";
      std::abort();
    }
  // The supervisor owns SIGINT and SIGTERM: a terminal's Ctrl-C reaches the
  // whole process group, a batch system's SIGTERM every process of the job,
  // and children stop through the shared stop flag instead. A SIGTERM from
  // the supervisor itself still ends a child (OnChildTerm).
  signal(SIGINT, SIG_IGN);
  struct sigaction term {};
  term.sa_sigaction = OnChildTerm;
  term.sa_flags = SA_SIGINFO;
  sigemptyset(&term.sa_mask);
  sigaction(SIGTERM, &term, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Stop(2000);
}

ChildProcess::ChildProcess(ChildProcess&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), role_(std::move(o.role_)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0) Stop(2000);
    pid_ = std::exchange(o.pid_, -1);
    role_ = std::move(o.role_);
  }
  return *this;
}

ChildProcess ChildProcess::Fork(const std::string& role, const std::function<int()>& body) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(ErrnoMessage("fork for " + role, errno));
  if (pid == 0) {
    int code = kExitCrash;
    try {
      BecomeChild(role, parent);
      code = body();
    } catch (const ConfigError& e) {
      ZF_LOG(ERROR) << e.what();
      code = kExitUsage;
    } catch (const std::exception& e) {
      ZF_LOG(ERROR) << "uncaught: " << e.what();
      code = kExitCrash;
    }
    _exit(code);
  }
  return ChildProcess(pid, role);
}

ChildProcess ChildProcess::Exec(const std::string& role, const std::string& path,
                                const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  // Build every C string before fork: the child only calls async-signal-safe
  // functions between fork and exec.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_copy = env;
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(ErrnoMessage("fork for " + role, errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(kExitPeerGone);
    for (auto& kv : env_copy) putenv(kv.data());
    execv(path.c_str(), args.data());
    _exit(127);
  }
  return ChildProcess(pid, role);
}

bool ChildProcess::TryReap(int* status) {
  if (pid_ <= 0) return true;
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    if (status) *status = r == pid_ ? st : -1;
    pid_ = -1;
    return true;
  }
  return false;
}

void ChildProcess::Signal(int sig) const {
  if (pid_ > 0) kill(pid_, sig);
}

bool ChildProcess::WaitFor(int timeout_ms, int* status) {
  const uint64_t deadline = MonotonicNs() + static_cast<uint64_t>(timeout_ms) * 1000000ULL;
  while (true) {
    if (TryReap(status)) return true;
    if (MonotonicNs() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int ChildProcess::Stop(int grace_ms) {
  if (pid_ <= 0) return -1;
  int status = -1;
  Signal(SIGTERM);
  if (WaitFor(grace_ms, &status)) return status;
  Signal(SIGKILL);
  WaitFor(10000, &status);
  return status;
}

std::vector<int> WaitAll(const std::vector<ChildProcess*>& children, int timeout_ms,
                         const std::function<void()>& tick) {
  std::vector<int> status(children.size(), -1);
  const uint64_t deadline = MonotonicNs() + static_cast<uint64_t>(timeout_ms) * 1000000ULL;
  auto reap_all = [&]() {
    bool all = true;
    for (size_t i = 0; i < children.size(); ++i)
      if (children[i] && children[i]->running() && !children[i]->TryReap(&status[i])) all = false;
    return all;
  };
  while (!reap_all() && MonotonicNs() < deadline) {
    if (tick) tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (auto* c : children)
    if (c && c->running()) {
      ZF_LOG(WARN) << c->role() << " (pid " << c->pid() << ") did not stop in " << timeout_ms / 1000.0
                   << " s; killing it";
      c->Signal(SIGKILL);  // a stopped (SIGSTOP) process dies of it too
    }
  for (size_t i = 0; i < children.size(); ++i)
    if (children[i] && children[i]->running()) children[i]->WaitFor(10000, &status[i]);
  return status;
}

std::string DescribeWaitStatus(int status) {
  if (status < 0) return "unknown status";
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  return "status " + std::to_string(status);
}

bool DiedInSignalledStop(int status, const std::atomic<int>& stop_signal, int grace_ms) {
  // relaxed here and below: a flag set once by a signal handler; nothing is published through it.
  if (stop_signal.load(std::memory_order_relaxed) != 0) return true;
  if (status < 0 || !WIFSIGNALED(status)) return false;
  if (WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGINT) return false;
  const double until = MonotonicSeconds() + grace_ms / 1000.0;
  while (stop_signal.load(std::memory_order_relaxed) == 0 && MonotonicSeconds() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return stop_signal.load(std::memory_order_relaxed) != 0;
}

double TreeCpuSeconds(pid_t root) {
  struct Proc {
    pid_t parent;
    double ticks;  // clock ticks: own + reaped children's, user + system
  };
  std::map<pid_t, Proc> procs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;  // gone meanwhile
    // "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    long long ppid = 0, skip = 0, utime = 0, stime = 0, cutime = 0, cstime = 0;
    fields >> state >> ppid;
    for (int i = 0; i < 9; ++i) fields >> skip;  // pgrp .. cmajflt
    if (!(fields >> utime >> stime >> cutime >> cstime)) continue;
    procs[static_cast<pid_t>(std::stoll(name))] = {static_cast<pid_t>(ppid),
                                                   static_cast<double>(utime + stime + cutime + cstime)};
  }
  std::multimap<pid_t, pid_t> children;
  for (const auto& [pid, p] : procs) children.emplace(p.parent, pid);
  double ticks = 0;
  std::vector<pid_t> stack;
  if (procs.count(root)) stack.push_back(root);
  while (!stack.empty()) {
    const pid_t pid = stack.back();
    stack.pop_back();
    ticks += procs[pid].ticks;
    for (auto [it, end] = children.equal_range(pid); it != end; ++it) stack.push_back(it->second);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace zerofarm::proc
