#pragma once
// PUCT tree search driven through a leaf API: the search never calls a
// network. A caller (a worker process, or the in-process self-play loop)
// asks for leaves, sends their features wherever it likes, and hands the
// network's (policy logits, value) back; many searches can therefore keep
// leaves in flight at once and share one batched evaluator.
//
//   Search s(game, config, seed);
//   s.SetRoot(*state);
//   while (!s.Done()) {
//     s.SelectLeaves(L, &leaves);             // 0..L leaves need the network
//     ... evaluate leaves[i].state ...
//     s.CompleteLeaf(leaves[i].token, logits, value);
//   }
//   s.Advance(s.ChooseAction(temperature, rng));   // tree reuse
//
// Terminal positions are resolved without the network. With
// leaves_per_round > 1, in-flight leaves carry a virtual loss. With
// config.solver (PUCT), game results are proven up the tree (MCTS-solver,
// Winands et al. 2008): proven nodes are leaves with exact values, proven-lost
// moves are avoided and a proven win is played at once; docs/search.md.
//
// With config.gumbel the same API runs Gumbel MuZero's search (Danihelka et
// al., ICLR 2022): Gumbel-top-k sampling of gumbel_m root actions, sequential
// halving of the budget among them, the deterministic non-root selection
// argmax(pi' - N / (1 + sum N)), RootPolicy = the completed-Q improved policy
// softmax(logits + sigma(completedQ)), and ChooseAction = the halving winner.
// Details and deviations: docs/search.md.
//
// Thread safety: none; a Search belongs to one thread.
#include <cstdint>
#include <memory>
#include <vector>

#include "zerofarm/core/rng.h"
#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search_config.h"

namespace zerofarm::mcts {

// A leaf that needs the network. `state` stays valid until the leaf is
// completed; `token` identifies it to CompleteLeaf.
struct LeafRequest {
  int token = -1;
  const game::State* state = nullptr;
};

class Search {
 public:
  Search(const game::Game& game, const SearchConfig& config, uint64_t seed);
  ~Search();
  Search(const Search&) = delete;
  Search& operator=(const Search&) = delete;

  // Discards the tree and starts from `root` (which must not be terminal).
  void SetRoot(const game::State& root);
  const game::State& RootState() const { return *root_state_; }

  // Appends up to `max` new leaves to `out` and returns how many. Leaves that
  // reach a terminal position are backed up at once and not returned. Returns
  // 0 when the budget is spent or when selection would only find leaves
  // already in flight (wait for results, then call again).
  int SelectLeaves(int max, std::vector<LeafRequest>* out);
  // Expands the leaf with softmax(logits over its legal actions) as priors and
  // backs `value` (from the view of the player to move at the leaf) up the path.
  void CompleteLeaf(int token, const float* logits, float value);

  // This move's budget (config.simulations unless SetMoveBudget changed it)
  // and whether root noise (Dirichlet, or Gumbel's) is used. Call after
  // SetRoot/Advance, before the move's first SelectLeaves; Advance and
  // SetRoot restore (config.simulations, noise on).
  void SetMoveBudget(int simulations, bool root_noise);

  // The budget is spent and no leaf is in flight.
  bool Done() const;
  int InFlight() const { return in_flight_; }
  // Sum of the root children's visits (what the budget counts).
  int RootChildVisits() const;
  // The policy target over all ActionCount() actions (0 for illegal ones):
  // the visit distribution (PUCT), or softmax(logits + sigma(completedQ))
  // over the legal actions (Gumbel). Sums to 1. Precondition: root expanded.
  // With the solver and config.proof_targets, root proofs shape it: all on
  // the quickest proven win(s); else 0 on moves proven lost and the visits of
  // the rest renormalised; all on the slowest loss(es) when every move is lost.
  void RootPolicy(float* out) const;
  // Visits of each root child (all ActionCount() actions; 0 for illegal ones).
  void RootVisitCounts(int* out) const;
  // The root's value from the view of its player to move, in [-1, 1]; exact
  // (+-value_discount^plies, or 0 for a draw) once the solver proved it.
  float RootValue() const;
  // The solver proved the root's game-theoretic result (config.solver, PUCT).
  bool RootProven() const;
  // PUCT: samples proportionally to visits^(1/temperature); temperature 0 =
  // most visited (ties: higher prior). With the solver a proven win is played
  // at once (the quickest proof), moves proven lost never are (unless all
  // are: then the slowest loss). Gumbel: the sequential-halving winner
  // (temperature is ignored; the Gumbel noise explores). Precondition: the
  // root has visits.
  int ChooseAction(float temperature, Rng& rng) const;
  // Plays `action` at the root, keeping its subtree when reuse_tree is set.
  // Precondition: InFlight() == 0.
  void Advance(int action);

  size_t NodeCount() const;

 private:
  struct Node;
  struct Pending;

  int SelectChild(int node) const;
  // Gumbel: the root child for the next simulation, and the non-root rule.
  int SelectGumbelRootChild() const;
  int SelectGumbelChild(int node) const;
  // completedQ of node's children (parent's view, in [0, 1]) into q_scratch_,
  // and the improved policy softmax(log prior + sigma(q)) into pi_scratch_.
  void ImprovedPolicy(int node) const;
  // Gumbel noise, top-k and per-move visit baselines, at a move's first selection.
  void PrepareGumbelRoot();
  // The root child with the most visits this move among the considered,
  // ties by g + log prior + sigma(q).
  int GumbelWinner() const;
  void Expand(int node, const game::State& state, const float* logits, float value);
  // MCTS-solver (solver_): marks a node terminal (and proven when solving);
  // whether a node is proven; its exact value for the player who moved into
  // it (discount^plies, 0 for a draw); proves an expanded node from its
  // children (true when proven); proves the ancestors of path[proven_at]
  // while they follow; the action proofs decide at the root (-1: none).
  void MarkTerminal(int node, const game::State& state);
  bool IsProven(int node) const;
  float ProvenValue(const Node& node) const;
  bool TryProve(int node);
  void PropagateProof(const std::vector<int>& path, size_t proven_at);
  int ChooseProvenAction() const;
  // RootPolicy from the root's proofs; false (out untouched) when no root
  // child is proven won or lost, so the visits stand.
  bool ProofPolicy(float* out) const;
  void Backup(const std::vector<int>& path, float leaf_value, bool remove_virtual_loss);
  void AddRootNoise();
  int NewNode(int16_t action, float prior);

  const game::Game& game_;
  SearchConfig config_;
  bool solver_;  // config_.solver && !config_.gumbel
  Rng rng_;
  std::unique_ptr<game::State> root_state_;
  std::vector<Node> nodes_;       // nodes_[0] is the root; children are contiguous
  std::vector<Pending> pending_;  // slot per in-flight leaf (token = index)
  std::vector<int> free_tokens_;
  int in_flight_ = 0;
  bool root_noise_added_ = false;  // root prepared for this move (noise, Gumbel top-k)
  int budget_ = 0;                 // this move's simulations
  bool root_noise_ = true;         // this move uses root noise
  int sims_started_ = 0;           // Gumbel: simulations started this move (incl. in flight)
  // Gumbel, per root child i (index from first_child): noise g(a), visits
  // before this move (tree reuse), and whether it is among the top-k.
  std::vector<float> gumbel_;
  std::vector<int> base_visits_;
  std::vector<uint8_t> considered_;
  int num_considered_ = 0;
  std::vector<int> visit_schedule_;  // considered visit count of the k-th simulation
  mutable std::vector<float> q_scratch_, pi_scratch_;
  std::vector<int> legal_scratch_;
  std::unique_ptr<game::State> scratch_state_;
};

}  // namespace zerofarm::mcts
