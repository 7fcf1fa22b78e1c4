// PUCT selection pinned exactly: non-uniform priors and values from a fake
// evaluator (fixed per position), checked against hand-computed scores and
// against a small reference PUCT written from docs/search.md. The reference
// has switches for the mistakes it must tell apart (FPU, parent value,
// Dirichlet noise, virtual visits, clamp); each test first shows that the
// mistaken reference gives another result, so a search making that mistake
// fails the test. tools/mutate.sh applies those mistakes to search.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <random>

#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search.h"

using namespace zerofarm;

namespace {

// Fills logits over all actions and returns the value for the player to move.
using Evaluator = std::function<float(const game::State&, float* logits)>;

// Fixed non-uniform priors and values per position, from its hash:
// logits in [-2, 2], values in [-0.8, 0.8] times `scale`.
Evaluator HashEvaluator(int actions, float scale = 1.0f) {
  return [actions, scale](const game::State& s, float* logits) {
    auto mix = [](uint64_t x) {
      x += 0x9E3779B97F4A7C15ULL;
      x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
      x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
      return static_cast<float>((x ^ (x >> 31)) >> 40) / static_cast<float>(1 << 24);  // [0, 1)
    };
    for (int a = 0; a < actions; ++a) logits[a] = 4.0f * mix(s.Hash() * 31 + a) - 2.0f;
    return scale * (1.6f * mix(s.Hash() ^ 0x5555) - 0.8f);
  };
}

mcts::SearchConfig Config(int simulations, int leaves_per_round) {
  mcts::SearchConfig c;
  c.simulations = simulations;
  c.leaves_per_round = leaves_per_round;
  c.solver = false;
  c.dirichlet_fraction = 0.0f;
  c.temperature_plies = 0;
  return c;
}

// What one search did: the leaves it asked for, in order (by hash), and
// the root's visits and value at the end.
struct Trace {
  std::vector<uint64_t> leaves;
  std::vector<int> visits;
  float value = 0.0f;
  bool operator==(const Trace& o) const {
    return leaves == o.leaves && visits == o.visits && value == o.value;
  }
};

// Drives a search: asks for up to L leaves, completes them in order, again
// until done. The reference below is driven the same way.
Trace RunSearch(const game::Game& g, const mcts::SearchConfig& c, const game::State& root,
                const Evaluator& eval, bool root_noise = true, uint64_t seed = 17) {
  mcts::Search s(g, c, seed);
  s.SetRoot(root);
  if (!root_noise) s.SetMoveBudget(c.simulations, false);
  std::vector<float> logits(game::kMaxActions);
  std::vector<mcts::LeafRequest> leaves;
  Trace t;
  while (!s.Done()) {
    leaves.clear();
    s.SelectLeaves(c.leaves_per_round, &leaves);
    REQUIRE((!leaves.empty() || s.Done()));  // terminal leaves may spend the budget
    for (const auto& l : leaves) {
      t.leaves.push_back(l.state->Hash());
      const float v = eval(*l.state, logits.data());
      s.CompleteLeaf(l.token, logits.data(), v);
    }
  }
  t.visits.resize(g.ActionCount());
  s.RootVisitCounts(t.visits.data());
  t.value = s.RootValue();
  return t;
}

// The mistakes the reference can make, one switch each (all off: correct).
struct Mistakes {
  bool fpu_sign = false;          // unvisited children start above the parent, not below
  bool fpu_no_parent = false;     // unvisited children start at -fpu_reduction
  bool parent_sign = false;       // the parent's value taken from the wrong side
  bool no_noise = false;          // Dirichlet noise left out
  bool noise_replaces = false;    // the root prior replaced by the noise, not mixed
  bool vv_not_in_parent = false;  // virtual visits left out of the parent's count
  bool vv_not_in_u = false;       // virtual visits left out of u's denominator
  bool no_clamp = false;          // values outside [-1, 1] kept
  bool no_virtual_loss = false;   // in-flight leaves not counted as losses in Q
  bool backup_sign = false;       // a leaf's value backed up without negation
};

// Plain PUCT (no solver, no discount) as docs/search.md states it:
// score = Q + c_puct * P * sqrt(N_parent) / (1 + N_child), N counting
// in-flight leaves, Q = (W - in-flight) / N, FPU = parent Q - fpu_reduction,
// ties to the first child in legal-action order.
class ReferencePuct {
 public:
  ReferencePuct(const game::Game& g, const mcts::SearchConfig& c, Mistakes m) : g_(g), c_(c), m_(m) {}

  Trace Run(const game::State& root, const Evaluator& eval, bool root_noise = true, uint64_t seed = 17) {
    nodes_.assign(1, Node{});
    std::vector<float> logits(game::kMaxActions);
    std::vector<Leaf> batch;
    Trace t;
    bool noise_added = false;
    auto done = [&] {
      return in_flight_ == 0 && nodes_[0].kind != kUnexpanded && ChildVisits() >= c_.simulations;
    };
    while (!done()) {
      if (nodes_[0].kind == kExpanded && !noise_added) {
        noise_added = true;
        if (root_noise) AddNoise(seed);
      }
      Select(root, &batch);
      REQUIRE((!batch.empty() || done()));  // terminal leaves may spend the budget
      for (auto& l : batch) {
        t.leaves.push_back(l.state->Hash());
        float v = eval(*l.state, logits.data());
        if (!m_.no_clamp) v = std::clamp(v, -1.0f, 1.0f);
        Expand(l.path.back(), *l.state, logits.data());
        Backup(l.path, v, c_.leaves_per_round > 1);
        --in_flight_;
      }
      batch.clear();
    }
    t.visits.assign(g_.ActionCount(), 0);
    for (int k : nodes_[0].kids) t.visits[nodes_[k].action] = nodes_[k].n;
    t.value = nodes_[0].n > 0 ? -nodes_[0].w / static_cast<float>(nodes_[0].n) : 0.0f;
    return t;
  }

 private:
  static constexpr int kUnexpanded = 0, kPending = 1, kExpanded = 2, kTerminal = 3;
  struct Node {
    float prior = 1.0f, w = 0.0f, terminal_value = 0.0f;
    int n = 0, vv = 0, action = -1, kind = kUnexpanded;
    std::vector<int> kids;
  };
  struct Leaf {
    std::vector<int> path;
    std::unique_ptr<game::State> state;
  };

  int ChildVisits() const {
    int sum = 0;
    for (int k : nodes_[0].kids) sum += nodes_[k].n;
    return sum;
  }

  int Child(int i) const {
    const Node& p = nodes_[i];
    const float sqrt_n = std::sqrt(static_cast<float>(std::max(m_.vv_not_in_parent ? p.n : p.n + p.vv, 1)));
    float parent_q = p.n > 0 ? -p.w / static_cast<float>(p.n) : 0.0f;
    if (m_.parent_sign) parent_q = -parent_q;
    if (m_.fpu_no_parent) parent_q = 0.0f;
    const float fpu = m_.fpu_sign ? parent_q + c_.fpu_reduction : parent_q - c_.fpu_reduction;
    int best = -1;
    float best_score = -1e30f;
    for (int k : p.kids) {
      const Node& c = nodes_[k];
      const int visits = c.n + c.vv;
      const float loss = m_.no_virtual_loss ? 0.0f : static_cast<float>(c.vv);
      const float q = visits > 0 ? (c.w - loss) / static_cast<float>(visits) : fpu;
      const float u =
          c_.c_puct * c.prior * sqrt_n / (1.0f + static_cast<float>(m_.vv_not_in_u ? c.n : visits));
      if (q + u > best_score) best_score = q + u, best = k;
    }
    return best;
  }

  // Mirrors Search::SelectLeaves for plain PUCT.
  void Select(const game::State& root, std::vector<Leaf>* out) {
    const bool vl = c_.leaves_per_round > 1;
    while (static_cast<int>(out->size()) < c_.leaves_per_round &&
           (nodes_[0].kind == kUnexpanded || ChildVisits() + in_flight_ < c_.simulations)) {
      if (nodes_[0].kind == kPending) return;
      std::vector<int> path{0};
      auto state = root.Clone();
      while (nodes_[path.back()].kind == kExpanded) {
        path.push_back(Child(path.back()));
        state->Apply(nodes_[path.back()].action);
      }
      Node& leaf = nodes_[path.back()];
      if (leaf.kind == kPending) return;
      if (leaf.kind == kUnexpanded && state->IsTerminal()) {
        leaf.kind = kTerminal;
        leaf.terminal_value = state->Outcome(state->CurrentPlayer());
      }
      if (leaf.kind == kTerminal) {
        Backup(path, leaf.terminal_value, false);
        continue;
      }
      leaf.kind = kPending;
      if (vl)
        for (int i : path) nodes_[i].vv += 1;
      ++in_flight_;
      out->push_back(Leaf{path, std::move(state)});
      if (path.size() == 1) return;
    }
  }

  void Expand(int i, const game::State& s, const float* logits) {
    std::vector<int> legal;
    s.LegalActions(&legal);
    float max_logit = -1e30f, sum = 0.0f;
    for (int a : legal) max_logit = std::max(max_logit, logits[a]);
    std::vector<int> kids;
    for (int a : legal) {
      Node c;
      c.action = a;
      c.prior = std::exp(logits[a] - max_logit);
      sum += c.prior;
      kids.push_back(static_cast<int>(nodes_.size()));
      nodes_.push_back(c);
    }
    for (int k : kids) nodes_[k].prior /= sum;
    nodes_[i].kids = kids;
    nodes_[i].kind = kExpanded;
  }

  void Backup(const std::vector<int>& path, float leaf_value, bool in_flight) {
    float v = m_.backup_sign ? leaf_value : -leaf_value;
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      nodes_[*it].n += 1;
      nodes_[*it].w += v;
      if (in_flight) nodes_[*it].vv -= 1;
      v = -v;
    }
  }

  // Dirichlet(alpha) from the search's own seed, drawn as Search draws it.
  void AddNoise(uint64_t seed) {
    const std::vector<int>& kids = nodes_[0].kids;
    if (m_.no_noise || c_.dirichlet_fraction <= 0.0f || kids.size() <= 1) return;
    Rng rng(seed);
    std::gamma_distribution<float> gamma(c_.dirichlet_alpha, 1.0f);
    std::vector<float> noise(kids.size());
    float sum = 0.0f;
    for (auto& x : noise) sum += (x = gamma(rng));
    const float eps = c_.dirichlet_fraction;
    for (size_t i = 0; i < kids.size(); ++i) {
      float& p = nodes_[kids[i]].prior;
      p = m_.noise_replaces ? noise[i] / sum : (1.0f - eps) * p + eps * noise[i] / sum;
    }
  }

  const game::Game& g_;
  mcts::SearchConfig c_;
  Mistakes m_;
  std::vector<Node> nodes_;
  int in_flight_ = 0;
};

Mistakes Mistake(bool Mistakes::*which) {
  Mistakes m;
  m.*which = true;
  return m;
}

Trace Reference(const game::Game& g, const mcts::SearchConfig& c, const game::State& root,
                const Evaluator& eval, Mistakes m = {}, bool root_noise = true) {
  return ReferencePuct(g, c, m).Run(root, eval, root_noise);
}

// Logits at the root only (others 0); values by position, 0 elsewhere.
Evaluator RootEvaluator(const game::State& root, std::vector<std::pair<int, float>> root_logits,
                        float root_value, std::vector<std::pair<int, float>> child_values = {}) {
  const uint64_t root_hash = root.Hash();
  std::vector<std::pair<uint64_t, float>> values{{root_hash, root_value}};
  for (auto [a, v] : child_values) {
    auto child = root.Clone();
    child->Apply(a);
    values.push_back({child->Hash(), v});
  }
  return [=](const game::State& s, float* logits) {
    std::fill(logits, logits + game::kMaxActions, 0.0f);
    if (s.Hash() == root_hash)
      for (auto [a, l] : root_logits) logits[a] = l;
    for (auto [h, v] : values)
      if (s.Hash() == h) return v;
    return 0.0f;
  };
}

}  // namespace

TEST_CASE("PUCT's first visits match hand-computed scores: FPU below the parent's own value", "[mcts]") {
  // Tic-tac-toe, empty board; logits 2 on square 8, 1.5 on 3, 0 elsewhere:
  // priors 0.3916, 0.2375 and 0.0530 each. The root's value is +0.6 for its
  // player, every other position 0. c_puct 1.5, fpu_reduction 0.25.
  // Sim 1: every child unvisited, so the highest prior: 8.
  // Sim 2: parent Q = (0.6 + 0) / 2 = 0.3, FPU 0.05; 8 scores
  //   0 + 1.5 * 0.3916 * sqrt 2 / 2 = 0.415, 3 scores 0.05 + 0.504 = 0.554: 3.
  //   (Parent Q from the wrong side: FPU -0.55, 3 scores -0.05: 8 again.
  //   FPU ignoring the parent: -0.25, 3 scores 0.254: 8 again.)
  // Sim 3: parent Q 0.2, FPU -0.05; 8 scores 1.5 * 0.3916 * sqrt 3 / 2 =
  //   0.509, 3 scores 0.308, the others -0.05 + 0.138 = 0.088: 8.
  //   (FPU above the parent, 0.45: the others score 0.588, square 0 wins.)
  auto g = game::MakeGame("tictactoe");
  auto root = g->NewInitialState();
  const Evaluator eval = RootEvaluator(*root, {{8, 2.0f}, {3, 1.5f}}, 0.6f);
  std::vector<int> two(9, 0), three(9, 0);
  two[8] = two[3] = 1;
  three[8] = 2, three[3] = 1;
  CHECK(RunSearch(*g, Config(2, 1), *root, eval).visits == two);
  CHECK(RunSearch(*g, Config(3, 1), *root, eval).visits == three);
  CHECK(Reference(*g, Config(3, 1), *root, eval).visits == three);  // the reference agrees
}

TEST_CASE("PUCT selects unvisited ties in legal-action order and plays ties by the higher prior", "[mcts]") {
  auto g = game::MakeGame("tictactoe");
  auto root = g->NewInitialState();
  // Uniform priors: the first simulation's nine scores are equal; the first, square 0, wins.
  const Trace uniform = RunSearch(*g, Config(1, 1), *root, RootEvaluator(*root, {}, 0.0f));
  auto zero = root->Clone();
  zero->Apply(0);
  REQUIRE(uniform.leaves.size() == 2);
  CHECK(uniform.leaves[1] == zero->Hash());
  // Priors 0.392 on 8, 0.237 on 3. Sim 1 visits 8, whose value +0.9 for the
  // opponent makes parent Q -0.45 and FPU -0.7; sim 2: 8 scores -0.9 + 0.415
  // = -0.485, 3 scores -0.7 + 0.504 = -0.196: 3. One visit each: the higher
  // prior, 8, is played (the first in order would be 3).
  mcts::Search s(*g, Config(2, 1), 3);
  s.SetRoot(*root);
  const Evaluator eval = RootEvaluator(*root, {{8, 2.0f}, {3, 1.5f}}, 0.0f, {{8, 0.9f}});
  std::vector<float> logits(game::kMaxActions);
  std::vector<mcts::LeafRequest> leaves;
  while (!s.Done()) {
    leaves.clear();
    s.SelectLeaves(1, &leaves);
    for (auto& l : leaves) s.CompleteLeaf(l.token, logits.data(), eval(*l.state, logits.data()));
  }
  std::vector<int> visits(9);
  s.RootVisitCounts(visits.data());
  REQUIRE(visits[8] == 1);
  REQUIRE(visits[3] == 1);
  Rng rng(1);
  CHECK(s.ChooseAction(0.0f, rng) == 8);
}

TEST_CASE("PUCT with non-uniform priors and values follows the reference leaf by leaf", "[mcts]") {
  for (const char* name : {"tictactoe", "connect4"}) {
    auto g = game::MakeGame(name);
    auto root = g->NewInitialState();
    const Evaluator eval = HashEvaluator(g->ActionCount());
    for (auto [c_puct, fpu] : {std::pair{1.5f, 0.25f}, std::pair{0.8f, 0.1f}}) {
      INFO(name << " c_puct " << c_puct << " fpu_reduction " << fpu);
      mcts::SearchConfig c = Config(120, 1);
      c.c_puct = c_puct;
      c.fpu_reduction = fpu;
      const Trace want = Reference(*g, c, *root, eval);
      // The scenario tells each mistake apart from the right search.
      for (Mistakes m : {Mistake(&Mistakes::fpu_sign), Mistake(&Mistakes::fpu_no_parent),
                         Mistake(&Mistakes::parent_sign), Mistake(&Mistakes::backup_sign)})
        CHECK_FALSE(Reference(*g, c, *root, eval, m) == want);
      mcts::SearchConfig other = c;
      other.c_puct *= 2.0f;
      CHECK_FALSE(Reference(*g, other, *root, eval) == want);
      const Trace got = RunSearch(*g, c, *root, eval);
      CHECK(got.leaves == want.leaves);
      CHECK(got.visits == want.visits);
      CHECK(got.value == Approx(want.value).margin(1e-6));
    }
  }
}

TEST_CASE("virtual visits count in the parent's N, in u's denominator and as losses in Q", "[mcts]") {
  auto g = game::MakeGame("connect4");
  auto root = g->NewInitialState();
  const Evaluator eval = HashEvaluator(g->ActionCount());
  for (int leaves : {3, 8}) {
    INFO("leaves_per_round " << leaves);
    const mcts::SearchConfig c = Config(160, leaves);
    const Trace want = Reference(*g, c, *root, eval);
    for (Mistakes m : {Mistake(&Mistakes::vv_not_in_parent), Mistake(&Mistakes::vv_not_in_u),
                       Mistake(&Mistakes::no_virtual_loss)})
      CHECK_FALSE(Reference(*g, c, *root, eval, m) == want);
    const Trace got = RunSearch(*g, c, *root, eval);
    CHECK(got.leaves == want.leaves);
    CHECK(got.visits == want.visits);
    CHECK(got.value == Approx(want.value).margin(1e-6));
  }
}

TEST_CASE("Dirichlet noise mixes into the root prior by its fraction, and only when asked", "[mcts]") {
  auto g = game::MakeGame("connect4");
  auto root = g->NewInitialState();
  const Evaluator eval = HashEvaluator(g->ActionCount());
  mcts::SearchConfig c = Config(100, 1);
  c.dirichlet_fraction = 0.25f;
  c.dirichlet_alpha = 0.5f;
  const Trace want = Reference(*g, c, *root, eval);
  const Trace none = Reference(*g, c, *root, eval, Mistake(&Mistakes::no_noise));
  CHECK_FALSE(none == want);
  CHECK_FALSE(Reference(*g, c, *root, eval, Mistake(&Mistakes::noise_replaces)) == want);
  const Trace got = RunSearch(*g, c, *root, eval);
  CHECK(got.leaves == want.leaves);
  CHECK(got.visits == want.visits);
  // A move without root noise (a fast playout-cap search) has none.
  CHECK(RunSearch(*g, c, *root, eval, false).leaves == none.leaves);
}

TEST_CASE("network values are clamped to -1..1 before they are backed up", "[mcts]") {
  auto g = game::MakeGame("tictactoe");
  auto root = g->NewInitialState();
  // Values up to +-2.4: clamped, the root's value stays in [-1, 1].
  const Evaluator eval = HashEvaluator(g->ActionCount(), 3.0f);
  const mcts::SearchConfig c = Config(60, 1);
  const Trace want = Reference(*g, c, *root, eval);
  CHECK_FALSE(Reference(*g, c, *root, eval, Mistake(&Mistakes::no_clamp)) == want);
  const Trace got = RunSearch(*g, c, *root, eval);
  CHECK(got.leaves == want.leaves);
  CHECK(got.value == Approx(want.value).margin(1e-6));
  // By hand: root value 5 and the one child's -5 both count as 1 for the root's player.
  const Trace one = RunSearch(*g, Config(1, 1), *root, RootEvaluator(*root, {}, 5.0f, {{0, -5.0f}}));
  CHECK(one.value == Approx(1.0f));
}
