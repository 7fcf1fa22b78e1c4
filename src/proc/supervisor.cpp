// zf-supervisor: the farm's first process.
//
// Threads: one. Its binary, `zerofarm`, does not link LibTorch (nor do the
// workers and the writer it forks): evaluators are separate processes, exec'd
// from zerofarm-torch, the only ones that load LibTorch and initialise CUDA.
//
// It creates the run's shared-memory segment (0600, unique name, space
// reserved up front), starts the writer, the evaluators and the workers,
// restarts a child that dies, prints a status line, and stops the farm on
// SIGINT/SIGTERM, at --duration, or once --games games are finished:
// workers first (their in-flight games are dropped and counted), then the
// evaluators, then the writer, which drains every finished game into shards.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "model_watcher.h"
#include "status.h"
#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/shard_manifest.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/evaluator_command.h"
#include "zerofarm/proc/game_codec.h"
#include "zerofarm/proc/gpu_plan.h"
#include "zerofarm/proc/hang_watch.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/shm/eval_cache.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::proc {
namespace {

// Set by the signal handler, read by the supervisor's loop.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "touched from a signal handler");

void OnSignal(int sig) {
  // relaxed: the loop polls it; nothing else is published through it.
  g_signal.store(sig, std::memory_order_relaxed);
}

// A child that dies is restarted at once, then with 100 ms more back-off per
// recent failure (never more than 1 s in all); kRestartLimit failures of one
// child within kRestartWindowS stop the run with an error: a crash loop is a
// bug or a broken machine, not something to retry forever.
constexpr int kRestartLimit = 10;
constexpr double kRestartWindowS = 30.0;

struct Child {
  ChildRole role;     // what it is: the supervisor tells children apart by this
  std::string name;   // role.Name(): "worker-3", "eval-0", "writer" (logs)
  uint32_t slot = 0;  // ProcessSlot index
  ChildProcess process;
  bool finished = false;         // exited 0 on its own (a worker whose budget is spent)
  std::vector<double> failures;  // times of recent abnormal exits
  uint64_t started_ns = 0;       // MonotonicNs() of the current process's start

  Child(ChildRole r, uint32_t s) : role(r), name(r.Name()), slot(s) {}
  bool IsWorker() const { return role.kind == ChildRole::Kind::kWorker; }
  bool IsWriter() const { return role.kind == ChildRole::Kind::kWriter; }
};

// ---- hung children (issue #21) ---------------------------------------------------

// One pass of the supervisor's watch (proc/hang_watch.h). Logs a pause of
// its own: every one as long as --hang-timeout (each would have cost healthy
// children), shorter ones at most once a minute. Returns now.
class WatchClock {
 public:
  explicit WatchClock(const FarmConfig& config)
      : watch_(config.hang_timeout), always_log_ns_(static_cast<uint64_t>(config.hang_timeout * 1e9)) {}
  uint64_t Pass() {
    const uint64_t now = MonotonicNs();
    const uint64_t pause = watch_.Pass(now);
    if (pause > 0 && (pause >= always_log_ns_ || warned_ns_ == 0 || now - warned_ns_ > kWarnEveryNs)) {
      ZF_LOG(WARN) << "the supervisor itself did not run for " << static_cast<double>(pause) * 1e-9
                   << " s (the machine paused or stalled, or its own work did): all but "
                   << static_cast<double>(watch_.CountedNs()) * 1e-9
                   << " s of it is not its children's silence";
      warned_ns_ = now;
    }
    return now;
  }
  const HangWatch& watch() const { return watch_; }

 private:
  static constexpr uint64_t kWarnEveryNs = 60'000'000'000;
  HangWatch watch_;
  const uint64_t always_log_ns_;
  uint64_t warned_ns_ = 0;
};

// A running child is hung when its silence since its last heartbeat (or,
// before its first one, its start), as the supervisor watched it
// (proc/hang_watch.h), is over --hang-timeout; *age_s is the whole silence.
// Before its first heartbeat a child has at least
// FarmConfig::kStartupGraceSeconds (exec, loading LibTorch).
bool Hung(const Child& c, const shm::SegmentMap& map, const FarmConfig& config, uint64_t now,
          const HangWatch& watch, double* age_s) {
  if (config.hang_timeout <= 0 || !c.process.running()) return false;
  // relaxed: a timestamp compared with a deadline.
  const uint64_t beat = map.Process(c.slot).heartbeat_ns.load(std::memory_order_relaxed);
  const bool beaten = beat >= c.started_ns;
  const uint64_t last = beaten ? beat : c.started_ns;
  const double watched_s = watch.WatchedSeconds(last, now);
  *age_s = last < now ? static_cast<double>(now - last) * 1e-9 : 0.0;
  return watched_s >
         (beaten ? config.hang_timeout : std::max(config.hang_timeout, FarmConfig::kStartupGraceSeconds));
}

// Kills every hung child (SIGKILL works on a SIGSTOPped one too); the caller
// reaps and restarts it like any dead child. Counted in ProcessSlot::hangs.
void KillHungChildren(std::vector<Child>& children, const shm::SegmentMap& map, const FarmConfig& config,
                      uint64_t now, const HangWatch& watch) {
  for (auto& c : children) {
    double age = 0;
    if (!Hung(c, map, config, now, watch, &age)) continue;
    ZF_LOG(ERROR) << c.name << " (pid " << c.process.pid() << ") is hung: no heartbeat for " << age
                  << " s (--hang-timeout " << config.hang_timeout << "); killing it";
    c.process.Signal(SIGKILL);
    map.Process(c.slot).hangs.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
    c.started_ns = now;                                                 // not hung again before it is reaped
  }
}

// A dead worker's games in flight are lost: count them, and give them back to
// the --games budget so the run still reaches it. Games it pushed after its
// last count are in the queue, not lost (shm::OwedGames). relaxed: the worker
// is reaped, so its last stores are visible (waitpid).
uint64_t AccountLostGames(uint32_t worker, const shm::SegmentMap& map, const FarmConfig& config) {
  shm::WorkerBlock& wb = map.Worker(worker);
  const uint64_t head = map.GameQueue(worker).head.load(std::memory_order_relaxed);
  const uint64_t owed = wb.games_owed.exchange(shm::OwedGames::Pack(0, head), std::memory_order_relaxed);
  const uint64_t lost = shm::OwedGames::Lost(owed, head);
  wb.games_dropped.fetch_add(lost, std::memory_order_relaxed);
  if (config.games > 0) map.header().games_claimed.fetch_sub(lost, std::memory_order_relaxed);
  return lost;
}

// Segments of ours whose creator no longer holds their lock (segment.h):
// dead runs, in this PID namespace or any other sharing /dev/shm.
void RemoveStaleSegments() {
  for (const auto& seg : shm::ListSegments()) {
    if (seg.owner_uid != geteuid()) continue;
    if (shm::RemoveIfStale(seg.name))
      ZF_LOG(WARN) << "removed the segment " << seg.name << " of a dead run (no live process holds it)";
  }
}

// A shard NAME.h5.tmp a killed supervisor left (issue #21): complete and
// fsynced if it was killed between the fsync and the rename. Finished
// (renamed to NAME.h5, never over an existing file) when the HDF5 checker
// (io/h5_check.h) and then this process read every dataset whole, and it
// belongs to this run and host; its games were never committed, so no other
// shard holds them. Returns its games, or -1 when it is not complete (then
// its games are lost with the dead run). One that crashed the checker is set
// aside, not read here: -1, with `*kept` the line that says where it is.
int64_t FinishTmpShard(const FarmConfig& config, const std::string& tmp, std::string* kept) {
  struct stat st {};
  // A link (or anything but a file of ours) is never read nor renamed: removed.
  if (lstat(tmp.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) return -1;
  // Outside the try: a checker that cannot run stops the start, and the file stays.
  const std::string verdict = io::CheckOwnFiles(io::H5CheckKind::kShard, {tmp})[0];
  if (io::VerdictIsCrash(tmp, verdict)) *kept = verdict;
  if (!verdict.empty()) return -1;
  try {
    io::ShardReader shard(tmp);
    if (shard.meta().run_id != config.run_id || shard.meta().host_id != config.host_id) return -1;
    if (shard.ReadGames().size() != shard.Games() || shard.ReadAllPositions().count != shard.Positions())
      return -1;
    const std::string final_name = tmp.substr(0, tmp.size() - 4);
    if (link(tmp.c_str(), final_name.c_str()) != 0) return -1;  // EEXIST: never replace a shard
    unlink(tmp.c_str());
    const int dir = open(RunDirOf(config).HostDir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      fsync(dir);
      close(dir);
    }
    return static_cast<int64_t>(shard.Games());
  } catch (const std::exception&) {
    return -1;
  }
}

// Leftovers of a killed run: shard .tmp files are finished, set aside (one
// that crashed the HDF5 checker) or removed, and said so, here and in the
// summary; any other .tmp is removed. Returns the summary's line, or "".
std::string PrepareOutput(const FarmConfig& config) {
  std::error_code ec;
  int finished = 0, removed = 0, set_aside = 0;
  int64_t games = 0;
  for (const auto& e : std::filesystem::directory_iterator(RunDirOf(config).HostDir())) {
    const std::string path = e.path().string(), name = e.path().filename().string();
    if (e.path().extension() != ".tmp") continue;
    if (name.size() > 7 && name.compare(name.size() - 7, 7, ".h5.tmp") == 0) {
      std::string kept;
      if (const int64_t n = FinishTmpShard(config, path, &kept); n >= 0) {
        ZF_LOG(WARN) << "finished the complete shard " << path << " of an earlier run (" << n
                     << " games): renamed";
        ++finished;
        games += n;
        continue;
      }
      if (!kept.empty()) {
        ZF_LOG(ERROR) << "not finishing the shard .tmp of an earlier run: " << kept;
        ++set_aside;
        continue;
      }
      ZF_LOG(WARN) << "removing the incomplete shard " << path << " of an earlier run: its games are lost";
      ++removed;
    }
    std::filesystem::remove(e.path(), ec);
  }
  if (finished == 0 && removed == 0 && set_aside == 0) return "";
  return "an earlier run of this host left " + std::to_string(finished + removed + set_aside) +
         " shard .tmp file(s): " + std::to_string(finished) + " complete, renamed into place (" +
         std::to_string(games) + " games), " + std::to_string(removed) +
         " incomplete, removed (their games are lost)" +
         (set_aside ? ", " + std::to_string(set_aside) + " refused by the HDF5 checker, kept as *.refused"
                    : "");
}

uint32_t GameQueueDepth(const FarmConfig& config, size_t game_slot_bytes) {
  // Games leave a queue only when their shard is written, so a queue should
  // hold about a shard's worth of its worker's games (assuming games of 10
  // plies), plus room to keep playing. Big games (Gomoku, Go) are capped at
  // 64 MiB of queue per worker: the writer then flushes a shard early when a
  // queue fills (see writer.cpp), never blocks.
  const int64_t per_worker = config.shard_positions / (10 * config.workers) + 1;
  const int64_t wanted = per_worker * 2 + 2 * config.games_per_worker;
  const int64_t cap =
      std::max<int64_t>(4 * config.games_per_worker, (64 << 20) / static_cast<int64_t>(game_slot_bytes));
  return static_cast<uint32_t>(std::clamp<int64_t>(std::min(wanted, cap), 16, 1 << 16));
}

// Waits for the writer to drain (the stop flag says kStopWriter). A writer
// that dies of a crash or a signal, or hangs, is restarted (`start`) and
// drains again, at most kRestartLimit times; one that reports a failure (a
// full disk) is not. With --hang-timeout 0 the drain gets 120 s in all.
// Returns the exit code it adds: kExitOk, kExitFailure or kExitNoSpace.
int DrainWriter(Child& writer, const std::function<void(Child&)>& start, const shm::SegmentMap& map,
                const FarmConfig& config, WatchClock& watch, const std::function<void()>& beat) {
  const double begun = MonotonicSeconds();
  int restarts = 0;
  while (writer.process.running()) {
    beat();
    double age = 0;
    const uint64_t now = watch.Pass();
    if (Hung(writer, map, config, now, watch.watch(), &age)) {
      ZF_LOG(ERROR) << "the writer (pid " << writer.process.pid()
                    << ") is hung while draining: no heartbeat for " << age << " s; killing it";
      writer.process.Signal(SIGKILL);
      map.Process(writer.slot).hangs.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
      writer.started_ns = MonotonicNs();
    }
    if (config.hang_timeout <= 0 && MonotonicSeconds() - begun > 120.0) {
      ZF_LOG(ERROR) << "the writer did not finish in 120 s; killing it";
      writer.process.Stop(1000);
      return kExitFailure;
    }
    int st = 0;
    const pid_t pid = writer.process.pid();
    if (!writer.process.TryReap(&st)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == kExitOk) return kExitOk;
    ZF_LOG(ERROR) << "the writer (pid " << pid << ") died while draining: " << DescribeWaitStatus(st);
    if (WIFEXITED(st) && WEXITSTATUS(st) != kExitCrash)
      return WEXITSTATUS(st) == kExitNoSpace ? kExitNoSpace : kExitFailure;
    if (++restarts > kRestartLimit) {
      ZF_LOG(ERROR) << "the writer died " << restarts << " times while draining; giving up";
      return kExitFailure;
    }
    map.Process(writer.slot).restarts.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
    start(writer);
    ZF_LOG(WARN) << "restarted writer as pid " << writer.process.pid() << " to finish the drain";
  }
  return kExitOk;
}

// Evaluators whose model in use produced NaN or Inf (EvaluatorBlock::model_nonfinite).
int ModelsNonFinite(const shm::SegmentMap& map) {
  int n = 0;
  for (uint32_t e = 0; e < map.params().num_evaluators; ++e)
    n += map.Evaluator(e).model_nonfinite.load(std::memory_order_relaxed) !=
         0;  // relaxed: a flag, read after reaping
  return n;
}

// How this run's evaluators are started, decided before any child exists:
// each one's CUDA_VISIBLE_DEVICES (gpu_plan.h) and the binary it runs.
struct EvaluatorLaunch {
  std::vector<std::string> gpu_devices;  // by evaluator index; empty without --gpus
  std::string binary;                    // NetworkBinary()
};

EvaluatorLaunch PlanEvaluators(const FarmConfig& config) {
  if (config.OnGpu() && !eval::CudaBuilt())
    throw ConfigError("--gpus " + std::to_string(config.gpus) +
                      ": this zerofarm was built without CUDA (use --gpus 0 for the CPU evaluator)");
  EvaluatorLaunch launch;
  if (config.gpus > 0)
    launch.gpu_devices = EvaluatorDevices(config.gpus, VisibleGpus(ReadGpuEnvironment()), config.share_gpus,
                                          config.simulate_gpus);
  // The evaluators run in the binary with LibTorch (this one has none): found
  // now, before any child exists.
  launch.binary = NetworkBinary();
  return launch;
}

// Fail at start with one line: read and check the --weights file here (HDF5
// without LibTorch; a TorchScript model also loaded and probed in
// NetworkBinary(), ProbeModelBeforeStart), before any child exists.
// A run whose models directory holds a newer model than --weights starts
// serving that one at once (evaluator.cpp, MaybeReload): --weights would be
// ignored, so it is refused (issue 72), as the trainer refuses it.
void CheckWeights(const FarmConfig& config, const game::Game& game) {
  if (config.weights.empty()) return;
  uint32_t version = 0;
  try {
    version = LoadWeightsFor(game, config.weights).version;
    ProbeModelBeforeStart(config);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(std::string("--weights: ") + e.what());
  }
  const auto [n, newest] = RunDirOf(config).NewestModel();
  if (n < 0 || config.random_evaluator) return;
  uint32_t newest_version = 0;
  try {
    newest_version = io::ReadWeights(newest).version;
  } catch (const Error&) {
    return;  // the evaluators refuse it too, and serve --weights
  }
  if (newest_version != n) return;  // the evaluators refuse it (docs/models.md, Hot reload)
  if (newest_version > version)
    throw ConfigError(
        "--weights " + config.weights + ": " + newest + " (model version " + std::to_string(newest_version) +
        ") is newer, and the evaluators serve a run's newest model; --weights only starts a run "
        "(leave it out, or give a new --out)");
}

shm::LayoutParams LayoutParamsFor(const FarmConfig& config, const game::Game& game) {
  shm::LayoutParams params;
  params.num_workers = static_cast<uint32_t>(config.workers);
  params.num_evaluators = static_cast<uint32_t>(config.Evaluators());
  params.ring_slots = static_cast<uint32_t>(config.EffectiveRingSlots());
  params.feature_bytes = static_cast<uint32_t>(game.Shape().FeatureBytes());
  params.actions = static_cast<uint32_t>(game.ActionCount());
  params.game_slot_bytes = static_cast<uint32_t>(MaxGameMessageBytes(game));
  params.game_queue_depth = GameQueueDepth(config, params.game_slot_bytes);
  return params;
}

void LogStart(const FarmConfig& config, const shm::ShmSegment& segment, const shm::Layout& layout,
              uint64_t segment_id) {
  ZF_LOG(INFO) << "run " << config.run_id << ", host " << config.host_id << " (index " << config.host_index
               << ", epoch " << config.epoch << "), segment id " << std::hex << segment_id << std::dec << ": "
               << config.game << ", " << config.workers << " workers x " << config.games_per_worker
               << " games, " << config.Evaluators()
               << (config.OnGpu()    ? " GPU"
                   : config.gpus > 0 ? " simulated-GPU (CPU)"
                                     : " CPU")
               << " evaluator(s), segment " << segment.name() << " (" << layout.total_bytes / 1024
               << " KiB), output " << config.out;
  std::string one_line = config.ToText();
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  ZF_LOG(INFO) << "effective config: " << one_line;
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// The farm's children and what starting, restarting and stopping them needs.
// Lives in the supervisor for the whole run; single-threaded.
class Farm {
 public:
  Farm(const FarmConfig& config, const shm::SegmentMap& map, std::string segment_name, EvaluatorLaunch launch,
       const shm::EvalCacheMemory* cache)
      : config_(config),
        map_(map),
        segment_name_(std::move(segment_name)),
        launch_(std::move(launch)),
        cache_(cache),
        workers_(map.params().num_workers),
        watch_(config) {
    const uint32_t evaluators = map.params().num_evaluators;
    children_.emplace_back(ChildRole{ChildRole::Kind::kWriter, 0}, workers_ + evaluators);
    for (uint32_t e = 0; e < evaluators; ++e)
      children_.emplace_back(ChildRole{ChildRole::Kind::kEvaluator, e}, workers_ + e);
    for (uint32_t w = 0; w < workers_; ++w) children_.emplace_back(ChildRole{ChildRole::Kind::kWorker, w}, w);
  }
  // On any early exit (an exception), stops what still runs all at once, not
  // one ChildProcess destructor after another.
  ~Farm() {
    std::vector<ChildProcess*> running;
    for (auto& c : children_)
      if (c.process.running()) {
        c.process.Signal(SIGTERM);
        running.push_back(&c.process);
      }
    WaitAll(running, 2000);
  }
  Farm(const Farm&) = delete;
  Farm& operator=(const Farm&) = delete;

  void StartAll() {
    for (auto& c : children_) Start(c);
  }
  void Beat() const {
    // relaxed: a timestamp for children to compare with a deadline.
    map_.header().supervisor_heartbeat_ns.store(MonotonicNs(), std::memory_order_relaxed);
  }
  std::string Supervise(StatusReporter& status, int* exit_code);
  int Stop();
  // --stage-dir: the supervise loop steps `stager` (model_watcher.h).
  void StageModelsWith(ModelStager* stager) { stager_ = stager; }

 private:
  void Start(Child& c);
  std::string ReapChildren(int* exit_code);
  void ForgetLostWork(const Child& c, pid_t pid);
  std::string StopReasonOfDeath(Child& c, int st, int* exit_code);
  void Restart(Child& c);
  std::string StopRequested(const StatusReporter& status, double started) const;

  const FarmConfig& config_;
  const shm::SegmentMap& map_;
  const std::string segment_name_;
  const EvaluatorLaunch launch_;
  const shm::EvalCacheMemory* const cache_;  // nullptr: --eval-cache 0
  const uint32_t workers_;
  std::vector<Child> children_;
  WatchClock watch_;  // from construction to the end of the drain
  ModelStager* stager_ = nullptr;
};

void Farm::Start(Child& c) {
  // A predecessor's promise (a heartbeat in the future) is not the new
  // process's: it starts with none. relaxed: the slot has no process now.
  map_.Process(c.slot).heartbeat_ns.store(0, std::memory_order_relaxed);
  switch (c.role.kind) {
    case ChildRole::Kind::kWriter:
      c.process = ChildProcess::Fork(c.name, [&]() { return RunWriter(config_, map_); });
      break;
    case ChildRole::Kind::kEvaluator: {
      const uint32_t e = c.role.index;
      // The GPU is chosen before exec, so before any CUDA call in the child.
      const std::string devices = config_.gpus > 0 ? launch_.gpu_devices[e] : "";
      c.process = ChildProcess::Exec(c.name, launch_.binary,
                                     EvaluatorArgv({segment_name_, e, RunDirOf(config_).ConfigFile()}),
                                     {"CUDA_VISIBLE_DEVICES=" + devices});
      break;
    }
    case ChildRole::Kind::kWorker:
      c.process = ChildProcess::Fork(c.name, [&]() { return RunWorker(config_, map_, c.slot, cache_); });
      break;
  }
  c.started_ns = MonotonicNs();
  // relaxed: a liveness hint for peers; nothing is published through it.
  map_.Process(c.slot).pid.store(static_cast<uint32_t>(c.process.pid()), std::memory_order_relaxed);
}

// Until a reason to stop: reaps and restarts children, kills hung ones,
// checks the stop conditions and draws the status line every 20 ms.
// Returns the stop reason; *exit_code is raised when a child's failure stops the run.
std::string Farm::Supervise(StatusReporter& status, int* exit_code) {
  const double started = MonotonicSeconds();
  std::string stop_reason;
  while (stop_reason.empty()) {
    Beat();
    const uint64_t now = watch_.Pass();
    KillHungChildren(children_, map_, config_, now, watch_.watch());
    stop_reason = ReapChildren(exit_code);
    if (!stop_reason.empty()) break;
    stop_reason = StopRequested(status, started);
    if (stager_ != nullptr) stager_->Step();  // at most 16 MB a pass: the loop never stalls on a model
    status.Tick(false);
    if (stop_reason.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return stop_reason;
}

// Reaps the children that exited: a worker done with its games is finished,
// any other exit is a death, restarted unless it stops the run. Returns the
// stop reason, or "".
std::string Farm::ReapChildren(int* exit_code) {
  for (auto& c : children_) {
    int st = 0;
    const pid_t pid = c.process.pid();
    if (!c.process.running() || !c.process.TryReap(&st)) continue;
    const bool clean = WIFEXITED(st) && WEXITSTATUS(st) == kExitOk;
    if (clean && c.IsWorker()) {
      c.finished = true;
      continue;
    }
    ZF_LOG(ERROR) << c.name << " (pid " << pid << ") died: " << DescribeWaitStatus(st);
    if (c.IsWorker()) ForgetLostWork(c, pid);
    // A batch system's stop: the child's signal may come before ours (50 ms grace).
    // relaxed: g_signal is set once by the handler; nothing is published through it.
    if (DiedInSignalledStop(st, g_signal, 50))
      return std::string("signal ") + strsignal(g_signal.load(std::memory_order_relaxed));
    std::string stop_reason = StopReasonOfDeath(c, st, exit_code);
    if (!stop_reason.empty()) return stop_reason;
    Restart(c);
  }
  return "";
}

// A dead worker's games in flight are lost (counted), and the cache entries
// it left mid-write are only lost capacity until freed here.
void Farm::ForgetLostWork(const Child& c, pid_t pid) {
  ZF_LOG(WARN) << c.name << " lost " << AccountLostGames(c.slot, map_, config_) << " games in flight";
  if (cache_ == nullptr) return;
  const uint64_t freed = shm::EvalCache(*cache_).ReclaimFrom(pid);
  if (freed > 0) ZF_LOG(WARN) << c.name << " left " << freed << " cache entries mid-write; reclaimed";
}

// A child that reported a failure (bad config, full disk, run-time error)
// stops the run, and so does a crash loop (kRestartLimit deaths within
// kRestartWindowS). Returns the stop reason, or "" when it is restarted.
std::string Farm::StopReasonOfDeath(Child& c, int st, int* exit_code) {
  if (WIFEXITED(st) &&
      (WEXITSTATUS(st) == kExitUsage || WEXITSTATUS(st) == kExitNoSpace || WEXITSTATUS(st) == kExitFailure)) {
    *exit_code = WEXITSTATUS(st) == kExitNoSpace ? kExitNoSpace : kExitFailure;
    return c.name + " failed (" + DescribeWaitStatus(st) + "); see its log line above";
  }
  const double now = MonotonicSeconds();
  c.failures.push_back(now);
  while (!c.failures.empty() && now - c.failures.front() > kRestartWindowS)
    c.failures.erase(c.failures.begin());
  if (static_cast<int>(c.failures.size()) >= kRestartLimit) {
    *exit_code = kExitFailure;
    return c.name + " died " + std::to_string(kRestartLimit) + " times in " +
           std::to_string(static_cast<int>(kRestartWindowS)) + " s; giving up";
  }
  return "";
}

void Farm::Restart(Child& c) {
  // Back off a little more after each recent failure (0, 100, 200 ... ms);
  // the log line says how long, so that the restart's own latency can be told apart.
  const int backoff_ms = c.failures.empty() ? 0 : 100 * static_cast<int>(c.failures.size() - 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
  map_.Process(c.slot).restarts.fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
  Start(c);
  ZF_LOG(WARN) << "restarted " << c.name << " as pid " << c.process.pid() << " (back-off " << backoff_ms
               << " ms)";
}

// A signal, --duration, --games, or every worker finished; else "".
std::string Farm::StopRequested(const StatusReporter& status, double started) const {
  if (const int sig = g_signal.load(std::memory_order_relaxed))
    return std::string("signal ") + strsignal(sig);
  if (config_.duration > 0 && MonotonicSeconds() - started >= config_.duration) return "duration reached";
  if (config_.games > 0 && status.GamesFinished() >= static_cast<uint64_t>(config_.games))
    return "game budget reached";
  for (const auto& c : children_)
    if (c.IsWorker() && !c.finished) return "";
  return "every worker finished";
}

// The orderly stop: workers and evaluators first, waited for all at once;
// then the writer drains every finished game (one that dies or hangs while
// draining is restarted and drains again, within the crash-loop bound).
// Returns the exit code the stop adds.
int Farm::Stop() {
  map_.RequestStop(kStopWorkers);
  std::vector<ChildProcess*> others;
  for (auto& c : children_)
    if (!c.IsWriter()) others.push_back(&c.process);
  const std::vector<int> ends = WaitAll(others, 10000, [this]() {
    Beat();
    watch_.Pass();  // watching goes on: the drain's hang check needs it
  });
  for (size_t i = 0, k = 0; i < children_.size(); ++i) {
    if (children_[i].IsWriter()) continue;
    const int st = ends[k++];
    if (children_[i].IsWorker() && st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == kExitOk))
      ZF_LOG(WARN) << children_[i].name << " lost " << AccountLostGames(children_[i].slot, map_, config_)
                   << " games in flight";
  }
  map_.RequestStop(kStopWriter);
  int exit_code = kExitOk;
  for (auto& c : children_)
    if (c.IsWriter())
      exit_code = std::max(
          exit_code, DrainWriter(
                         c, [this](Child& w) { Start(w); }, map_, config_, watch_, [this]() { Beat(); }));
  return exit_code;
}

// --stage-dir: makes and checks the stage directory (the user's DIR as
// --models is made, then DIR/RUN_ID-HOST_ID as a directory of the run) and
// stages the newest model before any evaluator starts; nullptr without it.
std::unique_ptr<ModelStager> StartStaging(const FarmConfig& config, const io::RunDir& run_dir) {
  if (config.stage_dir.empty()) return nullptr;
  if (config.run_id.empty() || config.run_id.find('/') != std::string::npos || config.run_id[0] == '.')
    throw ConfigError(run_dir.RunIdFile() + ": not a run id; --stage-dir names its directory after it");
  std::error_code ec;
  std::filesystem::create_directories(config.stage_dir, ec);
  if (ec) throw Error("cannot create the stage directory " + config.stage_dir + ": " + ec.message());
  io::CheckOwnDirectory(config.stage_dir, config.allow_foreign_dir);
  const std::string dir = ModelStageDir(config);
  io::MakeRunDirectory(dir, config.allow_foreign_dir);
  auto stager = std::make_unique<ModelStager>(run_dir.ModelsDir(), dir);
  stager->StageNow();
  ZF_LOG(INFO) << "staging models of " << run_dir.ModelsDir() << " in " << dir
               << " for this host's evaluators";
  return stager;
}

}  // namespace

int RunFarm(const FarmConfig& requested) {
  FarmConfig config = requested;
  config.Validate();
  config.ResolveResources();
  SetLogRole("supervisor");
  SetProcessTitle("zf-supervisor");
  const auto game = game::MakeGame(config.game);
  const EvaluatorLaunch launch = PlanEvaluators(config);
  CheckWeights(config, *game);
  const io::RunDir run_dir = RunDirOf(config);
  run_dir.MakeDirectories(config.allow_foreign_dir);  // issue 21: made and checked (io/run_dir.h)
  if (access(run_dir.HostDir().c_str(), W_OK) != 0)
    throw Error(ErrnoMessage("the host directory " + run_dir.HostDir() + " is not writable", errno));
  const io::RunDir::HostLock lock = run_dir.LockHostDir();
  io::CheckShardManifest(run_dir.HostDir());  // a planted manifest: exit 2 now, not a writer crash loop
  uint64_t id_state = config.seed ^ MonotonicNs() ^ (static_cast<uint64_t>(getpid()) << 32);
  config.run_id = run_dir.ReadOrMakeRunId(SplitMix64(id_state));
  config.host_index = HostIndexOf(config.host_id);
  run_dir.ClaimHostIndex(config.host_index);
  config.epoch = run_dir.NextEpoch(kMaxEpochs);
  SetLogHost(config.host_id);  // every log line of this host's processes names it
  const std::string start_note = PrepareOutput(config);
  RemoveStaleSegments();

  const shm::Layout layout = shm::ComputeLayout(LayoutParamsFor(config, *game));
  shm::ShmSegment segment = shm::ShmSegment::Create("run", layout.total_bytes);
  uint64_t seed_state = config.seed ^ MonotonicNs() ^ (static_cast<uint64_t>(getpid()) << 32);
  const uint64_t segment_id = SplitMix64(seed_state);
  shm::InitSegment(segment, layout, segment_id);
  shm::SegmentMap map(segment.data(), segment.size());
  // The workers' shared evaluation cache (--eval-cache; docs/search.md):
  // inherited by the forked workers, gone with the last process.
  shm::EvalCacheMemory cache_memory;
  if (config.eval_cache > 0) cache_memory = shm::EvalCacheMemory(config.eval_cache, game->ActionCount());
  io::WriteTextFileAtomically(run_dir.ConfigFile(), config.ToText());
  LogStart(config, segment, layout, segment_id);
  InstallSignalHandlers();

  // Before any child: on a terminal, every process's log lines go through it (issue 24).
  TerminalRelay terminal(config.status_line && isatty(STDERR_FILENO));
  Farm farm(config, map, segment.name(), launch, cache_memory.valid() ? &cache_memory : nullptr);
  const std::unique_ptr<ModelStager> stager = StartStaging(config, run_dir);
  farm.StageModelsWith(stager.get());
  farm.StartAll();
  StatusReporter status(map, config, &terminal);
  status.SetStartNote(start_note);
  int exit_code = kExitOk;
  const std::string stop_reason = farm.Supervise(status, &exit_code);
  ZF_LOG(INFO) << "stopping: " << stop_reason;
  exit_code = std::max(exit_code, farm.Stop());
  if (const int bad = ModelsNonFinite(map); bad > 0 && exit_code == kExitOk) {
    ZF_LOG(ERROR) << bad << " evaluator(s) stopped with a model that produces NaN or Inf; exit code 1";
    exit_code = kExitFailure;
  }
  status.Tick(true);
  status.PrintSummary(stop_reason);
  return exit_code;
}

}  // namespace zerofarm::proc
