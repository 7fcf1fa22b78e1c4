// zf-eval-N: one evaluator process of the farm, started by fork + exec of the
// zerofarm binary (`zerofarm __evaluator`), with CUDA_VISIBLE_DEVICES set by
// the supervisor before exec, so before any CUDA call.
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
// A replacement evaluator starts from each ring's `done`, so leaves its
// predecessor took but did not finish are evaluated again.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/cpu_features.h"
#include "model_watcher.h"
#include "zerofarm/io/files.h"
#include "zerofarm/proc/batch_policy.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::proc {
namespace {

constexpr uint64_t kIdleWaitNs = 100'000'000;

// Non-finite network output (issue #21): counted in the evaluator's block and
// logged once per model version. The workers check their own leaves and drop
// the games that got NaN or Inf (worker.cpp); nothing is retried here, since
// the same model would answer the same again.
class NonFiniteCheck {
 public:
  explicit NonFiniteCheck(shm::EvaluatorBlock& block) : block_(block) {}
  // True once per model version: its first batch is about to run.
  bool NewModel(uint32_t version) {
    if (seen_ && version == version_) return false;
    seen_ = true;
    version_ = version;
    logged_ = false;
    block_.model_nonfinite.store(0, std::memory_order_relaxed);  // relaxed: a flag for the summary
    return true;
  }
  void Check(const std::vector<shm::LeafRun>& runs, uint32_t actions, uint32_t version, uint64_t batch) {
    uint64_t bad = 0;
    for (const auto& run : runs)
      for (uint32_t i = 0; i < run.count; ++i) bad += !Finite(run.policy + uint64_t{i} * actions, actions, run.value[i]);
    if (bad == 0) return;
    // relaxed: statistics and a flag, read by the supervisor.
    block_.nonfinite_leaves.fetch_add(bad, std::memory_order_relaxed);
    block_.model_nonfinite.store(1, std::memory_order_relaxed);
    if (logged_) return;
    logged_ = true;
    ZF_LOG(ERROR) << "model version " << version << " produced NaN or Inf for " << bad << " of " << batch
                  << " leaves; the workers drop the games that asked (logged once per model version)";
  }
  static bool Finite(const float* policy, uint32_t actions, float value) {
    if (!std::isfinite(value)) return false;
    for (uint32_t a = 0; a < actions; ++a)
      if (!std::isfinite(policy[a])) return false;
    return true;
  }

 private:
  shm::EvaluatorBlock& block_;
  uint32_t version_ = 0;
  bool seen_ = false, logged_ = false;
};

int ServeRings(const FarmConfig& config, const shm::SegmentMap& map, const shm::ShmView& view, uint32_t index) {
  const auto game = game::MakeGame(config.game);
  if (map.params().feature_bytes != static_cast<uint32_t>(game->Shape().FeatureBytes()) ||
      map.params().actions != static_cast<uint32_t>(game->ActionCount()))
    throw Error("the segment's leaf shape does not match " + config.game);
  const bool on_gpu = config.OnGpu();
  shm::ProcessSlot& me = map.EvaluatorProcess(index);
  me.Beat(MonotonicNs(), config.BusyAllowanceNs());  // building the net (LibTorch, CUDA) may take long
  std::unique_ptr<eval::Evaluator> net = MakeEvaluatorFor(*game, config, on_gpu);
  // A GPU evaluator pins the whole segment: the rings' copies are DMAs.
  net->RegisterHostMemory(view.data(), view.size());
  const std::string blas = eval::LoadedBlas();
  std::string served, devices = "unset";
  for (uint32_t w : map.WorkersOf(index)) served += (served.empty() ? "" : ",") + std::to_string(w);
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) devices = v;
  ZF_LOG(INFO) << "serving workers " << served << " (CUDA_VISIBLE_DEVICES=" << devices << ") of evaluator "
               << index << " with " << net->Describe() << "; BLAS "
               << (blas.empty() ? "none loaded" : blas) << "; wait "
               << (config.adaptive_wait ? "adaptive, at most " : "fixed ") << config.max_wait_us << " us";
  shm::EvaluatorBlock& block = map.Evaluator(index);
  ModelWatcher models(RunDirOf(config).ModelsDir());
  // Between batches: swap in the newest model of the models directory. A file
  // that cannot be used is refused with one line; the old weights stay.
  auto maybe_reload = [&](bool at_start) {
    const std::optional<std::string> path = models.Poll(at_start);
    if (!path) return;
    me.Beat(MonotonicNs(), config.BusyAllowanceNs());  // a load may take long (issue #21)
    try {
      eval::WeightSet weights = LoadWeightsFor(*game, *path);
      if (weights.version <= net->ModelVersion()) {
        models.Refused(*path);  // issue 21: not offered again unless it changes
        if (!at_start)
          ZF_LOG(WARN) << "not loading " << *path << ": its model version " << weights.version
                       << " is not newer than " << net->ModelVersion();
        return;
      }
      auto fresh = eval::MakeTorchEvaluator(weights, TorchOptionsFor(config, on_gpu));
      net.reset();  // unpins the segment before the new network pins it
      net = std::move(fresh);
      net->RegisterHostMemory(view.data(), view.size());
      // relaxed: read by the status line only.
      block.model_version.store(net->ModelVersion(), std::memory_order_relaxed);
      models.Loaded(*path);
      ZF_LOG(INFO) << "loaded model version " << net->ModelVersion() << " from " << *path;
    } catch (const std::exception& e) {
      // issue 21: retried once the file changes (a copy still in progress), never blocks a later one.
      models.Refused(*path);
      ZF_LOG(ERROR) << "refused " << *path << "; keeping model version " << net->ModelVersion() << ": " << e.what();
    }
  };
  maybe_reload(true);
  // relaxed: read by the status line only.
  block.model_version.store(net->ModelVersion(), std::memory_order_relaxed);
  shm::Doorbell bell = map.EvaluatorDoorbell(index);
  bell.CancelSleep();  // a predecessor killed in its sleep left the flag set
  std::vector<shm::LeafRingConsumer> rings;
  for (uint32_t w : map.WorkersOf(index)) rings.push_back(map.MakeLeafConsumer(w));
  const uint64_t max_batch = static_cast<uint64_t>(config.max_batch);
  const uint64_t max_wait_ns = static_cast<uint64_t>(config.max_wait_us) * 1000;
  const pid_t supervisor = getppid();
  const bool adaptive = config.adaptive_wait;
  AdaptiveBatchPolicy policy;
  // Spin briefly before each futex sleep (shm/spin_wait.h): one policy per wait,
  // since a wait for the first leaf and one for more leaves win differently.
  shm::SpinPolicy idle_spin, batch_spin;

  std::vector<eval::LeafChunk> chunks;
  std::vector<shm::LeafRun> runs;
  auto any_ready = [&]() {
    for (auto& r : rings)
      if (r.Available() > 0) return true;
    return false;
  };
  // Takes ready leaves from every ring, round-robin start, up to the batch limit.
  size_t start_ring = 0;
  uint64_t batch = 0;
  auto gather = [&]() {
    for (size_t i = 0; i < rings.size() && batch < max_batch; ++i) {
      auto& ring = rings[(start_ring + i) % rings.size()];
      const shm::LeafRuns taken = ring.Take(max_batch - batch);
      for (uint32_t r = 0; r < taken.num_runs; ++r) runs.push_back(taken.runs[r]);
      batch += taken.total;
    }
    start_ring = (start_ring + 1) % rings.size();
  };

  uint64_t last_beat = 0;
  NonFiniteCheck nonfinite(block);
  while (true) {
    const uint64_t now = MonotonicNs();
    if (now - last_beat > 50'000'000) {
      me.Beat(now);
      last_beat = now;
    }
    if (map.StopRequested() != 0) return kExitOk;
    maybe_reload(false);
    runs.clear();
    batch = 0;
    gather();
    for (size_t i = 0; i < rings.size(); ++i)
      if (rings[i].Corrupt()) {
        ZF_LOG(ERROR) << "the ring of worker " << map.WorkersOf(index)[i]
                      << " has impossible counters; no longer serving it";
        rings.erase(rings.begin() + static_cast<long>(i));
        if (rings.empty()) return kExitFailure;
        break;
      }
    if (batch == 0) {
      bell.SpinThenSleepUnless(any_ready, idle_spin, kIdleWaitNs);
      if (getppid() != supervisor) return kExitPeerGone;
      continue;
    }
    // Wait a little for more leaves, asleep, never past the deadline. The
    // adaptive policy waits only while the next leaf is expected sooner than
    // it is worth (batch_policy.h) and stops once leaves stop arriving.
    const uint64_t wait_start = MonotonicNs();
    const uint64_t deadline = wait_start + max_wait_ns;
    uint64_t last_arrival = wait_start;
    auto rings_full = [&]() {  // no worker can send more until we answer
      for (auto& r : rings)
        if (r.Taken() - r.Done() < r.Slots()) return false;
      return true;
    };
    while (batch < max_batch && !rings_full()) {
      const uint64_t t = MonotonicNs();
      uint64_t until = deadline;
      if (adaptive) {
        if (!policy.WorthWaiting(batch)) break;
        until = std::min(deadline, last_arrival + policy.ArrivalTimeoutNs());
      }
      if (t >= until) break;
      bell.SpinThenSleepUnless(any_ready, batch_spin, until - t);
      const uint64_t before = batch;
      gather();
      const uint64_t after = MonotonicNs();
      if (batch > before) {
        policy.ObserveArrival(batch - before, after - last_arrival);
        last_arrival = after;
      } else if (after >= until) {
        break;
      }
    }
    // Evaluate in place.
    chunks.clear();
    for (const auto& run : runs) {
      // Bounds were checked when the segment was validated; a run never wraps.
      ZF_CHECK(run.count > 0 && run.count <= max_batch);
      chunks.push_back(eval::LeafChunk{run.features, run.policy, run.value, static_cast<int>(run.count)});
    }
    const uint64_t t0 = MonotonicNs();
    const uint32_t version = net->ModelVersion();
    // The first batch of a model may take long (LibTorch's lazy set-up, cuDNN).
    if (nonfinite.NewModel(version)) me.Beat(t0, config.BusyAllowanceNs());
    net->Evaluate(chunks.data(), static_cast<int>(chunks.size()));
    nonfinite.Check(runs, map.params().actions, version, batch);
    for (const auto& run : runs)
      for (uint32_t i = 0; i < run.count; ++i) run.model_version[i] = version;
    for (auto& ring : rings) ring.CompleteAllTaken();
    const uint64_t compute_ns = MonotonicNs() - t0;
    policy.ObserveBatch(batch, compute_ns);
    shm::RecordBatch(block, batch, compute_ns);
  }
}

}  // namespace

int RunEvaluatorProcess(const std::string& segment_name, uint32_t index, const std::string& config_path) {
  const FarmConfig config = FarmConfig::FromText(io::ReadTextFile(config_path));
  shm::ShmView view(segment_name);
  shm::SegmentMap map(view.data(), view.size());
  if (index >= map.params().num_evaluators)
    throw Error("evaluator index " + std::to_string(index) + " out of range");
  return ServeRings(config, map, view, index);
}

}  // namespace zerofarm::proc
