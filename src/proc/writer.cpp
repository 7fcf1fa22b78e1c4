// zf-writer: the writer process of the farm.
//
// Threads: one. It reads finished games from every worker's game queue in
// shared memory and writes them into HDF5 shards of --shard-positions
// positions (NAME.h5.tmp, fsync, rename to NAME.h5, fsync the directory).
// A game leaves its queue (Commit) only after the shard holding it is renamed,
// so a writer that dies loses nothing: its replacement re-reads every game
// not yet committed. Each shard records the queue positions it commits
// through (worker_commit), and a replacement skips games an already renamed
// shard holds, so none is written twice.
//
// Exits when the supervisor asks it to drain (kStopWriter) and every queue is
// empty, after writing the last, partial shard.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/proc/game_codec.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::proc {
namespace {

constexpr uint64_t kIdleWaitNs = 100'000'000;
constexpr double kMaxShardAgeSeconds = 300.0;  // a slow farm still writes a shard this often
constexpr const char* kShardPrefix = "shard";

}  // namespace

namespace {
int WriteShards(const FarmConfig& config, const shm::SegmentMap& map);

// The last renamed shard (index shard_index - 1) of this supervisor start, if
// a predecessor renamed it but died before counting it (WriterBlock totals):
// its games, positions and bytes are added now, so the summary and
// metrics.prom equal what is on disk. `written` non-zero: it is ours.
void CountUncountedShard(const io::ShardWriter& writer, uint64_t shard_index, const std::vector<uint64_t>& written,
                         shm::WriterBlock& stats) {
  if (shard_index == 0 || std::all_of(written.begin(), written.end(), [](uint64_t n) { return n == 0; })) return;
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
  ZF_LOG(INFO) << "counted " << path << " (" << reader.Games() << " games), renamed by a writer that died before "
               << "counting it";
}

// Test hook of the fault tests: ZF_FAULT_WRITER_DIE_AFTER_RENAME=N kills the
// first writer of a supervisor start (SIGKILL, as an outside kill would)
// right after it renamed its N-th shard, before it counted and committed it.
void MaybeDieAfterRename(const shm::SegmentMap& map) {
  static int renamed = 0;
  const char* hook = std::getenv("ZF_FAULT_WRITER_DIE_AFTER_RENAME");
  if (!hook || ++renamed != std::atoi(hook)) return;
  if (map.WriterProcess().restarts.load(std::memory_order_relaxed) != 0) return;  // relaxed: a counter
  ZF_LOG(WARN) << "ZF_FAULT_WRITER_DIE_AFTER_RENAME=" << hook << ": dying between rename and commit on purpose";
  raise(SIGKILL);
}
}  // namespace

int RunWriter(const FarmConfig& config, const shm::SegmentMap& map) {
  try {
    return WriteShards(config, map);
  } catch (const io::NoSpaceError& e) {
    // Restarting cannot help: stop the run. Every renamed shard is complete;
    // the games not yet written stay uncommitted in shared memory.
    ZF_LOG(ERROR) << "the output disk is full, the writer stops: " << e.what();
    return kExitNoSpace;
  }
}

namespace {
int WriteShards(const FarmConfig& config, const shm::SegmentMap& map) {
  const auto game = game::MakeGame(config.game);
  const uint32_t workers = map.params().num_workers;
  shm::ProcessSlot& me = map.WriterProcess();
  shm::WriterBlock& stats = map.Writer();
  const std::string dir = RunDirOf(config).HostDir();

  io::ShardMeta meta = io::ShardMetaForGame(*game);
  meta.search = config.search.Describe();
  meta.config = config.ToText();
  meta.run_id = config.run_id;
  meta.host_id = config.host_id;
  meta.epoch = config.epoch;
  io::Compression compression;
  compression.deflate_level = config.compression;
  io::ShardWriter writer(dir, kShardPrefix, meta, compression);
  uint64_t shard_index = io::NextShardIndex(dir, kShardPrefix);

  map.WriterDoorbell().CancelSleep();  // a predecessor killed in its sleep left the flag set
  // A predecessor killed while writing leaves NAME.h5.tmp: never complete, and
  // its games are still uncommitted in the queues. Remove it.
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0) {
      ZF_LOG(WARN) << "removing the incomplete " << e.path().string();
      std::error_code ec;
      std::filesystem::remove(e.path(), ec);
    }
  }
  std::vector<shm::MessageQueueConsumer> queues;
  for (uint32_t w = 0; w < workers; ++w) queues.push_back(map.MakeGameConsumer(w));

  // A shard renamed by a predecessor that died before committing: skip the
  // games it already holds (each queue's messages up to its worker_commit).
  std::vector<uint64_t> already_written(workers, 0);
  if (shard_index > 0) {
    const std::string last = writer.ShardPath(shard_index - 1);
    if (std::filesystem::exists(last)) {
      io::ShardReader reader(last);
      // Written by this supervisor (same host directory, same epoch): its queues are ours.
      if (reader.meta().run_id == meta.run_id && reader.meta().host_id == meta.host_id &&
          reader.meta().epoch == meta.epoch && reader.meta().worker_commit.size() == workers)
        already_written = reader.meta().worker_commit;
    }
  }
  CountUncountedShard(writer, shard_index, already_written, stats);
  for (uint32_t w = 0; w < workers; ++w) {
    while (queues[w].ReadCursor() < already_written[w] && queues[w].ReadNext()) {
    }
    if (queues[w].ReadCursor() > queues[w].Committed()) {
      ZF_LOG(INFO) << "worker " << w << ": " << queues[w].ReadCursor() - queues[w].Committed()
                   << " games were already in the last shard; committing them";
      queues[w].Commit(queues[w].ReadCursor());
    }
  }

  double shard_started = MonotonicSeconds();
  auto flush = [&]() {
    if (writer.PendingGames() == 0) return;
    std::vector<uint64_t> commit(workers);
    for (uint32_t w = 0; w < workers; ++w) commit[w] = queues[w].ReadCursor();
    const uint64_t games = writer.PendingGames(), positions = writer.PendingPositions();
    me.Beat(MonotonicNs(), config.BusyAllowanceNs());  // a big shard on a slow disk may take long
    const uint64_t index = shard_index++;
    const std::string path = writer.Flush(index, commit);
    MaybeDieAfterRename(map);
    // Renamed -> counted -> committed: a writer killed between any two steps
    // leaves its successor what it needs to count the shard exactly once
    // (CountUncountedShard) and to skip its games (worker_commit).
    std::error_code ec;
    shm::WriterTotals t = stats.Totals();
    t.games += games;
    t.positions += positions;
    t.shards += 1;
    t.bytes += std::filesystem::file_size(path, ec);
    t.next_shard_index = index + 1;
    stats.Publish(t);
    for (uint32_t w = 0; w < workers; ++w) queues[w].Commit(commit[w]);
    ZF_LOG(INFO) << "wrote " << path << " (" << games << " games, " << positions << " positions)";
    shard_started = MonotonicSeconds();
  };

  uint64_t last_beat = 0;
  const pid_t supervisor = getppid();
  while (true) {
    const uint64_t now = MonotonicNs();
    if (now - last_beat > 50'000'000) {
      me.Beat(now);
      last_beat = now;
    }
    bool progressed = false;
    bool queue_pressure = false;
    for (uint32_t w = 0; w < workers; ++w) {
      while (auto m = queues[w].ReadNext()) {
        auto record = DecodeGame(m->data, m->size, *game);
        if (!record) {
          stats.corrupt_messages.fetch_add(1, std::memory_order_relaxed);
          ZF_LOG(ERROR) << "worker " << w << ": a malformed game message of " << m->size << " bytes; skipped";
        } else {
          writer.Add(*record);
        }
        progressed = true;
      }
      if (queues[w].Pending() * 4 >= queues[w].Depth() * 3) queue_pressure = true;
    }
    const bool draining = map.StopRequested() == kStopWriter;
    if (writer.PendingPositions() >= static_cast<uint64_t>(config.shard_positions) || queue_pressure ||
        (writer.PendingGames() > 0 && MonotonicSeconds() - shard_started > kMaxShardAgeSeconds))
      flush();
    if (draining && !progressed) {
      flush();
      ZF_LOG(INFO) << "drained; writer done";
      return kExitOk;
    }
    if (!progressed) {
      if (getppid() != supervisor) return kExitPeerGone;
      map.WriterDoorbell().SleepUnless(
          [&]() {
            for (auto& q : queues)
              if (q.Unread() > 0) return true;
            return false;
          },
          kIdleWaitNs);
    }
  }
}

}  // namespace
}  // namespace zerofarm::proc
