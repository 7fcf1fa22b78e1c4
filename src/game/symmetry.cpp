// Symmetries applied to feature planes and policy vectors.
//
// The permutations come from Game::CellMap / Game::ActionMap on every call
// (one small vector each). That is negligible next to a network evaluation;
// cache per game if a profile ever says otherwise.
#include "zerofarm/game/symmetry.h"

#include <vector>

#include "zerofarm/core/error.h"

namespace zerofarm::game {

void TransformFeatures(const Game& game, int symmetry, const uint8_t* in, uint8_t* out) {
  ZF_DCHECK(in != out);
  ZF_DCHECK(symmetry >= 0 && symmetry < game.SymmetryCount()) << "symmetry " << symmetry;
  const BoardShape shape = game.Shape();
  const int cells = shape.Cells();
  const std::vector<int> map = game.CellMap(symmetry);
  ZF_DCHECK(static_cast<int>(map.size()) == cells);
  for (int p = 0; p < shape.planes; ++p) {
    const uint8_t* src = in + static_cast<size_t>(p) * cells;
    uint8_t* dst = out + static_cast<size_t>(p) * cells;
    for (int c = 0; c < cells; ++c) dst[map[c]] = src[c];
  }
}

void TransformPolicy(const Game& game, int symmetry, const float* in, float* out) {
  ZF_DCHECK(in != out);
  ZF_DCHECK(symmetry >= 0 && symmetry < game.SymmetryCount()) << "symmetry " << symmetry;
  const std::vector<int> map = game.ActionMap(symmetry);
  const int n = game.ActionCount();
  ZF_DCHECK(static_cast<int>(map.size()) == n);
  for (int a = 0; a < n; ++a) out[map[a]] = in[a];
}

}  // namespace zerofarm::game
