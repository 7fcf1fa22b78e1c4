// ShardWriter, ShardReader, ListShards, NextShardIndex, and the Python reader
// tools/zf_shards.py on a shard written here.
#include "zerofarm/io/shard.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "privilege.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core_version.h"
#include "zerofarm/game/game.h"

namespace zerofarm::io {
namespace {

using testing::ScratchDir;

ShardMeta TinyMeta() {
  ShardMeta meta;
  meta.game = "tictactoe";
  meta.planes = 3;
  meta.height = 3;
  meta.width = 3;
  meta.actions = 9;
  meta.plane_names = {"mine", "theirs", "to_move"};
  meta.search = "simulations=100 c_puct=1.5";
  meta.config = "workers=2\nshard_positions=1000\n";
  meta.run_id = "run-test";
  meta.host_id = "node-7";
  meta.epoch = 3;
  return meta;
}

// A game with `n` recorded positions of random content, valid by the schema.
mcts::GameRecord MakeGame(std::mt19937_64& rng, uint64_t game_id, int n, const ShardMeta& meta) {
  mcts::GameRecord r;
  r.game_id = game_id;
  r.seed = rng();
  r.worker = static_cast<int32_t>(game_id >> 40);
  r.winner = static_cast<int32_t>(rng() % 3) - 1;
  const int plies = n + static_cast<int>(rng() % 3);
  for (int i = 0; i < plies; ++i) r.moves.push_back(static_cast<int16_t>(rng() % meta.actions));
  for (int i = 0; i < n; ++i) {
    for (int b = 0; b < meta.FeatureBytes(); ++b) r.features.push_back(static_cast<uint8_t>(rng() % 2));
    std::vector<float> p(static_cast<size_t>(meta.actions));
    float sum = 0;
    for (float& x : p) sum += (x = static_cast<float>(rng() % 1000) + 1.0f);
    for (float x : p) r.policy.push_back(x / sum);
    const int mover = i % 2;
    r.z.push_back(r.winner < 0 ? 0.0f : (r.winner == mover ? 1.0f : -1.0f));
    r.root_value.push_back(static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 1000.0f);
    r.ply.push_back(static_cast<int16_t>(i));
    r.model_version.push_back(static_cast<uint32_t>(3 + rng() % 3));
    r.full_search.push_back(static_cast<uint8_t>(rng() % 2));
  }
  if (r.winner >= 0 && rng() % 2)
    r.resigned = 1 - r.winner;
  else if (rng() % 2)
    r.would_resign = static_cast<int32_t>(rng() % 2);
  return r;
}

void RequireSame(const mcts::GameRecord& a, const mcts::GameRecord& b) {
  REQUIRE(a.game_id == b.game_id);
  CHECK(a.seed == b.seed);
  CHECK(a.worker == b.worker);
  CHECK(a.winner == b.winner);
  CHECK(a.moves == b.moves);
  CHECK(a.features == b.features);
  CHECK(a.policy == b.policy);  // exact: float32 in, float32 out
  CHECK(a.z == b.z);
  CHECK(a.root_value == b.root_value);
  CHECK(a.ply == b.ply);
  CHECK(a.model_version == b.model_version);
  CHECK(a.full_search == b.full_search);
  CHECK(a.resigned == b.resigned);
  CHECK(a.would_resign == b.would_resign);
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

TEST_CASE("a shard round trips exactly", "[io]") {
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(42);
  ShardMeta meta = TinyMeta();
  for (int i = 0; i < 5000; ++i) meta.config += "option_" + std::to_string(i) + " = value\n";
  REQUIRE(meta.config.size() > 65536);  // more than fits in an object header
  // Small chunks, so positions span several chunks.
  ShardWriter writer(dir.path(), "selfplay", meta, Compression{1, true, 512, 4});
  std::vector<mcts::GameRecord> games;
  for (uint64_t g = 0; g < 7; ++g) {
    games.push_back(MakeGame(rng, (uint64_t{g % 2} << 40) | g, 1 + static_cast<int>(g * 3 % 9), meta));
    writer.Add(games.back());
  }
  games.push_back(MakeGame(rng, 99, 0, meta));  // a game with no recorded position
  writer.Add(games.back());
  uint64_t n = 0;
  for (const auto& g : games) n += g.Positions();
  CHECK(writer.PendingGames() == games.size());
  CHECK(writer.PendingPositions() == n);

  const std::string path = writer.Flush(5, {11, 22, 33});
  CHECK(path == dir / "selfplay-000005.h5");
  CHECK(Exists(path));
  CHECK_FALSE(Exists(path + ".tmp"));
  CHECK(writer.PendingGames() == 0);
  CHECK(writer.PendingPositions() == 0);
  CHECK(writer.Flush(6, {}).empty());  // nothing buffered: no shard
  CHECK_FALSE(Exists(dir / "selfplay-000006.h5"));

  ShardReader reader(path);
  const ShardMeta& m = reader.meta();
  CHECK(m.schema_version == kShardSchemaVersion);
  CHECK(m.game == "tictactoe");
  CHECK((m.planes == 3 && m.height == 3 && m.width == 3 && m.actions == 9));
  CHECK(m.plane_names == meta.plane_names);
  CHECK(m.search == meta.search);
  CHECK(m.config == meta.config);
  CHECK(m.run_id == "run-test");
  CHECK(m.host_id == "node-7");
  CHECK(m.epoch == 3);
  CHECK(m.zerofarm_version == ZF_VERSION_STRING);
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  CHECK(m.host == host);
  REQUIRE(m.created.size() == 20);  // 2024-05-01T12:34:56Z
  CHECK(m.created[10] == 'T');
  CHECK(m.created.back() == 'Z');
  CHECK(m.model_version_min == 3);
  CHECK(m.model_version_max == 5);
  CHECK(m.shard_index == 5);
  CHECK(m.worker_commit == std::vector<uint64_t>{11, 22, 33});
  CHECK(reader.Positions() == n);
  CHECK(reader.Games() == games.size());

  const std::vector<mcts::GameRecord> back = reader.ReadGameRecords();
  REQUIRE(back.size() == games.size());
  for (size_t i = 0; i < games.size(); ++i) RequireSame(games[i], back[i]);

  const std::vector<ShardGame> table = reader.ReadGames();
  int64_t row = 0;
  for (size_t i = 0; i < games.size(); ++i) {
    CHECK(table[i].first_position == row);
    CHECK(table[i].position_count == static_cast<int32_t>(games[i].Positions()));
    CHECK(table[i].length == static_cast<int32_t>(games[i].moves.size()));
    CHECK(table[i].result == games[i].winner);
    row += table[i].position_count;
  }
  // A slice across game boundaries.
  const PositionRows rows = reader.ReadPositions(2, 5);
  CHECK(rows.count == 5);
  CHECK(rows.game_id[0] == games[1].game_id);
  CHECK(rows.ply[0] == 1);
  CHECK(std::vector<uint8_t>(rows.features.begin(), rows.features.begin() + 27) ==
        std::vector<uint8_t>(games[1].features.begin() + 27, games[1].features.begin() + 54));
  CHECK_THROWS_WITH(reader.ReadPositions(n - 1, 2), Catch::Contains("out of range"));
}

TEST_CASE("ShardMetaForGame describes the game", "[io]") {
  const auto game = game::MakeGame("connect4");
  const ShardMeta meta = ShardMetaForGame(*game);
  CHECK(meta.game == game->Name());
  CHECK(meta.planes == game->Shape().planes);
  CHECK(meta.height == game->Shape().height);
  CHECK(meta.width == game->Shape().width);
  CHECK(meta.actions == game->ActionCount());
  CHECK(meta.plane_names == game->PlaneNames());
}

// Issue 72: a shard carries its game's symmetries (/symmetry), so that readers
// in other languages need no per-game code; tests/python/test_shards.py checks
// Python's transforms against the C++ helpers for every game.
TEST_CASE("a shard carries its game's symmetry maps, and the writer refuses maps that are not permutations",
          "[io][schema]") {
  ScratchDir dir("zf-io-symmetry");
  std::mt19937_64 rng(5);
  const auto game = game::MakeGame("tictactoe");
  ShardMeta meta = ShardMetaForGame(*game);
  ShardWriter writer(dir.path(), "selfplay", meta);
  writer.Add(MakeGame(rng, 1, 3, meta));
  const H5File file = OpenFile(writer.Flush(0, {1}));
  std::vector<uint64_t> dims;
  const std::vector<int32_t> cells = ReadDataset<int32_t>(file.id(), "symmetry/cell_map", &dims);
  CHECK(dims == std::vector<uint64_t>{8, 9});
  const std::vector<int32_t> actions = ReadDataset<int32_t>(file.id(), "symmetry/action_map", &dims);
  CHECK(dims == std::vector<uint64_t>{8, 9});
  for (int s = 0; s < 8; ++s) {
    const std::vector<int> want_cells = game->CellMap(s), want_actions = game->ActionMap(s);
    CHECK(std::vector<int>(cells.begin() + s * 9, cells.begin() + s * 9 + 9) == want_cells);
    CHECK(std::vector<int>(actions.begin() + s * 9, actions.begin() + s * 9 + 9) == want_actions);
  }

  ShardMeta bad = meta;
  bad.cell_maps[3][0] = bad.cell_maps[3][1];  // two cells to one
  CHECK_THROWS_WITH(ShardWriter(dir.path(), "bad", bad),
                    Catch::Contains("cell map of symmetry 3 is not a permutation of its 9 cells"));
  bad = meta;
  bad.action_maps.pop_back();  // 7 action maps for 8 cell maps
  CHECK_THROWS_WITH(ShardWriter(dir.path(), "bad", bad), Catch::Contains("8 cell maps and 7 action maps"));
}

// Issue 82: what the writer checks before it adds a game, so that a game
// breaking its game's contract is set aside instead of failing the writer.
TEST_CASE("Problem names what a shard cannot hold, and a good record has none", "[io]") {
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(2);
  const ShardMeta meta = TinyMeta();
  const ShardWriter writer(dir.path(), "s", meta);
  const mcts::GameRecord good = MakeGame(rng, 1, 4, meta);
  CHECK(writer.Problem(good).empty());
  mcts::GameRecord bad = good;
  bad.winner = 7;
  CHECK_THAT(writer.Problem(bad), Catch::StartsWith("winner 7"));
  bad = good;
  bad.moves[1] = static_cast<int16_t>(meta.actions);
  CHECK_THAT(writer.Problem(bad), Catch::StartsWith("move 2 is action 9, not in [0, 9)"));
  bad = good;
  bad.z[2] = std::nanf("");
  CHECK_THAT(writer.Problem(bad), Catch::StartsWith("z nan at position 2"));
  bad = good;
  bad.root_value[0] = 3.0f;
  CHECK_THAT(writer.Problem(bad), Catch::StartsWith("root value 3"));
  bad = good;
  bad.ply[2] = bad.ply[1];
  CHECK_THAT(writer.Problem(bad), Catch::StartsWith("ply 1 at position 2"));
  bad = good;
  bad.policy[5] = -0.5f;
  CHECK_THAT(writer.Problem(bad), Catch::StartsWith("policy value -0.5"));
  bad = good;
  bad.features.pop_back();
  CHECK_THAT(writer.Problem(bad), Catch::Contains("feature bytes for 4 positions"));
}

TEST_CASE("Add rejects inconsistent records and keeps the buffer", "[io]") {
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(1);
  const ShardMeta meta = TinyMeta();
  ShardWriter writer(dir.path(), "s", meta);
  writer.Add(MakeGame(rng, 1, 4, meta));
  mcts::GameRecord bad = MakeGame(rng, 2, 4, meta);
  bad.policy.pop_back();
  CHECK_THROWS_WITH(writer.Add(bad), Catch::StartsWith("game 2 from worker 0: 35 policy values"));
  bad = MakeGame(rng, 3, 4, meta);
  bad.z.push_back(0);
  CHECK_THROWS_AS(writer.Add(bad), Error);
  CHECK(writer.PendingGames() == 1);
  CHECK(writer.PendingPositions() == 4);

  ShardMeta no_shape = meta;
  no_shape.planes = 0;
  CHECK_THROWS_AS(ShardWriter(dir.path(), "s", no_shape), ConfigError);
  CHECK_THROWS_AS(ShardWriter(dir.path(), "s", meta, Compression{12}), ConfigError);
}

TEST_CASE("ListShards and NextShardIndex", "[io]") {
  ScratchDir dir("zf-io");
  CHECK(NextShardIndex(dir.path(), "sp") == 0);
  CHECK(NextShardIndex(dir / "missing", "sp") == 0);
  CHECK_THROWS_WITH(ListShards(dir / "missing"), Catch::Contains("No such file or directory"));
  std::mt19937_64 rng(2);
  const ShardMeta meta = TinyMeta();
  ShardWriter writer(dir.path(), "sp", meta);
  for (uint64_t idx : {0, 1, 3}) {
    writer.Add(MakeGame(rng, idx, 2, meta));
    writer.Flush(idx, {idx});
  }
  CHECK(NextShardIndex(dir.path(), "sp") == 4);
  std::ofstream(dir / "sp-000009.h5.tmp") << "partial";  // a crashed writer's leftover
  std::ofstream(dir / "other-000020.h5") << "x";         // another prefix
  std::ofstream(dir / "sp-notanumber.h5") << "x";
  CHECK(NextShardIndex(dir.path(), "sp") == 10);
  std::ofstream(dir / "sp-000011.h5.refused.2") << "x";  // set aside (io::SetAside): its index stays taken
  std::ofstream(dir / "sp-000014.h5.refusedx") << "x";   // not a set-aside name
  CHECK(NextShardIndex(dir.path(), "sp") == 12);
  CHECK(NextShardIndex(dir.path(), "other") == 21);
  CHECK(ListShards(dir.path()) == std::vector<std::string>{dir / "other-000020.h5", dir / "sp-000000.h5",
                                                           dir / "sp-000001.h5", dir / "sp-000003.h5",
                                                           dir / "sp-notanumber.h5"});
  // The same index twice would overwrite a shard: refused.
  writer.Add(MakeGame(rng, 7, 2, meta));
  CHECK_THROWS_WITH(writer.Flush(3, {}), Catch::Contains("already exists"));
  CHECK(writer.PendingGames() == 1);
}

TEST_CASE("non-shard files give one-line errors", "[io]") {
  ScratchDir dir("zf-io");
  const std::string text = dir / "text.h5";
  std::ofstream(text) << "this is not HDF5\n";
  CHECK_THROWS_WITH(ShardReader(text), text + " is not a zerofarm shard (not an HDF5 file or truncated)");
  const std::string other = dir / "other.h5";
  { H5File f = CreateFile(other); }
  CHECK_THROWS_WITH(ShardReader(other),
                    other + " is not a zerofarm shard (missing attribute schema_version)");
  CHECK_THROWS_WITH(ShardReader(dir / "none.h5"), dir / "none.h5" + ": No such file or directory");
  {
    H5File f = OpenFile(other, /*writable=*/true);
    WriteScalarAttr<int32_t>(f.id(), "schema_version", kShardSchemaVersion + 1);
  }
  CHECK_THROWS_WITH(ShardReader(other),
                    Catch::Contains("has shard schema version " + std::to_string(kShardSchemaVersion + 1)));

  // A shard cut in half (a copy interrupted half way).
  std::mt19937_64 rng(3);
  ShardWriter writer(dir.path(), "s", TinyMeta());
  writer.Add(MakeGame(rng, 1, 9, TinyMeta()));
  const std::string path = writer.Flush(0, {});
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size / 2);
  CHECK_THROWS_WITH(ShardReader(path),
                    Catch::StartsWith(path + " is not a zerofarm shard (not an HDF5 file or truncated"));
}

TEST_CASE("a failed flush throws, leaves no file and keeps the buffer", "[io]") {
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(4);
  const ShardMeta meta = TinyMeta();
  SECTION("the directory is a regular file (fails for root too)") {
    const std::string file = dir / "plain-file";
    std::ofstream(file) << "x";
    ShardWriter writer(file, "s", meta);
    writer.Add(MakeGame(rng, 1, 3, meta));
    CHECK_THROWS_WITH(writer.Flush(0, {}),
                      Catch::StartsWith(file + "/s-000000.h5.tmp: create: Not a directory"));
    CHECK(writer.PendingGames() == 1);
  }
  SECTION("the directory is not writable (checked as user nobody when run as root)") {
    const std::string ro = dir / "ro";
    REQUIRE(::mkdir(ro.c_str(), 0555) == 0);
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);  // nobody may reach ro, not write it
    const mcts::GameRecord game = MakeGame(rng, 1, 3, meta);
    // 0: refused with EACCES, the game kept; 1: written; 2: another error.
    const int code = testing::RunAsUnprivileged([&] {
      ShardWriter writer(ro, "s", meta);
      writer.Add(game);
      try {
        writer.Flush(0, {});
        return 1;
      } catch (const std::exception& e) {
        const bool denied = std::string(e.what()).find("Permission denied") != std::string::npos;
        return denied && writer.PendingGames() == 1 ? 0 : 2;
      }
    });
    CHECK(code == 0);
    CHECK_FALSE(Exists(ro + "/s-000000.h5"));
  }
  SECTION("a .tmp name planted as a link is replaced, never written through (issue 21)") {
    const std::string victim = dir / "victim";
    std::ofstream(victim) << "precious\n";
    REQUIRE(::symlink(victim.c_str(), (dir / "s-000002.h5.tmp").c_str()) == 0);
    ShardWriter writer(dir.path(), "s", meta);
    writer.Add(MakeGame(rng, 1, 3, meta));
    const std::string path = writer.Flush(2, {});
    CHECK(ShardReader(path).Games() == 1);
    CHECK_FALSE(Exists(dir / "s-000002.h5.tmp"));
    std::ifstream in(victim);
    std::string text;
    std::getline(in, text);
    CHECK(text == "precious");
  }
  SECTION("the disk is full") {
    // A 1 MiB tmpfs filled up (before issue 21 a .tmp link to /dev/full did
    // this; links are no longer followed).
    const std::string disk = dir / "disk";
    REQUIRE(::mkdir(disk.c_str(), 0700) == 0);
    if (::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=1048576") != 0)
      ZF_SKIP("cannot mount a small tmpfs here (needs root)");
    struct Unmount {
      std::string dir;
      ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
    } unmount{disk};
    {
      std::ofstream fill(disk + "/fill", std::ios::binary);
      const std::string block(4096, 'x');
      for (int i = 0; i < 300 && fill; ++i) fill << block << std::flush;
    }
    ShardWriter writer(disk, "s", meta);
    for (int g = 0; g < 50; ++g) writer.Add(MakeGame(rng, static_cast<uint64_t>(g), 9, meta));
    CHECK_THROWS_AS(writer.Flush(2, {}), NoSpaceError);
    CHECK_FALSE(Exists(disk + "/s-000002.h5.tmp"));
    CHECK_FALSE(Exists(disk + "/s-000002.h5"));
    CHECK(writer.PendingGames() == 50);
    ::unlink((disk + "/fill").c_str());
    const std::string path = writer.Flush(2, {});  // the disk has space again
    CHECK(ShardReader(path).Games() == 50);
  }
}

int RunCommand(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_CASE("a shard without the full_search and resignation columns reads as all full, none resigned",
          "[io]") {
  // Shards written before these columns existed (schema 1 as first shipped).
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(3);
  const ShardMeta meta = TinyMeta();
  ShardWriter writer(dir.path(), "old", meta);
  for (uint64_t g = 0; g < 3; ++g) writer.Add(MakeGame(rng, g, 4, meta));
  mcts::GameRecord no_flags = MakeGame(rng, 3, 2, meta);
  no_flags.full_search.clear();  // a record without the column: written as all full
  writer.Add(no_flags);
  const std::string path = writer.Flush(0, {});
  CHECK(ShardReader(path).ReadAllPositions().full_search[12] == 1);
  // h5py deletes the new columns, leaving a shard as older writers wrote it.
  if (RunCommand("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0)
    ZF_SKIP("/usr/bin/python3 with h5py not found");
  REQUIRE(RunCommand("/usr/bin/python3 -c \"import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); "
                     "[f.__delitem__(n) for n in ('positions/full_search', 'games/resigned', "
                     "'games/would_resign')]\" " +
                     path) == 0);
  ShardReader reader(path);
  const PositionRows rows = reader.ReadAllPositions();
  CHECK(rows.full_search == std::vector<uint8_t>(reader.Positions(), 1));
  const PositionRows some = reader.ReadPositions(2, 5);
  CHECK(some.full_search == std::vector<uint8_t>(5, 1));
  for (const ShardGame& g : reader.ReadGames()) {
    CHECK(g.resigned == -1);
    CHECK(g.would_resign == -1);
  }
}

TEST_CASE("tools/zf_shards.py checks a shard written here", "[io]") {
  if (RunCommand("/usr/bin/python3 -c 'import h5py, numpy' >/dev/null 2>&1") != 0)
    ZF_SKIP("/usr/bin/python3 with h5py and numpy not found");
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(5);
  const ShardMeta meta = TinyMeta();
  // Small chunks: h5py must decode chunks compressed by our threads.
  ShardWriter writer(dir.path(), "py", meta, Compression{1, true, 512, 4, 2});
  for (uint64_t g = 0; g < 5; ++g) writer.Add(MakeGame(rng, g, 5, meta));
  const std::string path = writer.Flush(0, {5});
  const std::string tool = "/usr/bin/python3 " + testing::SourceDir() + "/tools/zf_shards.py ";
  CHECK(RunCommand(tool + path + " --check >/dev/null") == 0);
  { H5File other = CreateFile(dir / "model-000001.h5"); }  // not a shard: skipped
  CHECK(RunCommand(tool + "--summary " + dir.path() + " >/dev/null") == 0);

  // The writer stores what it is given; the check catches a policy row that
  // does not sum to 1 and a z outside {-1, 0, 1}.
  mcts::GameRecord bad = MakeGame(rng, 9, 5, meta);
  bad.policy[3] += 0.5f;
  bad.z[1] = 0.5f;
  writer.Add(bad);
  const std::string broken = writer.Flush(1, {6});
  CHECK(RunCommand(tool + broken + " --check >/dev/null 2>&1") == 1);
}

}  // namespace
}  // namespace zerofarm::io

namespace zerofarm::io {
namespace {

// Issue 24 point 7: every dataset of a real shard describes itself, from the
// one table (ShardDatasetDocs), and docs/schema.md has the same text.
// The paths of every dataset under group `loc` ("/games/seed"), depth first.
void CollectDatasets(hid_t loc, const std::string& prefix, std::vector<std::string>* out) {
  for (const std::string& name : ListLinks(loc)) {
    if (IsDataset(loc, name))
      out->push_back(prefix + "/" + name);
    else
      CollectDatasets(OpenGroup(loc, name).id(), prefix + "/" + name, out);
  }
}

TEST_CASE("every dataset of a shard has the description and units of the one table that docs/schema.md shows",
          "[io][schema]") {
  ScratchDir dir("zf-io-schema");
  std::mt19937_64 rng(7);
  const ShardMeta meta = TinyMeta();
  ShardWriter writer(dir.path(), "selfplay", meta, Compression{});
  writer.Add(MakeGame(rng, 1, 4, meta));
  const std::string path = writer.Flush(0, {1});
  const H5File file = OpenFile(path);
  std::vector<std::string> datasets;
  CollectDatasets(file.id(), "", &datasets);
  REQUIRE(datasets.size() ==
          ShardDatasetDocs().size());  // no dataset without a row, no row without a dataset
  std::ifstream in(testing::SourceDir() + "/docs/schema.md");
  const std::string schema((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!schema.empty());
  for (const std::string& name : datasets) {
    INFO(name);
    const auto doc = std::find_if(ShardDatasetDocs().begin(), ShardDatasetDocs().end(),
                                  [&](const ShardDatasetDoc& d) { return name == d.path; });
    REQUIRE(doc != ShardDatasetDocs().end());
    const H5Dataset ds = OpenDataset(file.id(), name);
    REQUIRE(HasAttr(ds.id(), "description"));
    CHECK(ReadStringAttr(ds.id(), "description") == doc->description);
    CHECK(std::string(doc->description).find('|') == std::string::npos);  // a markdown table cell as it is
    CHECK(HasAttr(ds.id(), "units") == (*doc->units != 0));
    if (*doc->units) CHECK(ReadStringAttr(ds.id(), "units") == doc->units);
    // docs/schema.md: a row "| `leaf` | dtype | shape | units | description |".
    const std::string leaf = name.substr(name.rfind('/') + 1);
    const std::string tail =
        std::string(" | ") + (*doc->units ? doc->units : "-") + " | " + doc->description + " |\n";
    const std::string head = "\n| `" + leaf + "` | ";
    bool documented = false;
    for (size_t at = schema.find(head); at != std::string::npos && !documented;
         at = schema.find(head, at + 1)) {
      const size_t end = schema.find('\n', at + 1);
      const std::string row = schema.substr(at, end - at + 1);
      documented = row.size() >= tail.size() && row.compare(row.size() - tail.size(), tail.size(), tail) == 0;
    }
    CHECK(documented);
  }
}

// Fuzzing found it (tests/fuzz/shard_fuzz.cpp, docs/results/fuzz-2026-12-04): a
// shard whose global heap (where its string attributes live) holds a
// free-space object of size 0 made HDF5 1.10.8 loop forever in H5Aread. The
// reader now refuses it in one line, at once. Without the check this test
// hangs until CTest's timeout (mutation-checked: 60 s and still reading).
TEST_CASE("a shard whose HDF5 global heap is damaged is refused, not read forever", "[io]") {
  ScratchDir dir("zf-io");
  std::mt19937_64 rng(3);
  const ShardMeta meta = TinyMeta();
  ShardWriter writer(dir.path(), "selfplay", meta);
  writer.Add(MakeGame(rng, 1, 3, meta));
  const std::string path = writer.Flush(0, {1});
  REQUIRE_NOTHROW(ShardReader(path).ReadGames());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto le = [&](size_t at, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[at + i]);
    return v;
  };
  // Walk the first collection ("GCOL", version 1: 16-byte header, objects of a
  // 16-byte header and 8-byte-aligned data) to its free-space object (index 0).
  const size_t gcol = bytes.find("GCOL");
  REQUIRE(gcol != std::string::npos);
  REQUIRE(bytes[gcol + 4] == 1);
  const uint64_t size = le(gcol + 8, 8);
  size_t q = 16;
  while (q + 16 <= size && le(gcol + q, 2) != 0) q += 16 + ((le(gcol + q + 8, 8) + 7) & ~uint64_t{7});
  REQUIRE(q + 16 <= size);                                  // a free-space object: the collection is not full
  for (int i = 0; i < 8; ++i) bytes[gcol + q + 8 + i] = 0;  // its size: 0
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  try {
    ShardReader r(path);
    r.ReadGames();
    FAIL("the damaged shard was read");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("damaged HDF5 global heap at byte " + std::to_string(gcol)));
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

// Fuzzing found it (tools/fuzz.sh shard, docs/results/fuzz-2026-12-04): a
// 62 kB shard whose /worker_commit declares 2^57 + 1 elements made the reader
// allocate them (std::bad_alloc, a crash under ASan). ReadDataset now checks
// a dataset's declared size against its stored bytes first. The file is also
// a seed of the shard fuzz target, so its smoke replays it under ASan.
// Mutation-checked: without CheckDeclaredSize this throws std::bad_alloc.
TEST_CASE("a shard that declares more elements than it stores is refused before allocating", "[io]") {
  const std::string path = testing::SourceDir() + "/tests/fuzz/corpus/shard/declares-2e57-rows.h5";
  try {
    ShardReader r(path);
    r.ReadGames();
    FAIL("the crafted shard was read");
  } catch (const Error& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("/worker_commit: declares 144115188075855873 elements but stores 8 bytes"));
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
}

}  // namespace
}  // namespace zerofarm::io
