#pragma once
// Runs the zerofarm binary as a real child process for integration tests:
// fork + exec, stdout and stderr captured to files, a wait with a timeout
// (the child is killed when it expires). Only the parent asserts.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace zerofarm::testing {

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

class Spawned {
 public:
  // unprivileged: when this process is root, the child runs as user nobody
  // (65534), so that permission checks are real where CI runs as root.
  Spawned(const std::vector<std::string>& args, const std::string& log_prefix, bool unprivileged = false)
      : out_path_(log_prefix + ".out"), err_path_(log_prefix + ".err") {
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      const int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      setpgid(0, 0);  // its own group: a test can signal the whole farm
      // If the test process dies (a ctest timeout, Ctrl-C), the farm dies too
      // instead of running on unattended.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (unprivileged && geteuid() == 0 &&
          (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
        _exit(125);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~Spawned() {
    if (pid_ > 0 && !exited_) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      int st;
      waitpid(pid_, &st, 0);
    }
  }
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig) const { kill(pid_, sig); }
  // Waits up to `seconds`; returns the exit code, or -signal, or -1000 on timeout (then kills).
  int Wait(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1000;
  }
  std::string Stdout() const { return Slurp(out_path_); }
  std::string Stderr() const { return Slurp(err_path_); }

 private:
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

// Sets an environment variable for the processes a test spawns (they inherit
// it); restores the old value when it goes.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace zerofarm::testing
