#pragma once
// One logging macro: ZF_LOG(INFO) << "...". Each line carries time, level,
// the process role, host and pid ("[worker-3@node7 4127]") and file:line, and is emitted
// with a single write(2) so lines of different processes never interleave.
// Nothing is logged per leaf: hot paths keep counters and report them.
#include <sstream>
#include <string>

namespace zerofarm {

enum class LogLevel { kDEBUG = 0, kINFO = 1, kWARN = 2, kERROR = 3 };

// Process-wide role name shown in every log line ("supervisor", "worker-3").
// Call once at the start of each process, before any thread is started.
void SetLogRole(const std::string& role);
const std::string& LogRole();
// Process-wide host name shown after the role ("[eval-0@3 4127]") when not
// empty: the farm host of a run with several hosts. Also sets ZF_LOG_HOST in
// the environment, so exec'd children show it too (they read it at start).
// Call before any thread is started.
void SetLogHost(const std::string& host);
const std::string& LogHost();
// Lines below this level are dropped. Default INFO; ZF_LOG_LEVEL=DEBUG|INFO|WARN|ERROR.
void SetMinLogLevel(LogLevel level);
LogLevel MinLogLevel();

class LogMessage {
 public:
  LogMessage(LogLevel level, const char* file, int line);
  ~LogMessage();
  std::ostream& stream() { return os_; }

 private:
  LogLevel level_;
  std::ostringstream os_;
};

}  // namespace zerofarm

// A one-pass loop rather than if/else, so `if (x) ZF_LOG(INFO) << ...;`
// without braces cannot capture a following else.
#define ZF_LOG(level)                                                                                 \
  for (bool zf_log_once_ = ::zerofarm::LogLevel::k##level >= ::zerofarm::MinLogLevel(); zf_log_once_; \
       zf_log_once_ = false)                                                                          \
  ::zerofarm::LogMessage(::zerofarm::LogLevel::k##level, __FILE__, __LINE__).stream()
