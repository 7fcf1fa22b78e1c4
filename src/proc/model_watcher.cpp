#include "model_watcher.h"

#include <cctype>
#include <filesystem>

#include "zerofarm/core/clock.h"

namespace zerofarm::proc {

int64_t ModelNumber(const std::string& name) {
  const std::string prefix = "model-", suffix = ".h5";
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 15) return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoll(digits);
}

std::optional<std::string> ModelWatcher::Poll(bool force) {
  const double now = MonotonicSeconds();
  if (!force && now - last_look_ < 1.0) return std::nullopt;
  last_look_ = now;
  std::error_code ec;
  int64_t best = offered_;
  std::string best_path;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const int64_t n = ModelNumber(e.path().filename().string());
    if (n > best) {
      best = n;
      best_path = e.path().string();
    }
  }
  if (best_path.empty()) return std::nullopt;
  offered_ = best;
  return best_path;
}

}  // namespace zerofarm::proc
