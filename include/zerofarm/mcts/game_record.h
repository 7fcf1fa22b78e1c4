#pragma once
// What one finished self-play game leaves behind: one row per recorded
// position (columnar, ready for the HDF5 writer) and a summary of the game.
//
// Produced by mcts::SelfPlayGame in a worker; serialised through shared memory
// by proc; written by io::ShardWriter. Plain data, owned by value.
#include <cstdint>
#include <vector>

namespace zerofarm::mcts {

struct GameRecord {
  // ---- the game ----------------------------------------------------------
  uint64_t game_id = 0;  // unique within a run directory: proc::MakeGameId (host, epoch, worker, sequence)
  uint64_t seed = 0;     // the seed this game's randomness was drawn from
  int32_t worker = 0;    // index of the worker that played it
  int32_t winner = -1;   // 0 or 1 for a win, -1 for a draw
  std::vector<int16_t> moves;  // every move played, in order (length = plies)
  // The player (0 or 1) who resigned, ending the game (winner = the other);
  // -1 if it was played to the end.
  int32_t resigned = -1;
  // In a game chosen to play on (resign_playthrough): the first player whose
  // resignation condition held, -1 if none. With `winner` this measures
  // false resignations: the side would have resigned but did not lose.
  int32_t would_resign = -1;

  // ---- one entry per recorded position (n = ply.size()) ------------------
  std::vector<uint8_t> features;  // n x FeatureBytes, planes from the mover's view
  std::vector<float>
      policy;            // n x ActionCount: search policy (visits or Gumbel's improved policy), sums to 1
  std::vector<float> z;  // final result from the mover's view: +1 / 0 / -1
  std::vector<float> root_value;        // search value of the root, mover's view, in [-1, 1]
  std::vector<int16_t> ply;             // plies played before this position
  std::vector<uint32_t> model_version;  // version of the network that searched it (0 = random)
  std::vector<uint8_t> full_search;     // 1 = full search (a policy target), 0 = playout-capped fast search

  size_t Positions() const { return ply.size(); }
  // A false resignation: a side would have resigned and did not lose.
  bool FalseResignation() const { return would_resign >= 0 && winner != 1 - would_resign; }
};

}  // namespace zerofarm::mcts
