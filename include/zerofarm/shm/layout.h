#pragma once
// The layout of the run's one shared-memory segment, computed purely from the
// configuration numbers, and its versioned header at offset 0.
//
//   offset 0      SegmentHeader (magic "ZFSHM001", version, sizes, segment id,
//                 stop flag, supervisor heartbeat, writer doorbell, Layout)
//   64-aligned    ProcessSlot [workers + evaluators + 1]  heartbeats and pids
//   64-aligned    EvaluatorBlock [evaluators]  doorbell + statistics
//   64-aligned    WorkerBlock [workers]  statistics
//   4096-aligned  leaf ring [workers], each 4096-aligned (cudaHostRegister-able):
//                 LeafRingControl, features, policy, value, model_version
//   64-aligned    game queue [workers]: MessageQueueControl, lengths, messages
//
// Everything in the segment is trivially copyable data or a lock-free
// std::atomic of 32/64 bits, and refers to other parts by offset from the
// segment start, never by pointer (each process maps it at its own address).
// The supervisor computes the Layout, creates the segment and InitSegment()s it
// before it starts any child; every other process ValidateSegment()s (or builds
// a SegmentMap) before it touches anything else.
//
// Worker w is served by evaluator w % num_evaluators. Process slots: workers
// [0, W), evaluators [W, W + E), writer W + E.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "zerofarm/shm/doorbell.h"
#include "zerofarm/shm/leaf_ring.h"
#include "zerofarm/shm/message_queue.h"

namespace zerofarm::shm {

class ShmSegment;

// "ZFSHM001" as the bytes of a little-endian uint64.
inline constexpr uint64_t kSegmentMagic = 0x313030'4D48'53'46'5AULL;
// The layout's version. 2: WorkerBlock search counters; 3: hangs, non-finite
// counts, writer totals; 4: games_owed; 5: LeafRingControl::refused; 6: the
// writer's distinct-game counts; 7: the writer's game being added (WriterBlock);
// 8: SegmentHeader::model_refusal.
inline constexpr uint32_t kLayoutVersion = 8;
inline constexpr uint64_t kRegionAlign = 64;            // every region and array
inline constexpr uint64_t kRingAlign = 4096;            // each leaf ring (page) and the whole segment
inline constexpr uint32_t kBatchHistogramBuckets = 16;  // bucket b: batch sizes in [2^b, 2^(b+1))
// Leaf latency (worker publishes a leaf -> worker reads its result), in
// quarter-octaves of microseconds: bucket b holds [2^(b/4), 2^((b+1)/4)) us,
// so 96 buckets reach about 16 s. LatencyBucket()/LatencyBucketUpperUs() map.
inline constexpr uint32_t kLatencyBuckets = 96;
uint32_t LatencyBucket(uint64_t ns) noexcept;
double LatencyBucketUpperUs(uint32_t bucket) noexcept;

// The configuration numbers the layout depends on. Ranges (ConfigError outside):
// workers 1..4096, evaluators 1..1024, ring_slots 1..2^24, feature_bytes 1..2^24,
// actions 1..2^20, game_slot_bytes 1..2^30, game_queue_depth 1..2^20.
struct LayoutParams {
  uint32_t num_workers = 1;
  uint32_t num_evaluators = 1;
  uint32_t ring_slots = 64;       // leaf slots per worker (--ring-slots)
  uint32_t feature_bytes = 1;     // bytes of features per leaf (the game's planes, uint8)
  uint32_t actions = 1;           // policy floats per leaf
  uint32_t game_slot_bytes = 64;  // largest finished-game message
  uint32_t game_queue_depth = 4;  // finished-game messages per worker queue
  uint32_t reserved = 0;          // keeps the struct free of padding
};
static_assert(std::is_trivially_copyable_v<LayoutParams>);
bool operator==(const LayoutParams& a, const LayoutParams& b) noexcept;

// Where everything is. All offsets in bytes from the segment start unless
// said otherwise; all sizes in bytes.
struct Layout {
  LayoutParams params;
  uint64_t header_bytes = 0;       // sizeof(SegmentHeader)
  uint64_t processes_offset = 0;   // ProcessSlot [num_processes]
  uint64_t num_processes = 0;      // workers + evaluators + 1 (the writer)
  uint64_t evaluators_offset = 0;  // EvaluatorBlock [num_evaluators], evaluator_stride apart
  uint64_t evaluator_stride = 0;
  uint64_t workers_offset = 0;  // WorkerBlock [num_workers], worker_stride apart
  uint64_t worker_stride = 0;
  uint64_t rings_offset = 0;               // ring w at rings_offset + w * ring_stride
  uint64_t ring_stride = 0;                // multiple of kRingAlign
  uint64_t ring_bytes = 0;                 // used part of a ring region
  uint64_t ring_features_offset = 0;       // from the ring start (LeafRingControl)
  uint64_t ring_policy_offset = 0;         // from the ring start
  uint64_t ring_value_offset = 0;          // from the ring start
  uint64_t ring_model_version_offset = 0;  // from the ring start
  uint64_t queues_offset = 0;              // queue w at queues_offset + w * queue_stride
  uint64_t queue_stride = 0;
  uint64_t queue_slot_stride = 0;     // game_slot_bytes rounded up to kRegionAlign
  uint64_t queue_lengths_offset = 0;  // from the queue start (MessageQueueControl)
  uint64_t queue_data_offset = 0;     // from the queue start
  uint64_t total_bytes = 0;           // multiple of kRingAlign: the segment size to create
};
static_assert(std::is_trivially_copyable_v<Layout>);
bool operator==(const Layout& a, const Layout& b) noexcept;

// Throws ConfigError (naming the field and its range) for numbers out of range.
Layout ComputeLayout(const LayoutParams& params);

// One per process (worker, evaluator, writer); one cache line each.
struct ProcessSlot {
  // MonotonicNs() of the process's last sign of life. Written by the process
  // itself (relaxed, every 50 ms of its loop; Beat()), read by the supervisor
  // and peers (relaxed: a number to compare with a deadline, nothing is
  // published by it). A value in the future is a promise: the process is busy
  // with something legitimately long (loading a model, writing a shard) until
  // then. The supervisor kills a process whose heartbeat is older than
  // --hang-timeout as hung (docs/reliability.md).
  alignas(64) std::atomic<uint64_t> heartbeat_ns{0};
  // The current pid (0 before the first start). Written by the supervisor
  // after fork, relaxed; read by peers for liveness checks.
  std::atomic<uint32_t> pid{0};
  // How many times the supervisor restarted this process. Supervisor only.
  std::atomic<uint32_t> restarts{0};
  // Of those, how many followed a kill for a stale heartbeat. Supervisor only.
  std::atomic<uint32_t> hangs{0};
  std::atomic<uint32_t> reserved{0};

  // Stores `now_ns + busy_ns`: alive now, and busy for busy_ns more at most.
  void Beat(uint64_t now_ns, uint64_t busy_ns = 0) noexcept {
    // relaxed: a timestamp compared with a deadline; it publishes nothing.
    heartbeat_ns.store(now_ns + busy_ns, std::memory_order_relaxed);
  }
};
static_assert(sizeof(ProcessSlot) == 64);
static_assert(std::is_standard_layout_v<ProcessSlot>);
static_assert(std::is_trivially_destructible_v<ProcessSlot>);

// One per evaluator.
struct EvaluatorBlock {
  // Workers Ring() it after Publish(); the evaluator sleeps on it when none of
  // its rings has work (Doorbell::SleepUnless).
  DoorbellWords doorbell;
  // Statistics, written by the evaluator only (relaxed), read by the supervisor.
  alignas(64) std::atomic<uint64_t> batches{0};  // forward passes
  std::atomic<uint64_t> leaves{0};               // leaves evaluated
  std::atomic<uint64_t> sleeps{0};               // doorbell sleeps
  std::atomic<uint64_t> busy_ns{0};              // time inside the network
  std::atomic<uint32_t> model_version{0};        // weights in use
  // 1 while the model in use has produced a non-finite (NaN/Inf) policy or
  // value; 0 again when a new model is loaded.
  std::atomic<uint32_t> model_nonfinite{0};
  std::atomic<uint64_t> nonfinite_leaves{0};  // leaves answered with NaN/Inf (workers drop their games)
  std::atomic<uint64_t> batch_size_log2[kBatchHistogramBuckets]{};  // batches by size bucket
};
static_assert(std::is_standard_layout_v<EvaluatorBlock>);
static_assert(std::is_trivially_destructible_v<EvaluatorBlock>);

// One per worker: what the supervisor's status line and summary show.
// Written by the worker only (relaxed: statistics, nothing is published
// through them), read by the supervisor. Survive a worker's restart.
struct WorkerBlock {
  alignas(64) std::atomic<uint64_t> games_finished{0};    // games played to the end
  std::atomic<uint64_t> positions{0};                     // positions of those games
  std::atomic<uint64_t> games_dropped{0};                 // in flight at a stop or crash
  std::atomic<uint64_t> games_owed{0};                    // OwedGames::Pack: games held, queue head then
  std::atomic<uint64_t> latency_hist[kLatencyBuckets]{};  // leaves by latency bucket
  // Search quality (docs/search.md), counted when a game enters the queue.
  std::atomic<uint64_t> full_positions{0};      // positions searched with the full budget
  std::atomic<uint64_t> games_resigned{0};      // games that ended by resignation
  std::atomic<uint64_t> resign_checks{0};       // play-through games in which a side would have resigned
  std::atomic<uint64_t> false_resignations{0};  // ... and that side did not lose
  // The worker's current resignation threshold as float bits (it moves with
  // --resign-target); 0 bits before the worker set it.
  std::atomic<uint32_t> resign_threshold_bits{0};
  std::atomic<uint32_t> reserved{0};
  std::atomic<uint64_t> cache_lookups{0};            // leaves looked up in the shared evaluation cache
  std::atomic<uint64_t> cache_hits{0};               // ... and answered from it (not sent to an evaluator)
  std::atomic<uint64_t> games_dropped_nonfinite{0};  // of games_dropped: a leaf came back NaN/Inf
};
static_assert(std::is_standard_layout_v<WorkerBlock>);
static_assert(std::is_trivially_destructible_v<WorkerBlock>);

// WorkerBlock::games_owed: the games a worker would lose if it died now, and
// its game queue's head (games pushed by this worker slot, every incarnation)
// when it counted them, in one word, so that the supervisor reads a pair that
// belongs together. Held: claimed from the --games budget and not yet in the
// queue (about to start, playing, or finished and waiting for room). A game
// pushed after the word was stored is in the queue, not lost, so a dead
// worker lost Held() - (head now - Head()): exact across a kill between a
// push and the next store of the word. Written by the worker (after each
// change), exchanged by the supervisor once the worker is reaped.
struct OwedGames {
  static constexpr int kHeldBits = 24;  // 16.7 million games held: far above any K plus a backlog
  static constexpr uint64_t kHeadMask = (uint64_t{1} << (64 - kHeldBits)) - 1;
  // held must be below 2^kHeldBits (ZF_CHECKed by the worker); the head is
  // kept modulo 2^40, which Lost() allows for.
  static constexpr uint64_t Pack(uint64_t held, uint64_t queue_head) noexcept {
    return held << (64 - kHeldBits) | (queue_head & kHeadMask);
  }
  static constexpr uint64_t Held(uint64_t word) noexcept { return word >> (64 - kHeldBits); }
  static constexpr uint64_t Head(uint64_t word) noexcept { return word & kHeadMask; }
  // Games lost by a worker that died with `word` stored, its queue's head now
  // being `queue_head_now`: those held then and not pushed since.
  static constexpr uint64_t Lost(uint64_t word, uint64_t queue_head_now) noexcept {
    const uint64_t pushed_since = (queue_head_now - Head(word)) & kHeadMask;
    return Held(word) > pushed_since ? Held(word) - pushed_since : 0;
  }
};

// What the writers of this supervisor start have renamed into place, summed
// over the shards (one consistent copy: see WriterBlock).
struct WriterTotals {
  uint64_t games = 0;
  uint64_t positions = 0;
  uint64_t shards = 0;
  uint64_t bytes = 0;             // shard file bytes
  uint64_t next_shard_index = 0;  // 1 + the index of the last shard counted (0: none yet)
  // Of the games written since the writer's last start, those in its sample of
  // move sequences and the distinct sequences among them (proc/distinct_games.h);
  // a replacement writer starts them again.
  uint64_t sampled_games = 0;
  uint64_t sampled_distinct = 0;
};

// The writer's figures. Survive a writer's restart. The totals are two
// copies: the writer (the only writer of them) fills the copy not in use,
// then publishes its index in `current` (release); a reader loads `current`
// (acquire) and reads that copy. So a writer killed at any point leaves a
// complete, consistent copy, and its successor can tell whether the last
// renamed shard was counted (next_shard_index) and count it once.
struct WriterBlock {
  alignas(64) std::atomic<uint32_t> current{0};  // 0 or 1: the copy in use
  std::atomic<uint32_t> reserved{0};
  std::atomic<uint64_t> corrupt_messages{0};  // malformed game messages skipped (relaxed)
  // Finished games that break the game's contract, set aside in RUN/rejected/
  // (proc/writer.cpp); each counted once, by the writer that made its file. Only increases.
  std::atomic<uint64_t> games_set_aside{0};
  // The game message the writer is adding: Adding(worker, seq) while it decodes,
  // checks and buffers it, 0 otherwise. A successor that finds it set tries
  // that message once more (an outside kill may have hit the window) and
  // notes it in `suspect`; a second writer dying on it sets it aside: a
  // record that kills the writer kills it twice at most.
  std::atomic<uint64_t> adding{0};
  std::atomic<uint64_t> suspect{0};
  static constexpr uint64_t Adding(uint32_t worker, uint64_t seq) noexcept {
    return (uint64_t{worker} + 1) << 44 | (seq & ((uint64_t{1} << 44) - 1));
  }
  std::atomic<uint64_t> totals[2][7]{};  // WriterTotals fields, in order (relaxed)

  WriterTotals Totals() const noexcept {
    // acquire: pairs with Publish's release, so the copy's fields are complete.
    const uint32_t c = current.load(std::memory_order_acquire) & 1u;
    WriterTotals t;
    uint64_t* f[7] = {&t.games,         &t.positions,       &t.shards, &t.bytes, &t.next_shard_index,
                      &t.sampled_games, &t.sampled_distinct};
    // relaxed: ordered by the acquire above.
    for (int i = 0; i < 7; ++i) *f[i] = totals[c][i].load(std::memory_order_relaxed);
    return t;
  }
  // Writer only.
  void Publish(const WriterTotals& t) noexcept {
    const uint32_t next = (current.load(std::memory_order_relaxed) & 1u) ^ 1u;  // relaxed: its only writer
    const uint64_t v[7] = {t.games,         t.positions,       t.shards, t.bytes, t.next_shard_index,
                           t.sampled_games, t.sampled_distinct};
    // relaxed: published by the release store below.
    for (int i = 0; i < 7; ++i) totals[next][i].store(v[i], std::memory_order_relaxed);
    // release: the copy's fields are visible before it becomes current.
    current.store(next, std::memory_order_release);
  }
};
static_assert(std::is_standard_layout_v<WriterBlock>);
static_assert(std::is_trivially_destructible_v<WriterBlock>);

// Records one batch of `size` leaves (> 0) that took busy_ns. Evaluator only.
void RecordBatch(EvaluatorBlock& block, uint64_t size, uint64_t busy_ns) noexcept;

// At offset 0. The fields before `stop` are immutable after InitSegment.
struct SegmentHeader {
  uint64_t magic = 0;           // kSegmentMagic, written last by InitSegment
  uint32_t layout_version = 0;  // kLayoutVersion
  uint32_t header_bytes = 0;    // sizeof(SegmentHeader)
  uint64_t total_bytes = 0;     // == layout.total_bytes
  uint64_t segment_id = 0;      // random, chosen by the supervisor; its log calls it "segment id"
                                // (not the run directory's string run_id)
  uint32_t owner_uid = 0;       // euid of the creator
  uint32_t creator_pid = 0;     // the supervisor
  Layout layout;                // config numbers and every offset

  // 0 while running; a non-zero reason code asks every process to stop.
  // Written by the supervisor (release), read by everyone (acquire).
  alignas(64) std::atomic<uint32_t> stop{0};
  // MonotonicNs() of the supervisor's last loop iteration; written by the
  // supervisor (relaxed), read by children to notice an orphaned run.
  alignas(64) std::atomic<uint64_t> supervisor_heartbeat_ns{0};
  // Workers Ring() it after a game is pushed; the writer sleeps on it.
  DoorbellWords writer_doorbell;
  // Games started so far, against the run's --games budget. Workers
  // fetch_add it (relaxed: a counter; no data is published through it).
  alignas(64) std::atomic<uint64_t> games_claimed{0};
  // A hash of the last model refusal an evaluator logged (the file, its
  // state and the reason; 0: none): evaluators exchange() theirs in and log
  // only when it differs, so a bad model gets one line however many
  // evaluators refuse it (issue 82). Relaxed: nothing is published by it.
  std::atomic<uint64_t> model_refusal{0};
  WriterBlock writer;
};
static_assert(std::is_standard_layout_v<SegmentHeader>);
static_assert(std::is_trivially_destructible_v<SegmentHeader>);
static_assert(offsetof(SegmentHeader, stop) % 64 == 0);
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<uint64_t>::is_always_lock_free);

// Placement-constructs the header and every block, ring and queue over
// `base`, which must be kRingAlign-aligned, zero-filled and at least
// layout.total_bytes long. The supervisor calls it once, before any child runs.
void InitSegment(void* base, const Layout& layout, uint64_t segment_id);
// The same over a fresh ShmSegment; throws Error if it is smaller than the layout.
void InitSegment(ShmSegment& segment, const Layout& layout, uint64_t segment_id);

// Checks magic, version, sizes and that every offset is the one the header's
// config numbers give and lies within `size` bytes; throws Error with a
// one-line reason otherwise. Returns the header.
const SegmentHeader& ValidateSegment(const void* base, size_t size);

// A process-local, non-owning view of a validated segment (the mapping must
// outlive it). Cheap to copy.
class SegmentMap {
 public:
  SegmentMap(void* base, size_t size);  // ValidateSegment; throws Error
  SegmentHeader& header() const noexcept { return *reinterpret_cast<SegmentHeader*>(base_); }
  const Layout& layout() const noexcept { return header().layout; }
  const LayoutParams& params() const noexcept { return header().layout.params; }
  void* base() const noexcept { return base_; }

  LeafRingControl& Ring(uint32_t worker) const noexcept;
  MessageQueueControl& GameQueue(uint32_t worker) const noexcept;
  EvaluatorBlock& Evaluator(uint32_t evaluator) const noexcept;
  WorkerBlock& Worker(uint32_t worker) const noexcept;
  WriterBlock& Writer() const noexcept { return header().writer; }
  ProcessSlot& Process(uint32_t index) const noexcept;  // < layout().num_processes
  ProcessSlot& WorkerProcess(uint32_t worker) const noexcept { return Process(worker); }
  ProcessSlot& EvaluatorProcess(uint32_t evaluator) const noexcept;
  ProcessSlot& WriterProcess() const noexcept;

  Doorbell EvaluatorDoorbell(uint32_t evaluator) const noexcept {
    return Doorbell(&Evaluator(evaluator).doorbell);
  }
  Doorbell WriterDoorbell() const noexcept { return Doorbell(&header().writer_doorbell); }
  uint32_t EvaluatorOf(uint32_t worker) const noexcept { return worker % params().num_evaluators; }
  std::vector<uint32_t> WorkersOf(uint32_t evaluator) const;  // ascending

  // Ready-made handles: the worker's ring (ringing its evaluator's doorbell),
  // the evaluator's side of a ring, the worker's and the writer's game queue ends.
  LeafRingProducer MakeLeafProducer(uint32_t worker) const noexcept;
  LeafRingConsumer MakeLeafConsumer(uint32_t worker) const noexcept;
  MessageQueueProducer MakeGameProducer(uint32_t worker) const noexcept;
  MessageQueueConsumer MakeGameConsumer(uint32_t worker) const noexcept;

  // Stop flag.
  void RequestStop(uint32_t reason) const noexcept;
  uint32_t StopRequested() const noexcept;  // 0: keep going

 private:
  uint8_t* At(uint64_t offset) const noexcept { return static_cast<uint8_t*>(base_) + offset; }
  void* base_ = nullptr;
};

}  // namespace zerofarm::shm
