// zf-writer: the writer process of the farm.
//
// Threads: one. It reads finished games from every worker's game queue in
// shared memory and writes them into HDF5 shards of --shard-positions
// positions, or of the games of --shard-seconds (NAME.h5.tmp, fsync, rename
// to NAME.h5, fsync the directory).
// A game leaves its queue (Commit) only after the shard holding it is renamed,
// so a writer that dies loses nothing: its replacement re-reads every game
// not yet committed. Each shard records the queue positions it commits
// through (worker_commit), and a replacement skips games an already renamed
// shard holds, so none is written twice.
//
// A game that breaks its game's contract (a Winner() out of range, columns of
// the wrong size: io::ShardWriter::Problem) is set aside, not written: one
// log line, RUN/rejected/game-0xID.zfgame (its message as the worker sent it)
// and .txt (why), counted in WriterBlock::games_set_aside; every other game
// is written. WriterBlock::adding names the message being added, so when two
// writers in a row die adding the same record, the third sets it aside: no
// record can make the writer crash-loop.
//
// Exits when the supervisor asks it to drain (kStopWriter) and every queue is
// empty, after writing the last, partial shard.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/shard_manifest.h"
#include "zerofarm/proc/distinct_games.h"
#include "zerofarm/proc/game_codec.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::proc {
namespace {

constexpr uint64_t kIdleWaitNs = 100'000'000;
constexpr const char* kShardPrefix = "shard";

// The last renamed shard (index shard_index - 1) of this supervisor start, if
// a predecessor renamed it but died before counting it (WriterBlock totals):
// its games, positions and bytes are added now, so the summary and
// metrics.prom equal what is on disk. `written` non-zero: it is ours.
void CountUncountedShard(const io::ShardWriter& writer, uint64_t shard_index,
                         const std::vector<uint64_t>& written, shm::WriterBlock& stats) {
  if (shard_index == 0 || std::all_of(written.begin(), written.end(), [](uint64_t n) { return n == 0; }))
    return;
  shm::WriterTotals t = stats.Totals();
  if (t.next_shard_index >= shard_index) return;  // counted
  const std::string path = writer.ShardPath(shard_index - 1);
  io::ShardReader reader(path);
  std::error_code ec;
  t.games += reader.Games();
  t.positions += reader.Positions();
  t.shards += 1;
  t.bytes += std::filesystem::file_size(path, ec);
  t.next_shard_index = shard_index;
  stats.Publish(t);
  ZF_LOG(INFO) << "counted " << path << " (" << reader.Games()
               << " games), renamed by a writer that died before "
               << "counting it";
}

// Test hook of the fault tests: ZF_FAULT_WRITER_DIE_MID_APPEND=N kills the
// first writer of a supervisor start (SIGKILL) after it renamed its N-th
// shard and appended half of that shard's manifest line: a torn line.
void MaybeDieMidAppend(const shm::SegmentMap& map, const std::string& dir, const std::string& name) {
  static int appended = 0;
  const char* hook = std::getenv("ZF_FAULT_WRITER_DIE_MID_APPEND");
  if (!hook || ++appended != std::atoi(hook)) return;
  if (map.WriterProcess().restarts.load(std::memory_order_relaxed) != 0) return;  // relaxed: a counter
  ZF_LOG(WARN) << "ZF_FAULT_WRITER_DIE_MID_APPEND=" << hook << ": dying mid-append on purpose";
  std::ofstream(dir + "/" + io::kShardManifestName, std::ios::app)
      << name.substr(0, name.size() / 2) << std::flush;
  raise(SIGKILL);
}

// Test hook of the fault tests: ZF_FAULT_WRITER_DIE_AFTER_RENAME=N kills the
// first writer of a supervisor start (SIGKILL, as an outside kill would)
// right after it renamed its N-th shard, before it counted and committed it.
void MaybeDieAfterRename(const shm::SegmentMap& map) {
  static int renamed = 0;
  const char* hook = std::getenv("ZF_FAULT_WRITER_DIE_AFTER_RENAME");
  if (!hook || ++renamed != std::atoi(hook)) return;
  if (map.WriterProcess().restarts.load(std::memory_order_relaxed) != 0) return;  // relaxed: a counter
  ZF_LOG(WARN) << "ZF_FAULT_WRITER_DIE_AFTER_RENAME=" << hook
               << ": dying between rename and commit on purpose";
  raise(SIGKILL);
}

// Test hook of the fault tests: ZF_FAULT_WRITER_DIE_ADDING=N kills the first
// two writers of a supervisor start (SIGKILL) while each adds worker 0's N-th
// game message: the same message twice.
void MaybeDieAdding(const shm::SegmentMap& map, uint32_t worker, uint64_t seq) {
  const char* hook = std::getenv("ZF_FAULT_WRITER_DIE_ADDING");
  if (!hook || worker != 0 || seq + 1 != std::strtoull(hook, nullptr, 10)) return;
  if (map.WriterProcess().restarts.load(std::memory_order_relaxed) >= 2) return;  // relaxed: a counter
  ZF_LOG(WARN) << "ZF_FAULT_WRITER_DIE_ADDING=" << hook << ": dying while adding a game on purpose";
  raise(SIGKILL);
}

std::string GameIdText(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(id));
  return buf;
}

io::ShardMeta ShardMetaFor(const FarmConfig& config, const game::Game& game) {
  io::ShardMeta meta = io::ShardMetaForGame(game);
  meta.search = config.search.Describe();
  meta.config = config.ToText();
  meta.run_id = config.run_id;
  meta.host_id = config.host_id;
  meta.epoch = config.epoch;
  return meta;
}

io::Compression CompressionFor(const FarmConfig& config) {
  io::Compression compression;
  compression.deflate_level = config.compression;
  return compression;
}

// A predecessor killed while writing leaves NAME.h5.tmp: never complete, and
// its games are still uncommitted in the queues. Remove it.
void RemoveIncompleteShards(const std::string& dir) {
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      ZF_LOG(WARN) << "removing the incomplete " << e.path().string();
      std::error_code ec;
      std::filesystem::remove(e.path(), ec);
    }
  }
}

// The writer's state: its queues, the shard being filled, and what the
// loop's steps share. Lives in the writer process; single-threaded.
class ShardLoop {
 public:
  ShardLoop(const FarmConfig& config, const shm::SegmentMap& map);
  // The writer's loop; returns its exit code.
  int Run();

 private:
  void SkipGamesOfLastShard();
  std::vector<uint64_t> GamesInLastShard();
  void ReadQueues(bool* progressed, bool* queue_pressure);
  void AddMessage(uint32_t worker, const shm::Message& m);
  void SetAside(uint32_t worker, const shm::Message& m, const std::string& why);
  void CommitRead();
  void Flush();
  void SleepUntilGames();

  const FarmConfig& config_;
  const shm::SegmentMap& map_;
  const std::unique_ptr<game::Game> game_;
  const uint32_t workers_;
  shm::ProcessSlot& me_;
  shm::WriterBlock& stats_;
  const std::string dir_;
  const io::ShardMeta meta_;
  io::ShardWriter writer_;
  uint64_t shard_index_;
  std::vector<shm::MessageQueueConsumer> queues_;
  std::vector<bool> corrupt_logged_;  // per queue: its impossible head was logged
  double shard_started_ = 0;
  DistinctGames distinct_;                // the move sequences of the games written (this writer's)
  std::vector<uint64_t> pending_hashes_;  // those of the shard being filled
  uint64_t poisoned_ = 0;                 // WriterBlock::adding as a dead predecessor left it (0: none)
  bool set_aside_uncommitted_ = false;    // a game set aside since the last commit
};

ShardLoop::ShardLoop(const FarmConfig& config, const shm::SegmentMap& map)
    : config_(config),
      map_(map),
      game_(game::MakeGame(config.game)),
      workers_(map.params().num_workers),
      me_(map.WriterProcess()),
      stats_(map.Writer()),
      dir_(RunDirOf(config).HostDir()),
      meta_(ShardMetaFor(config, *game_)),
      writer_(dir_, kShardPrefix, meta_, CompressionFor(config)),
      shard_index_(io::NextShardIndex(dir_, kShardPrefix)) {
  map.WriterDoorbell().CancelSleep();  // a predecessor killed in its sleep left the flag set
  // relaxed: the predecessors are dead. Died adding the same game twice: set it aside.
  const uint64_t died_adding = stats_.adding.load(std::memory_order_relaxed);
  if (died_adding != 0 && died_adding == stats_.suspect.load(std::memory_order_relaxed)) {
    poisoned_ = died_adding;
    ZF_LOG(WARN) << "two writers died while adding the same game; it is set aside";
  } else if (died_adding != 0) {
    stats_.suspect.store(died_adding, std::memory_order_relaxed);
    ZF_LOG(WARN) << "the writer before this one died while adding a game; trying it once more";
  }
  RemoveIncompleteShards(dir_);
  io::RepairShardManifest(dir_, kShardPrefix);  // a torn line, shards renamed but not listed
  for (uint32_t w = 0; w < workers_; ++w) queues_.push_back(map.MakeGameConsumer(w));
  corrupt_logged_.assign(workers_, false);
  SkipGamesOfLastShard();
  shm::WriterTotals t = stats_.Totals();  // a predecessor's distinct counts: this writer starts them again
  t.sampled_games = t.sampled_distinct = 0;
  stats_.Publish(t);
  shard_started_ = MonotonicSeconds();
}

// A shard renamed by a predecessor that died before committing: skip the
// games it already holds (each queue's messages up to its worker_commit).
std::vector<uint64_t> ShardLoop::GamesInLastShard() {
  std::vector<uint64_t> already_written(workers_, 0);
  if (shard_index_ == 0) return already_written;
  const std::string last = writer_.ShardPath(shard_index_ - 1);
  if (!std::filesystem::exists(last)) return already_written;
  // A predecessor's file: the HDF5 checker reads it first (io/h5_check.h); one it refuses is
  // not ours to skip by, and one that crashes it is set aside (else every writer start crashes).
  if (const std::string verdict = io::CheckOwnFiles(io::H5CheckKind::kShardMeta, {last})[0];
      !verdict.empty()) {
    ZF_LOG(ERROR) << "not skipping by the last shard: " << verdict;
    return already_written;
  }
  io::ShardReader reader(last);
  // Written by this supervisor (same host directory, same epoch): its queues are ours.
  if (reader.meta().run_id == meta_.run_id && reader.meta().host_id == meta_.host_id &&
      reader.meta().epoch == meta_.epoch && reader.meta().worker_commit.size() == workers_)
    already_written = reader.meta().worker_commit;
  return already_written;
}

void ShardLoop::SkipGamesOfLastShard() {
  const std::vector<uint64_t> already_written = GamesInLastShard();
  CountUncountedShard(writer_, shard_index_, already_written, stats_);
  for (uint32_t w = 0; w < workers_; ++w) {
    while (queues_[w].ReadCursor() < already_written[w] && queues_[w].ReadNext()) {
    }
    if (queues_[w].ReadCursor() > queues_[w].Committed()) {
      ZF_LOG(INFO) << "worker " << w << ": " << queues_[w].ReadCursor() - queues_[w].Committed()
                   << " games were already in the last shard; committing them";
      queues_[w].Commit(queues_[w].ReadCursor());
    }
  }
}

// Commits every message read (none pending in the shard being filled).
void ShardLoop::CommitRead() {
  for (uint32_t w = 0; w < workers_; ++w) queues_[w].Commit(queues_[w].ReadCursor());
  set_aside_uncommitted_ = false;
}

// Writes the pending games as the next shard, then counts and commits them.
// With none pending, commits the games set aside since the last commit.
void ShardLoop::Flush() {
  if (writer_.PendingGames() == 0) {
    if (set_aside_uncommitted_) CommitRead();
    return;
  }
  std::vector<uint64_t> commit(workers_);
  for (uint32_t w = 0; w < workers_; ++w) commit[w] = queues_[w].ReadCursor();
  const uint64_t games = writer_.PendingGames(), positions = writer_.PendingPositions();
  me_.Beat(MonotonicNs(), config_.BusyAllowanceNs());  // a big shard on a slow disk may take long
  const uint64_t index = shard_index_++;
  const std::string path = writer_.Flush(index, commit);
  MaybeDieAfterRename(map_);
  // Listed only once the rename is durable (Flush fsynced the directory).
  const std::string name = std::filesystem::path(path).filename().string();
  MaybeDieMidAppend(map_, dir_, name);
  io::AppendShardManifest(dir_, {name, positions, games});
  // Renamed -> counted -> committed: a writer killed between any two steps
  // leaves its successor what it needs to count the shard exactly once
  // (CountUncountedShard) and to skip its games (worker_commit).
  std::error_code ec;
  shm::WriterTotals t = stats_.Totals();
  t.games += games;
  t.positions += positions;
  t.shards += 1;
  t.bytes += std::filesystem::file_size(path, ec);
  t.next_shard_index = index + 1;
  for (uint64_t h : pending_hashes_) distinct_.Add(h);
  pending_hashes_.clear();
  t.sampled_games = distinct_.SampledGames();
  t.sampled_distinct = distinct_.SampledDistinct();
  stats_.Publish(t);
  for (uint32_t w = 0; w < workers_; ++w) queues_[w].Commit(commit[w]);
  set_aside_uncommitted_ = false;
  ZF_LOG(INFO) << "wrote " << path << " (" << games << " games, " << positions << " positions)";
  shard_started_ = MonotonicSeconds();
}

// Sets the game of message `m` aside: RUN/rejected/game-0xID.zfgame (the
// message) and .txt (why), counted once (a successor finding the file does
// not count it again). A failure to keep the files is logged, never thrown.
void ShardLoop::SetAside(uint32_t worker, const shm::Message& m, const std::string& why) {
  set_aside_uncommitted_ = true;
  const std::optional<uint64_t> id = GameIdOfMessage(m.data, m.size);
  const io::RunDir run = RunDirOf(config_);
  // A message without a readable header is named by its queue position.
  const std::string base =
      id ? run.RejectedGame(*id)
         : run.RejectedDir() + "/worker-" + std::to_string(worker) + "-message-" + std::to_string(m.seq);
  std::error_code ec;
  const bool known = std::filesystem::exists(base + ".zfgame", ec);
  try {
    if (!known) {
      io::MakeRunDirectory(run.RejectedDir(), config_.allow_foreign_dir);
      io::WriteTextFileAtomically(base + ".txt", "worker " + std::to_string(worker) + " game " +
                                                     (id ? GameIdText(*id) : std::string("?")) + ": " + why +
                                                     "\n");
      io::WriteTextFileAtomically(base + ".zfgame",
                                  m.data ? std::string(reinterpret_cast<const char*>(m.data), m.size) : "");
    }
  } catch (const std::exception& e) {
    ZF_LOG(ERROR) << "cannot keep a game set aside: " << e.what();
  }
  // relaxed: a counter for the summary and metrics; nothing is published through it.
  if (!known) stats_.games_set_aside.fetch_add(1, std::memory_order_relaxed);
  ZF_LOG(ERROR) << "worker " << worker << ": game " << (id ? GameIdText(*id) : std::string("?"))
                << " breaks the game's contract (" << why << "); set aside in " << base
                << ".zfgame, the other games are written";
}

// Decodes, checks and buffers one game message; sets it aside when it
// breaks the contract, or when the writer before this one died adding it.
void ShardLoop::AddMessage(uint32_t w, const shm::Message& m) {
  const uint64_t marker = shm::WriterBlock::Adding(w, m.seq);
  if (marker == poisoned_) {
    poisoned_ = 0;
    SetAside(w, m, "two writers died while adding it");
    return;
  }
  stats_.adding.store(marker, std::memory_order_relaxed);  // relaxed: read only after this process died
  MaybeDieAdding(map_, w, m.seq);
  auto record = m.data ? DecodeGame(m.data, m.size, *game_) : std::nullopt;
  if (!record) {
    // relaxed: a counter for the summary and metrics; nothing is published through it.
    stats_.corrupt_messages.fetch_add(1, std::memory_order_relaxed);
    ZF_LOG(ERROR) << "worker " << w << ": a malformed game message of "
                  << (m.data ? std::to_string(m.size) + " bytes" : std::string("an impossible length"))
                  << "; skipped";
  } else if (const std::string problem = writer_.Problem(*record); !problem.empty()) {
    SetAside(w, m, problem);
  } else {
    writer_.Add(*record);
    if (writer_.PendingGames() == 1)
      shard_started_ = MonotonicSeconds();  // the shard's age: its first game's
    pending_hashes_.push_back(MoveSequenceHash(record->moves));
  }
  stats_.adding.store(0, std::memory_order_relaxed);
}

// Adds every unread game of every queue to the shard being filled.
// *queue_pressure: some queue is at least 3/4 full.
void ShardLoop::ReadQueues(bool* progressed, bool* queue_pressure) {
  for (uint32_t w = 0; w < workers_; ++w) {
    while (auto m = queues_[w].ReadNext()) {
      AddMessage(w, *m);
      *progressed = true;
    }
    if (queues_[w].Corrupt() && !corrupt_logged_[w]) {
      corrupt_logged_[w] = true;
      ZF_LOG(ERROR) << "worker " << w << ": its game queue's head is impossible (corrupt); read no further";
    }
    if (queues_[w].Pending() * 4 >= queues_[w].Depth() * 3) *queue_pressure = true;
  }
}

void ShardLoop::SleepUntilGames() {
  map_.WriterDoorbell().SleepUnless(
      [&]() {
        for (auto& q : queues_)
          if (q.Unread() > 0) return true;
        return false;
      },
      kIdleWaitNs);
}

int ShardLoop::Run() {
  uint64_t last_beat = 0;
  const pid_t supervisor = getppid();
  while (true) {
    const uint64_t now = MonotonicNs();
    if (now - last_beat > 50'000'000) {
      me_.Beat(now);
      last_beat = now;
    }
    bool progressed = false;
    bool queue_pressure = false;
    ReadQueues(&progressed, &queue_pressure);
    const bool draining = map_.StopRequested() == kStopWriter;
    if (writer_.PendingPositions() >= static_cast<uint64_t>(config_.shard_positions) || queue_pressure ||
        (writer_.PendingGames() > 0 && config_.shard_seconds > 0 &&
         MonotonicSeconds() - shard_started_ >= config_.shard_seconds))
      Flush();
    if (draining && !progressed) {
      Flush();
      ZF_LOG(INFO) << "drained; writer done";
      return kExitOk;
    }
    if (!progressed) {
      if (getppid() != supervisor) return kExitPeerGone;
      SleepUntilGames();
    }
  }
}

}  // namespace

int RunWriter(const FarmConfig& config, const shm::SegmentMap& map) {
  try {
    return ShardLoop(config, map).Run();
  } catch (const io::NoSpaceError& e) {
    // Restarting cannot help: stop the run. Every renamed shard is complete;
    // the games not yet written stay uncommitted in shared memory.
    ZF_LOG(ERROR) << "the output disk is full, the writer stops: " << e.what();
    return kExitNoSpace;
  }
}

}  // namespace zerofarm::proc
