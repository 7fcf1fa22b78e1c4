// WriteWeights, ReadWeights, CheckWeightsMatch (layout: docs/schema.md).
#include "zerofarm/io/weights_file.h"

#include <sys/stat.h>

#include <cmath>
#include <set>

#include "fs_internal.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/safe_files.h"
#include "zerofarm/io/torchscript_file.h"

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

// The oldest format that holds the net: older zerofarms read what they can.
int FormatVersionFor(const eval::NetConfig& c) {
  if (c.value_channels != 1) return 3;
  return c.score_plies > 0 ? 2 : 1;
}

std::vector<uint8_t> WeightsImage(const std::string& name, const eval::WeightSet& w) {
  H5File file = CreateMemoryFile(name);
  const hid_t root = file.id();
  WriteStringAttr(root, "format", kWeightsFormat);
  WriteScalarAttr<int32_t>(root, "format_version", FormatVersionFor(w.config));
  WriteStringAttr(root, "game", w.config.game);
  WriteScalarAttr<int32_t>(root, "planes", w.config.planes);
  WriteScalarAttr<int32_t>(root, "height", w.config.height);
  WriteScalarAttr<int32_t>(root, "width", w.config.width);
  WriteScalarAttr<int32_t>(root, "actions", w.config.actions);
  WriteScalarAttr<int32_t>(root, "blocks", w.config.blocks);
  WriteScalarAttr<int32_t>(root, "filters", w.config.filters);
  WriteScalarAttr<int32_t>(root, "value_hidden", w.config.value_hidden);
  if (w.config.value_channels != 1) WriteScalarAttr<int32_t>(root, "value_channels", w.config.value_channels);
  if (w.config.score_plies > 0) WriteScalarAttr<int32_t>(root, "score_plies", w.config.score_plies);
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
  if (c.scripted) return "TorchScript";
  return std::to_string(c.blocks) + " blocks x " + std::to_string(c.filters) + " filters";
}

void CheckAttrRange(const std::string& path, const char* name, int value, int lo, int hi) {
  if (value < lo || value > hi)
    throw ConfigError(path + ": " + name + " = " + std::to_string(value) + " is out of range " +
                      std::to_string(lo) + ".." + std::to_string(hi));
}

void CheckTowerRanges(const std::string& path, const eval::NetConfig& c) {
  CheckAttrRange(path, "planes", c.planes, 1, kMaxWeightsPlanes);
  CheckAttrRange(path, "height", c.height, 1, kMaxWeightsBoardSide);
  CheckAttrRange(path, "width", c.width, 1, kMaxWeightsBoardSide);
  CheckAttrRange(path, "actions", c.actions, 1, kMaxWeightsActions);
  CheckAttrRange(path, "blocks", c.blocks, 1, kMaxWeightsBlocks);
  CheckAttrRange(path, "filters", c.filters, 1, kMaxWeightsFilters);
  CheckAttrRange(path, "value_hidden", c.value_hidden, 1, kMaxWeightsValueHidden);
  CheckAttrRange(path, "value_channels", c.value_channels, 1, kMaxWeightsValueChannels);
  CheckAttrRange(path, "score_plies", c.score_plies, 0, kMaxWeightsScorePlies);
}

std::string DimsText(const std::vector<uint64_t>& dims) {
  std::string s;
  for (uint64_t d : dims) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s.empty() ? "1 (a scalar)" : s;
}

// Bytes `name` holds when stored uncompressed; throws ConfigError when that
// exceeds what is left of the file's `budget` (so nothing is allocated for it).
uint64_t CheckDatasetFits(const std::string& path, hid_t root, const std::string& name, uint64_t file_bytes,
                          uint64_t* budget) {
  const std::vector<uint64_t> dims = DatasetDims(root, name);
  uint64_t bytes = DatasetElementBytes(root, name);
  bool fits = bytes <= *budget;
  for (uint64_t d : dims) {
    if (!fits) break;
    fits = d == 0 || bytes <= *budget / d;  // no overflow: checked before multiplying
    bytes *= fits ? d : 1;
  }
  if (!fits)
    throw ConfigError(path + ": dataset " + name + " declares " + DimsText(dims) +
                      " elements, more than the file's " + std::to_string(file_bytes) + " bytes hold");
  *budget -= bytes;
  return bytes;
}

std::string ShapeList(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

void AddBatchNorm(std::vector<TensorSpec>* out, const std::string& prefix, int64_t channels) {
  for (const char* p : {"weight", "bias", "running_mean", "running_var"})
    out->push_back({prefix + "." + p, {channels}, false});
  out->push_back({prefix + ".num_batches_tracked", {}, true});
}

}  // namespace

std::vector<TensorSpec> NetTensors(const eval::NetConfig& c) {
  const int64_t f = c.filters, hw = int64_t{c.height} * c.width;
  std::vector<TensorSpec> t;
  t.push_back({"stem.conv.weight", {f, c.planes, 3, 3}, false});
  AddBatchNorm(&t, "stem.bn", f);
  for (int b = 0; b < c.blocks; ++b) {
    const std::string p = "blocks." + std::to_string(b) + ".";
    t.push_back({p + "conv1.weight", {f, f, 3, 3}, false});
    AddBatchNorm(&t, p + "bn1", f);
    t.push_back({p + "conv2.weight", {f, f, 3, 3}, false});
    AddBatchNorm(&t, p + "bn2", f);
  }
  t.push_back({"policy_head.conv.weight", {2, f, 1, 1}, false});
  AddBatchNorm(&t, "policy_head.bn", 2);
  t.push_back({"policy_head.fc.weight", {c.actions, 2 * hw}, false});
  t.push_back({"policy_head.fc.bias", {c.actions}, false});
  t.push_back({"value_head.conv.weight", {c.value_channels, f, 1, 1}, false});
  AddBatchNorm(&t, "value_head.bn", c.value_channels);
  t.push_back({"value_head.fc1.weight", {c.value_hidden, c.value_channels * hw}, false});
  t.push_back({"value_head.fc1.bias", {c.value_hidden}, false});
  t.push_back({"value_head.fc2.weight", {c.ScoreBins(), c.value_hidden}, false});
  t.push_back({"value_head.fc2.bias", {c.ScoreBins()}, false});
  return t;
}

void CheckNetWeights(const eval::WeightSet& w, const std::string& source) {
  const eval::NetConfig& c = w.config;
  const std::string net = "a " + std::to_string(c.blocks) + " x " + std::to_string(c.filters) + " net";
  const std::vector<TensorSpec> specs = NetTensors(c);
  std::set<std::string> wanted;
  for (const TensorSpec& spec : specs) {
    wanted.insert(spec.name);
    const eval::NamedTensor* t = w.Find(spec.name);
    if (!t) throw ConfigError(source + ": tensor " + spec.name + " is missing (" + net + " needs it)");
    if (t->shape != spec.shape)
      throw ConfigError(source + ": tensor " + spec.name + " has shape " + ShapeList(t->shape) + "; " + net +
                        " needs " + ShapeList(spec.shape));
    if (t->is_int() != spec.is_int)
      throw ConfigError(source + ": tensor " + spec.name + " is " +
                        (t->is_int() ? "integer" : "floating point") + "; " + net + " needs " +
                        (spec.is_int ? "int64" : "float32"));
    for (size_t i = 0; i < t->data.size(); ++i)
      if (!std::isfinite(t->data[i]))
        throw ConfigError(source + ": tensor " + spec.name + " has a non-finite value (" +
                          (std::isnan(t->data[i]) ? "nan" : "inf") + ") at " + std::to_string(i));
  }
  for (const eval::NamedTensor& t : w.tensors)
    if (!wanted.count(t.name))
      throw ConfigError(source + ": unexpected tensor " + t.name + " (" + net + " has none)");
}

void WriteWeights(const std::string& path, const eval::WeightSet& weights) {
  std::set<std::string> seen;
  for (const eval::NamedTensor& t : weights.tensors) CheckTensor(path, t, &seen);
  // Built in memory, written with plain syscalls (see ShardWriter::Flush).
  const std::vector<uint8_t> image = WeightsImage(path + ".tmp", weights);
  internal::WriteFileAtomically(path, image.data(), image.size());
}

void CheckGameName(const std::string& source, const std::string& game) {
  if (game.empty() || game.size() > 64 || PrintableText(game) != game)
    throw ConfigError(source + ": game \"" + PrintableText(game, 64) + "\" is not a game's name");
}

namespace {
// Error when `path` is missing; ConfigError when it breaks a plugin's rules: a
// model is code (TorchScript) or what picks every move (issue 82).
void RequireOwnModelFile(const std::string& path) {
  internal::RequireExists(path);
  CheckOwnCodeFile(path, "load it");
}
}  // namespace

eval::WeightSet ReadWeights(const std::string& path) {
  RequireOwnModelFile(path);
  if (IsTorchScriptPath(path)) return ReadTorchScriptFile(path);
  if (IsPt2Path(path) && !eval::AotiBuilt())
    throw ConfigError(
        path + ": a .pt2 (AOTInductor) package needs a zerofarm built with LibTorch 2.x (2.5+); " +
        "this one has LibTorch " + (eval::TorchVersionBuilt().empty() ? "none" : eval::TorchVersionBuilt()) +
        " and reads TorchScript (.pt, torch.jit.save)");
  if (IsPt2Path(path)) return ReadTorchScriptFile(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))  // a FIFO or a device: never read
    throw ConfigError(path + ": not a regular file");
  if (H5CheckerSet()) {  // libhdf5 crashes on some damaged files: a checker process reads it first
    const std::string verdict = CheckH5Files(H5CheckKind::kWeights, {path})[0];
    if (!verdict.empty()) throw ConfigError(verdict);
  }
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  const std::string not_hdf5 = path + ": not an HDF5 file or truncated";
  if (!IsHdf5File(path)) throw ConfigError(not_hdf5);
  H5File file;
  try {
    file = OpenFile(path);
  } catch (const Error&) {
    throw ConfigError(not_hdf5);
  }
  const hid_t root = file.id();
  const std::string not_weights = path + ": not a zerofarm weights file";
  if (!HasAttr(root, "format") || ReadStringAttr(root, "format") != kWeightsFormat)
    throw ConfigError(not_weights);
  for (const char* name : {"format_version", "game", "planes", "height", "width", "actions", "blocks",
                           "filters", "value_hidden", "version"}) {
    if (!HasAttr(root, name)) throw ConfigError(not_weights + " (missing attribute " + name + ")");
  }
  const int format_version = ReadScalarAttr<int32_t>(root, "format_version");
  if (format_version < 1 || format_version > kWeightsFormatVersion)
    throw ConfigError(path + ": weights format version " + std::to_string(format_version) +
                      "; this zerofarm reads up to " + std::to_string(kWeightsFormatVersion));

  eval::WeightSet w;
  w.config.game = ReadStringAttr(root, "game");
  CheckGameName(path, w.config.game);
  w.config.planes = ReadScalarAttr<int32_t>(root, "planes");
  w.config.height = ReadScalarAttr<int32_t>(root, "height");
  w.config.width = ReadScalarAttr<int32_t>(root, "width");
  w.config.actions = ReadScalarAttr<int32_t>(root, "actions");
  w.config.blocks = ReadScalarAttr<int32_t>(root, "blocks");
  w.config.filters = ReadScalarAttr<int32_t>(root, "filters");
  w.config.value_hidden = ReadScalarAttr<int32_t>(root, "value_hidden");
  // Version 2: a score head; version 3: value_channels, and score_plies only with a score head.
  if (format_version == 2 && !HasAttr(root, "score_plies"))
    throw ConfigError(not_weights + " (missing attribute score_plies)");
  if (format_version >= 2 && HasAttr(root, "score_plies")) {
    w.config.score_plies = ReadScalarAttr<int32_t>(root, "score_plies");
    if (w.config.score_plies < 1)
      throw ConfigError(path + ": score_plies must be >= 1 in format version " +
                        std::to_string(format_version));
  }
  if (format_version >= 3) {
    if (!HasAttr(root, "value_channels"))
      throw ConfigError(not_weights + " (missing attribute value_channels)");
    w.config.value_channels = ReadScalarAttr<int32_t>(root, "value_channels");
  }
  w.version = ReadScalarAttr<uint32_t>(root, "version");
  CheckTowerRanges(path, w.config);
  uint64_t budget = file_bytes;  // what all datasets together may declare
  for (const std::string& name : ListLinks(root)) {
    if (!IsDataset(root, name)) continue;  // room for groups a later format may add
    CheckDatasetFits(path, root, name, file_bytes, &budget);
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

eval::WeightSet MeanOfWeightsFiles(const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error("the mean of no weights files");
  eval::WeightSet mean = ReadWeights(paths[0]);
  CheckNetWeights(mean, paths[0]);
  std::vector<std::vector<double>> sums;  // per tensor of `mean`, in its order
  for (const eval::NamedTensor& t : mean.tensors) sums.emplace_back(t.data.begin(), t.data.end());
  for (size_t f = 1; f < paths.size(); ++f) {
    const eval::WeightSet w = ReadWeights(paths[f]);
    CheckNetWeights(w, paths[f]);
    if (!w.config.SameShape(mean.config))
      throw ConfigError(paths[f] + ": another net than " + paths[0] + "'s (" + w.config.Describe() +
                        " against " + mean.config.Describe() + ")");
    // Both hold exactly NetTensors(config), so each of mean's tensors is in w, of its shape.
    for (size_t i = 0; i < mean.tensors.size(); ++i) {
      const std::vector<float>& add = w.Find(mean.tensors[i].name)->data;
      for (size_t k = 0; k < add.size(); ++k) sums[i][k] += add[k];
    }
    mean.version = w.version;
  }
  for (size_t i = 0; i < mean.tensors.size(); ++i)
    for (size_t k = 0; k < sums[i].size(); ++k)
      mean.tensors[i].data[k] = static_cast<float>(sums[i][k] / static_cast<double>(paths.size()));
  CheckNetWeights(mean, "the mean of " + std::to_string(paths.size()) + " weights files");
  return mean;
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
                        (expected.value_hidden <= 0 || expected.value_hidden == have.value_hidden) &&
                        (expected.value_channels <= 0 || expected.value_channels == have.value_channels);
  const auto head = [](const eval::NetConfig& c) {
    return " (value head " + std::to_string(c.value_hidden) +
           (c.value_channels != 1 ? " of " + std::to_string(c.value_channels) + " channels)" : ")");
  };
  if (!tower_ok)
    throw ConfigError(source + " has " + TowerText(have) + head(have) + " but this run expects " +
                      TowerText(expected) + head(expected));
}

}  // namespace zerofarm::io
