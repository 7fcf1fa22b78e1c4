#include "model_watcher.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "zerofarm/core/clock.h"

namespace zerofarm::proc {

std::optional<ModelWatcher::FileState> ModelWatcher::StateOf(const std::string& path) {
  struct stat st;
  // lstat: a link in the models directory is never followed (RunDir::NewestModelIn).
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileState s;
  s.dev = static_cast<uint64_t>(st.st_dev);
  s.ino = static_cast<uint64_t>(st.st_ino);
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return s;
}

std::optional<std::string> ModelWatcher::Poll(bool force) {
  const double now = MonotonicSeconds();
  if (!force && now - last_look_ < 1.0) return std::nullopt;
  last_look_ = now;
  std::error_code ec;
  std::vector<std::pair<int64_t, std::string>> candidates;
  std::set<std::string> present;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const int64_t n = io::RunDir::ModelNumber(e.path().filename().string());
    if (n < 0) continue;
    present.insert(e.path().string());
    if (n > loaded_) candidates.emplace_back(n, e.path().string());
  }
  for (auto it = refused_.begin(); it != refused_.end();)  // forget files that are gone
    it = present.count(it->first) ? std::next(it) : refused_.erase(it);
  std::sort(candidates.rbegin(), candidates.rend());  // newest first
  for (const auto& [n, path] : candidates) {
    const std::optional<FileState> state = StateOf(path);
    if (!state) continue;
    const auto refused = refused_.find(path);
    if (refused != refused_.end() && refused->second == *state) continue;  // unchanged since refused
    offered_path_ = path;
    offered_state_ = *state;  // taken before the evaluator reads it: a later change means a retry
    return path;
  }
  return std::nullopt;
}

void ModelWatcher::Loaded(const std::string& path) {
  loaded_ = std::max(loaded_, io::RunDir::ModelNumber(std::filesystem::path(path).filename().string()));
  refused_.erase(path);
}

void ModelWatcher::Refused(const std::string& path) {
  if (path == offered_path_) refused_[path] = offered_state_;
}

}  // namespace zerofarm::proc
