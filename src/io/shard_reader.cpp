// ShardReader, ListShards, NextShardIndex (layout: docs/schema.md).
#include <hdf5.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "fs_internal.h"
#include "zerofarm/io/shard.h"

namespace zerofarm::io {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads /GROUP/NAME as T and checks that it has `rows` rows.
template <typename T>
std::vector<T> ReadColumn(const std::string& path, hid_t group, const std::string& name, uint64_t rows) {
  std::vector<uint64_t> dims;
  std::vector<T> values = ReadDataset<T>(group, name, &dims);
  if (dims.empty() || dims[0] != rows)
    throw Error(path + ": " + ObjectNameOf(group) + "/" + name + " has " +
                std::to_string(dims.empty() ? 0 : dims[0]) + " rows, expected " + std::to_string(rows));
  return values;
}

}  // namespace

ShardReader::ShardReader(const std::string& path) : path_(path) {
  internal::RequireExists(path);
  const std::string not_shard = path + " is not a zerofarm shard";
  if (!IsHdf5File(path)) throw Error(not_shard + " (not an HDF5 file or truncated)");
  try {
    file_ = OpenFile(path);
  } catch (const Error& e) {
    throw Error(not_shard + " (not an HDF5 file or truncated: " + e.what() + ")");
  }
  const hid_t root = file_.id();
  if (!HasAttr(root, "schema_version")) throw Error(not_shard + " (missing attribute schema_version)");
  meta_.schema_version = ReadScalarAttr<int32_t>(root, "schema_version");
  if (meta_.schema_version < 1 || meta_.schema_version > kShardSchemaVersion)
    throw Error(path + " has shard schema version " + std::to_string(meta_.schema_version) +
                "; this zerofarm reads versions 1 to " + std::to_string(kShardSchemaVersion));
  for (const char* name : {"game", "planes", "height", "width", "actions", "positions", "games"}) {
    if (!HasAttr(root, name)) throw Error(not_shard + " (missing attribute " + name + ")");
  }
  auto str = [&](const char* name) { return HasAttr(root, name) ? ReadStringAttr(root, name) : ""; };
  meta_.game = ReadStringAttr(root, "game");
  meta_.planes = ReadScalarAttr<int32_t>(root, "planes");
  meta_.height = ReadScalarAttr<int32_t>(root, "height");
  meta_.width = ReadScalarAttr<int32_t>(root, "width");
  meta_.actions = ReadScalarAttr<int32_t>(root, "actions");
  if (HasAttr(root, "plane_names")) meta_.plane_names = ReadStringArrayAttr(root, "plane_names");
  meta_.search = str("search");
  meta_.config = str("config");
  meta_.run_id = str("run_id");
  meta_.zerofarm_version = str("zerofarm_version");
  meta_.host = str("host");
  meta_.host_id = str("host_id");
  if (HasAttr(root, "epoch")) meta_.epoch = ReadScalarAttr<uint32_t>(root, "epoch");
  meta_.created = str("created");
  if (HasAttr(root, "model_version_min"))
    meta_.model_version_min = ReadScalarAttr<uint32_t>(root, "model_version_min");
  if (HasAttr(root, "model_version_max"))
    meta_.model_version_max = ReadScalarAttr<uint32_t>(root, "model_version_max");
  if (HasAttr(root, "shard_index")) meta_.shard_index = ReadScalarAttr<uint64_t>(root, "shard_index");
  meta_.positions = ReadScalarAttr<uint64_t>(root, "positions");
  meta_.games = ReadScalarAttr<uint64_t>(root, "games");
  if (IsDataset(root, "worker_commit")) meta_.worker_commit = ReadDataset<uint64_t>(root, "worker_commit");

  for (const char* name :
       {"positions/features", "positions/policy", "positions/z", "positions/root_value", "positions/ply",
        "positions/game_id", "positions/model_version", "games/game_id", "games/result", "games/length",
        "games/worker", "games/seed", "games/first_position", "games/position_count", "games/moves",
        "games/moves_offset"}) {
    if (!IsDataset(root, name)) throw Error(path + ": missing dataset /" + std::string(name));
  }
  // Readers size their row buffers from these two (ReadRows): checked against what is stored.
  const std::vector<uint64_t> fdims = StoredDatasetDims(root, "positions/features");
  const std::vector<uint64_t> want = {meta_.positions, static_cast<uint64_t>(meta_.planes),
                                      static_cast<uint64_t>(meta_.height),
                                      static_cast<uint64_t>(meta_.width)};
  if (fdims != want)
    throw Error(path +
                ": /positions/features does not have shape [positions, planes, height, "
                "width] = [" +
                std::to_string(meta_.positions) + ", " + std::to_string(meta_.planes) + ", " +
                std::to_string(meta_.height) + ", " + std::to_string(meta_.width) + "]");
  const std::vector<uint64_t> pdims = StoredDatasetDims(root, "positions/policy");
  if (pdims != std::vector<uint64_t>{meta_.positions, static_cast<uint64_t>(meta_.actions)})
    throw Error(path + ": /positions/policy does not have shape [positions, actions] = [" +
                std::to_string(meta_.positions) + ", " + std::to_string(meta_.actions) + "]");
}

std::vector<ShardGame> ShardReader::ReadGames() const {
  H5Group group = OpenGroup(file_.id(), "games");
  const hid_t gid = group.id();
  const uint64_t g = meta_.games;
  const auto game_id = ReadColumn<uint64_t>(path_, gid, "game_id", g);
  const auto result = ReadColumn<int32_t>(path_, gid, "result", g);
  const auto length = ReadColumn<int32_t>(path_, gid, "length", g);
  const auto worker = ReadColumn<int32_t>(path_, gid, "worker", g);
  const auto seed = ReadColumn<uint64_t>(path_, gid, "seed", g);
  const auto first = ReadColumn<int64_t>(path_, gid, "first_position", g);
  const auto count = ReadColumn<int32_t>(path_, gid, "position_count", g);
  const auto offset = ReadColumn<int64_t>(path_, gid, "moves_offset", g + 1);
  // Added after schema 1 shipped: absent in older shards (nobody resigned).
  const auto resigned = IsDataset(gid, "resigned") ? ReadColumn<int32_t>(path_, gid, "resigned", g)
                                                   : std::vector<int32_t>(g, -1);
  const auto would_resign = IsDataset(gid, "would_resign")
                                ? ReadColumn<int32_t>(path_, gid, "would_resign", g)
                                : std::vector<int32_t>(g, -1);
  std::vector<uint64_t> mdims;
  const auto moves = ReadDataset<int16_t>(gid, "moves", &mdims);

  std::vector<ShardGame> games(g);
  for (uint64_t i = 0; i < g; ++i) {
    ShardGame& out = games[i];
    if (offset[i] < 0 || offset[i] > offset[i + 1] || static_cast<uint64_t>(offset[i + 1]) > moves.size())
      throw Error(path_ + ": /games/moves_offset is not a valid index into /games/moves at game " +
                  std::to_string(i));
    if (first[i] < 0 || count[i] < 0 ||
        static_cast<uint64_t>(first[i]) + static_cast<uint64_t>(count[i]) > meta_.positions)
      throw Error(path_ + ": game " + std::to_string(i) + " has positions out of range");
    out.game_id = game_id[i];
    out.result = result[i];
    out.length = length[i];
    out.worker = worker[i];
    out.seed = seed[i];
    out.first_position = first[i];
    out.position_count = count[i];
    out.resigned = resigned[i];
    out.would_resign = would_resign[i];
    out.moves.assign(moves.begin() + offset[i], moves.begin() + offset[i + 1]);
  }
  return games;
}

PositionRows ShardReader::ReadPositions(uint64_t first, uint64_t count) const {
  if (first > meta_.positions || count > meta_.positions - first)
    throw Error(path_ + ": positions [" + std::to_string(first) + ", " + std::to_string(first + count) +
                ") out of range (" + std::to_string(meta_.positions) + " positions)");
  H5Group group = OpenGroup(file_.id(), "positions");
  const hid_t gid = group.id();
  PositionRows rows;
  rows.first = first;
  rows.count = count;
  rows.features.resize(count * static_cast<uint64_t>(meta_.FeatureBytes()));
  rows.policy.resize(count * static_cast<uint64_t>(meta_.actions));
  rows.z.resize(count);
  rows.root_value.resize(count);
  rows.ply.resize(count);
  rows.game_id.resize(count);
  rows.model_version.resize(count);
  rows.full_search.assign(count, 1);  // older shards have no column: every search was full
  ReadRows(gid, "features", first, count, rows.features.data());
  ReadRows(gid, "policy", first, count, rows.policy.data());
  ReadRows(gid, "z", first, count, rows.z.data());
  ReadRows(gid, "root_value", first, count, rows.root_value.data());
  ReadRows(gid, "ply", first, count, rows.ply.data());
  ReadRows(gid, "game_id", first, count, rows.game_id.data());
  ReadRows(gid, "model_version", first, count, rows.model_version.data());
  if (IsDataset(gid, "full_search")) ReadRows(gid, "full_search", first, count, rows.full_search.data());
  return rows;
}

std::vector<mcts::GameRecord> ShardReader::ReadGameRecords() const {
  const std::vector<ShardGame> games = ReadGames();
  const PositionRows rows = ReadAllPositions();
  const auto fb = static_cast<size_t>(meta_.FeatureBytes());
  const auto na = static_cast<size_t>(meta_.actions);
  std::vector<mcts::GameRecord> records(games.size());
  for (size_t i = 0; i < games.size(); ++i) {
    const ShardGame& g = games[i];
    mcts::GameRecord& r = records[i];
    r.game_id = g.game_id;
    r.seed = g.seed;
    r.worker = g.worker;
    r.winner = g.result;
    r.resigned = g.resigned;
    r.would_resign = g.would_resign;
    r.moves = g.moves;
    const auto b = static_cast<size_t>(g.first_position);
    const auto e = b + static_cast<size_t>(g.position_count);
    r.features.assign(rows.features.begin() + b * fb, rows.features.begin() + e * fb);
    r.policy.assign(rows.policy.begin() + b * na, rows.policy.begin() + e * na);
    r.z.assign(rows.z.begin() + b, rows.z.begin() + e);
    r.root_value.assign(rows.root_value.begin() + b, rows.root_value.begin() + e);
    r.ply.assign(rows.ply.begin() + b, rows.ply.begin() + e);
    r.model_version.assign(rows.model_version.begin() + b, rows.model_version.begin() + e);
    r.full_search.assign(rows.full_search.begin() + b, rows.full_search.begin() + e);
  }
  return records;
}

std::vector<std::string> ListShards(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(ErrnoMessage(dir, ec.value()));
  std::vector<std::string> shards;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (EndsWith(name, ".h5") && entry.is_regular_file(ec)) shards.push_back(entry.path().string());
  }
  std::sort(shards.begin(), shards.end());
  return shards;
}

uint64_t NextShardIndex(const std::string& dir, const std::string& prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return 0;
  uint64_t next = 0;
  const std::string head = prefix + "-";
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, head.size(), head) != 0) continue;
    size_t i = head.size();
    uint64_t index = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])))
      index = index * 10 + static_cast<uint64_t>(name[i++] - '0');
    const std::string rest = name.substr(i);
    // A shard set aside (io::SetAside: .h5.refused, .h5.refused.N) keeps its index taken.
    const bool aside = rest == ".h5.refused" || rest.compare(0, 12, ".h5.refused.") == 0;
    if (i == head.size() || (rest != ".h5" && rest != ".h5.tmp" && !aside)) continue;
    next = std::max(next, index + 1);
  }
  return next;
}

}  // namespace zerofarm::io
