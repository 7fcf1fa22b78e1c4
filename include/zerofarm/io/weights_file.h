#pragma once
// Network weights as an HDF5 file of named tensors (docs/schema.md):
// one dataset per tensor at the root, named as in PyTorch's state_dict
// ("/stem.conv.weight"), float32 or int64, in the tensor's shape; the
// architecture and model version as root attributes. Python with h5py (and
// tools/h5_weights.py) reads and writes the same files.
#include <string>

#include "zerofarm/eval/weights.h"

namespace zerofarm::io {

inline constexpr const char* kWeightsFormat = "zerofarm-weights";  // root attribute "format"
inline constexpr int kWeightsFormatVersion = 1;                    // root attribute "format_version"

// Writes `weights` to `path` atomically: PATH.tmp, fsync, rename, fsync of the
// directory, so a watcher never loads a partial file. Throws Error (or
// NoSpaceError) naming the file; PATH.tmp is removed on failure. Throws Error
// for a tensor whose data does not fill its shape, a duplicate or empty name,
// or a name containing '/'.
void WriteWeights(const std::string& path, const eval::WeightSet& weights);

// Reads a weights file. Tensors come back in the order they were written (by
// name for files that do not track creation order). Integer datasets become
// int_data, floating-point ones data (converted to float32). Throws a
// one-line Error:
//   "PATH: No such file or directory"
//   "PATH: not an HDF5 file or truncated"
//   "PATH: not a zerofarm weights file"  (no format attribute, or another value)
//   "PATH: not a zerofarm weights file (missing attribute planes)"
//   "PATH: weights format version 2; this zerofarm reads up to 1"
eval::WeightSet ReadWeights(const std::string& path);

// Throws ConfigError unless `weights` fit `expected`: same game, planes,
// height, width and actions, and the same blocks, filters and value_hidden
// where `expected` sets them > 0 (set them to 0 to accept any tower). The
// message names `source` (the file) and both configs on one line, e.g.
//   "weights.h5 is for connect4 3x6x7 (6 blocks x 64 filters) but this run plays tictactoe 3x3x3"
void CheckWeightsMatch(const eval::WeightSet& weights, const eval::NetConfig& expected,
                       const std::string& source = "weights");

}  // namespace zerofarm::io
