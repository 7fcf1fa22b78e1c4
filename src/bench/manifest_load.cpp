// `zerofarm bench --manifest-load` (bench.h): many simulated hosts write
// shards into one run directory at a set rate while a trainer's window
// follows it through the hosts' manifests (io/shard_manifest.h).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "zerofarm/bench/bench.h"
#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/shard_manifest.h"
#include "zerofarm/learn/train.h"

namespace zerofarm::bench {
namespace {

// The bytes of one real shard of `games` one-position Tic-tac-toe games,
// written by io::ShardWriter into `scratch` (then removed).
std::string TemplateShard(const std::string& scratch, int games) {
  const auto game = game::MakeGame("tictactoe");
  io::ShardMeta meta = io::ShardMetaForGame(*game);
  meta.run_id = "manifest-load";
  io::ShardWriter writer(scratch, "template", meta);
  for (int g = 0; g < games; ++g) {
    writer.Add(io::OnePositionRecord(meta, static_cast<uint64_t>(g)));
  }
  const std::string path = writer.Flush(0, {});
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  return bytes;
}

void FsyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0 && errno != EINVAL) throw Error(path + ": fsync: " + std::strerror(errno));
}

// One shard as a host's writer places it: NAME.tmp written and fsynced,
// renamed, the directory fsynced, then its manifest line (fsynced).
void PlaceShard(const std::string& dir, uint64_t index, const std::string& bytes, uint64_t positions,
                uint64_t games) {
  char name[32];
  std::snprintf(name, sizeof name, "shard-%06llu.h5", static_cast<unsigned long long>(index));
  const std::string path = dir + "/" + name, tmp = path + ".tmp";
  const int fd = io::CreateFreshFile(tmp);
  const bool ok =
      ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) throw Error(tmp + ": cannot write or rename");
  FsyncPath(dir, O_RDONLY | O_DIRECTORY);
  io::AppendShardManifest(dir, {name, positions, games});
}

// Writer thread `t` of `threads`: the shards k = t, t + threads, ... of host
// k % hosts (so a host has one writer), each at its time k / rate.
void WriteShards(const ManifestLoadOptions& o, const std::vector<std::string>& host_dirs,
                 const std::string& bytes, int t, int threads, double start, std::atomic<uint64_t>* written,
                 std::atomic<bool>* failed) {
  try {
    const auto positions = static_cast<uint64_t>(o.games_per_shard);
    for (uint64_t k = static_cast<uint64_t>(t); k < o.shards && !failed->load();
         k += static_cast<uint64_t>(threads)) {
      const double at = start + static_cast<double>(k) / o.rate, now = MonotonicSeconds();
      if (at > now) std::this_thread::sleep_for(std::chrono::duration<double>(at - now));
      const uint64_t host = k % host_dirs.size();
      PlaceShard(host_dirs[host], k / host_dirs.size(), bytes, positions, positions);
      written->fetch_add(1, std::memory_order_relaxed);  // a count; the files are found through the disk
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "manifest-load: writer %d: %s\n", t, e.what());
    failed->store(true);
  }
}

void CheckOptions(const ManifestLoadOptions& o) {
  if (o.out.empty()) throw ConfigError("bench --manifest-load: --out must name a new run directory");
  std::error_code ec;
  if (std::filesystem::exists(o.out, ec))
    throw ConfigError("bench --manifest-load: --out " + o.out + " exists");
  if (o.shards < 1 || o.hosts < 1 || o.hosts > 65536 || o.rate <= 0 || o.follow_every <= 0 || o.window < 1 ||
      o.games_per_shard < 1 || o.games_per_shard > 4096)
    throw ConfigError(
        "bench --manifest-load: --shards, --hosts (1..65536), --rate, --follow-every, --window "
        "and --games-per-shard (1..4096) must be positive");
}

}  // namespace

int RunManifestLoad(const ManifestLoadOptions& o) {
  CheckOptions(o);
  const io::RunDir run(o.out);
  std::filesystem::create_directories(run.ShardsDir());
  const std::string bytes = TemplateShard(run.Root(), o.games_per_shard);
  std::vector<std::string> host_dirs;
  for (int h = 0; h < o.hosts; ++h) host_dirs.push_back(io::RunDir(o.out, std::to_string(h)).HostDir());
  for (const auto& d : host_dirs) std::filesystem::create_directories(d);
  const std::string csv_path = o.csv.empty() ? o.out + "/manifest-load.csv" : o.csv;
  std::ofstream csv(csv_path);
  if (!csv) throw Error("cannot write " + csv_path);
  csv << "elapsed_s,run_shards,found_shards,new_shards,refresh_ms,us_per_new_shard,window_shards\n";

  int threads = 1;
  for (int t : {8, 4, 2})
    if (o.hosts % t == 0) {
      threads = t;
      break;
    }
  std::atomic<uint64_t> written{0};
  std::atomic<bool> failed{false};
  const double start = MonotonicSeconds();
  std::vector<std::thread> writers;
  for (int t = 0; t < threads; ++t)
    writers.emplace_back(WriteShards, std::cref(o), std::cref(host_dirs), std::cref(bytes), t, threads, start,
                         &written, &failed);
  learn::ShardWindow window(o.out, o.window);
  uint64_t found = 0, refreshes = 0;
  double worst_us = 0, next = start + o.follow_every;
  for (bool last = false; !last;) {
    const double now = MonotonicSeconds();
    if (next > now) std::this_thread::sleep_for(std::chrono::duration<double>(next - now));
    next += o.follow_every;
    last = written.load() >= o.shards || failed.load();  // the writers are done: one refresh more
    const uint64_t on_disk = written.load();
    const double t0 = MonotonicSeconds();
    const int added = window.Refresh();
    const double ms = (MonotonicSeconds() - t0) * 1e3;
    found += static_cast<uint64_t>(added);
    ++refreshes;
    const double us = added > 0 ? ms * 1e3 / added : 0;
    if (on_disk > o.shards / 10) worst_us = std::max(worst_us, us);  // past the first tenth's warm-up
    csv << t0 - start << "," << on_disk << "," << found << "," << added << "," << ms << "," << us << ","
        << window.Shards() << "\n";
  }
  for (auto& w : writers) w.join();
  const double seconds = MonotonicSeconds() - start;
  const int64_t want_positions = static_cast<int64_t>(o.shards) * o.games_per_shard;
  const bool ok = !failed.load() && found == o.shards && window.ProducedPositions() == want_positions;
  std::printf(
      "{\"bench\": \"manifest-load\", \"shards\": %llu, \"hosts\": %d, \"rate_target\": %g, \"rate\": %.1f, "
      "\"found\": %llu, \"positions\": %lld, \"positions_expected\": %lld, \"refreshes\": %llu, "
      "\"worst_us_per_new_shard\": %.1f, \"csv\": \"%s\", \"ok\": %s}\n",
      static_cast<unsigned long long>(o.shards), o.hosts, o.rate, static_cast<double>(o.shards) / seconds,
      static_cast<unsigned long long>(found), static_cast<long long>(window.ProducedPositions()),
      static_cast<long long>(want_positions), static_cast<unsigned long long>(refreshes), worst_us,
      csv_path.c_str(), ok ? "true" : "false");
  if (!ok)
    std::fprintf(stderr,
                 "manifest-load: FAIL: %llu of %llu shards found once (a shard lost or counted twice)\n",
                 static_cast<unsigned long long>(found), static_cast<unsigned long long>(o.shards));
  return ok ? kExitOk : kExitFailure;
}

}  // namespace zerofarm::bench
