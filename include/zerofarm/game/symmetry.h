#pragma once
// Applying a game's symmetries to feature planes and policy vectors.
#include <cstdint>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

// out = symmetry s applied to `in` (Shape().FeatureBytes() bytes each); the
// same cell permutation is applied to every plane. in != out.
void TransformFeatures(const Game& game, int symmetry, const uint8_t* in, uint8_t* out);
// out = symmetry s applied to one plane of Shape().Cells() values (a
// per-cell training target). in != out.
void TransformCells(const Game& game, int symmetry, const int8_t* in, int8_t* out);
// out = symmetry s applied to a policy vector of ActionCount() floats. in != out.
void TransformPolicy(const Game& game, int symmetry, const float* in, float* out);

// The same transforms with every symmetry's permutations computed once, for
// hot paths (a worker keying its evaluation cache). Copyable; immutable after
// construction, so any number of threads may use one.
class SymmetryTables {
 public:
  explicit SymmetryTables(const Game& game);
  int Count() const { return static_cast<int>(cells_.size()); }
  int FeatureBytes() const { return planes_ * cell_count_; }
  void TransformFeatures(int symmetry, const uint8_t* in, uint8_t* out) const;
  void TransformPolicy(int symmetry, const float* in, float* out) const;
  // The inverse: `in` is a policy of the transformed position, `out` that of
  // the original. UntransformPolicy(s, TransformPolicy(s, p)) == p.
  void UntransformPolicy(int symmetry, const float* in, float* out) const;

 private:
  int planes_ = 0;
  int cell_count_ = 0;
  std::vector<std::vector<int>> cells_;    // [symmetry][cell] -> cell
  std::vector<std::vector<int>> actions_;  // [symmetry][action] -> action
};

// A key shared by a position and all its symmetric images: the smallest
// HashBytes (core/hash.h) of the feature planes over the game's symmetries,
// and the symmetry that gives it (the canonical orientation). `scratch` holds
// FeatureBytes() bytes. With `symmetric` false, the identity's hash only.
struct CanonicalHash {
  uint64_t hash = 0;
  int symmetry = 0;
};
CanonicalHash HashCanonical(const SymmetryTables& tables, const uint8_t* features, uint8_t* scratch,
                            bool symmetric = true);

}  // namespace zerofarm::game
