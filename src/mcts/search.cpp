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
  float w = 0.0f;              // sum of backed-up values (see above)
  int32_t n = 0;               // completed visits
  int32_t virtual_visits = 0;  // leaves in flight below this node (virtual loss)
  int32_t first_child = -1;    // index of the first child; children are contiguous
  int16_t num_children = 0;
  int16_t action = -1;  // the move from the parent into this node
  uint8_t kind = kUnexpanded;
  float terminal_value = 0.0f;  // for kTerminal: value for the player to move here
  float net_value = 0.0f;       // for kExpanded: the network's value, player to move here
  float log_prior = 0.0f;       // log of the network's prior (before root noise); Gumbel's logits
  // MCTS-solver (config.solver): the game-theoretic result with best play,
  // from the view of the player who moved into this node, and the plies from
  // here to the end it takes (a win as quick, a loss as slow as possible).
  uint8_t proof = kUnproven;
  int16_t proof_plies = 0;

  static constexpr uint8_t kUnproven = 0;
  static constexpr uint8_t kProvenWin = 1;
  static constexpr uint8_t kProvenDraw = 2;
  static constexpr uint8_t kProvenLoss = 3;

  static constexpr uint8_t kUnexpanded = 0;
  static constexpr uint8_t kPending = 1;  // a leaf in flight
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
  // Appended only when they change the search from what a description without
  // them meant, so older descriptions stay as they were (the solver, new and
  // on by default, is named when on).
  if (gumbel)
    os << " search=gumbel gumbel_m=" << gumbel_m << " gumbel_scale=" << gumbel_scale
       << " gumbel_c_visit=" << gumbel_c_visit << " gumbel_c_scale=" << gumbel_c_scale;
  if (temperature_falls) os << " temperature_falls=1";
  if (random_opening_plies > 0) os << " random_opening_plies=" << random_opening_plies;
  if (playout_cap_fraction > 0.0f)
    os << " playout_cap_fraction=" << playout_cap_fraction << " fast_simulations=" << fast_simulations;
  if (ResignEnabled())
    os << " resign_threshold=" << resign_threshold << " resign_moves=" << resign_moves
       << " resign_playthrough=" << resign_playthrough << " resign_target=" << resign_target;
  if (value_discount != 1.0f) os << " value_discount=" << value_discount;
  if (solver && !gumbel) os << " solver=1";
  if (solver && !gumbel && proof_targets) os << " proof_targets=1";
  return os.str();
}

Search::Search(const game::Game& game, const SearchConfig& config, uint64_t seed)
    : game_(game), config_(config), solver_(config.solver && !config.gumbel), rng_(seed) {
  ZF_CHECK(config_.simulations >= 1) << config_.simulations;
  ZF_CHECK(config_.leaves_per_round >= 1) << config_.leaves_per_round;
  ZF_CHECK(config_.gumbel_m >= 1) << config_.gumbel_m;
  scratch_state_ = game_.NewInitialState();
  budget_ = config_.simulations;
}

void Search::SetMoveBudget(int simulations, bool root_noise) {
  ZF_CHECK(simulations >= 1) << simulations;
  ZF_CHECK(!root_noise_added_) << "SetMoveBudget after the move's search started";
  budget_ = simulations;
  root_noise_ = root_noise;
}

bool Search::Done() const {
  if (in_flight_ != 0) return false;
  if (config_.gumbel) return sims_started_ >= budget_;
  return RootChildVisits() >= budget_;
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
  if (!root_state_)
    root_state_ = root.Clone();
  else
    root_state_->CopyFrom(root);
  nodes_.clear();
  NewNode(-1, 1.0f);
  root_noise_added_ = false;
  budget_ = config_.simulations;
  root_noise_ = true;
  sims_started_ = 0;
  num_considered_ = 0;
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
    float q =
        visits > 0 ? (child.w - static_cast<float>(child.virtual_visits)) / static_cast<float>(visits) : fpu;
    float penalty = 0.0f;
    if (solver_ && child.proof != Node::kUnproven) {
      // The exact value; a move proven lost is searched only when every
      // move is (then the slowest loss scores highest).
      q = ProvenValue(child);
      if (child.proof == Node::kProvenLoss) penalty = 1e6f;
    }
    const float u = config_.c_puct * child.prior * sqrt_parent / (1.0f + static_cast<float>(visits));
    const float score = q + u - penalty;
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
  // Gumbel counts in-flight leaves in virtual_visits for its visit schedule
  // and its non-root rule; it never applies a virtual loss to Q.
  const bool count_in_flight = use_virtual_loss || config_.gumbel;
  auto budget_left = [&]() {
    if (nodes_[0].kind == Node::kUnexpanded) return true;
    if (config_.gumbel) return sims_started_ < budget_;
    return RootChildVisits() + in_flight_ < budget_;
  };
  while (added < max && budget_left()) {
    if (nodes_[0].kind == Node::kPending) break;  // the root's own evaluation is in flight
    if (nodes_[0].kind == Node::kExpanded && !root_noise_added_) {
      if (config_.gumbel)
        PrepareGumbelRoot();
      else
        AddRootNoise();
    }
    // Descend from the root, replaying moves on a scratch state.
    std::vector<int> path;
    path.reserve(32);
    scratch_state_->CopyFrom(*root_state_);
    int node = 0;
    path.push_back(0);
    // A proven node below the root is a leaf: its value is exact.
    while (nodes_[node].kind == Node::kExpanded && (node == 0 || !IsProven(node))) {
      if (!config_.gumbel)
        node = SelectChild(node);
      else
        node = node == 0 ? SelectGumbelRootChild() : SelectGumbelChild(node);
      path.push_back(node);
      scratch_state_->Apply(nodes_[node].action);
    }
    Node& leaf = nodes_[node];
    if (leaf.kind == Node::kPending) break;  // collision with a leaf in flight: wait
    if (node != 0) ++sims_started_;
    if (leaf.kind == Node::kUnexpanded && scratch_state_->IsTerminal()) {
      MarkTerminal(node, *scratch_state_);
      if (solver_) PropagateProof(path, path.size() - 1);
    }
    if (leaf.kind == Node::kTerminal) {
      Backup(path, leaf.terminal_value, false);
      continue;
    }
    if (node != 0 && IsProven(node)) {
      Backup(path, -ProvenValue(nodes_[node]), false);
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
    if (!p.state)
      p.state = scratch_state_->Clone();
    else
      p.state->CopyFrom(*scratch_state_);
    p.virtual_loss = count_in_flight;
    leaf.kind = Node::kPending;
    if (count_in_flight)
      for (int i : p.path) nodes_[i].virtual_visits += 1;
    ++in_flight_;
    out->push_back(LeafRequest{token, p.state.get()});
    ++added;
    if (node == 0) break;  // the root must be expanded before anything else
  }
  return added;
}

void Search::Expand(int node_index, const game::State& state, const float* logits, float value) {
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
  const float log_sum = std::log(sum);
  for (size_t i = 0; i < legal_scratch_.size(); ++i) {
    Node& c = nodes_[first + i];
    c.log_prior = logits[c.action] - max_logit - log_sum;
    c.prior /= sum;
  }
  Node& node = nodes_[node_index];  // after the emplace_backs: nodes_ may have moved
  node.first_child = first;
  node.num_children = static_cast<int16_t>(legal_scratch_.size());
  node.kind = Node::kExpanded;
  node.net_value = value;
  if (!solver_) return;
  // One ply of lookahead: children that end the game are known at once, so a
  // win in one is proven the moment its parent is expanded.
  for (int i = first; i < first + static_cast<int>(legal_scratch_.size()); ++i) {
    scratch_state_->CopyFrom(state);
    scratch_state_->Apply(nodes_[i].action);
    if (scratch_state_->IsTerminal()) MarkTerminal(i, *scratch_state_);
  }
}

void Search::MarkTerminal(int node_index, const game::State& state) {
  Node& node = nodes_[node_index];
  node.kind = Node::kTerminal;
  node.terminal_value = state.Outcome(state.CurrentPlayer());
  if (!solver_) return;
  const float mover = -node.terminal_value;
  node.proof = mover > 0.0f ? Node::kProvenWin : mover < 0.0f ? Node::kProvenLoss : Node::kProvenDraw;
  node.proof_plies = 0;
}

bool Search::RootProven() const { return !nodes_.empty() && IsProven(0); }

bool Search::IsProven(int node_index) const { return solver_ && nodes_[node_index].proof != Node::kUnproven; }

float Search::ProvenValue(const Node& node) const {
  if (node.proof == Node::kProvenDraw) return 0.0f;
  const float v = std::pow(config_.value_discount, static_cast<float>(node.proof_plies));
  return node.proof == Node::kProvenWin ? v : -v;
}

bool Search::TryProve(int node_index) {
  Node& node = nodes_[node_index];
  if (node.kind != Node::kExpanded) return false;
  // Children are proven from the view of the player to move here, the
  // opponent of the player who moved into this node.
  int quickest_win = -1, slowest_loss = -1, draw_plies = -1;
  bool all_proven = true;
  for (int i = 0; i < node.num_children; ++i) {
    const Node& c = nodes_[node.first_child + i];
    switch (c.proof) {
      case Node::kProvenWin:
        quickest_win = quickest_win < 0 ? c.proof_plies : std::min<int>(quickest_win, c.proof_plies);
        break;
      case Node::kProvenLoss:
        slowest_loss = std::max<int>(slowest_loss, c.proof_plies);
        break;
      case Node::kProvenDraw:
        draw_plies = std::max<int>(draw_plies, c.proof_plies);
        break;
      default:
        all_proven = false;
    }
  }
  // Recomputed from the children each time, so a proof's length follows a
  // quicker win found later (the outcome itself never changes). The length
  // is that of the proof found: an upper bound on a win's, since proven
  // nodes below the root are not searched further.
  const uint8_t old_proof = node.proof;
  const int16_t old_plies = node.proof_plies;
  if (quickest_win >= 0) {  // the player to move here wins: this node is lost for its mover
    node.proof = Node::kProvenLoss;
    node.proof_plies = static_cast<int16_t>(quickest_win + 1);
  } else if (all_proven && draw_plies >= 0) {
    node.proof = Node::kProvenDraw;
    node.proof_plies = static_cast<int16_t>(draw_plies + 1);
  } else if (all_proven) {  // every reply loses
    node.proof = Node::kProvenWin;
    node.proof_plies = static_cast<int16_t>(slowest_loss + 1);
  }
  return node.proof != old_proof || node.proof_plies != old_plies;
}

void Search::PropagateProof(const std::vector<int>& path, size_t proven_at) {
  // path[proven_at]'s proof is new or shorter; its ancestors may follow,
  // nearest first, until one does not change.
  for (size_t i = proven_at; i-- > 0;)
    if (!TryProve(path[i])) return;
}

void Search::Backup(const std::vector<int>& path, float leaf_value, bool remove_virtual_loss) {
  // leaf_value is for the player to move at the leaf; the leaf's w is from the
  // view of the player who moved into it, so it enters negated, alternating up.
  // With a value_discount below 1 each ply up scales it down.
  const float discount = config_.value_discount;
  float v = -leaf_value;
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    Node& n = nodes_[*it];
    n.n += 1;
    n.w += v;
    if (remove_virtual_loss) n.virtual_visits -= 1;
    v = -v * discount;
  }
}

void Search::CompleteLeaf(int token, const float* logits, float value) {
  ZF_CHECK(token >= 0 && token < static_cast<int>(pending_.size())) << token;
  Pending& p = pending_[token];
  ZF_CHECK(!p.path.empty()) << "token " << token << " completed twice";
  const int leaf = p.path.back();
  ZF_CHECK(nodes_[leaf].kind == Node::kPending);
  value = std::clamp(value, -1.0f, 1.0f);
  Expand(leaf, *p.state, logits, value);
  if (solver_ && TryProve(leaf)) {  // a leaf's first proof
    // A child ends the game: back up the exact value, not the network's.
    value = -ProvenValue(nodes_[leaf]);
    PropagateProof(p.path, p.path.size() - 1);
  }
  Backup(p.path, value, p.virtual_loss);
  p.path.clear();
  free_tokens_.push_back(token);
  --in_flight_;
}

void Search::AddRootNoise() {
  root_noise_added_ = true;
  const Node& root = nodes_[0];
  if (!root_noise_ || config_.dirichlet_fraction <= 0.0f || root.num_children <= 1) return;
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
  if (config_.gumbel) {
    ZF_CHECK(root.kind == Node::kExpanded) << "RootPolicy on an unexpanded root";
    ImprovedPolicy(0);
    for (int i = 0; i < root.num_children; ++i) out[nodes_[root.first_child + i].action] = pi_scratch_[i];
    return;
  }
  if (solver_ && config_.proof_targets && ProofPolicy(out)) return;
  const int total = RootChildVisits();
  if (total == 0) return;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    out[c.action] = static_cast<float>(c.n) / static_cast<float>(total);
  }
}

bool Search::ProofPolicy(float* out) const {
  const Node& root = nodes_[0];
  if (root.kind != Node::kExpanded) return false;
  int quickest_win = -1, slowest_loss = -1, lost = 0, open_visits = 0;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    if (c.proof == Node::kProvenWin)
      quickest_win = quickest_win < 0 ? c.proof_plies : std::min<int>(quickest_win, c.proof_plies);
    else if (c.proof == Node::kProvenLoss) {
      slowest_loss = std::max<int>(slowest_loss, c.proof_plies);
      ++lost;
    } else {
      open_visits += c.n;
    }
  }
  if (quickest_win < 0 && lost == 0) return false;  // no proof changes anything: the visits
  // The moves the target spreads over: the quickest wins; else every move
  // not lost, by visits (uniformly when none was visited); else the slowest
  // losses.
  auto weight = [&](const Node& c) -> float {
    if (quickest_win >= 0) return c.proof == Node::kProvenWin && c.proof_plies == quickest_win ? 1.0f : 0.0f;
    if (lost == root.num_children) return c.proof_plies == slowest_loss ? 1.0f : 0.0f;
    if (c.proof == Node::kProvenLoss) return 0.0f;
    return open_visits > 0 ? static_cast<float>(c.n) : 1.0f;
  };
  float sum = 0.0f;
  for (int i = 0; i < root.num_children; ++i) sum += weight(nodes_[root.first_child + i]);
  if (sum <= 0.0f) return false;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    out[c.action] = weight(c) / sum;
  }
  return true;
}

void Search::RootVisitCounts(int* out) const {
  std::fill(out, out + game_.ActionCount(), 0);
  const Node& root = nodes_[0];
  for (int i = 0; i < root.num_children; ++i)
    out[nodes_[root.first_child + i].action] = nodes_[root.first_child + i].n;
}

float Search::RootValue() const {
  const Node& root = nodes_[0];
  if (IsProven(0)) return -ProvenValue(root);
  return root.n > 0 ? -root.w / static_cast<float>(root.n) : 0.0f;
}

int Search::ChooseProvenAction() const {
  const Node& root = nodes_[0];
  int quickest_win = -1, slowest_loss = -1, not_lost = 0;
  for (int i = 0; i < root.num_children; ++i) {
    const int c = root.first_child + i;
    const Node& child = nodes_[c];
    if (child.proof == Node::kProvenWin &&
        (quickest_win < 0 || child.proof_plies < nodes_[quickest_win].proof_plies))
      quickest_win = c;
    if (child.proof == Node::kProvenLoss &&
        (slowest_loss < 0 || child.proof_plies > nodes_[slowest_loss].proof_plies))
      slowest_loss = c;
    if (child.proof != Node::kProvenLoss) ++not_lost;
  }
  if (quickest_win >= 0) return nodes_[quickest_win].action;
  if (not_lost == 0) return nodes_[slowest_loss].action;
  return -1;
}

int Search::ChooseAction(float temperature, Rng& rng) const {
  const Node& root = nodes_[0];
  ZF_CHECK(root.num_children > 0) << "ChooseAction on an unexpanded root";
  if (config_.gumbel && num_considered_ > 0) return nodes_[GumbelWinner()].action;
  // Solver: the quickest proven win, or the slowest loss when all are lost;
  // otherwise moves proven lost are never chosen.
  if (solver_) {
    const int proven = ChooseProvenAction();
    if (proven >= 0) return proven;
  }
  auto lost = [&](const Node& c) { return solver_ && c.proof == Node::kProvenLoss; };
  if (temperature <= 0.0f) {
    int best = -1;
    for (int i = 0; i < root.num_children; ++i) {
      const Node& c = nodes_[root.first_child + i];
      if (lost(c)) continue;
      if (best < 0) {
        best = root.first_child + i;
        continue;
      }
      const Node& b = nodes_[best];
      if (c.n > b.n || (c.n == b.n && c.prior > b.prior)) best = root.first_child + i;
    }
    return nodes_[best].action;
  }
  // n^(1/T), taken relative to the most visited move, (n / n_max)^(1/T): the same
  // distribution, but a small temperature cannot overflow it to inf (64^(1/0.01) can).
  int most = 0;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    if (!lost(c)) most = std::max(most, c.n);
  }
  std::vector<double> weights(root.num_children);
  double sum = 0.0;
  for (int i = 0; i < root.num_children; ++i) {
    const Node& c = nodes_[root.first_child + i];
    const double share = static_cast<double>(c.n) / static_cast<double>(std::max(most, 1));
    weights[i] = c.n > 0 && !lost(c) ? std::pow(share, 1.0 / temperature) : 0.0;
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
  budget_ = config_.simulations;
  root_noise_ = true;
  sims_started_ = 0;
  num_considered_ = 0;
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

// ---- Gumbel ---------------------------------------------------------------

namespace {

// The considered visit count of each simulation of sequential halving with m
// actions and n simulations: phase after phase, each of the `considered`
// actions still in play gets max(1, n / (ceil(log2 m) * considered)) more
// visits, then half of them (at least 2) go on. The k-th simulation visits a
// considered action that has exactly schedule[k] visits so far, so actions
// that fell behind are never visited again (that is the halving). With m = 1
// the schedule is 0, 1, 2, ...: every simulation goes to the one action.
std::vector<int> HalvingSchedule(int m, int n) {
  std::vector<int> schedule;
  schedule.reserve(static_cast<size_t>(n));
  if (m <= 1) {
    for (int k = 0; k < n; ++k) schedule.push_back(k);
    return schedule;
  }
  const int log2m = static_cast<int>(std::ceil(std::log2(static_cast<double>(m))));
  std::vector<int> visits(static_cast<size_t>(m), 0);
  int considered = m;
  while (static_cast<int>(schedule.size()) < n) {
    const int extra = std::max(1, n / (log2m * considered));
    for (int e = 0; e < extra; ++e) {
      for (int i = 0; i < considered; ++i) schedule.push_back(visits[i]++);
    }
    considered = std::max(2, considered / 2);
  }
  schedule.resize(static_cast<size_t>(n));
  return schedule;
}

}  // namespace

void Search::PrepareGumbelRoot() {
  root_noise_added_ = true;
  const Node& root = nodes_[0];
  const int k = root.num_children;
  gumbel_.assign(k, 0.0f);
  base_visits_.resize(k);
  considered_.assign(k, 0);
  for (int i = 0; i < k; ++i) base_visits_[i] = nodes_[root.first_child + i].n;
  if (root_noise_ && config_.gumbel_scale > 0.0f) {
    for (float& g : gumbel_) {
      const double u = std::max(rng_.Uniform(), 1e-300);
      g = config_.gumbel_scale * static_cast<float>(-std::log(-std::log(u)));
    }
  }
  // Gumbel-top-k: the m actions with the largest g + logits, without replacement.
  std::vector<int> order(k);
  for (int i = 0; i < k; ++i) order[i] = i;
  auto score = [&](int i) { return gumbel_[i] + nodes_[root.first_child + i].log_prior; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score(a) > score(b); });
  num_considered_ = std::min(config_.gumbel_m, k);
  for (int i = 0; i < num_considered_; ++i) considered_[order[i]] = 1;
  visit_schedule_ = HalvingSchedule(num_considered_, budget_);
}

void Search::ImprovedPolicy(int node_index) const {
  const Node& node = nodes_[node_index];
  const int k = node.num_children;
  q_scratch_.resize(k);
  pi_scratch_.resize(k);
  int sum_n = 0, max_n = 0;
  double visited_prior = 0.0, visited_q = 0.0;
  for (int i = 0; i < k; ++i) {
    const Node& c = nodes_[node.first_child + i];
    sum_n += c.n;
    max_n = std::max(max_n, c.n);
    if (c.n > 0) {
      visited_prior += c.prior;
      visited_q += c.prior * (c.w / static_cast<float>(c.n));
    }
  }
  // v_mix (the paper's eq. 33): the network value mixed with the
  // prior-weighted Q of the visited children; unvisited children get it.
  double v_mix = node.net_value;
  if (sum_n > 0 && visited_prior > 0.0)
    v_mix = (node.net_value + sum_n * (visited_q / visited_prior)) / (1.0 + sum_n);
  const float scale = (config_.gumbel_c_visit + static_cast<float>(max_n)) * config_.gumbel_c_scale;
  float max_logit = -1e30f;
  for (int i = 0; i < k; ++i) {
    const Node& c = nodes_[node.first_child + i];
    const double q = c.n > 0 ? c.w / static_cast<float>(c.n) : v_mix;  // in [-1, 1]
    q_scratch_[i] = scale * static_cast<float>((q + 1.0) * 0.5);       // sigma(q normalised to [0, 1])
    pi_scratch_[i] = c.log_prior + q_scratch_[i];
    max_logit = std::max(max_logit, pi_scratch_[i]);
  }
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) sum += (pi_scratch_[i] = std::exp(pi_scratch_[i] - max_logit));
  for (int i = 0; i < k; ++i) pi_scratch_[i] /= sum;
}

int Search::SelectGumbelRootChild() const {
  const Node& root = nodes_[0];
  ImprovedPolicy(0);  // fills q_scratch_ with sigma(completedQ)
  const int target = visit_schedule_[std::min<size_t>(sims_started_, visit_schedule_.size() - 1)];
  int best = -1, fallback = -1, fallback_visits = 0;
  float best_score = -1e30f, fallback_score = -1e30f;
  for (int i = 0; i < root.num_children; ++i) {
    if (!considered_[i]) continue;
    const Node& c = nodes_[root.first_child + i];
    const int visits = c.n + c.virtual_visits - base_visits_[i];
    const float score = gumbel_[i] + c.log_prior + q_scratch_[i];
    if (visits == target && score > best_score) {
      best_score = score;
      best = i;
    }
    // In-flight leaves can leave no action at the target count: then the
    // least visited, best scoring one.
    if (fallback < 0 || visits < fallback_visits || (visits == fallback_visits && score > fallback_score)) {
      fallback = i;
      fallback_visits = visits;
      fallback_score = score;
    }
  }
  return root.first_child + (best >= 0 ? best : fallback);
}

int Search::SelectGumbelChild(int node_index) const {
  const Node& node = nodes_[node_index];
  ImprovedPolicy(node_index);
  int total = 0;
  for (int i = 0; i < node.num_children; ++i) {
    const Node& c = nodes_[node.first_child + i];
    total += c.n + c.virtual_visits;
  }
  int best = 0;
  float best_score = -1e30f;
  for (int i = 0; i < node.num_children; ++i) {
    const Node& c = nodes_[node.first_child + i];
    const float score =
        pi_scratch_[i] - static_cast<float>(c.n + c.virtual_visits) / (1.0f + static_cast<float>(total));
    if (score > best_score) {
      best_score = score;
      best = i;
    }
  }
  return node.first_child + best;
}

int Search::GumbelWinner() const {
  const Node& root = nodes_[0];
  ImprovedPolicy(0);
  int best = -1, best_visits = -1;
  float best_score = -1e30f;
  for (int i = 0; i < root.num_children; ++i) {
    if (!considered_[i]) continue;
    const Node& c = nodes_[root.first_child + i];
    const int visits = c.n - base_visits_[i];
    const float score = gumbel_[i] + c.log_prior + q_scratch_[i];
    if (visits > best_visits || (visits == best_visits && score > best_score)) {
      best = i;
      best_visits = visits;
      best_score = score;
    }
  }
  return root.first_child + best;
}

}  // namespace zerofarm::mcts
