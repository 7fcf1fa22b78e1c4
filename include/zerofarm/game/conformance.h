#pragma once
// The game conformance suite: checks that a Game keeps the promises of
// game.h (docs/adding-a-game.md) on random playouts. Every registered game
// runs it (tests/unit/game/conformance_test.cpp); a new game gets it without
// a test file of its own.
//
// Each check returns its failures, one message each, instead of asserting,
// so a test, a command or a plugin loader can report them. A check stops
// after ConformanceOptions::max_failures messages. The checks are
// deterministic for a given seed. A game that crashes or loops forever in
// its own code is not caught here: the checks only call the interface.
//
// What is not checked here: a game record's round trip through a shard (the
// io module sits above game; see tests/unit/io/game_conformance_test.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

struct ConformanceOptions {
  int playouts = 12;      // random games per check
  uint64_t seed = 1;      // of the random playouts
  int max_failures = 10;  // messages kept per check
};

struct ConformanceFailure {
  std::string check;    // the check's name, as ConformanceChecks lists it
  std::string message;  // one line: what broke, where (the moves that lead there)
};
using ConformanceFailures = std::vector<ConformanceFailure>;

// Random playouts end: no game lasts more than MaxGameLength() plies, every
// non-terminal state has a legal action, MoveNumber() counts the plies and
// CurrentPlayer() is 0 or 1.
ConformanceFailures CheckPlayoutsEnd(const Game& game, const ConformanceOptions& options);
// LegalActions is strictly increasing within [0, ActionCount()), IsLegal(a)
// holds exactly for its members, it is empty exactly when terminal, and
// EncodeFeatures writes exactly Shape().FeatureBytes() bytes, the same each time.
ConformanceFailures CheckLegality(const Game& game, const ConformanceOptions& options);
// Clone and CopyFrom give states equal to their source (Equals, features,
// legal actions, hash, text, player, move number), independent of it.
ConformanceFailures CheckCopies(const Game& game, const ConformanceOptions& options);
// Each CellMap / ActionMap is a permutation of the right size, symmetry 0 is
// the identity, and the symmetries form a group: the composition of any two
// and the inverse of each is one of them (the same one for cells and actions).
ConformanceFailures CheckSymmetryGroup(const Game& game, const ConformanceOptions& options);
// Symmetric positions: the initial state maps to itself; along random
// playouts, the game replayed with every move mapped by ActionMap(s) is legal
// move by move, its legal actions are the mapped ones, its features are
// TransformFeatures(s) of the original's, and it ends the same way.
ConformanceFailures CheckSymmetricPositions(const Game& game, const ConformanceOptions& options);
// Terminal states: Winner() is -1, 0 or 1 and Outcome(0) + Outcome(1) == 0.
ConformanceFailures CheckOutcomes(const Game& game, const ConformanceOptions& options);
// Hash(): equal for equal states (clones, ParseBoard, transpositions met in
// the playouts). For the shared evaluation cache, which keys a leaf by
// HashCanonical of its features: non-terminal states with equal features (up
// to a symmetry) have the same legal actions (up to that symmetry).
ConformanceFailures CheckHash(const Game& game, const ConformanceOptions& options);
// Text: ParseAction(ActionToString(a)) == a for legal actions, ParseAction
// rejects junk with -1, ParseMoves(FormatMoves(m)) == m, and
// ParseBoard(ToString()) equals the state and draws the same text.
ConformanceFailures CheckText(const Game& game, const ConformanceOptions& options);
// Point of view (the planes PlaneNames() declares, docs/adding-a-game.md):
// PlaneNames() names every plane, two of them "own" and "opponent"; a cell
// that a move occupies shows in the next position's plane of its mover as
// the next player sees it ("opponent" when the turn passes, "own" when the
// mover moves again), never in the other.
ConformanceFailures CheckPointOfView(const Game& game, const ConformanceOptions& options);
// Colour swap: each declared pair ownX / opponentX swaps when the turn passes:
// of the cells one side holds before and after such a move, more change
// plane than stay (captures and flips stay; absolute colours keep them all).
ConformanceFailures CheckColourSwap(const Game& game, const ConformanceOptions& options);
// Side to move: a plane named first_player_to_move is all ones while player 0
// moves and all zeros while player 1 does.
ConformanceFailures CheckSideToMove(const Game& game, const ConformanceOptions& options);

struct ConformanceCheck {
  const char* name;
  ConformanceFailures (*run)(const Game&, const ConformanceOptions&);
};
// Every check above, in the order of this header.
const std::vector<ConformanceCheck>& ConformanceChecks();
// Every check's failures, in order.
ConformanceFailures CheckConformance(const Game& game, const ConformanceOptions& options = {});

// Random playouts of `game`: the move lists of `options.playouts` games,
// each stopped when terminal or after MaxGameLength() + 1 plies.
std::vector<std::vector<int>> RandomPlayouts(const Game& game, const ConformanceOptions& options);

}  // namespace zerofarm::game
