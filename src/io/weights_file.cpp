// WriteWeights, ReadWeights, CheckWeightsMatch (layout: docs/schema.md).
#include "zerofarm/io/weights_file.h"

#include <set>

#include "fs_internal.h"
#include "zerofarm/io/h5.h"

namespace zerofarm::io {

namespace {

const Compression kExact{0, false};  // contiguous, uncompressed: h5py and mmap friendly

void CheckTensor(const std::string& path, const eval::NamedTensor& t, std::set<std::string>* seen) {
  if (t.name.empty() || t.name.find('/') != std::string::npos || t.name == ".")
    throw Error(path + ": invalid tensor name '" + t.name + "'");
  if (!seen->insert(t.name).second) throw Error(path + ": duplicate tensor " + t.name);
  for (int64_t d : t.shape)
    if (d < 0) throw Error(path + ": tensor " + t.name + " has a negative dimension");
  const size_t have = t.is_int() ? t.int_data.size() : t.data.size();
  if (have != static_cast<size_t>(t.Elements()))
    throw Error(path + ": tensor " + t.name + " has " + std::to_string(have) + " values for " +
                std::to_string(t.Elements()) + " elements");
}

std::vector<uint8_t> WeightsImage(const std::string& name, const eval::WeightSet& w) {
  H5File file = CreateMemoryFile(name);
  const hid_t root = file.id();
  WriteStringAttr(root, "format", kWeightsFormat);
  WriteScalarAttr<int32_t>(root, "format_version", kWeightsFormatVersion);
  WriteStringAttr(root, "game", w.config.game);
  WriteScalarAttr<int32_t>(root, "planes", w.config.planes);
  WriteScalarAttr<int32_t>(root, "height", w.config.height);
  WriteScalarAttr<int32_t>(root, "width", w.config.width);
  WriteScalarAttr<int32_t>(root, "actions", w.config.actions);
  WriteScalarAttr<int32_t>(root, "blocks", w.config.blocks);
  WriteScalarAttr<int32_t>(root, "filters", w.config.filters);
  WriteScalarAttr<int32_t>(root, "value_hidden", w.config.value_hidden);
  WriteScalarAttr<uint32_t>(root, "version", w.version);
  for (const eval::NamedTensor& t : w.tensors) {
    const std::vector<uint64_t> dims(t.shape.begin(), t.shape.end());
    if (t.is_int())
      WriteDataset<int64_t>(root, t.name, t.int_data.data(), dims, kExact);
    else
      WriteDataset<float>(root, t.name, t.data.data(), dims, kExact);
  }
  return FileImage(root);
}

std::string ShapeText(const eval::NetConfig& c, bool with_actions) {
  std::string s = c.game + " " + std::to_string(c.planes) + "x" + std::to_string(c.height) + "x" +
                  std::to_string(c.width);
  if (with_actions) s += " with " + std::to_string(c.actions) + " actions";
  return s;
}

std::string TowerText(const eval::NetConfig& c) {
  return std::to_string(c.blocks) + " blocks x " + std::to_string(c.filters) + " filters";
}

}  // namespace

void WriteWeights(const std::string& path, const eval::WeightSet& weights) {
  std::set<std::string> seen;
  for (const eval::NamedTensor& t : weights.tensors) CheckTensor(path, t, &seen);
  // Built in memory, written with plain syscalls (see ShardWriter::Flush).
  const std::vector<uint8_t> image = WeightsImage(path + ".tmp", weights);
  internal::WriteFileAtomically(path, image.data(), image.size());
}

eval::WeightSet ReadWeights(const std::string& path) {
  internal::RequireExists(path);
  const std::string not_hdf5 = path + ": not an HDF5 file or truncated";
  if (!IsHdf5File(path)) throw Error(not_hdf5);
  H5File file;
  try {
    file = OpenFile(path);
  } catch (const Error&) {
    throw Error(not_hdf5);
  }
  const hid_t root = file.id();
  const std::string not_weights = path + ": not a zerofarm weights file";
  if (!HasAttr(root, "format") || ReadStringAttr(root, "format") != kWeightsFormat) throw Error(not_weights);
  for (const char* name : {"format_version", "game", "planes", "height", "width", "actions", "blocks",
                           "filters", "value_hidden", "version"}) {
    if (!HasAttr(root, name)) throw Error(not_weights + " (missing attribute " + name + ")");
  }
  const int format_version = ReadScalarAttr<int32_t>(root, "format_version");
  if (format_version < 1 || format_version > kWeightsFormatVersion)
    throw Error(path + ": weights format version " + std::to_string(format_version) +
                "; this zerofarm reads up to " + std::to_string(kWeightsFormatVersion));

  eval::WeightSet w;
  w.config.game = ReadStringAttr(root, "game");
  w.config.planes = ReadScalarAttr<int32_t>(root, "planes");
  w.config.height = ReadScalarAttr<int32_t>(root, "height");
  w.config.width = ReadScalarAttr<int32_t>(root, "width");
  w.config.actions = ReadScalarAttr<int32_t>(root, "actions");
  w.config.blocks = ReadScalarAttr<int32_t>(root, "blocks");
  w.config.filters = ReadScalarAttr<int32_t>(root, "filters");
  w.config.value_hidden = ReadScalarAttr<int32_t>(root, "value_hidden");
  w.version = ReadScalarAttr<uint32_t>(root, "version");
  for (const std::string& name : ListLinks(root)) {
    if (!IsDataset(root, name)) continue;  // room for groups a later format may add
    eval::NamedTensor t;
    t.name = name;
    std::vector<uint64_t> dims;
    if (IsIntegerDataset(root, name))
      t.int_data = ReadDataset<int64_t>(root, name, &dims);
    else
      t.data = ReadDataset<float>(root, name, &dims);
    t.shape.assign(dims.begin(), dims.end());
    w.tensors.push_back(std::move(t));
  }
  return w;
}

void CheckWeightsMatch(const eval::WeightSet& weights, const eval::NetConfig& expected,
                       const std::string& source) {
  const eval::NetConfig& have = weights.config;
  const bool same_game = have.game == expected.game && have.planes == expected.planes &&
                         have.height == expected.height && have.width == expected.width;
  const bool same_actions = have.actions == expected.actions;
  if (!same_game || !same_actions) {
    const bool with_actions = same_game;  // only mention actions when they are the difference
    throw ConfigError(source + " is for " + ShapeText(have, with_actions) + " (" + TowerText(have) +
                      ") but this run plays " + ShapeText(expected, with_actions));
  }
  const bool tower_ok = (expected.blocks <= 0 || expected.blocks == have.blocks) &&
                        (expected.filters <= 0 || expected.filters == have.filters) &&
                        (expected.value_hidden <= 0 || expected.value_hidden == have.value_hidden);
  if (!tower_ok)
    throw ConfigError(source + " has " + TowerText(have) + " (value head " +
                      std::to_string(have.value_hidden) + ") but this run expects " + TowerText(expected) +
                      " (value head " + std::to_string(expected.value_hidden) + ")");
}

}  // namespace zerofarm::io
