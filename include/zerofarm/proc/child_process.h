#pragma once
// A child process and its owner, plus the process-title and death-signal
// helpers every zerofarm child calls first.
#include <sys/types.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace zerofarm::proc {

// The one owner of a child pid. Move-only. Its destructor stops a child that
// is still running: SIGTERM, a bounded wait, SIGKILL, waitpid (no zombies).
class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(ChildProcess&& o) noexcept;
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // fork(); the child runs `body`, whose return value is its exit code, and
  // leaves with _exit (no destructors, no atexit handlers of the parent's
  // objects: the parent still owns them). Throws zerofarm::Error on failure.
  static ChildProcess Fork(const std::string& role, const std::function<int()>& body);
  // fork() + execv(path, argv) with extra environment variables ("K=V"), set
  // in the child before exec (CUDA_VISIBLE_DEVICES must precede any CUDA init).
  static ChildProcess Exec(const std::string& role, const std::string& path,
                           const std::vector<std::string>& argv, const std::vector<std::string>& env);

  pid_t pid() const { return pid_; }
  const std::string& role() const { return role_; }
  bool running() const { return pid_ > 0; }

  // Non-blocking reap: true if the child has exited; fills *status (waitpid status).
  bool TryReap(int* status);
  // Sends `sig`; no-op when not running.
  void Signal(int sig) const;
  // SIGTERM, wait up to `grace_ms`, then SIGKILL; reaps. Returns the wait status (or -1).
  int Stop(int grace_ms);
  // Blocks until the child exits or `timeout_ms` passes; true if it exited.
  bool WaitFor(int timeout_ms, int* status);

 private:
  ChildProcess(pid_t pid, std::string role) : pid_(pid), role_(std::move(role)) {}
  pid_t pid_ = -1;
  std::string role_;
};

// Waits for all of `children` at once (not one by one) until each has exited
// or `timeout_ms` passed, then SIGKILLs the ones left and reaps them too.
// Null or not-running entries are skipped. `tick` (may be empty) runs every
// few ms while waiting (the supervisor's heartbeat). Returns each child's wait
// status, in order (-1: was not running, or unknown).
std::vector<int> WaitAll(const std::vector<ChildProcess*>& children, int timeout_ms,
                         const std::function<void()>& tick = {});

// "exit code 3", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int status);

// Whether a child with wait status `status` died in a stop that `stop_signal`
// (the supervisor's own signal flag, 0 until a signal comes) says is under
// way. True at once when the flag is set. When the child was killed by SIGTERM
// or SIGINT, waits up to `grace_ms` for the flag: a batch system signals every
// process of a job at once, in no set order, so the child's may come first.
// Otherwise (any other death or exit) false at once.
bool DiedInSignalledStop(int status, const std::atomic<int>& stop_signal, int grace_ms);

// CPU seconds (user + system) that `root` and all its descendants, live or
// reaped, have used so far: the sum over the tree's live processes of their
// own and their reaped children's times (/proc/PID/stat; a reaped process's
// times are in its parent's). A process that exits while the tree is read can
// be missed once. 0 when `root` is gone.
double TreeCpuSeconds(pid_t root);

// Called first in every child: names the process for ps/top ("zf-worker-3")
// and the log, asks the kernel to SIGKILL it when the parent dies, exits at
// once if the parent is already gone, ignores SIGINT, and ignores a SIGTERM
// not sent by its parent (a batch system signals every process of a job).
void BecomeChild(const std::string& role, pid_t expected_parent);

// Remembers argv so SetProcessTitle can overwrite it (PostgreSQL's trick):
// call once from main() before anything else reads argv.
void InitProcessTitle(int argc, char** argv);
// Sets the name shown by ps (argv area) and by top / ps -o comm (PR_SET_NAME).
void SetProcessTitle(const std::string& title);

}  // namespace zerofarm::proc
