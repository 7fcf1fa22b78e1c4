#include "zerofarm/core/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

namespace zerofarm {
namespace {
std::string& RoleStorage() {
  static std::string role = "zerofarm";
  return role;
}
std::string& HostStorage() {
  static std::string host = [] {
    const char* env = std::getenv("ZF_LOG_HOST");  // an exec'd child inherits its supervisor's
    return std::string(env ? env : "");
  }();
  return host;
}
LogLevel InitialLevel() {
  const char* env = std::getenv("ZF_LOG_LEVEL");
  if (!env) return LogLevel::kINFO;
  if (!std::strcmp(env, "DEBUG")) return LogLevel::kDEBUG;
  if (!std::strcmp(env, "WARN")) return LogLevel::kWARN;
  if (!std::strcmp(env, "ERROR")) return LogLevel::kERROR;
  return LogLevel::kINFO;
}
LogLevel g_min_level = InitialLevel();
const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDEBUG:
      return "D";
    case LogLevel::kINFO:
      return "I";
    case LogLevel::kWARN:
      return "W";
    case LogLevel::kERROR:
      return "E";
  }
  return "?";
}
}  // namespace

void SetLogRole(const std::string& role) { RoleStorage() = role; }
const std::string& LogRole() { return RoleStorage(); }
void SetLogHost(const std::string& host) {
  HostStorage() = host;
  if (host.empty())
    ::unsetenv("ZF_LOG_HOST");
  else
    ::setenv("ZF_LOG_HOST", host.c_str(), 1);
}
const std::string& LogHost() { return HostStorage(); }
void SetMinLogLevel(LogLevel level) { g_min_level = level; }
LogLevel MinLogLevel() { return g_min_level; }

LogMessage::LogMessage(LogLevel level, const char* file, int line) : level_(level) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm local;
  localtime_r(&tv.tv_sec, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &local);
  const char* base = std::strrchr(file, '/');
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03d", static_cast<int>(tv.tv_usec / 1000));
  os_ << LevelName(level_) << " " << stamp << ms << " [" << LogRole() << (LogHost().empty() ? "" : "@")
      << LogHost() << " " << ::getpid() << "] " << (base ? base + 1 : file) << ":" << line << "] ";
}

LogMessage::~LogMessage() {
  os_ << "\n";
  const std::string s = os_.str();
  ssize_t ignored = ::write(2, s.data(), s.size());
  (void)ignored;
}

}  // namespace zerofarm
