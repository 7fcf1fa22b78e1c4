// zf-worker-N: one worker process of the farm.
//
// Threads: one. It plays K games at once (root parallelism), each with its
// own tree, writing the features of every leaf straight into a slot of its
// shared-memory leaf ring and publishing them in bursts (one doorbell per
// burst, never one per leaf). Results come back in the same slots; the worker
// backs them up and selects the next leaves without sleeping while any
// result is ready. Finished games go to the writer through the worker's game
// queue in shared memory.
//
// Stops when the supervisor sets the stop flag (in-flight games are dropped
// and counted), when the run's game budget is spent, or when the supervisor
// is gone (PR_SET_PDEATHSIG; also checked on every timed-out wait).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/game/symmetry.h"
#include "zerofarm/mcts/selfplay_game.h"
#include "zerofarm/proc/game_codec.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/shm/eval_cache.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::proc {
namespace {

constexpr uint64_t kWaitNs = 100'000'000;  // longest sleep before re-checking peers and flags

struct SlotOwner {
  int game = -1;   // index into the worker's games
  uint64_t game_id = 0;  // that game's id: a leaf of a game dropped meanwhile is ignored
  int token = -1;  // the search's leaf token
  uint64_t feature_hash = 0;  // canonical hash of the leaf's features (the cache key, with the model version)
  int symmetry = 0;           // that hash's orientation: the cache stores policies in it
};

// Adds a queued game's search-quality figures to the worker's statistics.
void CountSearchStats(const mcts::GameRecord& r, shm::WorkerBlock& stats) {
  uint64_t full = 0;
  for (uint8_t f : r.full_search) full += f;
  // relaxed: statistics only, read by the supervisor.
  stats.full_positions.fetch_add(full, std::memory_order_relaxed);
  if (r.resigned >= 0) stats.games_resigned.fetch_add(1, std::memory_order_relaxed);
  if (r.would_resign >= 0) {
    stats.resign_checks.fetch_add(1, std::memory_order_relaxed);
    if (r.FalseResignation()) stats.false_resignations.fetch_add(1, std::memory_order_relaxed);
  }
}

// Policy and value all finite: a NaN or Inf answer is a failed evaluation.
bool FiniteResult(const shm::LeafResult& r, uint32_t actions) {
  if (!std::isfinite(r.value)) return false;
  for (uint32_t a = 0; a < actions; ++a)
    if (!std::isfinite(r.policy[a])) return false;
  return true;
}

// After a game is dropped for a non-finite answer, the worker starts no new
// game for this long: the same model would answer the same, and a new model
// is picked up by the evaluator within a second. Never a spin.
constexpr uint64_t kNonFinitePauseNs = 1'000'000'000;

}  // namespace

int RunWorker(const FarmConfig& config, const shm::SegmentMap& map, uint32_t worker,
              const shm::EvalCacheMemory* cache_memory) {
  const auto game = game::MakeGame(config.game);
  shm::SegmentHeader& header = map.header();
  shm::WorkerBlock& stats = map.Worker(worker);
  shm::ProcessSlot& me = map.WorkerProcess(worker);
  shm::LeafRingProducer ring = map.MakeLeafProducer(worker);
  shm::MessageQueueProducer queue = map.MakeGameProducer(worker);
  const pid_t supervisor = getppid();
  const int k = config.games_per_worker;
  const int per_game = config.search.leaves_per_round;
  ZF_CHECK(ring.FeatureBytes() == static_cast<uint32_t>(game->Shape().FeatureBytes()));
  // New games start with this worker's current search settings: the
  // resignation threshold moves with the measured false-resignation rate.
  mcts::SearchConfig search = config.search;
  auto publish_threshold = [&]() {
    uint32_t bits;
    std::memcpy(&bits, &search.resign_threshold, sizeof bits);
    // relaxed: a statistic for the status line; nothing is published by it.
    stats.resign_threshold_bits.store(bits, std::memory_order_relaxed);
  };
  publish_threshold();
  // The shared evaluation cache: leaves are looked up under the newest model
  // version this worker has seen, and results stored under their own.
  std::optional<shm::EvalCache> cache;
  if (cache_memory) cache.emplace(*cache_memory);
  // Keyed by the canonical form over the game's symmetries, so a position and
  // its mirror images share an entry (policies stored in canonical orientation).
  const game::SymmetryTables symmetries(*game);
  std::vector<uint8_t> scratch_features(static_cast<size_t>(game->Shape().FeatureBytes()));
  std::vector<float> cached_logits(static_cast<size_t>(game->ActionCount()));
  std::vector<float> oriented_logits(cached_logits.size());
  uint32_t newest_version = 0;
  const pid_t self = getpid();

  if (ring.Ghosts().size() > 0)
    ZF_LOG(INFO) << "resuming ring with " << ring.Ghosts().size() << " leaves of a previous worker in flight";

  std::vector<std::unique_ptr<mcts::SelfPlayGame>> games(k);
  std::vector<SlotOwner> owners(ring.Slots());
  std::vector<uint64_t> published_ns(ring.Slots());  // when each slot's leaf went out
  std::deque<mcts::GameRecord> outbox;  // finished, not yet in the queue
  std::vector<mcts::LeafRequest> leaves;
  std::vector<uint8_t> message;
  bool budget_left = true;
  uint64_t last_beat = 0;

  // Claims one game of the run's budget (--games); false once it is spent.
  uint64_t paused_until = 0;  // no new games before (see kNonFinitePauseNs)
  auto claim_game = [&]() {
    if (!budget_left || MonotonicNs() < paused_until) return false;
    if (config.games == 0) return true;
    // Claims only below the budget, so a game given back (a dropped one) can
    // be claimed again. relaxed: a counter; no data is published through it.
    uint64_t claimed = header.games_claimed.load(std::memory_order_relaxed);
    while (claimed < static_cast<uint64_t>(config.games))
      if (header.games_claimed.compare_exchange_weak(claimed, claimed + 1, std::memory_order_relaxed)) return true;
    budget_left = false;
    return false;
  };
  // Games this worker would lose if it died now: playing, or finished but
  // not yet in the queue. Kept exact, so the supervisor can count a dead
  // worker's losses and return them to the budget.
  auto in_flight_games = [&]() {
    uint64_t n = outbox.size();
    for (const auto& g : games) n += g != nullptr;
    return n;
  };
  auto publish_in_flight = [&]() {
    // relaxed: a statistic; the supervisor reads it after this process died
    // (waitpid orders it) or for the status line.
    stats.games_in_flight.store(in_flight_games(), std::memory_order_relaxed);
  };
  publish_in_flight();
  // A game whose leaf came back NaN or Inf: dropped, counted, given back to
  // the --games budget; its other leaves in flight are ignored (game_id).
  auto drop_nonfinite = [&](int g) {
    games[g].reset();
    // relaxed: statistics and a counter; nothing is published through them.
    stats.games_dropped.fetch_add(1, std::memory_order_relaxed);
    stats.games_dropped_nonfinite.fetch_add(1, std::memory_order_relaxed);
    if (config.games > 0) header.games_claimed.fetch_sub(1, std::memory_order_relaxed);
    paused_until = MonotonicNs() + kNonFinitePauseNs;
    publish_in_flight();
  };

  while (true) {
    const uint64_t now = MonotonicNs();
    if (now - last_beat > 50'000'000) {
      me.Beat(now);
      last_beat = now;
    }
    if (map.StopRequested() != 0) break;

    bool progressed = false;
    // 1. Results: back them up.
    const uint64_t done = ring.PollCompleted();
    const uint64_t results_ns = done > ring.Consumed() ? MonotonicNs() : 0;
    for (uint64_t seq = ring.Consumed(); seq < done; ++seq) {
      if (ring.IsGhost(seq)) continue;  // a leaf of the worker we replaced
      // relaxed: a statistic for the supervisor's metrics.
      stats.latency_hist[shm::LatencyBucket(results_ns - published_ns[seq % ring.Slots()])].fetch_add(
          1, std::memory_order_relaxed);
      const SlotOwner& o = owners[seq % ring.Slots()];
      const shm::LeafResult r = ring.Result(seq);
      if (!games[o.game] || games[o.game]->game_id() != o.game_id) continue;  // its game was dropped
      if (!FiniteResult(r, ring.Actions())) {
        drop_nonfinite(o.game);
        progressed = true;
        continue;
      }
      newest_version = std::max(newest_version, r.model_version);
      if (cache) {
        const float* canonical = r.policy;
        if (o.symmetry != 0) {
          symmetries.TransformPolicy(o.symmetry, r.policy, oriented_logits.data());
          canonical = oriented_logits.data();
        }
        cache->Insert(shm::EvalCache::MakeKey(o.feature_hash, r.model_version), canonical, r.value, r.model_version,
                      self);
      }
      games[o.game]->OnResult(o.token, r.policy, r.value, r.model_version);
      progressed = true;
    }
    ring.Consume(done);

    // 2. New leaves, written in place; one publish for the whole burst.
    uint64_t burst = 0;
    const uint64_t free_slots = ring.FreeSlots();
    for (int g = 0; g < k; ++g) {
      if (!games[g]) {
        if (!claim_game()) continue;
        const uint64_t sequence = queue.NextSequence();
        if (sequence >= kMaxGameSequence) {  // the id's sequence field is spent: stop as if the budget were
          ZF_LOG(WARN) << "worker " << worker << " played " << kMaxGameSequence << " games this epoch; it stops";
          budget_left = false;
          continue;
        }
        const uint64_t id = MakeGameId(config.host_index, config.epoch, worker, sequence);
        games[g] = std::make_unique<mcts::SelfPlayGame>(*game, search, id,
                                                        MixSeed(config.seed, id), static_cast<int>(worker));
        publish_in_flight();
      }
      mcts::SelfPlayGame& sp = *games[g];
      const int room = std::min<int64_t>(per_game - sp.InFlight(), free_slots - burst);
      if (room > 0) {
        leaves.clear();
        sp.NextLeaves(room, &leaves);
        uint64_t lookups = 0, hits = 0;
        for (const auto& leaf : leaves) {
          const uint64_t seq = ring.Head() + burst;
          uint8_t* features = ring.SlotFeatures(seq);
          leaf.state->EncodeFeatures(features);
          game::CanonicalHash key;
          if (cache) {
            key = game::HashCanonical(symmetries, features, scratch_features.data());
            float value;
            uint32_t version;
            ++lookups;
            if (cache->Lookup(shm::EvalCache::MakeKey(key.hash, newest_version), cached_logits.data(), &value,
                              &version)) {
              // Answered here: the slot stays free for the next leaf.
              ++hits;
              const float* logits = cached_logits.data();
              if (key.symmetry != 0) {
                symmetries.UntransformPolicy(key.symmetry, cached_logits.data(), oriented_logits.data());
                logits = oriented_logits.data();
              }
              sp.OnResult(leaf.token, logits, value, version);
              progressed = true;
              continue;
            }
          }
          owners[seq % ring.Slots()] = SlotOwner{g, sp.game_id(), leaf.token, key.hash, key.symmetry};
          ++burst;
        }
        if (lookups > 0) {
          // relaxed: statistics only.
          stats.cache_lookups.fetch_add(lookups, std::memory_order_relaxed);
          stats.cache_hits.fetch_add(hits, std::memory_order_relaxed);
        }
      }
      if (sp.Finished()) {
        outbox.push_back(sp.TakeRecord());
        const mcts::GameRecord& r = outbox.back();
        if (search.resign_target > 0.0f && r.would_resign >= 0) {
          // Stochastic approximation: each measured play-through moves the
          // threshold by step * (target - false), so it settles where the
          // false-resignation rate equals the target.
          constexpr float kStep = 0.02f;
          search.resign_threshold += kStep * (search.resign_target - (r.FalseResignation() ? 1.0f : 0.0f));
          search.resign_threshold = std::clamp(search.resign_threshold, -0.999f, 0.999f);
          publish_threshold();
        }
        games[g].reset();
        progressed = true;
      }
    }
    if (burst > 0) {
      const uint64_t t = MonotonicNs();
      for (uint64_t i = 0; i < burst; ++i) published_ns[(ring.Head() + i) % ring.Slots()] = t;
      ring.Publish(burst);
      progressed = true;
    }

    // 3. Finished games to the writer.
    while (!outbox.empty()) {
      EncodeGame(outbox.front(), *game, &message);
      const shm::PushResult pr = queue.TryPush(message.data(), static_cast<uint32_t>(message.size()));
      ZF_CHECK(pr != shm::PushResult::kTooLarge) << "a game message of " << message.size() << " bytes";
      if (pr == shm::PushResult::kFull) break;
      // A game counts as finished once it is in the queue: from there the
      // writer keeps it even if this worker dies. relaxed: statistics only.
      stats.games_finished.fetch_add(1, std::memory_order_relaxed);
      stats.positions.fetch_add(outbox.front().Positions(), std::memory_order_relaxed);
      CountSearchStats(outbox.front(), stats);
      outbox.pop_front();
      publish_in_flight();
      progressed = true;
    }

    if (!budget_left && in_flight_games() == 0 && outbox.empty()) {
      ZF_LOG(INFO) << "game budget spent; worker done";
      return kExitOk;
    }
    if (progressed) continue;
    // 4. Nothing to do until the evaluator answers or the writer makes room.
    if (getppid() != supervisor) return kExitPeerGone;
    if (ring.InFlight() > 0) {
      // It spins briefly first, then sleeps (shm/spin_wait.h: a wait for a
      // network batch loses its spins and backs off). On a timeout the loop
      // re-checks the stop flag and the supervisor; a dead evaluator is the
      // supervisor's to restart, and its successor evaluates the leaves it had taken.
      ring.WaitForResults(kWaitNs);
    } else if (!outbox.empty()) {
      queue.WaitForSpace(kWaitNs);
    } else {
      // No games: the budget is spent (rare, only at the very end) or new
      // games are paused after a non-finite answer.
      usleep(MonotonicNs() < paused_until ? 20000 : 1000);
    }
  }

  // Stopped: push what finished, drop what is in flight, and say how many.
  uint64_t dropped = 0;
  for (auto& g : games) dropped += g != nullptr;
  games.clear();
  const uint64_t deadline = MonotonicNs() + 5'000'000'000ULL;
  while (!outbox.empty() && MonotonicNs() < deadline) {
    EncodeGame(outbox.front(), *game, &message);
    if (queue.TryPush(message.data(), static_cast<uint32_t>(message.size())) == shm::PushResult::kOk) {
      stats.games_finished.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      stats.positions.fetch_add(outbox.front().Positions(), std::memory_order_relaxed);
      CountSearchStats(outbox.front(), stats);
      outbox.pop_front();
    } else {
      queue.WaitForSpace(kWaitNs);
    }
  }
  if (!outbox.empty()) ZF_LOG(WARN) << outbox.size() << " finished games could not be queued before the deadline";
  dropped += outbox.size();
  outbox.clear();
  // relaxed: statistics only; the supervisor reads them after reaping us.
  stats.games_dropped.fetch_add(dropped, std::memory_order_relaxed);
  stats.games_in_flight.store(0, std::memory_order_relaxed);
  ZF_LOG(INFO) << "stopped; dropped " << dropped << " games in flight";
  return kExitOk;
}

}  // namespace zerofarm::proc
