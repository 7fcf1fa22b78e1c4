#include "zerofarm/mcts/search.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "zerofarm/core/error.h"

namespace zerofarm::mcts {

// Values: a node's `w` sums values from the view of the player who made the
// move into it (the player to move at its parent), so a parent picks the child
// with the highest w / n. A leaf's network value is for the player to move at
// the leaf and enters the leaf's `w` negated.
struct Search::Node {
  float prior = 0.0f;
  float w = 0.0f;            // sum of backed-up values (see above)
  int32_t n = 0;             // completed visits
  int32_t virtual_visits = 0;  // leaves in flight below this node (virtual loss)
  int32_t first_child = -1;  // index of the first child; children are contiguous
  int16_t num_children = 0;
  int16_t action = -1;       // the move from the parent into this node
  uint8_t kind = kUnexpanded;
  float terminal_value = 0.0f;  // for kTerminal: value for the player to move here

  static constexpr uint8_t kUnexpanded = 0;
  static constexpr uint8_t kPending = 1;   // a leaf in flight
  static constexpr uint8_t kExpanded = 2;
  static constexpr uint8_t kTerminal = 3;
};

struct Search::Pending {
  std::vector<int> path;  // root .. leaf node indices
  std::unique_ptr<game::State> state;
  bool virtual_loss = false;
};

std::string SearchConfig::Describe() const {
  std::ostringstream os;
  os << "simulations=" << simulations << " c_puct=" << c_puct << " fpu_reduction=" << fpu_reduction
     << " dirichlet_alpha=" << dirichlet_alpha << " dirichlet_fraction=" << dirichlet_fraction
     << " temperature_plies=" << temperature_plies << " final_temperature=" << final_temperature
     << " leaves_per_round=" << leaves_per_round << " reuse_tree=" << (reuse_tree ? 1 : 0);
  return os.str();
}

Search::Search(const game::Game& game, const SearchConfig& config, uint64_t seed)
    : game_(game), config_(config), rng_(seed) {
  ZF_CHECK(config_.simulations >= 1) << config_.simulations;
  ZF_CHECK(config_.leaves_per_round >= 1) << config_.leaves_per_round;
  scratch_state_ = game_.NewInitialState();
}

Search::~Search() = default;

size_t Search::NodeCount() const { return nodes_.size(); }

int Search::NewNode(int16_t action, float prior) {
  nodes_.emplace_back();
  nodes_.back().action = action;
  nodes_.back().prior = prior;
  return static_cast<int>(nodes_.size()) - 1;
}

void Search::SetRoot(const game::State& root) {
  ZF_CHECK(in_flight_ == 0) << "SetRoot with leaves in flight";
  ZF_CHECK(!root.IsTerminal()) << "search root is terminal";
  if (!root_state_) root_state_ = root.Clone();
  else root_state_->CopyFrom(root);
  nodes_.clear();
  NewNode(-1, 1.0f);
  root_noise_added_ = false;
}

int Search::RootChildVisits() const {
  if (nodes_.empty()) return 0;
  const Node& root = nodes_[0];
  int sum = 0;
  for (int i = 0; i < root.num_children; ++i) sum += nodes_[root.first_child + i].n;
  return sum;
}

int Search::SelectChild(int node_index) const {
  const Node& node = nodes_[node_index];
  const int parent_visits = node.n + node.virtual_visits;
  const float sqrt_parent = std::sqrt(static_cast<float>(std::max(parent_visits, 1)));
  // The parent's value for its player to move; unvisited children start a
  // little below it (first-play urgency).
  const float parent_q = node.n > 0 ? -node.w / static_cast<float>(node.n) : 0.0f;
  const float fpu = parent_q - config_.fpu_reduction;
  int best = -1;
  float best_score = -1e30f;
  for (int i = 0; i < node.num_children; ++i) {
    const int c = node.first_child + i;
    const Node& child = nodes_[c];
    const int visits = child.n + child.virtual_visits;
    // A virtual visit counts as a loss for the chooser.
    const float q = visits > 0 ? (child.w - static_cast<float>(child.virtual_visits)) /
                                     static_cast<float>(visits)
                               : fpu;
    const float u = config_.c_puct * child.prior * sqrt_parent / (1.0f + static_cast<float>(visits));
    const float score = q + u;
    if (score > best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

int Search::SelectLeaves(int max, std::vector<LeafRequest>* out) {
  ZF_CHECK(root_state_) << "SelectLeaves before SetRoot";
  int added = 0;
  const bool use_virtual_loss = config_.leaves_per_round > 1;
  while (added < max && RootChildVisits() + in_flight_ < config_.simulations + (nodes_[0].kind == Node::kUnexpanded ? 1 : 0)) {
    if (nodes_[0].kind == Node::kPending) break;  // the root's own evaluation is in flight
    if (nodes_[0].kind == Node::kExpanded && !root_noise_added_) AddRootNoise();
    // Descend from the root, replaying moves on a scratch state.
    std::vector<int> path;
    path.reserve(32);
    scratch_state_->CopyFrom(*root_state_);
    int node = 0;
    path.push_back(0);
    while (nodes_[node].kind == Node::kExpanded) {
      node = SelectChild(node);
      path.push_back(node);
      scratch_state_->Apply(nodes_[node].action);
    }
    Node& leaf = nodes_[node];
    if (leaf.kind == Node::kPending) break;  // collision with a leaf in flight: wait
    if (leaf.kind == Node::kUnexpanded && scratch_state_->IsTerminal()) {
      leaf.kind = Node::kTerminal;
      leaf.terminal_value = scratch_state_->Outcome(scratch_state_->CurrentPlayer());
    }
    if (leaf.kind == Node::kTerminal) {
      Backup(path, leaf.terminal_value, false);
      continue;
    }
    // A new leaf for the network.
    int token;
    if (!free_tokens_.empty()) {
      token = free_tokens_.back();
      free_tokens_.pop_back();
    } else {
      token = static_cast<int>(pending_.size());
      pending_.emplace_back();
    }
    Pending& p = pending_[token];
    p.path = std::move(path);
    if (!p.state) p.state = scratch_state_->Clone();
    else p.state->CopyFrom(*scratch_state_);
    p.virtual_loss = use_virtual_loss;
    leaf.kind = Node::kPending;
    if (use_virtual_loss)
      for (int i : p.path) nodes_[i].virtual_visits += 1;
    ++in_flight_;
    out->push_back(LeafRequest{token, p.state.get()});
    ++added;
    if (node == 0) break;  // the root must be expanded before anything else
  }
  return added;
}

void Search::Expand(int node_index, const game::State& state, const float* logits) {
  state.LegalActions(&legal_scratch_);
  ZF_CHECK(!legal_scratch_.empty()) << "non-terminal state without legal actions";
  float max_logit = -1e30f;
  for (int a : legal_scratch_) max_logit = std::max(max_logit, logits[a]);
  float sum = 0.0f;
  const int first = static_cast<int>(nodes_.size());
  for (int a : legal_scratch_) {
    const float p = std::exp(logits[a] - max_logit);
    sum += p;
    NewNode(static_cast<int16_t>(a), p);
  }
  for (size_t i = 0; i < legal_scratch_.size(); ++i) nodes_[first + i].prior /= sum;
  Node& node = nodes_[node_index];  // after the emplace_backs: nodes_ may have moved
  node.first_child = first;
  node.num_children = static_cast<int16_t>(legal_scratch_.size());
  node.kind = Node::kExpanded;
}

void Search::Backup(const std::vector<int>& path, float leaf_value, bool remove_virtual_loss) {
  // leaf_value is for the player to move at the leaf; the leaf's w is from the
  // view of the player who moved into it, so it enters negated, alternating up.
  float v = -leaf_value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    Node& n = nodes_[*it];
    n.n += 1;
    n.w += v;
    if (remove_virtual_loss) n.virtual_visits -= 1;
    v = -v;
  }
}

void Search::CompleteLeaf(int token, const float* logits, float value) {
  ZF_CHECK(token >= 0 && token < static_cast<int>(pending_.size())) << token;
  Pending& p = pending_[token];
  ZF_CHECK(!p.path.empty()) << "token " << token << " completed twice";
  const int leaf = p.path.back();
  ZF_CHECK(nodes_[leaf].kind == Node::kPending);
  Expand(leaf, *p.state, logits);
  Backup(p.path, std::clamp(value, -1.0f, 1.0f), p.virtual_loss);
  p.path.clear();
  free_tokens_.push_back(token);
  --in_flight_;
}

void Search::AddRootNoise() {
  root_noise_added_ = true;
  const Node& root = nodes_[0];
  if (config_.dirichlet_fraction <= 0.0f || root.num_children <= 1) return;
  std::gamma_distribution<float> gamma(config_.dirichlet_alpha, 1.0f);
  std::vector<float> noise(root.num_children);
  float sum = 0.0f;
  for (auto& x : noise) sum += (x = gamma(rng_));
  if (sum <= 0.0f) return;
  const float eps = config_.dirichlet_fraction;
  for (int i = 0; i < root.num_children; ++i) {
    Node& c = nodes_[root.first_child + i];
    c.prior = (1.0f - eps) * c.prior + eps * noise[i] / sum;
  }
}

void Search::RootPolicy(float* out) const {
  std::fill(out, out + game_.ActionCount(), 0.0f);
  const Node& root = nodes_[0];
  const int total = RootChildVisits();
  if (total == 0) return;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    out[c.action] = static_cast<float>(c.n) / static_cast<float>(total);
  }
}

float Search::RootValue() const {
  const Node& root = nodes_[0];
  return root.n > 0 ? -root.w / static_cast<float>(root.n) : 0.0f;
}

int Search::ChooseAction(float temperature, Rng& rng) const {
  const Node& root = nodes_[0];
  ZF_CHECK(root.num_children > 0) << "ChooseAction on an unexpanded root";
  if (temperature <= 0.0f) {
    int best = root.first_child;
    for (int i = 1; i < root.num_children; ++i) {
      const Node& c = nodes_[root.first_child + i];
      const Node& b = nodes_[best];
      if (c.n > b.n || (c.n == b.n && c.prior > b.prior)) best = root.first_child + i;
    }
    return nodes_[best].action;
  }
  std::vector<double> weights(root.num_children);
  double sum = 0.0;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    weights[i] = c.n > 0 ? std::pow(static_cast<double>(c.n), 1.0 / temperature) : 0.0;
    sum += weights[i];
  }
  if (sum <= 0.0) return ChooseAction(0.0f, rng);
  double r = rng.Uniform() * sum;
  for (int i = 0; i < root.num_children; ++i) {
    r -= weights[i];
    if (r < 0.0) return nodes_[root.first_child + i].action;
  }
  return nodes_[root.first_child + root.num_children - 1].action;
}

void Search::Advance(int action) {
  ZF_CHECK(in_flight_ == 0) << "Advance with leaves in flight";
  root_state_->Apply(action);
  root_noise_added_ = false;
  const Node& root = nodes_[0];
  int new_root = -1;
  for (int i = 0; config_.reuse_tree && i < root.num_children; ++i)
    if (nodes_[root.first_child + i].action == action) new_root = root.first_child + i;
  if (new_root < 0 || nodes_[new_root].kind != Node::kExpanded || root_state_->IsTerminal()) {
    nodes_.clear();
    NewNode(-1, 1.0f);
    return;
  }
  // Copy the kept subtree into a fresh arena, breadth first, so children stay
  // contiguous and the old tree's memory is reused next time.
  std::vector<Node> kept;
  kept.reserve(nodes_.size());
  kept.push_back(nodes_[new_root]);
  kept[0].action = -1;
  kept[0].prior = 1.0f;
  std::vector<int> old_index{new_root};
  for (size_t i = 0; i < kept.size(); ++i) {
    const Node old = nodes_[old_index[i]];
    if (old.kind != Node::kExpanded) continue;
    kept[i].first_child = static_cast<int32_t>(kept.size());
    for (int c = 0; c < old.num_children; ++c) {
      kept.push_back(nodes_[old.first_child + c]);
      old_index.push_back(old.first_child + c);
    }
  }
  nodes_.swap(kept);
}

}  // namespace zerofarm::mcts
