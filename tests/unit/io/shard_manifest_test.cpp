// HOST/manifest (io/shard_manifest.h): appended after renames, followed by
// offset, a torn last line ignored and repaired, shards renamed but not
// listed added at a writer's start, and damaged lines refused.
#include "zerofarm/io/shard_manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard.h"

namespace zerofarm::io {
namespace {

using testing::ScratchDir;

using testing::Slurp;

void AppendRaw(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

// Writes shard-INDEX.h5 of `games` one-position Tic-tac-toe games into DIR.
void WriteShard(const std::string& dir, uint64_t index, int games) {
  const auto game = game::MakeGame("tictactoe");
  ShardMeta meta = ShardMetaForGame(*game);
  meta.run_id = "run-test";
  ShardWriter writer(dir, "shard", meta);
  for (int g = 0; g < games; ++g) {
    writer.Add(OnePositionRecord(meta, index * 100 + static_cast<uint64_t>(g)));
  }
  writer.Flush(index, {});
}

std::vector<std::string> Names(const std::vector<ManifestEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.name);
  return out;
}

TEST_CASE("a shard manifest is followed by offset, and a torn last line is left unread, then repaired",
          "[io]") {
  ScratchDir dir("zf-manifest");
  const std::string path = dir.path() + "/manifest";
  ShardManifestReader reader(dir.path());
  CHECK_FALSE(reader.Present());
  CHECK(reader.ReadNew().empty());  // no manifest: nothing, no error

  AppendShardManifest(dir.path(), {"shard-000000.h5", 80, 4});
  AppendShardManifest(dir.path(), {"shard-000001.h5", 81, 5});
  CHECK(reader.Present());
  const auto first = reader.ReadNew();
  REQUIRE(Names(first) == std::vector<std::string>{"shard-000000.h5", "shard-000001.h5"});
  CHECK(first[1].positions == 81);
  CHECK(first[1].games == 5);
  CHECK(reader.ReadNew().empty());  // incremental: nothing new

  // A writer killed mid-append: part of a line, no newline.
  AppendRaw(path, "shard-000002.h5 7");
  CHECK(reader.ReadNew().empty());
  const uint64_t offset = reader.Offset();
  CHECK(RepairShardManifest(dir.path(), "shard") == 0);  // shard-000002.h5 was never renamed
  CHECK(Slurp(path) == "shard-000000.h5 80 4\nshard-000001.h5 81 5\n");

  AppendShardManifest(dir.path(), {"shard-000002.h5", 79, 3});
  const auto next = reader.ReadNew();
  REQUIRE(Names(next) == std::vector<std::string>{"shard-000002.h5"});
  CHECK(next[0].positions == 79);  // not the torn "7"
  CHECK(reader.Offset() > offset);
}

TEST_CASE("the repair lists shards renamed but not listed, and creates a manifest for an old directory",
          "[io]") {
  ScratchDir dir("zf-manifest-repair");
  const std::string path = dir.path() + "/manifest";
  WriteShard(dir.path(), 0, 2);
  WriteShard(dir.path(), 1, 3);
  // A directory from before manifests: the repair lists every shard once.
  CHECK(RepairShardManifest(dir.path(), "shard") == 2);
  CHECK(Slurp(path) == "shard-000000.h5 2 2\nshard-000001.h5 3 3\n");
  CHECK(RepairShardManifest(dir.path(), "shard") == 0);

  // A writer killed between the rename and the append, mid-append at that.
  WriteShard(dir.path(), 2, 4);
  AppendRaw(path, "shard-0000");
  CHECK(RepairShardManifest(dir.path(), "shard") == 1);
  ShardManifestReader reader(dir.path());
  const auto entries = reader.ReadNew();
  REQUIRE(Names(entries) ==
          std::vector<std::string>{"shard-000000.h5", "shard-000001.h5", "shard-000002.h5"});
  CHECK(entries[2].positions == 4);
  CHECK(entries[2].games == 4);

  // A file named like a shard that is not one (put there by hand): not listed.
  { std::ofstream(dir.path() + "/shard-000003.h5") << "not HDF5"; }
  CHECK(RepairShardManifest(dir.path(), "shard") == 0);
  CHECK(Slurp(path).find("shard-000003.h5") == std::string::npos);
}

TEST_CASE("a manifest that disagrees with its directory or is damaged", "[io]") {
  ScratchDir dir("zf-manifest-bad");
  const std::string path = dir.path() + "/manifest";
  WriteShard(dir.path(), 0, 1);
  WriteShard(dir.path(), 1, 1);
  WriteShard(dir.path(), 2, 1);
  // Lists shard 1 only (shard 0 was listed elsewhere, say): the repair adds
  // only what follows the last listed index, never an older name twice.
  AppendShardManifest(dir.path(), {"shard-000001.h5", 1, 1});
  CHECK(RepairShardManifest(dir.path(), "shard") == 1);
  CHECK(Slurp(path) == "shard-000001.h5 1 1\nshard-000002.h5 1 1\n");
  // A listed shard that is gone stays listed (append-only); readers open
  // each listed file and skip one that is missing.
  REQUIRE(::unlink((dir.path() + "/shard-000002.h5").c_str()) == 0);
  CHECK(RepairShardManifest(dir.path(), "shard") == 0);
  CHECK(Names(ShardManifestReader(dir.path()).ReadNew()).size() == 2);

  // Damaged or hostile lines: one clear error naming the file and line.
  AppendRaw(path, "../../etc/passwd 1 1\n");
  ShardManifestReader reader(dir.path());
  CHECK_THROWS_WITH(reader.ReadNew(), Catch::Contains(path + ": line 3 is not a manifest entry"));
  CHECK_THROWS_WITH(RepairShardManifest(dir.path(), "shard"), Catch::Contains("line 3"));
  CHECK_THROWS_AS(AppendShardManifest(dir.path(), {"a b", 1, 1}), Error);

  ManifestEntry e;
  CHECK(ParseManifestLine("shard-000001.h5 16384 40", &e));
  CHECK_FALSE(ParseManifestLine("shard-000001.h5 16384", &e));
  CHECK_FALSE(ParseManifestLine("shard-000001.h5 -1 4", &e));
  CHECK_FALSE(ParseManifestLine(".hidden.h5 1 1", &e));
  CHECK_FALSE(ParseManifestLine("shard-000001.h5 1 1 ", &e));
}

TEST_CASE("RunShardFollower: new shards from manifests by offset, hosts without one by listing", "[io]") {
  ScratchDir run("zf-manifest-run");
  const std::string shards = run.path() + "/shards", a = shards + "/a", b = shards + "/b";
  REQUIRE(::mkdir(shards.c_str(), 0755) == 0);
  REQUIRE(::mkdir(a.c_str(), 0755) == 0);
  REQUIRE(::mkdir(b.c_str(), 0755) == 0);
  WriteShard(a, 0, 1);
  WriteShard(a, 1, 1);
  RepairShardManifest(a, "shard");  // host a has a manifest, host b none
  WriteShard(b, 0, 1);
  WriteShard(shards, 7, 1);  // a run from before hosts
  RunShardFollower follower(shards);
  CHECK(follower.NewShards() ==
        std::vector<std::string>{shards + "/a/shard-000000.h5", shards + "/a/shard-000001.h5",
                                 shards + "/b/shard-000000.h5", shards + "/shard-000007.h5"});
  CHECK(follower.ManifestHosts() == 1);
  CHECK(follower.ListedHosts() == 1);
  CHECK(follower.NewShards().empty());

  // The manifest decides for host a: a shard renamed but not yet listed is
  // not returned, nor a listed one that is not there.
  WriteShard(a, 2, 1);
  WriteShard(b, 1, 1);
  CHECK(follower.NewShards() == std::vector<std::string>{shards + "/b/shard-000001.h5"});
  AppendShardManifest(a, {"shard-000002.h5", 1, 1});
  AppendShardManifest(a, {"shard-000009.h5", 1, 1});
  CHECK(follower.NewShards() == std::vector<std::string>{shards + "/a/shard-000002.h5"});
  CHECK(follower.NewShards().empty());

  // A damaged line: host a is listed from then on, nothing returned twice.
  WriteShard(a, 3, 1);
  AppendShardManifest(a, {"shard-000003.h5", 1, 1});
  AppendRaw(a + "/manifest", "garbage\n");
  WriteShard(a, 4, 1);
  CHECK(follower.NewShards() ==
        std::vector<std::string>{shards + "/a/shard-000003.h5", shards + "/a/shard-000004.h5"});
  CHECK(follower.ListedHosts() == 2);
  CHECK(follower.NewShards().empty());
}

TEST_CASE("a manifest is never written through a link", "[io]") {
  ScratchDir dir("zf-manifest-link");
  const std::string target = dir.path() + "/elsewhere";
  REQUIRE(::symlink(target.c_str(), (dir.path() + "/manifest").c_str()) == 0);
  CHECK_THROWS_AS(AppendShardManifest(dir.path(), {"shard-000000.h5", 1, 1}), ConfigError);
  CHECK(::access(target.c_str(), F_OK) != 0);
  CHECK_THROWS_WITH(CheckShardManifest(dir.path()), Catch::Contains("manifest is a link"));
  CHECK_THROWS_AS(RepairShardManifest(dir.path(), "shard"), ConfigError);
}

TEST_CASE("CheckShardManifest passes a regular manifest or none and refuses a directory or FIFO or hard link",
          "[io]") {
  ScratchDir dir("zf-manifest-check");
  const std::string manifest = dir.path() + "/manifest";
  CheckShardManifest(dir.path());  // none yet
  AppendShardManifest(dir.path(), {"shard-000000.h5", 1, 1});
  CheckShardManifest(dir.path());
  REQUIRE(::link(manifest.c_str(), (dir.path() + "/second-name").c_str()) == 0);
  CHECK_THROWS_AS(CheckShardManifest(dir.path()), ConfigError);
  REQUIRE(::unlink(manifest.c_str()) == 0);
  REQUIRE(::mkfifo(manifest.c_str(), 0644) == 0);
  CHECK_THROWS_AS(CheckShardManifest(dir.path()), ConfigError);  // and never blocks on it
  REQUIRE(::unlink(manifest.c_str()) == 0);
  REQUIRE(::mkdir(manifest.c_str(), 0755) == 0);
  CHECK_THROWS_AS(CheckShardManifest(dir.path()), ConfigError);
}

}  // namespace
}  // namespace zerofarm::io
