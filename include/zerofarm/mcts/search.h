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
// leaves_per_round > 1, in-flight leaves carry a virtual loss.
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

  // The budget is spent and no leaf is in flight.
  bool Done() const { return in_flight_ == 0 && RootChildVisits() >= config_.simulations; }
  int InFlight() const { return in_flight_; }
  // Sum of the root children's visits (what the budget counts).
  int RootChildVisits() const;
  // Visit distribution over all ActionCount() actions (0 for illegal ones).
  void RootPolicy(float* out) const;
  // The root's value from the view of its player to move, in [-1, 1].
  float RootValue() const;
  // Samples proportionally to visits^(1/temperature); temperature 0 = most
  // visited (ties: higher prior). Precondition: the root has visits.
  int ChooseAction(float temperature, Rng& rng) const;
  // Plays `action` at the root, keeping its subtree when reuse_tree is set.
  // Precondition: InFlight() == 0.
  void Advance(int action);

  size_t NodeCount() const;

 private:
  struct Node;
  struct Pending;

  int SelectChild(int node) const;
  void Expand(int node, const game::State& state, const float* logits);
  void Backup(const std::vector<int>& path, float leaf_value, bool remove_virtual_loss);
  void AddRootNoise();
  int NewNode(int16_t action, float prior);

  const game::Game& game_;
  SearchConfig config_;
  Rng rng_;
  std::unique_ptr<game::State> root_state_;
  std::vector<Node> nodes_;   // nodes_[0] is the root; children are contiguous
  std::vector<Pending> pending_;  // slot per in-flight leaf (token = index)
  std::vector<int> free_tokens_;
  int in_flight_ = 0;
  bool root_noise_added_ = false;
  std::vector<int> legal_scratch_;
  std::unique_ptr<game::State> scratch_state_;
};

}  // namespace zerofarm::mcts
