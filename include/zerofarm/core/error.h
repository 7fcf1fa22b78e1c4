#pragma once
// Errors and invariant checks.
//
// Setup, config and I/O failures throw zerofarm::Error (or ConfigError for a bad
// user-supplied value, which a process boundary turns into exit code 2).
// Invariants use ZF_CHECK(cond) << context: always on, prints and aborts.
// ZF_DCHECK is the same in debug builds and free in release builds (hot paths).
#include <sstream>
#include <stdexcept>
#include <string>

namespace zerofarm {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A value the user gave is invalid (CLI option, config file, weights for the
// wrong game). Callers at a process boundary map it to kExitUsage.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// "what: strerror(errno)" for an errno value.
std::string ErrnoMessage(const std::string& what, int err);
// User-supplied `text` made fit for a one-line message: a byte that is not
// printable ASCII becomes \xNN, and more than `max` bytes end in "...", so a
// binary config line or option value is never echoed raw to a terminal.
std::string PrintableText(const std::string& text, size_t max = 80);

namespace internal {
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return os_; }

 private:
  std::ostringstream os_;
};
}  // namespace internal
}  // namespace zerofarm

// A loop rather than if/else (no dangling else); CheckFailure's destructor
// aborts, so the body runs at most once.
#define ZF_CHECK(cond) \
  while (__builtin_expect(!(cond), 0)) ::zerofarm::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()

#ifdef NDEBUG
#define ZF_DCHECK(cond) \
  while (false) ::zerofarm::internal::CheckFailure(__FILE__, __LINE__, #cond).stream()
#else
#define ZF_DCHECK(cond) ZF_CHECK(cond)
#endif
