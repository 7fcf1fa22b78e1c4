#pragma once
// Applying a game's symmetries to feature planes and policy vectors.
#include <cstdint>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

// out = symmetry s applied to `in` (Shape().FeatureBytes() bytes each); the
// same cell permutation is applied to every plane. in != out.
void TransformFeatures(const Game& game, int symmetry, const uint8_t* in, uint8_t* out);
// out = symmetry s applied to a policy vector of ActionCount() floats. in != out.
void TransformPolicy(const Game& game, int symmetry, const float* in, float* out);

}  // namespace zerofarm::game
