// Symmetries applied to feature planes and policy vectors.
//
// TransformFeatures / TransformPolicy ask Game::CellMap / Game::ActionMap on
// every call (one small vector each), negligible next to a network
// evaluation; SymmetryTables asks once, for per-leaf paths.
#include "zerofarm/game/symmetry.h"

#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/core/hash.h"

namespace zerofarm::game {

namespace {

// out = `map` applied to every one of `planes` planes of `cells` bytes.
void PermutePlanes(const std::vector<int>& map, int planes, int cells, const uint8_t* in, uint8_t* out) {
  ZF_DCHECK(in != out);
  ZF_DCHECK(static_cast<int>(map.size()) == cells);
  for (int p = 0; p < planes; ++p) {
    const uint8_t* src = in + static_cast<size_t>(p) * cells;
    uint8_t* dst = out + static_cast<size_t>(p) * cells;
    for (int c = 0; c < cells; ++c) dst[map[c]] = src[c];
  }
}

// out[map[a]] = in[a].
void PermutePolicy(const std::vector<int>& map, const float* in, float* out) {
  ZF_DCHECK(in != out);
  for (size_t a = 0; a < map.size(); ++a) out[map[a]] = in[a];
}

}  // namespace

void TransformFeatures(const Game& game, int symmetry, const uint8_t* in, uint8_t* out) {
  ZF_DCHECK(symmetry >= 0 && symmetry < game.SymmetryCount()) << "symmetry " << symmetry;
  const BoardShape shape = game.Shape();
  PermutePlanes(game.CellMap(symmetry), shape.planes, shape.Cells(), in, out);
}

void TransformCells(const Game& game, int symmetry, const int8_t* in, int8_t* out) {
  ZF_DCHECK(symmetry >= 0 && symmetry < game.SymmetryCount()) << "symmetry " << symmetry;
  ZF_DCHECK(in != out);
  const std::vector<int> map = game.CellMap(symmetry);
  for (size_t c = 0; c < map.size(); ++c) out[map[c]] = in[c];
}

void TransformPolicy(const Game& game, int symmetry, const float* in, float* out) {
  ZF_DCHECK(symmetry >= 0 && symmetry < game.SymmetryCount()) << "symmetry " << symmetry;
  const std::vector<int> map = game.ActionMap(symmetry);
  ZF_DCHECK(static_cast<int>(map.size()) == game.ActionCount());
  PermutePolicy(map, in, out);
}

SymmetryTables::SymmetryTables(const Game& game)
    : planes_(game.Shape().planes), cell_count_(game.Shape().Cells()) {
  for (int s = 0; s < game.SymmetryCount(); ++s) {
    cells_.push_back(game.CellMap(s));
    actions_.push_back(game.ActionMap(s));
    ZF_CHECK(static_cast<int>(cells_.back().size()) == cell_count_) << game.Name() << " symmetry " << s;
    ZF_CHECK(static_cast<int>(actions_.back().size()) == game.ActionCount())
        << game.Name() << " symmetry " << s;
  }
}

void SymmetryTables::TransformFeatures(int symmetry, const uint8_t* in, uint8_t* out) const {
  PermutePlanes(cells_[static_cast<size_t>(symmetry)], planes_, cell_count_, in, out);
}

void SymmetryTables::TransformPolicy(int symmetry, const float* in, float* out) const {
  PermutePolicy(actions_[static_cast<size_t>(symmetry)], in, out);
}

void SymmetryTables::UntransformPolicy(int symmetry, const float* in, float* out) const {
  ZF_DCHECK(in != out);
  const std::vector<int>& map = actions_[static_cast<size_t>(symmetry)];
  for (size_t a = 0; a < map.size(); ++a) out[a] = in[map[a]];
}

CanonicalHash HashCanonical(const SymmetryTables& tables, const uint8_t* features, uint8_t* scratch,
                            bool symmetric) {
  const size_t n = static_cast<size_t>(tables.FeatureBytes());
  CanonicalHash best{HashBytes(features, n), 0};
  if (!symmetric) return best;
  for (int s = 1; s < tables.Count(); ++s) {
    tables.TransformFeatures(s, features, scratch);
    const uint64_t h = HashBytes(scratch, n);
    if (h < best.hash) best = {h, s};
  }
  return best;
}

}  // namespace zerofarm::game
