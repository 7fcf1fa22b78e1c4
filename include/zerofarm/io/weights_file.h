#pragma once
// Network weights as an HDF5 file of named tensors (docs/schema.md):
// one dataset per tensor at the root, named as in PyTorch's state_dict
// ("/stem.conv.weight"), float32 or int64, in the tensor's shape; the
// architecture and model version as root attributes. Python with h5py (and
// tools/h5_weights.py) reads and writes the same files.
#include <string>
#include <vector>

#include "zerofarm/eval/weights.h"

namespace zerofarm::io {

inline constexpr const char* kWeightsFormat = "zerofarm-weights";  // root attribute "format"
// Root attribute "format_version": 1; 2 for a net with a score head (its
// root attribute "score_plies"); 3 for a value head of more than one channel
// (root attribute "value_channels", and "score_plies" where it has a score
// head). A zerofarm that does not know a file's net refuses it in one line.
inline constexpr int kWeightsFormatVersion = 3;

// Writes `weights` to `path` atomically: PATH.tmp, fsync, rename, fsync of the
// directory, so a watcher never loads a partial file. Throws Error (or
// NoSpaceError) naming the file; PATH.tmp is removed on failure. Throws Error
// for a tensor whose data does not fill its shape, a duplicate or empty name,
// or a name containing '/'.
void WriteWeights(const std::string& path, const eval::WeightSet& weights);

// Bounds on a weights file's tower attributes (ReadWeights refuses others).
inline constexpr int kMaxWeightsBlocks = 80;
inline constexpr int kMaxWeightsFilters = 1024;
inline constexpr int kMaxWeightsValueHidden = 4096;
inline constexpr int kMaxWeightsValueChannels = 1024;
inline constexpr int kMaxWeightsPlanes = 256;
inline constexpr int kMaxWeightsBoardSide = 64;
inline constexpr int kMaxWeightsActions = 65536;
inline constexpr int kMaxWeightsScorePlies = 1024;
// Throws ConfigError unless `game` (a model file's game) is 1..64 bytes of
// printable ASCII, as every Game::Name() is, so that no message echoes it raw:
//   "m.pt: game "con\x0a4" is not a game's name"
void CheckGameName(const std::string& source, const std::string& game);

// Reads a model file: a TorchScript archive ("*.pt") with
// ReadTorchScriptFile (io/torchscript_file.h; an AOTInductor "*.pt2" too where
// eval::AotiBuilt(), else refused in one line), any other
// name as a weights file. Tensors come back in the order they were written (by
// name for files that do not track creation order). Integer datasets become
// int_data, floating-point ones data (converted to float32). Throws a
// one-line Error:
//   "PATH: No such file or directory"
//   "PATH: not an HDF5 file or truncated"
//   "PATH: not a zerofarm weights file"  (no format attribute, or another value)
//   "PATH: not a zerofarm weights file (missing attribute planes)"
//   "PATH: weights format version 4; this zerofarm reads up to 3"
//   "PATH: not a zerofarm weights file (missing attribute score_plies)"  (version 2)
//   "PATH: not a zerofarm weights file (missing attribute value_channels)"  (version 3)
// It is safe on a hostile file (issue 21): before a tensor is read, the tower
// attributes must lie in the ranges above ("PATH: filters = 1000000 is out of
// range 1..1024") and each dataset, and all of them together, must fit in the
// file as stored, uncompressed ("PATH: dataset X declares 1000000 x 1000000
// elements, more than the file's N bytes hold"), so what is allocated is
// bounded by the file's size. Content errors throw ConfigError; a file that
// cannot be opened throws Error. Any tensors are accepted: CheckNetWeights
// checks them against the net. With a checker set (io/h5_check.h; every
// command sets it), a checker process reads an HDF5 file first: its error,
// or "PATH: refused: reading it crashed libhdf5 (...)", throws ConfigError.
eval::WeightSet ReadWeights(const std::string& path);

// The mean of several weights files of one net (stochastic weight averaging
// over a run's checkpoints, done after the fact): every float tensor averaged
// (weights, biases and BatchNorm's running statistics), in double, then
// rounded to float32; integer tensors (num_batches_tracked) and the config
// from the first file; the model version the last file's. Each file is read
// with ReadWeights and checked with CheckNetWeights; the mean is checked too.
// Throws Error "the mean of no weights files" for an empty list, and
// ConfigError naming the file for a file of another net than the first's:
//   "model-9.h5: another net than model-7.h5's (connect4 3x6x7 -> 7, 6 blocks x 64 filters
//    against connect4 3x6x7 -> 7, 4 blocks x 32 filters)"
eval::WeightSet MeanOfWeightsFiles(const std::vector<std::string>& paths);

// One tensor of the residual net: its state_dict name, shape and type.
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  bool is_int = false;  // int64 (BatchNorm's num_batches_tracked), else float32
};
// Every tensor the net `config` declares (docs/weights.md), in state_dict order.
std::vector<TensorSpec> NetTensors(const eval::NetConfig& config);

// Throws ConfigError (one line naming `source`) unless `weights` holds exactly
// the tensors of NetTensors(weights.config), each of its exact shape and type,
// and every float is finite:
//   "w.h5: tensor stem.conv.weight has shape [8, 3, 3, 3]; a 1 x 16 net needs [16, 3, 3, 3]"
//   "w.h5: tensor value_head.fc2.bias is missing"
//   "w.h5: tensor blocks.0.bn1.weight has a non-finite value (nan) at 3"
void CheckNetWeights(const eval::WeightSet& weights, const std::string& source);

// Throws ConfigError unless `weights` fit `expected`: same game, planes,
// height, width and actions, and the same blocks, filters and value_hidden
// where `expected` sets them > 0 (set them to 0 to accept any tower). The
// message names `source` (the file) and both configs on one line, e.g.
//   "weights.h5 is for connect4 3x6x7 (6 blocks x 64 filters) but this run plays tictactoe 3x3x3"
void CheckWeightsMatch(const eval::WeightSet& weights, const eval::NetConfig& expected,
                       const std::string& source = "weights");

}  // namespace zerofarm::io
