#pragma once
// One self-play game: a Search, the moves played, and the positions recorded
// for training. Driven through the same leaf API as Search, so a worker can
// interleave the leaves of many games in one batch.
//
//   SelfPlayGame g(game, config, game_id, seed, worker);
//   while (!g.Finished()) {
//     g.NextLeaves(L, &leaves);      // may play moves when a search ends
//     ... evaluate ...
//     g.OnResult(token, logits, value, model_version);
//   }
//   GameRecord r = g.TakeRecord();
//
// Playout-cap randomisation, resignation and the random opening (SearchConfig)
// are decided here, per move and per game, from the game's own seed.
//
// Thread safety: none; owned by one thread.
#include <cstdint>
#include <memory>
#include <vector>

#include "zerofarm/core/rng.h"
#include "zerofarm/game/game.h"
#include "zerofarm/mcts/game_record.h"
#include "zerofarm/mcts/search.h"

namespace zerofarm::mcts {

class SelfPlayGame {
 public:
  SelfPlayGame(const game::Game& game, const SearchConfig& config, uint64_t game_id, uint64_t seed,
               int worker);

  // Appends up to `max` leaves that need the network. Plays a move whenever
  // the current search is done, and finishes the game at a terminal position.
  // Returns 0 when the game is finished or every possible leaf is in flight.
  int NextLeaves(int max, std::vector<LeafRequest>* out);
  // `logits` has ActionCount() floats; `value` is for the player to move at
  // the leaf; `model_version` is recorded with the position being searched.
  void OnResult(int token, const float* logits, float value, uint32_t model_version);

  bool Finished() const { return finished_; }
  int InFlight() const { return search_.InFlight(); }
  int Ply() const { return static_cast<int>(record_.moves.size()); }
  uint64_t game_id() const { return record_.game_id; }
  // The finished game's record. Precondition: Finished(). Leaves *this empty.
  GameRecord TakeRecord();

 private:
  void PlayMove();
  // Plays the game's random opening (SearchConfig::random_opening_plies) on
  // `state`, the initial position, recording its moves and no rows.
  void PlayRandomOpening(game::State* state);
  // Picks the next move's budget (playout cap) before its search starts.
  void StartMove();
  // Ends the game with `winner` (0, 1, or -1 for a draw), filling z.
  void Finish(int winner);

  const game::Game& game_;
  SearchConfig config_;
  Search search_;
  Rng rng_;
  GameRecord record_;
  std::vector<float> policy_scratch_;
  uint32_t search_model_version_ = 0;  // newest version that answered this game's searches
  bool finished_ = false;
  bool full_search_ = true;    // the current move's search is a full one
  bool may_resign_ = false;    // resignation on, and this game is not a playthrough
  int low_moves_[2] = {0, 0};  // consecutive own moves with root value below the threshold
};

}  // namespace zerofarm::mcts
