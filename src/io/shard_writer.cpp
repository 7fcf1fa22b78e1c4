// ShardWriter: buffers GameRecords column by column and writes them as one
// HDF5 shard per Flush (layout: docs/schema.md).
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>

#include "fs_internal.h"
#include "zerofarm/core_version.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard.h"

namespace zerofarm::io {

namespace {

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string NowIso8601Utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <typename T>
void Append(std::vector<T>* out, const std::vector<T>& in) {
  out->insert(out->end(), in.begin(), in.end());
}

// Metadata datasets (a few values each) are stored plainly.
const Compression kPlain{0, false};

// Writes the `description` (and `units`) attributes of every dataset, from ShardDatasetDocs().
void DescribeDatasets(hid_t root) {
  for (const ShardDatasetDoc& d : ShardDatasetDocs()) {
    const H5Dataset ds = OpenDataset(root, d.path);
    WriteStringAttr(ds.id(), "description", d.description);
    if (*d.units) WriteStringAttr(ds.id(), "units", d.units);
  }
}

// maps as an int32 [symmetries, length] dataset (each map has the same length).
void WriteMaps(hid_t loc, const std::string& name, const std::vector<std::vector<int32_t>>& maps) {
  std::vector<int32_t> flat;
  for (const auto& m : maps) flat.insert(flat.end(), m.begin(), m.end());
  WriteDataset(loc, name, flat.data(), {maps.size(), maps.empty() ? 0 : maps[0].size()}, kPlain);
}

// Throws ConfigError unless every map of `maps` is a permutation of 0..n-1.
void CheckPermutations(const std::vector<std::vector<int32_t>>& maps, int n, const char* what) {
  for (size_t s = 0; s < maps.size(); ++s) {
    std::vector<int32_t> sorted = maps[s];
    std::sort(sorted.begin(), sorted.end());
    bool ok = static_cast<int>(sorted.size()) == n;
    for (int i = 0; ok && i < n; ++i) ok = sorted[static_cast<size_t>(i)] == i;
    if (!ok)
      throw ConfigError("shard meta's " + std::string(what) + " map of symmetry " + std::to_string(s) +
                        " is not a permutation of its " + std::to_string(n) + " " + what + "s");
  }
}

}  // namespace

const std::vector<ShardDatasetDoc>& ShardDatasetDocs() {
  static const std::vector<ShardDatasetDoc> docs = {
      {"/worker_commit",
       "For each worker w, the position in w's finished-game queue up to which games are stored in this "
       "shard or "
       "an earlier one of the run; a writer restarted after a crash skips those games.",
       "games"},
      {"/positions/features",
       "Network input planes, from the point of view of the player to move; row 0 of a plane is the top of "
       "the "
       "board as printed.",
       ""},
      {"/positions/policy",
       "Training target: the MCTS visit distribution at the root (PUCT), or Gumbel's completed-Q improved "
       "policy "
       "softmax(logits + sigma(completedQ)) with --search gumbel (docs/search.md); each row sums to 1 (0 on "
       "illegal actions).",
       "probability"},
      {"/positions/z",
       "Training target: the final result from the point of view of the player to move: +1 win, 0 draw, -1 "
       "loss.",
       ""},
      {"/positions/root_value",
       "The search's value of the root, from the same point of view as z, in [-1, 1].", ""},
      {"/positions/ply", "Plies played before this position (0 = initial position).", "plies"},
      {"/positions/game_id", "The game it belongs to (a value of /games/game_id).", ""},
      {"/positions/model_version", "Version of the network that searched it (0 = random initial network).",
       ""},
      {"/positions/full_search",
       "1 = searched with the full budget; 0 = a playout-capped fast search (--playout-cap-fraction). A "
       "trainer "
       "uses only rows with 1 for the policy loss; every row is fine for the value loss. A shard without it "
       "(schema 1) is read as all 1.",
       ""},
      {"/games/game_id",
       "Unique within a run directory, across hosts: host index << 48, epoch << 36, worker << 26 and the "
       "worker's sequence number, bitwise OR-ed (docs/schema.md, Game ids).",
       ""},
      {"/games/result", "Winner: 0 (first player), 1 (second player), -1 draw.", ""},
      {"/games/length", "Plies played (= number of moves).", "plies"},
      {"/games/worker", "Index of the worker process that played it.", ""},
      {"/games/seed", "Seed of the game's randomness (noise, temperature sampling).", ""},
      {"/games/first_position", "Row in /positions of the game's first recorded position.",
       "rows of /positions"},
      {"/games/position_count",
       "Rows it has in /positions: [first_position, first_position + position_count). May be 0, or less than "
       "length when not every position is recorded (a random opening's plies have none: see "
       "/positions/ply); one more for a resigned game (see resigned).",
       "rows of /positions"},
      {"/games/moves",
       "Every game's moves, concatenated: 0-based action indices, as in the policy vector (zerofarm inspect "
       "shows "
       "them in the game's notation).",
       "action index"},
      {"/games/moves_offset",
       "CSR offsets: game i played moves[moves_offset[i]:moves_offset[i+1]]; moves_offset[0] = 0, "
       "moves_offset[g] = len(moves).",
       "elements of /games/moves"},
      {"/games/resigned",
       "The player (0 or 1) who resigned, ending the game (result = the other player; the game is not "
       "terminal "
       "and the resigning position is recorded); -1 = played to the end. Absent "
       "in "
       "older shards: read as all -1.",
       ""},
      {"/games/would_resign",
       "In a game chosen to play on (--resign-playthrough): the first player whose resignation condition "
       "held, "
       "-1 if none. result != 1 - would_resign is a false resignation. Absent in older shards: read as all "
       "-1.",
       ""},
      {"/symmetry/cell_map",
       "Row s: where symmetry s of the game moves each board cell (row * width + col), as Game::CellMap(s); "
       "row 0 is the identity.",
       "cell index"},
      {"/symmetry/action_map", "Row s: where symmetry s moves each action, as Game::ActionMap(s).",
       "action index"},
  };
  return docs;
}

ShardMeta ShardMetaForGame(const game::Game& game) {
  ShardMeta meta;
  const game::BoardShape shape = game.Shape();
  meta.game = game.Name();
  meta.planes = shape.planes;
  meta.height = shape.height;
  meta.width = shape.width;
  meta.actions = game.ActionCount();
  meta.plane_names = game.PlaneNames();
  for (int s = 0; s < game.SymmetryCount(); ++s) {
    const std::vector<int> cells = game.CellMap(s), actions = game.ActionMap(s);
    meta.cell_maps.emplace_back(cells.begin(), cells.end());
    meta.action_maps.emplace_back(actions.begin(), actions.end());
  }
  return meta;
}

mcts::GameRecord OnePositionRecord(const ShardMeta& meta, uint64_t game_id) {
  mcts::GameRecord r;
  r.game_id = game_id;
  r.winner = -1;
  r.moves = {4};
  r.features.assign(static_cast<size_t>(meta.FeatureBytes()), 0);
  r.policy.assign(static_cast<size_t>(meta.actions), 1.0f / static_cast<float>(meta.actions));
  r.z = {0.0f};
  r.root_value = {0.0f};
  r.ply = {0};
  r.model_version = {0};
  r.full_search = {1};
  return r;
}

ShardWriter::ShardWriter(std::string dir, std::string prefix, ShardMeta meta, Compression compression)
    : dir_(std::move(dir)), prefix_(std::move(prefix)), meta_(std::move(meta)), compression_(compression) {
  if (meta_.game.empty() || meta_.planes <= 0 || meta_.height <= 0 || meta_.width <= 0 || meta_.actions <= 0)
    throw ConfigError("shard meta needs a game and a positive shape, got '" + meta_.game + "' " +
                      std::to_string(meta_.planes) + "x" + std::to_string(meta_.height) + "x" +
                      std::to_string(meta_.width) + " with " + std::to_string(meta_.actions) + " actions");
  if (compression_.deflate_level < 0 || compression_.deflate_level > 9)
    throw ConfigError("deflate level must be in 0..9, got " + std::to_string(compression_.deflate_level));
  if (meta_.plane_names.empty()) {
    for (int p = 0; p < meta_.planes; ++p) meta_.plane_names.push_back("plane" + std::to_string(p));
  }
  if (static_cast<int>(meta_.plane_names.size()) != meta_.planes)
    throw ConfigError("shard meta has " + std::to_string(meta_.plane_names.size()) + " plane names for " +
                      std::to_string(meta_.planes) + " planes");
  if (meta_.cell_maps.empty() && meta_.action_maps.empty()) {  // the identity alone
    meta_.cell_maps.emplace_back(meta_.height * meta_.width);
    meta_.action_maps.emplace_back(meta_.actions);
    std::iota(meta_.cell_maps[0].begin(), meta_.cell_maps[0].end(), 0);
    std::iota(meta_.action_maps[0].begin(), meta_.action_maps[0].end(), 0);
  }
  if (meta_.cell_maps.size() != meta_.action_maps.size())
    throw ConfigError("shard meta has " + std::to_string(meta_.cell_maps.size()) + " cell maps and " +
                      std::to_string(meta_.action_maps.size()) + " action maps: one of each per symmetry");
  CheckPermutations(meta_.cell_maps, meta_.height * meta_.width, "cell");
  CheckPermutations(meta_.action_maps, meta_.actions, "action");
  if (prefix_.empty()) throw ConfigError("shard file prefix is empty");
  meta_.schema_version = kShardSchemaVersion;
  meta_.zerofarm_version = ZF_VERSION_STRING;
  meta_.host = HostName();
}

namespace {

// Problem()'s checks of the position values: "" or what is wrong.
std::string ValueProblem(const mcts::GameRecord& r, int actions) {
  const size_t n = r.Positions();
  for (size_t i = 0; i < n; ++i) {
    if (!(std::fabs(r.z[i]) <= 1.0f))
      return "z " + std::to_string(r.z[i]) + " at position " + std::to_string(i);
    if (!(std::fabs(r.root_value[i]) <= 1.001f))
      return "root value " + std::to_string(r.root_value[i]) + " at position " + std::to_string(i);
    if (r.ply[i] < 0 || static_cast<size_t>(r.ply[i]) > r.moves.size() || (i > 0 && r.ply[i] <= r.ply[i - 1]))
      return "ply " + std::to_string(r.ply[i]) + " at position " + std::to_string(i) + " of a game of " +
             std::to_string(r.moves.size()) + " moves";
  }
  for (size_t i = 0; i < r.policy.size(); ++i)
    if (!(r.policy[i] >= 0.0f) || !std::isfinite(r.policy[i]))
      return "policy value " + std::to_string(r.policy[i]) + " at position " +
             std::to_string(i / static_cast<size_t>(actions));
  for (size_t i = 0; i < r.moves.size(); ++i)
    if (r.moves[i] < 0 || r.moves[i] >= actions)
      return "move " + std::to_string(i + 1) + " is action " + std::to_string(r.moves[i]) + ", not in [0, " +
             std::to_string(actions) + ")";
  return "";
}

}  // namespace

std::string ShardWriter::Problem(const mcts::GameRecord& r) const {
  const size_t n = r.Positions();
  const size_t feature_bytes = static_cast<size_t>(meta_.FeatureBytes());
  if (r.features.size() != n * feature_bytes)
    return std::to_string(r.features.size()) + " feature bytes for " + std::to_string(n) + " positions of " +
           std::to_string(feature_bytes);
  if (r.policy.size() != n * static_cast<size_t>(meta_.actions))
    return std::to_string(r.policy.size()) + " policy values for " + std::to_string(n) + " positions of " +
           std::to_string(meta_.actions) + " actions";
  if (r.z.size() != n || r.root_value.size() != n || r.model_version.size() != n)
    return "position columns have different lengths (ply " + std::to_string(n) + ", z " +
           std::to_string(r.z.size()) + ", root_value " + std::to_string(r.root_value.size()) +
           ", model_version " + std::to_string(r.model_version.size()) + ")";
  if (r.winner < -1 || r.winner > 1) return "winner " + std::to_string(r.winner) + " (not -1, 0 or 1)";
  if (!r.full_search.empty() && r.full_search.size() != n)
    return std::to_string(r.full_search.size()) + " full_search flags for " + std::to_string(n) +
           " positions";
  if (r.resigned < -1 || r.resigned > 1 || r.would_resign < -1 || r.would_resign > 1)
    return "resigned " + std::to_string(r.resigned) + ", would_resign " + std::to_string(r.would_resign);
  if (r.moves.size() > static_cast<size_t>(INT32_MAX) || n > static_cast<size_t>(INT32_MAX))
    return "too long";
  return ValueProblem(r, meta_.actions);
}

void ShardWriter::Add(const mcts::GameRecord& r) {
  const std::string problem = Problem(r);
  if (!problem.empty())
    throw Error("game " + std::to_string(r.game_id) + " from worker " + std::to_string(r.worker) + ": " +
                problem);
  const size_t n = r.Positions();

  first_position_.push_back(static_cast<int64_t>(ply_.size()));
  position_count_.push_back(static_cast<int32_t>(n));
  Append(&features_, r.features);
  Append(&policy_, r.policy);
  Append(&z_, r.z);
  Append(&root_value_, r.root_value);
  Append(&ply_, r.ply);
  position_game_id_.insert(position_game_id_.end(), n, r.game_id);
  Append(&model_version_, r.model_version);
  if (r.full_search.empty())
    full_search_.insert(full_search_.end(), n, 1);
  else
    Append(&full_search_, r.full_search);

  game_id_.push_back(r.game_id);
  result_.push_back(static_cast<int8_t>(r.winner));
  length_.push_back(static_cast<int32_t>(r.moves.size()));
  worker_.push_back(r.worker);
  seed_.push_back(r.seed);
  resigned_.push_back(static_cast<int8_t>(r.resigned));
  would_resign_.push_back(static_cast<int8_t>(r.would_resign));
  Append(&moves_, r.moves);
  moves_offset_.push_back(static_cast<int64_t>(moves_.size()));
}

std::string ShardWriter::ShardPath(uint64_t shard_index) const {
  char index[32];
  std::snprintf(index, sizeof(index), "%06llu", static_cast<unsigned long long>(shard_index));
  return dir_ + "/" + prefix_ + "-" + index + ".h5";
}

std::string ShardWriter::Flush(uint64_t shard_index, const std::vector<uint64_t>& worker_commit) {
  if (ply_.empty()) return "";
  std::string path = ShardPath(shard_index);
  if (::access(path.c_str(), F_OK) == 0) throw Error(path + " already exists; refusing to overwrite a shard");
  // The file is built in memory and written with plain syscalls, so a disk
  // error is an errno we can report (and HDF5 never holds a half-closed file).
  const std::vector<uint8_t> image = BuildImage(path + ".tmp", shard_index, worker_commit);
  internal::WriteFileAtomically(path, image.data(), image.size());
  Clear();
  return path;
}

std::vector<uint8_t> ShardWriter::BuildImage(const std::string& name, uint64_t shard_index,
                                             const std::vector<uint64_t>& worker_commit) const {
  const uint64_t n = ply_.size();
  const uint64_t g = game_id_.size();
  const auto [vmin, vmax] = std::minmax_element(model_version_.begin(), model_version_.end());

  H5File file = CreateMemoryFile(name);
  {
    const hid_t root = file.id();
    WriteScalarAttr<int32_t>(root, "schema_version", kShardSchemaVersion);
    WriteStringAttr(root, "game", meta_.game);
    WriteScalarAttr<int32_t>(root, "planes", meta_.planes);
    WriteScalarAttr<int32_t>(root, "height", meta_.height);
    WriteScalarAttr<int32_t>(root, "width", meta_.width);
    WriteScalarAttr<int32_t>(root, "actions", meta_.actions);
    WriteStringArrayAttr(root, "plane_names", meta_.plane_names);
    WriteStringAttr(root, "search", meta_.search);
    WriteStringAttr(root, "config", meta_.config);
    WriteStringAttr(root, "run_id", meta_.run_id);
    WriteStringAttr(root, "zerofarm_version", meta_.zerofarm_version);
    WriteStringAttr(root, "host", meta_.host);
    if (!meta_.host_id.empty()) WriteStringAttr(root, "host_id", meta_.host_id);
    WriteScalarAttr<uint32_t>(root, "epoch", meta_.epoch);
    WriteStringAttr(root, "created", NowIso8601Utc());
    WriteScalarAttr<uint32_t>(root, "model_version_min", *vmin);
    WriteScalarAttr<uint32_t>(root, "model_version_max", *vmax);
    WriteScalarAttr<uint64_t>(root, "shard_index", shard_index);
    WriteScalarAttr<uint64_t>(root, "positions", n);
    WriteScalarAttr<uint64_t>(root, "games", g);
    WriteDataset(root, "worker_commit", worker_commit, kPlain);

    H5Group pos = CreateGroup(root, "positions");
    const auto p = static_cast<uint64_t>(meta_.planes), h = static_cast<uint64_t>(meta_.height),
               w = static_cast<uint64_t>(meta_.width), a = static_cast<uint64_t>(meta_.actions);
    WriteDataset(pos.id(), "features", features_.data(), {n, p, h, w}, compression_);
    WriteDataset(pos.id(), "policy", policy_.data(), {n, a}, compression_);
    WriteDataset(pos.id(), "z", z_, compression_);
    WriteDataset(pos.id(), "root_value", root_value_, compression_);
    WriteDataset(pos.id(), "ply", ply_, compression_);
    WriteDataset(pos.id(), "game_id", position_game_id_, compression_);
    WriteDataset(pos.id(), "model_version", model_version_, compression_);
    WriteDataset(pos.id(), "full_search", full_search_, compression_);

    H5Group games = CreateGroup(root, "games");
    WriteDataset(games.id(), "game_id", game_id_, compression_);
    WriteDataset(games.id(), "result", result_, compression_);
    WriteDataset(games.id(), "length", length_, compression_);
    WriteDataset(games.id(), "worker", worker_, compression_);
    WriteDataset(games.id(), "seed", seed_, compression_);
    WriteDataset(games.id(), "first_position", first_position_, compression_);
    WriteDataset(games.id(), "position_count", position_count_, compression_);
    WriteDataset(games.id(), "resigned", resigned_, compression_);
    WriteDataset(games.id(), "would_resign", would_resign_, compression_);
    WriteDataset(games.id(), "moves", moves_, compression_);
    WriteDataset(games.id(), "moves_offset", moves_offset_, compression_);

    H5Group sym = CreateGroup(root, "symmetry");
    WriteMaps(sym.id(), "cell_map", meta_.cell_maps);
    WriteMaps(sym.id(), "action_map", meta_.action_maps);
    DescribeDatasets(root);
  }
  return FileImage(file.id());
}

void ShardWriter::Clear() {
  features_.clear();
  policy_.clear();
  z_.clear();
  root_value_.clear();
  ply_.clear();
  position_game_id_.clear();
  model_version_.clear();
  full_search_.clear();
  game_id_.clear();
  result_.clear();
  length_.clear();
  worker_.clear();
  seed_.clear();
  first_position_.clear();
  position_count_.clear();
  resigned_.clear();
  would_resign_.clear();
  moves_.clear();
  moves_offset_.assign(1, 0);
}

}  // namespace zerofarm::io
