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
//
// The N of the file name orders the models (docs/models.md, Hot reload): a
// file that appears (or changes) numbered at or below the last loaded one is
// never loaded, and is logged once as ignored (a warning), not skipped in
// silence; files there at the first look are the run's history and are not.
// Used by one evaluator thread; not thread-safe.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "zerofarm/io/run_dir.h"

namespace zerofarm::proc {

class ModelWatcher {
 public:
  explicit ModelWatcher(std::string dir) : dir_(std::move(dir)) {}
  // The newest model-N.h5 or .pt with N above the last loaded file's, that is a
  // regular file (a link is never followed) and not refused as it is now, if
  // a second has passed since the last look (or `force`). The caller then
  // reports Loaded() or Refused() for it. Logs the files it ignores (above).
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
  // A file at or below loaded_ seen by Poll: logged once as ignored unless known as it is.
  void NoteIgnored(const std::string& path);

  std::string dir_;
  int64_t loaded_ = -1;                       // N of the newest file loaded
  std::map<std::string, FileState> refused_;  // refused files, as they were when offered
  // Files at or below loaded_ already accounted for (there at the first look,
  // loaded, or logged as ignored), as they were then.
  std::map<std::string, FileState> known_;
  bool looked_ = false;       // the first look is behind
  std::string offered_path_;  // the last file Poll returned ...
  FileState offered_state_;   // ... as it was then (before it was read)
  double last_look_ = -1e9;
};

// Models staged per host (--stage-dir, issue 76): the supervisor copies each
// new model of the models directory once into a host-local directory, whose
// ModelWatcher the host's evaluators use instead, so a shared filesystem
// serves one read of a model per host, not one per evaluator. A copy goes to
// STAGE/.model-N.EXT.tmp (created fresh: no link followed), is fsynced, gets
// the source's modification time and is renamed to STAGE/model-N.EXT; one
// already there with the source's size and time is kept (a restarted host
// reads nothing again). The newest two staged models are kept, older ones
// removed. Used by the supervisor's thread only; not thread-safe.
class ModelStager {
 public:
  // `from`: the models directory; `to`: the stage directory, made and
  // checked by the caller (io::MakeRunDirectory).
  ModelStager(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  ~ModelStager();  // closes a copy in progress and removes its temporary file
  ModelStager(const ModelStager&) = delete;
  ModelStager& operator=(const ModelStager&) = delete;
  // One step of the supervisor's loop: at most once a second (or `force`)
  // looks for a model newer than the last staged, or the last one changed at
  // its source; copies at most `chunk` bytes of the copy in progress, so the
  // loop never stalls on a big model; renames a finished copy into place.
  // Returns true while a copy is in progress. Never throws: a failed copy is
  // logged once and retried when its source changes.
  bool Step(size_t chunk = 16 << 20, bool force = false);
  // Steps until the newest model is staged (at start, before the evaluators).
  void StageNow();
  // Models staged by copying (not found already staged), and bytes copied.
  uint64_t Copies() const { return copies_; }
  uint64_t BytesCopied() const { return bytes_copied_; }

 private:
  struct Source {
    int64_t version = -1;
    std::string path, name;
    uint64_t size = 0;
    int64_t mtime_ns = 0, ino = 0;
    bool operator==(const Source& o) const {
      return path == o.path && size == o.size && mtime_ns == o.mtime_ns && ino == o.ino;
    }
  };
  void Look();
  void Begin(const Source& s);
  void CopySome(size_t chunk);
  void Finish();
  void Abandon(const std::string& why);
  void RemoveOlderThan(int64_t version);

  std::string from_, to_;
  Source staged_;   // the newest model staged (version -1: none yet)
  Source failed_;   // the last source that could not be staged, as it was then
  Source copying_;  // the copy in progress (version -1: none)
  int src_fd_ = -1, dst_fd_ = -1;
  std::string tmp_;        // the copy's temporary name
  uint64_t done_ = 0;      // bytes of copying_ copied
  int64_t previous_ = -1;  // the version staged before staged_ (kept: an evaluator may be loading it)
  double last_look_ = -1e9;
  uint64_t copies_ = 0, bytes_copied_ = 0;
};

}  // namespace zerofarm::proc
