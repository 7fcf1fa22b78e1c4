#pragma once
// Runs a function in a forked child, as the unprivileged user nobody (65534)
// when the test runs as root, so that permission checks are real where CI runs
// (as root, which writes anywhere). The child reports through its exit code;
// -1 means it did not exit normally. Catch macros must not be used inside fn:
// it runs in another process; return a code and check it in the parent.
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <functional>

namespace zerofarm::testing {

constexpr uid_t kNobody = 65534;

inline int RunAsUnprivileged(const std::function<int()>& fn) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (::geteuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0))
      ::_exit(125);
    int code = 126;
    try {
      code = fn();
    } catch (const std::exception&) {
      code = 127;
    }
    ::_exit(code);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace zerofarm::testing
