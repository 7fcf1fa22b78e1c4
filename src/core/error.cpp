#include "zerofarm/core/error.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "zerofarm/core/log.h"

namespace zerofarm {

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

namespace internal {
CheckFailure::CheckFailure(const char* file, int line, const char* cond) {
  const char* base = std::strrchr(file, '/');
  os_ << "[" << LogRole() << " " << ::getpid() << "] FATAL " << (base ? base + 1 : file) << ":"
      << line << " check failed: " << cond << " ";
}
CheckFailure::~CheckFailure() {
  os_ << "\n";
  const std::string s = os_.str();
  ssize_t ignored = ::write(2, s.data(), s.size());
  (void)ignored;
  std::abort();
}
}  // namespace internal
}  // namespace zerofarm
