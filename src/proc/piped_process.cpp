// An outside program as a child with piped stdin and stdout, in its own
// process group (proc/piped_process.h).
#include "zerofarm/proc/piped_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"

namespace zerofarm::proc {
namespace {

// The child, between fork and exec: only async-signal-safe calls. Reports
// exec's errno through `status_fd` (close-on-exec: a successful exec closes it
// unwritten).
[[noreturn]] void RunChild(char* const* argv, const char* stderr_path, int in_fd, int out_fd, int status_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  dup2(in_fd, 0);
  dup2(out_fd, 1);
  const int err = open(stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
  if (err >= 0) dup2(err, 2);
  execvp(argv[0], argv);
  const int e = errno;
  if (write(status_fd, &e, sizeof e) < 0) { /* the parent sees exit 127 instead */
  }
  _exit(127);
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

PipedProcess::PipedProcess(const std::vector<std::string>& argv, const std::string& stderr_path) {
  if (argv.empty() || argv[0].empty()) throw ConfigError("no program to run (an empty command)");
  for (const auto& a : argv) name_ += (name_.empty() ? "" : " ") + a;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string err_path = stderr_path.empty() ? "/dev/null" : stderr_path;
  int in[2], out[2], st[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw Error(ErrnoMessage("pipe", errno));
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    throw Error(ErrnoMessage("pipe", errno));
  }
  if (pipe2(st, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    throw Error(ErrnoMessage("pipe", errno));
  }
  pid_ = fork();
  if (pid_ == 0) RunChild(args.data(), err_path.c_str(), in[0], out[1], st[1]);
  const int fork_errno = errno;
  close(in[0]), close(out[1]), close(st[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  if (pid_ < 0) {
    close(st[0]), CloseFd(&to_child_), CloseFd(&from_child_);
    throw Error(ErrnoMessage("fork for " + name_, fork_errno));
  }
  setpgid(pid_, pid_);  // also here: a Kill() before the child's own call still reaches the group
  int exec_errno = 0;
  ssize_t n;
  do n = read(st[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(st[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    Kill();
    CloseFd(&to_child_), CloseFd(&from_child_);
    throw ConfigError(argv[0] + ": cannot run: " + std::strerror(exec_errno));
  }
}

PipedProcess::~PipedProcess() { Close(2000); }

PipedProcess::Read PipedProcess::ReadLine(double deadline, std::string* line) {
  while (true) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      return Read::kLine;
    }
    if (from_child_ < 0) return Read::kClosed;
    const double left = deadline - MonotonicSeconds();
    if (left <= 0) return Read::kTimeout;
    pollfd p{from_child_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::ceil(left * 1000)));
    if (ready <= 0) continue;  // EINTR or the deadline: checked above
    char buf[4096];
    const ssize_t n = read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::kClosed;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

bool PipedProcess::Write(const std::string& text) {
  if (to_child_ < 0) return false;
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);  // a dead child shows as EPIPE, not as our death
  size_t done = 0;
  int err = 0;
  while (done < text.size()) {
    const ssize_t n = write(to_child_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  sigaction(SIGPIPE, &old, nullptr);
  if (err == EPIPE) return false;
  if (err != 0) throw Error(ErrnoMessage(name_ + ": write", err));
  return true;
}

bool PipedProcess::WaitExit(int timeout_ms) {
  if (reaped_ || pid_ <= 0) return true;
  for (int waited = 0;; waited += 5) {
    siginfo_t info{};
    // WNOWAIT: the exited child stays a zombie, holding its pid (and so its
    // group's id) while what it left in its group is killed below.
    const int r = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid_) return Kill(), true;
    if (r < 0 && errno != EINTR) return reaped_ = true, true;  // ECHILD: not ours to wait for
    if (waited >= timeout_ms) return false;
    usleep(5000);
  }
}

int PipedProcess::Kill() {
  if (pid_ <= 0 || reaped_) return status_;
  kill(-pid_, SIGKILL);  // the pid is not reaped yet: the group id is still this child's
  kill(pid_, SIGKILL);   // in case the group was never made
  int st = 0;
  pid_t r;
  do r = waitpid(pid_, &st, 0);
  while (r < 0 && errno == EINTR);
  reaped_ = true, status_ = r == pid_ ? st : -1;
  CloseFd(&to_child_);
  return status_;
}

int PipedProcess::Close(int grace_ms) {
  CloseFd(&to_child_);
  if (pid_ > 0 && !reaped_ && !WaitExit(grace_ms)) Kill();
  CloseFd(&from_child_);
  return status_;
}

}  // namespace zerofarm::proc
