#pragma once
// The conformance check that needs a shard (game/conformance.h has the
// others; io sits above game): random games of a Game, written as game
// records to a shard in a scratch directory and read back.
#include <string>

#include "zerofarm/game/conformance.h"

namespace zerofarm::io {

// "shard-round-trip": the shard's meta describes the game (ShardMetaForGame)
// and MakeGame(meta.game) rebuilds a game of the same shape, every record
// reads back exactly, every move fits the shard's int16 column, and the
// moves read back replay (Game::Replay) to the recorded winner, with the
// recorded features at every ply. Writes one shard into `dir` (an existing
// directory) and leaves it there.
game::ConformanceFailures CheckShardRoundTrip(const game::Game& game, const std::string& dir,
                                              const game::ConformanceOptions& options = {});

// For tests of readers in other languages (tests/python/test_shards.py):
// writes DIR/symmetry-000000.h5, a shard of random games whose policies give
// every action its own weight, and DIR/symmetry-samples.h5 with attributes
// game and symmetries (S) and datasets features [S, n, planes, height, width]
// and policy [S, n, actions]: the shard's n positions under each symmetry,
// transformed by game::TransformFeatures and TransformPolicy. Throws Error.
void WriteSymmetrySamples(const game::Game& game, const std::string& dir,
                          const game::ConformanceOptions& options = {});

}  // namespace zerofarm::io
