// zf-eval-N: one evaluator process of the farm, started by fork + exec of
// zerofarm-torch, the binary that links LibTorch (zerofarm itself in a build
// without LibTorch), with CUDA_VISIBLE_DEVICES set by the supervisor before
// exec, so before any CUDA call. Its argv: proc/evaluator_command.h.
//
// Threads: the main thread batches and runs the network; LibTorch's intra-op
// pool (1 thread by default on CPU: the cores belong to the workers).
//
// Loop: take the ready leaves of its rings (workers w with w % G == N) greedily
// up to --max-batch; after the first ready leaf wait for more, asleep on the
// evaluator's doorbell after a bounded spin (shm/spin_wait.h), while the
// adaptive policy (batch_policy.h) says the next leaf is worth waiting for,
// never longer than --max-wait-us (with
// adaptive_wait off: always up to --max-wait-us); run the network on the slots in
// place (features read where the workers wrote them, outputs written into the
// same slots); publish completion per ring (one wake-up per ring per batch).
// With --eval-depth 2 (batch_pipeline.h) batch N + 1 is gathered and started
// before batch N is waited for and completed: a GPU runs one while the next
// is copied in.
// A replacement evaluator starts from each ring's `done`, so leaves its
// predecessor took but did not finish are evaluated again.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "batch_pipeline.h"
#include "model_watcher.h"
#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/hash.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/game_plugin.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/proc/batch_policy.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::proc {
namespace {

constexpr uint64_t kIdleWaitNs = 100'000'000;

// One evaluator's state: its network, its rings, its batching policy, and
// what the loop's steps share. Lives in the evaluator process; the loop runs
// on its main thread.
class RingServer {
 public:
  RingServer(const FarmConfig& config, const shm::SegmentMap& map, const shm::ShmView& view, uint32_t index);
  // The evaluator's loop; returns its exit code.
  int Run();

 private:
  void LogStart() const;
  void MaybeReload(bool at_start);
  bool FirstToRefuse(const std::string& path, const std::string& line) const;
  bool AnyReady();
  void Gather();
  bool DropCorruptRing();
  void WaitForMoreLeaves();
  bool RingsFull() const;
  void StartBatch();
  void FinishOldest();
  void Drain();

  const FarmConfig& config_;
  const shm::SegmentMap& map_;
  const shm::ShmView& view_;
  const uint32_t index_;
  const std::unique_ptr<game::Game> game_;
  const bool on_gpu_;
  shm::ProcessSlot& me_;
  shm::EvaluatorBlock& block_;
  std::unique_ptr<eval::Evaluator> net_;
  ModelWatcher models_;
  shm::Doorbell bell_;
  std::vector<shm::LeafRingConsumer> rings_;
  std::vector<uint32_t> ring_workers_;  // the worker of rings_[i]
  const uint64_t max_batch_;
  const uint64_t max_wait_ns_;
  const pid_t supervisor_;
  AdaptiveBatchPolicy policy_;
  // Spin briefly before each futex sleep (shm/spin_wait.h): one policy per wait,
  // since a wait for the first leaf and one for more leaves win differently.
  shm::SpinPolicy idle_spin_, batch_spin_;
  NonFiniteCheck nonfinite_;
  BatchPipeline pipeline_;  // batches started, not finished: up to net_->Depth()
  uint64_t last_finish_ns_ = 0;

  std::vector<shm::LeafRun> runs_;
  size_t start_ring_ = 0;
  uint64_t batch_ = 0;
};

std::unique_ptr<game::Game> CheckedGame(const FarmConfig& config, const shm::SegmentMap& map) {
  auto game = game::MakeGame(config.game);
  if (map.params().feature_bytes != static_cast<uint32_t>(game->Shape().FeatureBytes()) ||
      map.params().actions != static_cast<uint32_t>(game->ActionCount()))
    throw Error("the segment's leaf shape does not match " + config.game);
  return game;
}

RingServer::RingServer(const FarmConfig& config, const shm::SegmentMap& map, const shm::ShmView& view,
                       uint32_t index)
    : config_(config),
      map_(map),
      view_(view),
      index_(index),
      game_(CheckedGame(config, map)),
      on_gpu_(config.OnGpu()),
      me_(map.EvaluatorProcess(index)),
      block_(map.Evaluator(index)),
      models_(config.stage_dir.empty() ? RunDirOf(config).ModelsDir() : ModelStageDir(config)),
      bell_(map.EvaluatorDoorbell(index)),
      max_batch_(static_cast<uint64_t>(config.max_batch)),
      max_wait_ns_(static_cast<uint64_t>(config.max_wait_us) * 1000),
      supervisor_(getppid()),
      nonfinite_(block_) {
  me_.Beat(MonotonicNs(), config.BusyAllowanceNs());  // building the net (LibTorch, CUDA) may take long
  net_ = MakeEvaluatorFor(*game_, config, on_gpu_);
  // A GPU evaluator pins the whole segment: the rings' copies are DMAs.
  net_->RegisterHostMemory(view.data(), view.size());
  LogStart();
  MaybeReload(true);
  // relaxed: read by the status line only.
  block_.model_version.store(net_->ModelVersion(), std::memory_order_relaxed);
  bell_.CancelSleep();  // a predecessor killed in its sleep left the flag set
  for (uint32_t w : map.WorkersOf(index)) {
    rings_.push_back(map.MakeLeafConsumer(w));
    ring_workers_.push_back(w);
  }
}

void RingServer::LogStart() const {
  const std::string blas = eval::LoadedBlas();
  std::string served, devices = "unset";
  for (uint32_t w : map_.WorkersOf(index_)) served += (served.empty() ? "" : ",") + std::to_string(w);
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) devices = v;
  ZF_LOG(INFO) << "serving workers " << served << " (CUDA_VISIBLE_DEVICES=" << devices << ") of evaluator "
               << index_ << " with " << net_->Describe() << "; BLAS " << (blas.empty() ? "none loaded" : blas)
               << "; wait " << (config_.adaptive_wait ? "adaptive, at most " : "fixed ")
               << config_.max_wait_us << " us";
}

// Whether this evaluator is the first to refuse `path` as it is now for the
// reason `line`: the others refusing it the same way say nothing more, so the
// log has one line per bad model, not one per evaluator (issue 82).
bool RingServer::FirstToRefuse(const std::string& path, const std::string& line) const {
  struct stat st {};
  ::stat(path.c_str(), &st);  // the file's state: a changed file refused again is logged again
  const std::string key = line + '\0' + std::to_string(st.st_ino) + ' ' + std::to_string(st.st_size) + ' ' +
                          std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
  const uint64_t hash = HashBytes(reinterpret_cast<const uint8_t*>(key.data()), key.size()) | 1;
  // relaxed: a hint against duplicate lines; nothing is published through it.
  return map_.header().model_refusal.exchange(hash, std::memory_order_relaxed) != hash;
}

// Between batches: swap in the newest model of the models directory. A file
// that cannot be used is refused with one line (for all evaluators); the old
// weights stay. The rule (docs/models.md, Hot reload): the N of model-N counts,
// the version the file records must be N, and N must be above the version served.
void RingServer::MaybeReload(bool at_start) {
  if (config_.random_evaluator) return;  // no network to reload
  const std::optional<std::string> path = models_.Poll(at_start);
  if (!path) return;
  me_.Beat(MonotonicNs(), config_.BusyAllowanceNs());  // a load may take long (issue #21)
  try {
    eval::WeightSet weights = LoadWeightsFor(*game_, *path);
    io::RunDir::CheckModelFileVersion(*path, weights.version);
    if (weights.version <= net_->ModelVersion()) {
      models_.Refused(*path);  // issue 21: not offered again unless it changes
      // At start, a model the run had before --weights (its version or older) stays in silence.
      if (!at_start)
        ZF_LOG(WARN) << "not loading " << *path << ": its model version " << weights.version
                     << " is not above the version served, " << net_->ModelVersion();
      return;
    }
    // The same net: its weights in place (the pinned segment and any CUDA
    // graphs stay); another shape: a new network.
    const bool in_place = weights.config.SameShape(net_->Config()) && net_->UpdateWeights(weights);
    if (!in_place) {
      auto fresh = eval::MakeTorchEvaluator(weights, TorchOptionsFor(config_, on_gpu_));
      Drain();       // the old network answers its batches in flight
      net_.reset();  // unpins the segment before the new network pins it
      net_ = std::move(fresh);
      net_->RegisterHostMemory(view_.data(), view_.size());
    }
    // relaxed: read by the status line only.
    block_.model_version.store(net_->ModelVersion(), std::memory_order_relaxed);
    models_.Loaded(*path);
    ZF_LOG(INFO) << "loaded model version " << net_->ModelVersion() << " from " << *path
                 << (in_place ? " (in place)" : "");
  } catch (const std::exception& e) {
    // issue 21: retried once the file changes (a copy still in progress), never blocks a later one.
    models_.Refused(*path);
    const std::string line = "refused " + *path + "; keeping model version " +
                             std::to_string(net_->ModelVersion()) + ": " + e.what();
    if (FirstToRefuse(*path, line)) ZF_LOG(ERROR) << line;
  }
}

bool RingServer::AnyReady() {
  for (auto& r : rings_)
    if (r.Available() > 0) return true;
  return false;
}

// Takes ready leaves from every ring, round-robin start, up to the batch limit.
void RingServer::Gather() {
  for (size_t i = 0; i < rings_.size() && batch_ < max_batch_; ++i) {
    auto& ring = rings_[(start_ring_ + i) % rings_.size()];
    const shm::LeafRuns taken = ring.Take(max_batch_ - batch_);
    for (uint32_t r = 0; r < taken.num_runs; ++r) runs_.push_back(taken.runs[r]);
    batch_ += taken.total;
  }
  start_ring_ = (start_ring_ + 1) % rings_.size();
}

// Stops serving the first ring with impossible counters, if any; false when
// no ring is left.
bool RingServer::DropCorruptRing() {
  for (size_t i = 0; i < rings_.size(); ++i)
    if (rings_[i].Corrupt()) {
      Drain();  // the batches in flight hold slots of every ring, by index
      ZF_LOG(ERROR) << "the ring of worker " << ring_workers_[i]
                    << " has impossible counters; no longer serving it (its worker stops the run)";
      rings_[i].Refuse();
      rings_.erase(rings_.begin() + static_cast<long>(i));
      ring_workers_.erase(ring_workers_.begin() + static_cast<long>(i));
      return !rings_.empty();
    }
  return true;
}

int RingServer::Run() {
  uint64_t last_beat = 0;
  while (true) {
    const uint64_t now = MonotonicNs();
    if (now - last_beat > 50'000'000) {
      me_.Beat(now);
      last_beat = now;
    }
    if (map_.StopRequested() != 0) {
      Drain();
      return kExitOk;
    }
    MaybeReload(false);
    runs_.clear();
    batch_ = 0;
    Gather();
    if (!DropCorruptRing()) return kExitFailure;
    if (batch_ == 0) {
      if (!pipeline_.Empty()) {  // the workers wait for it
        FinishOldest();
        continue;
      }
      bell_.SpinThenSleepUnless([this]() { return AnyReady(); }, idle_spin_, kIdleWaitNs);
      if (getppid() != supervisor_) return kExitPeerGone;
      continue;
    }
    // With a batch in flight this one starts at once, overlapping it.
    if (pipeline_.Empty()) WaitForMoreLeaves();
    StartBatch();
    // Depth 1: finished before the next gather (the old loop); depth 2: batch
    // N is waited for once N + 1 is started.
    if (pipeline_.Full(*net_)) FinishOldest();
  }
}

bool RingServer::RingsFull() const {  // no worker can send more until we answer
  for (auto& r : rings_)
    if (r.Taken() - r.Done() < r.Slots()) return false;
  return true;
}

// Wait a little for more leaves, asleep, never past the deadline. The
// adaptive policy waits only while the next leaf is expected sooner than
// it is worth (batch_policy.h) and stops once leaves stop arriving.
void RingServer::WaitForMoreLeaves() {
  const uint64_t wait_start = MonotonicNs();
  const uint64_t deadline = wait_start + max_wait_ns_;
  uint64_t last_arrival = wait_start;
  while (batch_ < max_batch_ && !RingsFull()) {
    const uint64_t t = MonotonicNs();
    uint64_t until = deadline;
    if (config_.adaptive_wait) {
      if (!policy_.WorthWaiting(batch_)) break;
      until = std::min(deadline, last_arrival + policy_.ArrivalTimeoutNs());
    }
    if (t >= until) break;
    bell_.SpinThenSleepUnless([this]() { return AnyReady(); }, batch_spin_, until - t);
    const uint64_t before = batch_;
    Gather();
    const uint64_t after = MonotonicNs();
    if (batch_ > before) {
      policy_.ObserveArrival(batch_ - before, after - last_arrival);
      last_arrival = after;
    } else if (after >= until) {
      break;
    }
  }
}

// Starts the gathered batch in place: the network reads the features where
// the workers wrote them and writes policy and value into the same slots,
// which stay the evaluator's until FinishOldest completes the batch.
void RingServer::StartBatch() {
  // Bounds were checked when the segment was validated; a run never wraps.
  for (const auto& run : runs_) ZF_CHECK(run.count > 0 && run.count <= max_batch_);
  const uint64_t t0 = MonotonicNs();
  // The first batch of a model may take long (LibTorch's lazy set-up, cuDNN).
  if (nonfinite_.NewModel(net_->ModelVersion())) me_.Beat(t0, config_.BusyAllowanceNs());
  pipeline_.Start(*net_, runs_, batch_, rings_, t0);
}

// Waits for the oldest batch, checks its outputs and publishes each ring's
// completion. Its busy time runs from its start, or from the previous
// batch's finish if later (batches in flight overlap).
void RingServer::FinishOldest() {
  const BatchPipeline::Batch& b = pipeline_.WaitOldest(*net_);
  nonfinite_.Check(b.runs, map_.params().actions, b.version, b.leaves);
  const uint64_t leaves = b.leaves, start_ns = b.start_ns;
  pipeline_.CompleteOldest(rings_);
  const uint64_t now = MonotonicNs();
  const uint64_t busy_ns = now - std::max(start_ns, last_finish_ns_);
  last_finish_ns_ = now;
  policy_.ObserveBatch(leaves, busy_ns);
  shm::RecordBatch(block_, leaves, busy_ns);
}

void RingServer::Drain() {
  while (!pipeline_.Empty()) FinishOldest();
}

}  // namespace

int RunEvaluatorProcess(const std::string& segment_name, uint32_t index, const std::string& config_path) {
  const FarmConfig config = FarmConfig::FromText(io::ReadTextFile(config_path));
  if (!config.game_plugin.empty()) io::LoadGamePlugin(config.game_plugin);  // the supervisor's, checked
  shm::ShmView view(segment_name);
  shm::SegmentMap map(view.data(), view.size());
  if (index >= map.params().num_evaluators)
    throw Error("evaluator index " + std::to_string(index) + " out of range");
  return RingServer(config, map, view, index).Run();
}

}  // namespace zerofarm::proc
