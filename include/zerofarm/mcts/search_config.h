#pragma once
// Settings of one tree search. Plain data, validated once by the CLI layer.
#include <string>

namespace zerofarm::mcts {

struct SearchConfig {
  int simulations = 100;          // root child visits per move (reused visits count)
  float c_puct = 1.5f;            // exploration constant of PUCT
  float fpu_reduction = 0.25f;    // unvisited child's Q = parent's Q - this (first-play urgency)
  float dirichlet_alpha = 1.0f;   // root noise concentration (~10 / typical legal moves)
  float dirichlet_fraction = 0.25f;  // share of the root prior replaced by noise; 0 = off
  int temperature_plies = 8;      // plies played by sampling from visits (temperature 1)
  float final_temperature = 0.0f; // temperature after that; 0 = most visited
  int leaves_per_round = 1;       // L: leaves per tree in flight (virtual loss when > 1)
  bool reuse_tree = true;         // keep the chosen child's subtree between moves

  // "simulations=100 c_puct=1.5 ...": stored in every shard.
  std::string Describe() const;
};

}  // namespace zerofarm::mcts
