#include "model_watcher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/log.h"
#include "zerofarm/io/safe_files.h"

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
    if (n > loaded_)
      candidates.emplace_back(n, e.path().string());
    else
      NoteIgnored(e.path().string());
  }
  for (auto* files : {&refused_, &known_})  // forget files that are gone
    for (auto it = files->begin(); it != files->end();)
      it = present.count(it->first) ? std::next(it) : files->erase(it);
  if (!looked_)  // the run's history: every file there now
    for (const auto& [n, path] : candidates)
      if (const std::optional<FileState> state = StateOf(path)) known_[path] = *state;
  looked_ = true;
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

void ModelWatcher::NoteIgnored(const std::string& path) {
  const std::optional<FileState> state = StateOf(path);
  if (!state) return;  // a link or gone: never read
  const auto known = known_.find(path);
  if (known != known_.end() && known->second == *state) return;
  known_[path] = *state;
  if (!looked_) return;
  ZF_LOG(WARN) << "ignoring " << path << ": hot reload loads only a model-N numbered above model-" << loaded_
               << ", the last loaded (docs/models.md)";
}

void ModelWatcher::Loaded(const std::string& path) {
  loaded_ = std::max(loaded_, io::RunDir::ModelNumber(std::filesystem::path(path).filename().string()));
  refused_.erase(path);
  if (path == offered_path_) known_[path] = offered_state_;
}

void ModelWatcher::Refused(const std::string& path) {
  if (path != offered_path_) return;
  refused_[path] = offered_state_;
  known_[path] = offered_state_;  // logged by the caller: not ignored again once a later one loads
}

// ---- ModelStager ----------------------------------------------------------------

ModelStager::~ModelStager() { Abandon(""); }

void ModelStager::Abandon(const std::string& why) {
  if (src_fd_ >= 0) ::close(src_fd_);
  if (dst_fd_ >= 0) ::close(dst_fd_);
  src_fd_ = dst_fd_ = -1;
  if (copying_.version >= 0) ::unlink(tmp_.c_str());
  if (!why.empty()) {
    ZF_LOG(ERROR) << "cannot stage " << copying_.path << " in " << to_ << ": " << why
                  << "; the evaluators keep their model until it changes";
    failed_ = copying_;
  }
  copying_ = Source{};
}

bool ModelStager::Step(size_t chunk, bool force) {
  if (copying_.version < 0) {
    const double now = MonotonicSeconds();
    if (!force && now - last_look_ < 1.0) return false;
    last_look_ = now;
    Look();
  }
  if (copying_.version >= 0) CopySome(chunk);
  return copying_.version >= 0;
}

void ModelStager::StageNow() {
  for (bool more = Step(16 << 20, true); more;) more = Step();
}

// Starts a copy of the newest model when it is not the staged one (nor one
// that failed, unchanged); adopts a copy already staged (same size and time).
void ModelStager::Look() {
  const auto [version, path] = io::RunDir::NewestModelIn(from_);  // regular files only
  struct stat st;
  if (version < 0 || ::lstat(path.c_str(), &st) != 0) return;
  Source s;
  s.version = version;
  s.path = path;
  s.name = std::filesystem::path(path).filename().string();
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  s.ino = static_cast<int64_t>(st.st_ino);
  if (version < staged_.version || s == staged_ || s == failed_) return;
  struct stat have;
  const std::string staged = to_ + "/" + s.name;
  if (::lstat(staged.c_str(), &have) == 0 && S_ISREG(have.st_mode) &&
      static_cast<uint64_t>(have.st_size) == s.size &&
      static_cast<int64_t>(have.st_mtim.tv_sec) * 1000000000 + have.st_mtim.tv_nsec == s.mtime_ns) {
    ZF_LOG(INFO) << "model version " << version << " already staged: " << staged;
    if (version > staged_.version) previous_ = staged_.version;
    staged_ = s;
    return;
  }
  Begin(s);
}

void ModelStager::Begin(const Source& s) {
  copying_ = s;
  done_ = 0;
  tmp_ = to_ + "/." + s.name + ".tmp";
  src_fd_ = io::OpenRunFile(s.path, O_RDONLY);  // issue 21: no link followed, a regular file
  if (src_fd_ < 0) return Abandon(std::string("open: ") + std::strerror(errno));
  try {
    dst_fd_ = io::CreateFreshFile(tmp_);  // whatever is there (a stale copy, a link) is unlinked first
  } catch (const std::exception& e) {
    return Abandon(e.what());
  }
}

void ModelStager::CopySome(size_t chunk) {
  std::vector<char> buf(std::min<size_t>(chunk, 1 << 20));
  for (size_t moved = 0; moved < chunk && done_ < copying_.size;) {
    const size_t want = std::min<uint64_t>(buf.size(), copying_.size - done_);
    const ssize_t n = ::pread(src_fd_, buf.data(), want, static_cast<off_t>(done_));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Abandon(n == 0 ? "the file shrank while being copied" : std::strerror(errno));
    for (ssize_t w = 0; w < n;) {
      const ssize_t m = ::write(dst_fd_, buf.data() + w, static_cast<size_t>(n - w));
      if (m < 0 && errno == EINTR) continue;
      if (m < 0) return Abandon(std::string("write: ") + std::strerror(errno));
      w += m;
    }
    done_ += static_cast<uint64_t>(n);
    moved += static_cast<size_t>(n);
  }
  if (done_ == copying_.size) Finish();
}

// A complete copy: fsynced, given the source's time, renamed into place if
// the source did not change meanwhile (else dropped: the next look retries).
void ModelStager::Finish() {
  struct stat st;
  const bool same =
      ::fstat(src_fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) == copying_.size &&
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec == copying_.mtime_ns;
  if (!same) return Abandon("the file changed while being copied");
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  if (::fsync(dst_fd_) != 0 || ::futimens(dst_fd_, times) != 0)
    return Abandon(std::string("fsync: ") + std::strerror(errno));
  const std::string staged = to_ + "/" + copying_.name;
  if (::rename(tmp_.c_str(), staged.c_str()) != 0)
    return Abandon(std::string("rename: ") + std::strerror(errno));
  ::close(src_fd_);
  ::close(dst_fd_);
  src_fd_ = dst_fd_ = -1;
  ZF_LOG(INFO) << "staged model version " << copying_.version << ": " << copying_.path << " -> " << staged
               << " (" << copying_.size << " bytes)";
  ++copies_;
  bytes_copied_ += copying_.size;
  if (copying_.version > staged_.version) previous_ = staged_.version;
  staged_ = copying_;
  copying_ = Source{};
  RemoveOlderThan(previous_);
}

void ModelStager::RemoveOlderThan(int64_t version) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(to_, ec)) {
    const int64_t v = io::RunDir::ModelNumber(e.path().filename().string());
    if (v >= 0 && v < version) ::unlink(e.path().c_str());
  }
}

}  // namespace zerofarm::proc
