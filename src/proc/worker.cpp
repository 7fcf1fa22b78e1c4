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
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "game_cap.h"
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
  int game = -1;              // index into the worker's games
  uint64_t game_id = 0;       // that game's id: a leaf of a game dropped meanwhile is ignored
  int token = -1;             // the search's leaf token
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

// Test hook of the fault tests: ZF_FAULT_WORKER_DIE=claim:N (or push:N) makes
// worker 0's first incarnation SIGKILL itself right after its N-th claim from
// the --games budget, before the game is in place (or right after its N-th
// push into the game queue, before it stores what it still holds): the two
// instants where a kill once gave the run a game too few or too many.
struct DieHook {
  enum Point { kNone, kClaim, kPush } point = kNone;
  int at = 0;    // the N-th event
  int seen = 0;  // events so far
};
DieHook ReadDieHook(uint32_t worker, const shm::ProcessSlot& me) {
  DieHook hook;
  const char* env = std::getenv("ZF_FAULT_WORKER_DIE");
  // relaxed: a counter, read once at start.
  if (!env || worker != 0 || me.restarts.load(std::memory_order_relaxed) != 0) return hook;
  const std::string spec(env);
  if (spec.rfind("claim:", 0) == 0) hook.point = DieHook::kClaim;
  if (spec.rfind("push:", 0) == 0) hook.point = DieHook::kPush;
  if (hook.point != DieHook::kNone) hook.at = std::atoi(spec.c_str() + spec.find(':') + 1);
  return hook;
}
void MaybeDie(DieHook& hook, DieHook::Point point) {
  if (hook.point != point || ++hook.seen != hook.at) return;
  ZF_LOG(WARN) << "ZF_FAULT_WORKER_DIE: dying after " << (point == DieHook::kClaim ? "claim" : "push") << " "
               << hook.at << " on purpose";
  raise(SIGKILL);
}

// One worker's state: its K games, its ring and queue, and what the loop's
// steps share. Lives in the worker process; single-threaded.
class Worker {
 public:
  Worker(const FarmConfig& config, const shm::SegmentMap& map, uint32_t worker,
         const shm::EvalCacheMemory* cache_memory);
  // The worker's loop; returns its exit code.
  int Run();

 private:
  bool ClaimGame();
  void LogGameCap();
  uint64_t InFlightGames() const;
  void PublishInFlight();
  void PublishThreshold();
  void DropNonFinite(int g);
  bool BackUpResults();
  bool StartGame(int g);
  bool WriteLeaves(int g, uint64_t free_slots, uint64_t* burst);
  bool AnswerFromCache(mcts::SelfPlayGame& sp, const mcts::LeafRequest& leaf, const game::CanonicalHash& key);
  void FinishGame(int g);
  bool NewLeaves();
  bool QueueFinishedGames();
  void CountQueued(const mcts::GameRecord& r);
  void WaitForWork();
  int StopRefused();
  int StopAndDrop();

  const FarmConfig& config_;
  const uint32_t worker_;
  const std::unique_ptr<game::Game> game_;
  const shm::SegmentMap& map_;
  shm::SegmentHeader& header_;
  shm::WorkerBlock& stats_;
  shm::ProcessSlot& me_;
  shm::LeafRingProducer ring_;
  shm::MessageQueueProducer queue_;
  const pid_t supervisor_;
  const pid_t self_;
  const int k_;
  const int per_game_;
  GameCap cap_;  // games in play at most now: sized from the evaluator's speed (game_cap.h)
  bool cap_logged_ = false;
  // New games start with this worker's current search settings: the
  // resignation threshold moves with the measured false-resignation rate.
  mcts::SearchConfig search_;
  // The shared evaluation cache: leaves are looked up under the newest model
  // version this worker has seen, and results stored under their own.
  std::optional<shm::EvalCache> cache_;
  // Keyed by the canonical form over the game's symmetries, so a position and
  // its mirror images share an entry (policies stored in canonical orientation).
  const game::SymmetryTables symmetries_;
  std::vector<uint8_t> scratch_features_;
  std::vector<float> cached_logits_;
  std::vector<float> oriented_logits_;
  uint32_t newest_version_ = 0;

  std::vector<std::unique_ptr<mcts::SelfPlayGame>> games_;
  std::vector<SlotOwner> owners_;
  std::vector<uint64_t> published_ns_;   // when each slot's leaf went out
  std::deque<mcts::GameRecord> outbox_;  // finished, not yet in the queue
  std::vector<mcts::LeafRequest> leaves_;
  std::vector<uint8_t> message_;
  bool budget_left_ = true;
  // A game claimed from the --games budget and not yet in games_: counted as
  // held (InFlightGames) from before the claim, so a kill cannot hide it.
  bool reserved_ = false;
  DieHook die_hook_;
  uint64_t last_beat_ = 0;
  uint64_t paused_until_ = 0;  // no new games before (see kNonFinitePauseNs)
};

Worker::Worker(const FarmConfig& config, const shm::SegmentMap& map, uint32_t worker,
               const shm::EvalCacheMemory* cache_memory)
    : config_(config),
      worker_(worker),
      game_(game::MakeGame(config.game)),
      map_(map),
      header_(map.header()),
      stats_(map.Worker(worker)),
      me_(map.WorkerProcess(worker)),
      ring_(map.MakeLeafProducer(worker)),
      queue_(map.MakeGameProducer(worker)),
      supervisor_(getppid()),
      self_(getpid()),
      k_(config.games_per_worker),
      per_game_(config.search.leaves_per_round),
      cap_(k_, k_ == FarmConfig{}.games_per_worker,
           config.search.simulations * std::max(1, game_->MaxGameLength() / 2) * 1.0,
           config.search.simulations),
      search_(config.search),
      symmetries_(*game_),
      scratch_features_(static_cast<size_t>(game_->Shape().FeatureBytes())),
      cached_logits_(static_cast<size_t>(game_->ActionCount())),
      oriented_logits_(cached_logits_.size()),
      games_(k_),
      owners_(ring_.Slots()),
      published_ns_(ring_.Slots()),
      die_hook_(ReadDieHook(worker, me_)) {
  ZF_CHECK(ring_.FeatureBytes() == static_cast<uint32_t>(game_->Shape().FeatureBytes()));
  PublishThreshold();
  if (cache_memory) cache_.emplace(*cache_memory);
  if (ring_.Ghosts().size() > 0)
    ZF_LOG(INFO) << "resuming ring with " << ring_.Ghosts().size()
                 << " leaves of a previous worker in flight";
  PublishInFlight();
}

void Worker::PublishThreshold() {
  uint32_t bits;
  std::memcpy(&bits, &search_.resign_threshold, sizeof bits);
  // relaxed: a statistic for the status line; nothing is published by it.
  stats_.resign_threshold_bits.store(bits, std::memory_order_relaxed);
}

// Claims one game of the run's budget (--games); false once it is spent.
// The game is published as held before the claim, so that a worker killed
// around it can only give back a claim it never made (the run plays one game
// more), never hold one the supervisor does not see (the run one game short).
bool Worker::ClaimGame() {
  if (!budget_left_ || MonotonicNs() < paused_until_) return false;
  if (config_.games == 0) return true;
  reserved_ = true;
  PublishInFlight();
  // Claims only below the budget, so a game given back (a dropped one) can
  // be claimed again. relaxed: a counter; no data is published through it.
  uint64_t claimed = header_.games_claimed.load(std::memory_order_relaxed);
  while (claimed < static_cast<uint64_t>(config_.games))
    if (header_.games_claimed.compare_exchange_weak(claimed, claimed + 1, std::memory_order_relaxed)) {
      MaybeDie(die_hook_, DieHook::kClaim);
      return true;  // reserved_ until StartGame puts the game in place
    }
  reserved_ = false;
  PublishInFlight();
  budget_left_ = false;
  return false;
}

// Once, by worker 0, when the evaluator's speed holds the games in play below
// the default K (game_cap.h): how many, and why.
void Worker::LogGameCap() {
  if (worker_ != 0 || cap_logged_ || !cap_.Settled()) return;
  cap_logged_ = true;
  ZF_LOG(INFO) << "worker 0 plays " << cap_.cap() << " games at once, not " << k_ << ": it gets "
               << static_cast<int64_t>(cap_.rate()) << " leaves/s answered, and a game takes about "
               << static_cast<int64_t>(cap_.LeavesPerGame()) << ", so one ends within "
               << GameCap::kFirstGameSeconds << " s (--games-per-worker sets K; docs/running.md)";
}

// Games this worker would lose if it died now: playing, or finished but
// not yet in the queue. Kept exact, so the supervisor can count a dead
// worker's losses and return them to the budget.
uint64_t Worker::InFlightGames() const {
  uint64_t n = outbox_.size() + reserved_;
  for (const auto& g : games_) n += g != nullptr;
  return n;
}

void Worker::PublishInFlight() {
  const uint64_t held = InFlightGames();
  ZF_CHECK(held < (uint64_t{1} << shm::OwedGames::kHeldBits)) << held << " games held";
  // relaxed: the supervisor reads it only after this process died (waitpid
  // orders it), with the queue's head, which only this process moved.
  stats_.games_owed.store(shm::OwedGames::Pack(held, queue_.Pushed()), std::memory_order_relaxed);
}

// A game whose leaf came back NaN or Inf: dropped, counted, given back to
// the --games budget; its other leaves in flight are ignored (game_id).
void Worker::DropNonFinite(int g) {
  games_[g].reset();
  // relaxed: statistics and a counter; nothing is published through them.
  stats_.games_dropped.fetch_add(1, std::memory_order_relaxed);
  stats_.games_dropped_nonfinite.fetch_add(1, std::memory_order_relaxed);
  if (config_.games > 0) header_.games_claimed.fetch_sub(1, std::memory_order_relaxed);
  paused_until_ = MonotonicNs() + kNonFinitePauseNs;
  PublishInFlight();
}

int Worker::Run() {
  while (true) {
    const uint64_t now = MonotonicNs();
    if (now - last_beat_ > 50'000'000) {
      me_.Beat(now);
      last_beat_ = now;
    }
    if (map_.StopRequested() != 0) break;
    if (cap_.Update(now)) LogGameCap();
    bool progressed = BackUpResults();  // 1.
    if (ring_.Corrupt())                // never trust shared memory: stop before reading a slot on its word
      throw Error("worker " + std::to_string(worker_) +
                  ": its leaf ring's counters are impossible (results for leaves never published, or more "
                  "than a ring's worth in flight): the evaluator is broken or the segment corrupt");
    if (ring_.Refused()) return StopRefused();
    progressed |= NewLeaves();           // 2.
    progressed |= QueueFinishedGames();  // 3.
    if (!budget_left_ && InFlightGames() == 0 && outbox_.empty()) {
      ZF_LOG(INFO) << "game budget spent; worker done";
      return kExitOk;
    }
    if (progressed) continue;
    // 4. Nothing to do until the evaluator answers or the writer makes room.
    if (getppid() != supervisor_) return kExitPeerGone;
    WaitForWork();
  }
  return StopAndDrop();
}

// 1. Results: back them up. Returns whether any came.
bool Worker::BackUpResults() {
  bool progressed = false;
  const uint64_t done = ring_.PollCompleted();
  const uint64_t results_ns = done > ring_.Consumed() ? MonotonicNs() : 0;
  cap_.Answered(done - ring_.Consumed());
  for (uint64_t seq = ring_.Consumed(); seq < done; ++seq) {
    if (ring_.IsGhost(seq)) continue;  // a leaf of the worker we replaced
    // relaxed: a statistic for the supervisor's metrics.
    stats_.latency_hist[shm::LatencyBucket(results_ns - published_ns_[seq % ring_.Slots()])].fetch_add(
        1, std::memory_order_relaxed);
    const SlotOwner& o = owners_[seq % ring_.Slots()];
    const shm::LeafResult r = ring_.Result(seq);
    if (!games_[o.game] || games_[o.game]->game_id() != o.game_id) continue;  // its game was dropped
    if (!FiniteResult(r, ring_.Actions())) {
      DropNonFinite(o.game);
      progressed = true;
      continue;
    }
    newest_version_ = std::max(newest_version_, r.model_version);
    if (cache_) {
      const float* canonical = r.policy;
      if (o.symmetry != 0) {
        symmetries_.TransformPolicy(o.symmetry, r.policy, oriented_logits_.data());
        canonical = oriented_logits_.data();
      }
      cache_->Insert(shm::EvalCache::MakeKey(o.feature_hash, r.model_version), canonical, r.value,
                     r.model_version, self_);
    }
    games_[o.game]->OnResult(o.token, r.policy, r.value, r.model_version);
    progressed = true;
  }
  ring_.Consume(done);
  return progressed;
}

// 2. New leaves, written in place; one publish for the whole burst. Returns
// whether anything moved.
bool Worker::NewLeaves() {
  bool progressed = false;
  uint64_t burst = 0;
  const uint64_t free_slots = ring_.FreeSlots();
  int playing = 0;
  for (const auto& game : games_) playing += game != nullptr;
  for (int g = 0; g < k_; ++g) {
    if (!games_[g]) {
      if (playing >= cap_.cap() || !StartGame(g)) continue;
      ++playing;
    }
    progressed |= WriteLeaves(g, free_slots, &burst);
    if (games_[g]->Finished()) {
      FinishGame(g);
      progressed = true;
    }
  }
  if (burst > 0) {
    const uint64_t t = MonotonicNs();
    for (uint64_t i = 0; i < burst; ++i) published_ns_[(ring_.Head() + i) % ring_.Slots()] = t;
    ring_.Publish(burst);
    progressed = true;
  }
  return progressed;
}

// Starts a game in the empty place g when the budget allows; false when not.
bool Worker::StartGame(int g) {
  const uint64_t sequence = queue_.NextSequence();
  if (sequence >= kMaxGameSequence && budget_left_) {  // the id's sequence field is spent: stop as if
    ZF_LOG(WARN) << "worker " << worker_ << " played " << kMaxGameSequence << " games this epoch; it stops";
    budget_left_ = false;  // the budget were, before claiming a game it could not play
  }
  if (!ClaimGame()) return false;
  const uint64_t id = MakeGameId(config_.host_index, config_.epoch, worker_, sequence);
  games_[g] = std::make_unique<mcts::SelfPlayGame>(*game_, search_, id, MixSeed(config_.seed, id),
                                                   static_cast<int>(worker_));
  reserved_ = false;  // the reservation is now the game: still held, the count unchanged
  PublishInFlight();
  return true;
}

// Writes game g's next leaves into the ring's free slots after the burst so
// far (*burst grows), or answers them from the cache. Returns whether a leaf
// was answered here.
bool Worker::WriteLeaves(int g, uint64_t free_slots, uint64_t* burst) {
  mcts::SelfPlayGame& sp = *games_[g];
  const int room = std::min<int64_t>(per_game_ - sp.InFlight(), free_slots - *burst);
  if (room <= 0) return false;
  bool progressed = false;
  leaves_.clear();
  sp.NextLeaves(room, &leaves_);
  uint64_t lookups = 0, hits = 0;
  for (const auto& leaf : leaves_) {
    const uint64_t seq = ring_.Head() + *burst;
    uint8_t* features = ring_.SlotFeatures(seq);
    leaf.state->EncodeFeatures(features);
    game::CanonicalHash key;
    if (cache_) {
      key = game::HashCanonical(symmetries_, features, scratch_features_.data());
      ++lookups;
      if (AnswerFromCache(sp, leaf, key)) {
        // Answered here: the slot stays free for the next leaf.
        ++hits;
        progressed = true;
        continue;
      }
    }
    owners_[seq % ring_.Slots()] = SlotOwner{g, sp.game_id(), leaf.token, key.hash, key.symmetry};
    ++*burst;
  }
  if (lookups > 0) {
    // relaxed: statistics only.
    stats_.cache_lookups.fetch_add(lookups, std::memory_order_relaxed);
    stats_.cache_hits.fetch_add(hits, std::memory_order_relaxed);
  }
  cap_.Answered(hits);
  return progressed;
}

// A cached answer for `leaf` under the newest model version, given to its game.
bool Worker::AnswerFromCache(mcts::SelfPlayGame& sp, const mcts::LeafRequest& leaf,
                             const game::CanonicalHash& key) {
  float value;
  uint32_t version;
  if (!cache_->Lookup(shm::EvalCache::MakeKey(key.hash, newest_version_), cached_logits_.data(), &value,
                      &version))
    return false;
  const float* logits = cached_logits_.data();
  if (key.symmetry != 0) {
    symmetries_.UntransformPolicy(key.symmetry, cached_logits_.data(), oriented_logits_.data());
    logits = oriented_logits_.data();
  }
  sp.OnResult(leaf.token, logits, value, version);
  return true;
}

// Game g is over: its record goes to the outbox, its place is free.
void Worker::FinishGame(int g) {
  outbox_.push_back(games_[g]->TakeRecord());
  const mcts::GameRecord& r = outbox_.back();
  cap_.Finished(static_cast<int>(r.moves.size()));
  if (search_.resign_target > 0.0f && r.would_resign >= 0) {
    // Stochastic approximation: each measured play-through moves the
    // threshold by step * (target - false), so it settles where the
    // false-resignation rate equals the target.
    constexpr float kStep = 0.02f;
    search_.resign_threshold += kStep * (search_.resign_target - (r.FalseResignation() ? 1.0f : 0.0f));
    search_.resign_threshold = std::clamp(search_.resign_threshold, -0.999f, 0.999f);
    PublishThreshold();
  }
  games_[g].reset();
}

// A game counts as finished once it is in the queue: from there the
// writer keeps it even if this worker dies. relaxed: statistics only.
void Worker::CountQueued(const mcts::GameRecord& r) {
  stats_.games_finished.fetch_add(1, std::memory_order_relaxed);
  stats_.positions.fetch_add(r.Positions(), std::memory_order_relaxed);
  CountSearchStats(r, stats_);
}

// 3. Finished games to the writer, while its queue has room.
bool Worker::QueueFinishedGames() {
  bool progressed = false;
  while (!outbox_.empty()) {
    EncodeGame(outbox_.front(), *game_, &message_);
    const shm::PushResult pr = queue_.TryPush(message_.data(), static_cast<uint32_t>(message_.size()));
    ZF_CHECK(pr != shm::PushResult::kTooLarge) << "a game message of " << message_.size() << " bytes";
    if (pr == shm::PushResult::kFull) break;
    CountQueued(outbox_.front());
    outbox_.pop_front();
    MaybeDie(die_hook_, DieHook::kPush);
    PublishInFlight();
    progressed = true;
  }
  return progressed;
}

void Worker::WaitForWork() {
  if (ring_.InFlight() > 0) {
    // It spins briefly first, then sleeps (shm/spin_wait.h: a wait for a
    // network batch loses its spins and backs off). On a timeout the loop
    // re-checks the stop flag and the supervisor; a dead evaluator is the
    // supervisor's to restart, and its successor evaluates the leaves it had taken.
    ring_.WaitForResults(kWaitNs);
  } else if (!outbox_.empty()) {
    queue_.WaitForSpace(kWaitNs);
  } else {
    // No games: the budget is spent (rare, only at the very end) or new
    // games are paused after a non-finite answer.
    usleep(MonotonicNs() < paused_until_ ? 20000 : 1000);
  }
}

// The evaluator stopped serving this ring (its counters were impossible): no
// leaf of it will be answered, so waiting would stall this worker for good
// while its heartbeat hides it. Queue what finished and stop the run.
int Worker::StopRefused() {
  ZF_LOG(ERROR) << "worker " << worker_
                << ": the evaluator no longer serves this worker's ring (its counters were impossible); "
                   "stopping the run rather than waiting for answers that will never come";
  StopAndDrop();
  return kExitFailure;
}

// Stopped: push what finished, drop what is in flight, and say how many.
int Worker::StopAndDrop() {
  uint64_t dropped = 0;
  for (auto& g : games_) dropped += g != nullptr;
  games_.clear();
  const uint64_t deadline = MonotonicNs() + 5'000'000'000ULL;
  while (!outbox_.empty() && MonotonicNs() < deadline) {
    EncodeGame(outbox_.front(), *game_, &message_);
    if (queue_.TryPush(message_.data(), static_cast<uint32_t>(message_.size())) == shm::PushResult::kOk) {
      CountQueued(outbox_.front());
      outbox_.pop_front();
    } else {
      queue_.WaitForSpace(kWaitNs);
    }
  }
  if (!outbox_.empty())
    ZF_LOG(WARN) << outbox_.size() << " finished games could not be queued before the deadline";
  dropped += outbox_.size();
  outbox_.clear();
  // relaxed: statistics only; the supervisor reads them after reaping us.
  stats_.games_dropped.fetch_add(dropped, std::memory_order_relaxed);
  stats_.games_owed.store(shm::OwedGames::Pack(0, queue_.Pushed()), std::memory_order_relaxed);
  ZF_LOG(INFO) << "stopped; dropped " << dropped << " games in flight";
  return kExitOk;
}

}  // namespace

int RunWorker(const FarmConfig& config, const shm::SegmentMap& map, uint32_t worker,
              const shm::EvalCacheMemory* cache_memory) {
  return Worker(config, map, worker, cache_memory).Run();
}

}  // namespace zerofarm::proc
