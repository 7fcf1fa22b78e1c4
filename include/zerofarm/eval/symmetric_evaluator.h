#pragma once
// A network answered as the mean over a game's symmetries: each leaf is
// evaluated in every orientation (Game::CellMap), each answer is turned back
// to the leaf's own orientation, and the leaf gets the mean of the policies
// (as probabilities; written back as their logarithms, which the search's
// softmax reads as the same distribution) and the mean of the values.
//
// Costs one network evaluation per symmetry (two for Connect Four). The
// network's weights are unchanged: this is test-time averaging, for
// `zerofarm eval --average-symmetries` (docs/strength.md says what it buys).
#include <memory>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"

namespace zerofarm::eval {

// Wraps `inner` (owned), a network for `game`.
std::unique_ptr<Evaluator> MakeSymmetricEvaluator(const game::Game& game, std::unique_ptr<Evaluator> inner);

}  // namespace zerofarm::eval
