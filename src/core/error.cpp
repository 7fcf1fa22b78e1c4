#include "zerofarm/core/error.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "zerofarm/core/log.h"

namespace zerofarm {

std::string ErrnoMessage(const std::string& what, int err) { return what + ": " + std::strerror(err); }

std::string PrintableText(const std::string& text, size_t max) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (text.size() > max) out += "...";
  return out;
}

namespace internal {
CheckFailure::CheckFailure(const char* file, int line, const char* cond) {
  const char* base = std::strrchr(file, '/');
  os_ << "[" << LogRole() << " " << ::getpid() << "] FATAL " << (base ? base + 1 : file) << ":" << line
      << " check failed: " << cond << " ";
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
