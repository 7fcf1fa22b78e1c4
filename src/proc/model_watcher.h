#pragma once
// Hot reload: the evaluator's view of the models directory. Weights files
// named model-<N>.h5 (written atomically by `zerofarm train` or any tool:
// NAME.tmp, then rename) appear there with increasing N; the evaluator asks
// at most once a second for the newest one worth trying, and swaps its
// network between batches, so no batch is evaluated by two models.
//
// Hot reload never sticks (issue 21, point 7): a file the evaluator refused
// is offered again as soon as it changes (size, modification time or inode),
// so a file seen half-copied by a tool that does not rename is retried until
// it is complete; an unchanged refused file is skipped, so it neither blocks
// an older valid file nor a later one, and is not logged again every second.
// Used by one evaluator thread; not thread-safe.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "zerofarm/io/run_dir.h"

namespace zerofarm::proc {

class ModelWatcher {
 public:
  explicit ModelWatcher(std::string dir) : dir_(std::move(dir)) {}
  // The newest model-N.h5 with N above the last loaded file's, that is a
  // regular file (a link is never followed) and not refused as it is now, if
  // a second has passed since the last look (or `force`). The caller then
  // reports Loaded() or Refused() for it.
  std::optional<std::string> Poll(bool force = false);
  // The file Poll returned was loaded: only files numbered above it are offered now.
  void Loaded(const std::string& path);
  // The file Poll returned was refused: not offered again until it changes.
  void Refused(const std::string& path);
  const std::string& dir() const { return dir_; }

 private:
  // What identifies one state of a file: a copy in progress changes it.
  struct FileState {
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0;
    bool operator==(const FileState& o) const {
      return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
    }
  };
  static std::optional<FileState> StateOf(const std::string& path);

  std::string dir_;
  int64_t loaded_ = -1;                       // N of the newest file loaded
  std::map<std::string, FileState> refused_;  // refused files, as they were when offered
  std::string offered_path_;                  // the last file Poll returned ...
  FileState offered_state_;                   // ... as it was then (before it was read)
  double last_look_ = -1e9;
};

}  // namespace zerofarm::proc
