#pragma once
// Settings of one tree search and of the self-play game around it. Plain
// data, validated once by the CLI layer (proc::FarmConfig::Validate).
#include <string>

namespace zerofarm::mcts {

// SearchConfig::value_discount (and the trainer's matching one) must lie in
// [kMinValueDiscount, 1]: below it, values a game's length away fade to nothing.
inline constexpr float kMinValueDiscount = 0.5f;

struct SearchConfig {
  int simulations = 100;         // root child visits per move (reused visits count; Gumbel: new ones only)
  float c_puct = 1.5f;           // exploration constant of PUCT
  float fpu_reduction = 0.25f;   // unvisited child's Q = parent's Q - this (first-play urgency)
  float dirichlet_alpha = 1.0f;  // root noise concentration (~10 / typical legal moves)
  float dirichlet_fraction = 0.25f;  // share of the root prior replaced by noise; 0 = off
  int temperature_plies = 8;         // plies played by sampling from visits (temperature 1); PUCT only
  float final_temperature = 0.0f;    // temperature after that; 0 = most visited
  // false: temperature 1 for each of the temperature_plies, then
  // final_temperature (a step). true: it falls linearly over those plies, from
  // 1 at ply 0 towards final_temperature, reached at ply temperature_plies.
  bool temperature_falls = false;
  // Self-play only (SelfPlayGame): each game starts with k uniformly random
  // legal moves, k uniform in [0, random_opening_plies] and drawn per game
  // from its seed; a move that would end the game is never one of them. They
  // are not searched and have no rows: the game's first row is at ply k, and
  // its moves (from the initial position) include them. Their plies count
  // towards temperature_plies. 0 = off (no draw is made: the games of a run
  // without it are as before).
  int random_opening_plies = 0;
  int leaves_per_round = 1;  // L: leaves per tree in flight (virtual loss when > 1)
  bool reuse_tree = true;    // keep the chosen child's subtree between moves
  // Each ply a value is backed up multiplies it by this: a win found nearer
  // the root scores higher, so the search prefers quicker wins and slower
  // losses (the exact solver's notion of the best move). 1 = AlphaZero's.
  float value_discount = 1.0f;
  // MCTS-solver (PUCT only): terminal results are carried up the tree as
  // proofs (won, drawn or lost, and in how many plies); a proven node is a
  // leaf with its exact value, a child proven lost is not searched while its
  // siblings are not all lost, and the move chosen is the quickest proven
  // win, else the most visited move not proven lost, else the slowest loss.
  bool solver = true;
  // With the solver: the policy target (Search::RootPolicy) follows the
  // root's proofs instead of the raw visits: all of it on the quickest proven
  // win(s); else none on moves proven lost (the visits of the rest,
  // renormalised); when every move is lost, all on the slowest loss(es). The
  // exact-score notion of the best move, taught to the policy head directly.
  bool proof_targets = true;

  // ---- Gumbel root search (Danihelka et al., ICLR 2022); docs/search.md ----
  bool gumbel = false;           // sequential halving at the root instead of PUCT
  int gumbel_m = 16;             // actions sampled (Gumbel-top-k) at the root
  float gumbel_scale = 1.0f;     // scale of the Gumbel noise; 0 = deterministic (evaluation)
  float gumbel_c_visit = 50.0f;  // sigma(q) = (c_visit + max child visits) * c_scale * q
  float gumbel_c_scale = 1.0f;

  // ---- playout-cap randomisation (KataGo) ----------------------------------
  // With probability playout_cap_fraction a move is searched with only
  // fast_simulations and no root noise; such positions are recorded with
  // full_search = 0 (use their value target, not their policy target).
  float playout_cap_fraction = 0.0f;  // 0 = every move is a full search
  int fast_simulations = 16;

  // ---- resignation ---------------------------------------------------------
  // A side resigns when its root value is below resign_threshold for
  // resign_moves consecutive own moves, except in a resign_playthrough share
  // of games, which play on and measure whether it would have been wrong.
  float resign_threshold = -1.0f;  // <= -1 = never resign
  int resign_moves = 3;
  float resign_playthrough = 0.1f;
  // > 0: the farm moves resign_threshold so that the measured
  // false-resignation rate approaches this (see docs/search.md).
  float resign_target = 0.0f;

  bool ResignEnabled() const { return resign_threshold > -1.0f; }
  // The temperature a self-play move at `ply` (0 = the game's first) is chosen with.
  float MoveTemperature(int ply) const {
    if (ply >= temperature_plies) return final_temperature;
    if (!temperature_falls) return 1.0f;
    return 1.0f -
           (1.0f - final_temperature) * static_cast<float>(ply) / static_cast<float>(temperature_plies);
  }

  // "simulations=100 c_puct=1.5 ...": stored in every shard.
  std::string Describe() const;
};

}  // namespace zerofarm::mcts
