#pragma once
// A network shown each leaf in another orientation of the game
// (Game::CellMap), its policy turned back to the leaf's own orientation
// (`zerofarm eval --orientation`, docs/training.md says what each buys):
// - kFixed: every leaf turned by one symmetry of the game (0 = as it is; for
//   Connect Four 1 is the mirror image). One network evaluation a leaf: the
//   same network measured on the mirrored file, as it were.
// - kCanonical: each leaf turned to its canonical orientation, the one whose
//   features hash lowest (game::HashCanonical, the farm's cache key). One
//   evaluation a leaf, and a position and its images get the same answer.
// - kMean: each leaf in every orientation, the mean of the policies (as
//   probabilities; written back as their logarithms, which the search's
//   softmax reads as the same distribution) and of the values. One network
//   evaluation per symmetry (two for Connect Four).
// The network's weights are unchanged: this is how a network is asked, for
// evaluation, not how it plays in the farm.
#include <memory>
#include <string>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"

namespace zerofarm::eval {

struct Orientation {
  enum Kind { kFixed, kCanonical, kMean };
  Kind kind = kFixed;
  int symmetry = 0;  // kFixed: the symmetry of the game every leaf is turned by (0 = as it is)

  bool AsIs() const { return kind == kFixed && symmetry == 0; }
  // "as-is", "canonical", "mean" or the symmetry's index: what --orientation takes.
  std::string Name() const;
  // How many network evaluations answer one leaf.
  int EvaluationsPerLeaf(const game::Game& game) const;
};

// Parses --orientation's value for `game`: as-is, canonical, mean, or a
// symmetry's index in [0, SymmetryCount()) (0 is as-is). Throws ConfigError
// naming the choices.
Orientation ParseOrientation(const std::string& text, const game::Game& game);

// Wraps `inner` (owned), a network for `game`, to be asked as `o` says; as it
// is, `inner` itself.
std::unique_ptr<Evaluator> MakeOrientedEvaluator(const game::Game& game, std::unique_ptr<Evaluator> inner,
                                                 Orientation o);

}  // namespace zerofarm::eval
