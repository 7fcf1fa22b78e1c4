#pragma once
// HDF5 shards of self-play data: the writer process's output and a trainer's
// input. The layout (every attribute and dataset) is documented in
// docs/schema.md; tools/zf_shards.py reads it from Python.
//
// A shard is written as NAME.h5.tmp, flushed, closed, fsynced, renamed to
// NAME.h5, and the directory is fsynced: a reader that globs *.h5 never sees a
// partial file, and a shard that was renamed survives a crash or power loss.
//
// ShardWriter implementation: src/io/shard_writer.cpp.
// ShardReader, ListShards, NextShardIndex: src/io/shard_reader.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zerofarm/io/h5.h"
#include "zerofarm/mcts/game_record.h"

namespace zerofarm::game {
class Game;
}

namespace zerofarm::io {

// The schema this code writes and the newest it reads. 2 added
// /positions/full_search and /games/resigned, would_resign: a version-1
// reader refuses these files rather than train on playout-capped searches'
// policies unawares; this reader reads a version-1 file's missing columns as
// all full searches and no resignations.
inline constexpr int kShardSchemaVersion = 2;

// The attributes on a shard's root group.
struct ShardMeta {
  // ---- set by the caller of ShardWriter (describe the run) ---------------
  std::string game;  // Game::Name()
  int planes = 0;    // feature planes per position
  int height = 0;
  int width = 0;
  int actions = 0;                       // policy length
  std::vector<std::string> plane_names;  // `planes` names (empty: "plane0".."planeN-1")
  std::string search;                    // search settings, "simulations=100 c_puct=1.5 ..."
  std::string config;                    // the effective run config, as text
  std::string run_id;                    // the run directory's id (RUN/run_id), shared by its hosts
  std::string host_id;                   // the farm host that wrote it (RUN/shards/<host_id>); "" = none
  uint32_t epoch = 0;                    // that host's supervisor start (0, 1, ...) in this run
  // The game's symmetries, written as /symmetry/cell_map and action_map so that
  // readers need no per-game code: cell_maps[s][c] = Game::CellMap(s)[c],
  // action_maps[s][a] = Game::ActionMap(s)[a]. Both empty: the identity alone.
  // ShardReader leaves them empty (C++ readers ask the game).
  std::vector<std::vector<int32_t>> cell_maps, action_maps;

  // ---- set by ShardWriter::Flush (values given to the writer are ignored) --
  int schema_version = kShardSchemaVersion;
  std::string zerofarm_version;    // ZF_VERSION_STRING
  std::string host;                // gethostname()
  std::string created;             // ISO 8601 UTC, "2024-05-01T12:34:56Z"
  uint32_t model_version_min = 0;  // over this shard's positions
  uint32_t model_version_max = 0;
  uint64_t shard_index = 0;
  uint64_t positions = 0;  // rows of /positions/*
  uint64_t games = 0;      // rows of /games/*
  // worker_commit[w]: worker w's finished-game queue sequence that this shard
  // and the shards before it have committed through (dataset /worker_commit).
  std::vector<uint64_t> worker_commit;

  int FeatureBytes() const { return planes * height * width; }
};

// Fills game, shape, actions, plane names and symmetry maps from a game.
ShardMeta ShardMetaForGame(const game::Game& game);

// A synthetic one-position game of `meta`'s shape: move 4, a draw, zero
// features and values, a uniform policy (bench --manifest-load, tests).
mcts::GameRecord OnePositionRecord(const ShardMeta& meta, uint64_t game_id);

// What each dataset of a shard holds: ONE table, written into every shard as
// each dataset's `description` attribute (and `units`, where there are any),
// and the text of docs/schema.md's tables (tests/unit/io/shard_test.cpp checks
// every dataset of a real shard against both). Plain text: no '|'.
struct ShardDatasetDoc {
  const char* path;  // "/positions/features"
  const char* description;
  const char* units;  // "" where the values have none
};
const std::vector<ShardDatasetDoc>& ShardDatasetDocs();

// One game as stored in /games (and its slice of /moves).
struct ShardGame {
  uint64_t game_id = 0;
  int32_t result = -1;  // winner: 0 or 1, -1 for a draw
  int32_t length = 0;   // plies played (= moves.size())
  int32_t worker = 0;
  uint64_t seed = 0;
  int64_t first_position = 0;  // its first row in /positions
  int32_t position_count = 0;  // its rows: [first_position, first_position + position_count)
  int32_t resigned = -1;       // the player who resigned; -1 = played out (or an older shard)
  int32_t would_resign = -1;   // playthrough game: first player that would have resigned, -1 none
  std::vector<int16_t> moves;
};

// Rows [first, first + count) of /positions, columnar, row-major.
struct PositionRows {
  uint64_t first = 0;
  uint64_t count = 0;
  std::vector<uint8_t> features;        // count x planes x height x width
  std::vector<float> policy;            // count x actions
  std::vector<float> z;                 // count
  std::vector<float> root_value;        // count
  std::vector<int16_t> ply;             // count
  std::vector<uint64_t> game_id;        // count
  std::vector<uint32_t> model_version;  // count
  std::vector<uint8_t> full_search;     // count: 1 = full search; all 1 for shards without the column
};

// Buffers finished games in memory and writes them as one shard per Flush.
// Not thread-safe: one writer thread owns it.
class ShardWriter {
 public:
  // Shards go to `dir` (which must exist) as PREFIX-NNNNNN.h5. Throws
  // ConfigError for a meta without game or a positive shape, symmetry maps
  // that are not permutations of its cells and actions, or a bad compression level. Default compression:
  // deflate 1 with shuffle.
  ShardWriter(std::string dir, std::string prefix, ShardMeta meta, Compression compression = {});

  // What is wrong with `record`, in a few words, or "" when a shard can hold
  // it: its columns agree with each other and with the meta's shape, its
  // winner and resignation are -1, 0 or 1, its moves are actions in range, its
  // plies increase within [0, moves], its z and root values are finite within
  // [-1, 1] and its policy finite and not negative. Cheap: no replay.
  std::string Problem(const mcts::GameRecord& record) const;
  // Copies one game into the buffer. Throws Error (naming the game id and
  // worker) with Problem(record) unless that is ""; the buffer is then unchanged.
  void Add(const mcts::GameRecord& record);
  uint64_t PendingPositions() const { return ply_.size(); }
  uint64_t PendingGames() const { return game_id_.size(); }

  // Writes the buffered games as shard `shard_index`, storing worker_commit
  // (see ShardMeta), and returns the final path. Clears the buffer on
  // success. Returns "" and writes nothing when no position is buffered.
  // On failure throws Error, or NoSpaceError on ENOSPC/EDQUOT, with one line
  // naming the file; the .tmp file is removed, the final name is never
  // created, and the buffer is kept (a later Flush may retry).
  std::string Flush(uint64_t shard_index, const std::vector<uint64_t>& worker_commit);

  // "DIR/PREFIX-000042.h5".
  std::string ShardPath(uint64_t shard_index) const;
  const ShardMeta& meta() const { return meta_; }

 private:
  // The shard as the bytes of an HDF5 file (`name` is for error messages).
  std::vector<uint8_t> BuildImage(const std::string& name, uint64_t shard_index,
                                  const std::vector<uint64_t>& worker_commit) const;
  void Clear();

  std::string dir_;
  std::string prefix_;
  ShardMeta meta_;
  Compression compression_;

  // /positions columns.
  std::vector<uint8_t> features_;
  std::vector<float> policy_;
  std::vector<float> z_;
  std::vector<float> root_value_;
  std::vector<int16_t> ply_;
  std::vector<uint64_t> position_game_id_;
  std::vector<uint32_t> model_version_;
  std::vector<uint8_t> full_search_;
  // /games columns.
  std::vector<uint64_t> game_id_;
  std::vector<int8_t> result_;
  std::vector<int32_t> length_;
  std::vector<int32_t> worker_;
  std::vector<uint64_t> seed_;
  std::vector<int64_t> first_position_;
  std::vector<int32_t> position_count_;
  std::vector<int8_t> resigned_;
  std::vector<int8_t> would_resign_;
  std::vector<int16_t> moves_;
  std::vector<int64_t> moves_offset_{0};
};

// Reads one shard. Opening checks the signature and the schema version and
// reads the meta; the data is read on request. Not thread-safe. It reads in
// this process: for shards from others, CheckH5Files (io/h5_check.h) first.
class ShardReader {
 public:
  // Throws a one-line Error: "FILE: No such file or directory",
  // "FILE is not a zerofarm shard (not an HDF5 file or truncated)",
  // "FILE is not a zerofarm shard (missing attribute schema_version)",
  // "FILE has shard schema version 2; this zerofarm reads up to 1", or one
  // naming a missing or misshapen dataset.
  explicit ShardReader(const std::string& path);

  const std::string& path() const { return path_; }
  const ShardMeta& meta() const { return meta_; }
  uint64_t Positions() const { return meta_.positions; }
  uint64_t Games() const { return meta_.games; }

  // All of /games with each game's moves. Throws Error when a game's rows
  // [first_position, first_position + position_count) do not lie within the
  // shard's Positions() (a damaged or hostile file), or its moves_offset
  // does not index /games/moves: callers may index rows by them unchecked.
  std::vector<ShardGame> ReadGames() const;
  // Rows [first, first + count) of /positions; throws if out of range.
  PositionRows ReadPositions(uint64_t first, uint64_t count) const;
  PositionRows ReadAllPositions() const { return ReadPositions(0, Positions()); }
  // Every game as the GameRecord it was written from (exact round trip).
  std::vector<mcts::GameRecord> ReadGameRecords() const;

 private:
  std::string path_;
  H5File file_;
  ShardMeta meta_;
};

// The shards (*.h5, not *.h5.tmp) directly in `dir`, sorted by name. Throws
// Error if `dir` cannot be read.
std::vector<std::string> ListShards(const std::string& dir);
// 1 + the largest N of the PREFIX-N.h5, .h5.tmp and .h5.refused* (io::SetAside) files in
// `dir`, or 0 if there are none (or no `dir`): the index a resumed writer uses next.
uint64_t NextShardIndex(const std::string& dir, const std::string& prefix);

}  // namespace zerofarm::io
