#pragma once
// io::RunDir: the one owner of a run directory's layout (docs/schema.md).
// No other file builds a run path from string pieces: each path below has
// its accessor here, and the steps that make, lock and claim the directory
// (supervisor start, issue 21) live in run_dir.cpp.
//
//   OUT/                      the run directory (--out), shared by all its hosts
//     run_id                  the run's id, made by the first host (ReadOrMakeRunId)
//     host-index/N            host index N claimed by a host (ClaimHostIndex)
//     models/model-N.h5       weights, version N (model-N.pt: a TorchScript model) (or --models DIR instead)
//     train/state.txt         the trainer's state; train/momentum.h5 its optimizer
//     eval/                   evaluation: eval.csv, curve.csv, farm-config.txt,
//                             loop-seconds.txt, loop-cpu-seconds.txt, SET.rated
//     shards/HOST/            a host's directory: its shards, config.txt, epoch,
//                             metrics.csv (earlier runs': metrics-E.csv),
//                             metrics.prom and .zerofarm.lock
//     rejected/game-0xID.*    a finished game that breaks its game's contract,
//                             set aside by a writer (.zfgame raw, .txt why)
//
// A RunDir is a value (paths only): cheap to make, copy and keep; it touches
// the filesystem only in MakeDirectories, LockHostDir, ReadOrMakeRunId,
// ClaimHostIndex, NextEpoch and NewestModel. Thread-compatible.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zerofarm::io {

class RunDir {
 public:
  // `out`: the run directory (--out; also --run of train, eval and loop).
  // `host_id`: this host's name in the run (resolved; "" where no host
  // directory is used: the trainer, eval). `models`: the --models override
  // of OUT/models, or "".
  explicit RunDir(std::string out, std::string host_id = "", std::string models = "");

  // ---- paths (pure string work, nothing is touched) ----
  const std::string& Root() const { return out_; }      // OUT
  std::string ShardsDir() const;                        // OUT/shards (every host's directory)
  std::string HostDir() const;                          // OUT/shards/HOST
  std::string ConfigFile() const;                       // HOST/config.txt (the effective config)
  std::string EpochFile() const;                        // HOST/epoch
  std::string LockFile() const;                         // HOST/.zerofarm.lock
  std::string MetricsCsv() const;                       // HOST/metrics.csv (this run's rows)
  std::string RotatedMetricsCsv(uint32_t epoch) const;  // HOST/metrics-EPOCH.csv (an earlier run's)
  std::string MetricsProm() const;                      // HOST/metrics.prom (Prometheus textfile)
  std::string SummaryText() const;                      // HOST/summary.txt (the run's summary lines)
  std::string SummaryJson() const;                      // HOST/summary.json (the same as JSON)
  std::string RejectedDir() const;                      // OUT/rejected (games set aside by the writers)
  // OUT/rejected/game-0xID: a game set aside (ID: 16 hex digits), + ".zfgame" and ".txt".
  std::string RejectedGame(uint64_t game_id) const;
  std::string RunIdFile() const;                     // OUT/run_id
  std::string HostIndexDir() const;                  // OUT/host-index
  std::string HostIndexClaim(uint32_t index) const;  // OUT/host-index/INDEX
  std::string ModelsDir() const;                     // --models DIR, else OUT/models
  std::string ModelPath(uint32_t version) const;     // MODELS/model-VERSION.h5
  std::string TrainDir() const;                      // OUT/train
  std::string TrainStateFile() const;                // OUT/train/state.txt
  std::string TrainMomentumFile() const;             // OUT/train/momentum.h5
  std::string TrainHeadsFile() const;                // OUT/train/heads.h5 (training-only heads)
  std::string EvalDir() const;                       // OUT/eval
  std::string EvalCsv() const;                       // OUT/eval/eval.csv (zerofarm eval --run)
  std::string CurveCsv() const;                      // OUT/eval/curve.csv (the loop's learning curve)
  std::string LoopFarmConfig() const;                // OUT/eval/farm-config.txt (the loop's farm settings)
  std::string LoopSecondsFile() const;               // OUT/eval/loop-seconds.txt
  std::string LoopCpuSecondsFile() const;            // OUT/eval/loop-cpu-seconds.txt
  std::string LoopRecipeCopy() const;                // OUT/eval/recipe.txt (the recipe it ran)
  std::string LoopLockFile() const;                  // OUT/eval/.loop.lock
  std::string LoopStagesCsv() const;                 // OUT/eval/stages.csv (when each stage started)
  std::string CheckpointMean() const;                // OUT/eval/checkpoint-mean.h5 (the loop's --final-mean)
  std::string CheckpointMeanCsv() const;             // OUT/eval/mean.csv (that mean's measurements)
  // OUT/eval/NAME.rated: the rated copy of a position set (NAME: its file name).
  std::string RatedFile(const std::string& set_name) const;

  // "model-VERSION.h5".
  static std::string ModelFileName(uint64_t version);
  // VERSION of "model-VERSION.h5" or "model-VERSION.pt" (a file name, not a path), or -1 for any other name.
  static int64_t ModelNumber(const std::string& filename);
  // Hot reload's rule (docs/models.md): the N of a model-N file is its model
  // version, and the version the file records (a .h5's attribute, a .pt's
  // zerofarm.json) must be N. ConfigError naming both when they differ;
  // nothing for a file of any other name (--weights names any file).
  static void CheckModelFileVersion(const std::string& path, uint32_t recorded);
  // The highest-numbered model-N.h5 or .pt in `dir` that is a regular file (no link
  // is followed) as {N, path}, or {-1, ""} when there is none or `dir` cannot
  // be read. Never throws.
  static std::pair<int64_t, std::string> NewestModelIn(const std::string& dir);
  // The newest `n` model-N.h5 in `dir` that are regular files (no link is
  // followed), as {N, path} in increasing N; fewer when `dir` holds fewer,
  // none when it cannot be read. Never throws.
  static std::vector<std::pair<int64_t, std::string>> NewestModelsIn(const std::string& dir, size_t n);
  // NewestModelIn(ModelsDir()).
  std::pair<int64_t, std::string> NewestModel() const { return NewestModelIn(ModelsDir()); }

  // Where the shards under `path` are: PATH/shards when PATH is a run
  // directory, else PATH itself (a host directory, a directory of shards).
  // For readers (inspect, export); does not check that `path` exists.
  static std::string ShardsRootOf(const std::string& path);
  // The id of the run that the directory `path` belongs to: the first
  // readable run_id in PATH, PATH/.. or PATH/../.. (so RUN, RUN/shards and
  // RUN/shards/HOST all find it); "" when there is none or `path` is not a
  // directory. `*where` gets the file read. For readers (inspect).
  static std::string RunIdAbove(const std::string& path, std::string* where);

  // ---- the supervisor's start, in this order (needs a host id) ----

  // Creates OUT, OUT/shards, the host directory, OUT/host-index (mode 0755)
  // and the models directory, each checked with
  // io::CheckOwnDirectory(dir, allow_foreign) (issue 21): ConfigError (one
  // line, exit 2) for a directory that another user owns or that group or
  // others can write, or a link to one that another user planted; Error when
  // one cannot be created. The parents of OUT and a --models DIR are the
  // user's own path: made as asked.
  void MakeDirectories(bool allow_foreign) const;

  class HostLock;
  // Locks the host directory (flock on LockFile(), which gets the pid) for
  // the returned object's lifetime, so two supervisors never write into one
  // host directory; the lock dies with the process. ConfigError when another
  // live run holds it (two hosts with one --host-id?) or the lock file is a
  // link or not a regular file; Error when it cannot be opened.
  HostLock LockHostDir() const;
  // The same for the run's loop (flock on LoopLockFile(); EvalDir() must
  // exist), so two `zerofarm loop`s never drive one run (a resume started
  // while the last piece still stops). ConfigError naming the holder's pid.
  HostLock LockLoop() const;

  // The run's id (RunIdFile(), shared by all its hosts). The first host to
  // start makes it from `random` (16 hex digits; a private temporary file,
  // then link(2), which fails with EEXIST if another host was first, also on
  // NFS); the others read it. ConfigError when it is empty; Error when it
  // cannot be made or read.
  std::string ReadOrMakeRunId(uint64_t random) const;

  // Claims host index `index` for this host in HostIndexClaim(index) (O_EXCL
  // create); the same host claiming again (a restart, a requeue) is fine.
  // ConfigError when another host of the run holds it: then two hosts would
  // share game ids. NoSpaceError on a full disk, Error otherwise.
  void ClaimHostIndex(uint32_t index) const;

  // Counts the runs that wrote into the host directory (EpochFile()): 0 for
  // the first, then one more each call. Call it under LockHostDir. Error
  // when `max_epochs` runs already wrote into it.
  uint32_t NextEpoch(uint32_t max_epochs) const;

 private:
  std::string out_, host_id_, models_;
};

// The flock of a host directory (RunDir::LockHostDir) or of a run's loop
// (RunDir::LockLoop): move-only; released (closed) when destroyed; a
// moved-from lock releases nothing.
class RunDir::HostLock {
 public:
  HostLock(HostLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;
  HostLock& operator=(HostLock&&) = delete;
  ~HostLock();

 private:
  friend class RunDir;
  explicit HostLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace zerofarm::io
