#pragma once
// An outside program run as a child, its stdin and stdout piped to this
// process: the one owner of a GTP engine (learn/gtp.h) or any other program
// spoken to line by line. The child runs in its own process group, so that
// Kill() also stops what it forked (the shell of `sh -c`, an engine's helper),
// and it is SIGKILLed by the kernel when this process dies (PR_SET_PDEATHSIG).
// Implementation: src/proc/piped_process.cpp.
//
// Thread safety: none; one thread owns it. Not copyable or movable: hold it
// in a std::unique_ptr to hand it on.
#include <sys/types.h>

#include <string>
#include <vector>

namespace zerofarm::proc {

class PipedProcess {
 public:
  // Starts argv[0] (searched on $PATH when it has no '/') with `argv`, its
  // stderr appended to `stderr_path` ("" = /dev/null). Throws ConfigError
  // "NAME: cannot run: <errno text>" when exec fails (no such program, not
  // executable), zerofarm::Error when pipe or fork fails.
  explicit PipedProcess(const std::vector<std::string>& argv, const std::string& stderr_path = "");
  // Close(2000): stdin closed, two seconds to leave, then the group SIGKILLed.
  ~PipedProcess();
  PipedProcess(const PipedProcess&) = delete;
  PipedProcess& operator=(const PipedProcess&) = delete;

  enum class Read { kLine, kTimeout, kClosed };
  // The next line of its stdout (without "\n" or a trailing "\r"), waiting
  // until `deadline` (core/clock.h MonotonicSeconds()). kClosed: its stdout
  // reached end of file (it exited, or closed it); kTimeout: no whole line by then.
  Read ReadLine(double deadline, std::string* line);
  // Writes all of `text` to its stdin. False when the child has closed its
  // stdin (EPIPE: it exited); never raises SIGPIPE. Throws Error on other errors.
  bool Write(const std::string& text);
  // SIGKILL to its process group, then reaps it. Returns the wait status
  // (-1 when unknown). Idempotent. Its stdout stays readable to the end.
  int Kill();
  // Closes its stdin, waits up to `grace_ms` for it to exit, then Kill().
  // Returns the wait status (-1 when unknown).
  int Close(int grace_ms);
  // Waits up to `timeout_ms` for it to exit; true if it has. Then kills
  // what it left in its process group and reaps it (status() is its wait status).
  bool WaitExit(int timeout_ms);

  pid_t pid() const { return pid_; }
  bool reaped() const { return reaped_; }
  int status() const { return status_; }  // the wait status once reaped()
  // argv joined by spaces, for messages.
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = -1;
  int to_child_ = -1, from_child_ = -1;
  std::string buffer_;
};

}  // namespace zerofarm::proc
