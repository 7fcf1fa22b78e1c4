// Gumbel root search, playout-cap randomisation and resignation (docs/search.md).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <numeric>

#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search.h"
#include "zerofarm/mcts/selfplay_game.h"

using namespace zerofarm;

namespace {

mcts::SearchConfig Gumbel(int simulations, int m) {
  mcts::SearchConfig c;
  c.simulations = simulations;
  c.gumbel = true;
  c.gumbel_m = m;
  c.dirichlet_fraction = 0.0f;
  return c;
}

// Exact tic-tac-toe values by full minimax, memoised by hash: +1 / 0 / -1 for
// the player to move.
class ExactTicTacToe {
 public:
  float Value(const game::State& s) {
    const auto it = memo_.find(s.Hash());
    if (it != memo_.end()) return it->second;
    float v;
    if (s.IsTerminal()) {
      v = s.Outcome(s.CurrentPlayer());
    } else {
      std::vector<int> legal;
      s.LegalActions(&legal);
      v = -1.0f;
      for (int a : legal) {
        auto next = s.Clone();
        next->Apply(a);
        v = std::max(v, -Value(*next));
      }
    }
    memo_[s.Hash()] = v;
    return v;
  }

 private:
  std::map<uint64_t, float> memo_;
};

// Runs the search with uniform logits and values from `value` (nullptr: 0).
// Returns the network evaluations asked for.
template <typename ValueFn>
int Run(mcts::Search& s, ValueFn value, int per_round = 1) {
  std::vector<float> zeros(game::kMaxActions, 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  int evals = 0;
  while (!s.Done()) {
    leaves.clear();
    s.SelectLeaves(per_round, &leaves);
    REQUIRE((!leaves.empty() || s.Done()));
    for (const auto& l : leaves) {
      s.CompleteLeaf(l.token, zeros.data(), value(*l.state));
      ++evals;
    }
  }
  return evals;
}

float Zero(const game::State&) { return 0.0f; }

}  // namespace

TEST_CASE("gumbel: with an exact value function the chosen action is a best one", "[mcts][gumbel]") {
  auto g = game::MakeGame("tictactoe");
  ExactTicTacToe exact;
  // Positions with one winning move, one forced block, and a quiet one.
  for (const char* moves : {"a1 b1 a2 b2", "a1 b2 c3 a3", "b2 a1", "a1"}) {
    auto state = g->Replay(g->ParseMoves(moves));
    const float best_value = exact.Value(*state);
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      mcts::Search s(*g, Gumbel(32, 16), seed);
      s.SetRoot(*state);
      Run(s, [&](const game::State& leaf) { return exact.Value(leaf); });
      Rng rng(seed);
      const int a = s.ChooseAction(1.0f, rng);
      auto next = state->Clone();
      next->Apply(a);
      INFO(moves << " seed " << seed << " chose " << g->ActionToString(a));
      CHECK(-exact.Value(*next) == best_value);
    }
  }
}

TEST_CASE("gumbel: the target policy sums to 1 over legal actions and prefers the best", "[mcts][gumbel]") {
  auto g = game::MakeGame("tictactoe");
  ExactTicTacToe exact;
  auto state = g->Replay(g->ParseMoves("a1 b1 a2 b2"));  // X to move wins with a3
  mcts::Search s(*g, Gumbel(16, 4), 3);
  s.SetRoot(*state);
  Run(s, [&](const game::State& leaf) { return exact.Value(leaf); });
  std::vector<float> pi(g->ActionCount());
  s.RootPolicy(pi.data());
  CHECK(std::accumulate(pi.begin(), pi.end(), 0.0) == Approx(1.0).epsilon(1e-5));
  for (int a = 0; a < g->ActionCount(); ++a) {
    if (!state->IsLegal(a)) CHECK(pi[a] == 0.0f);
    CHECK(pi[a] >= 0.0f);
  }
  const int win = g->ParseAction("a3");
  CHECK(std::max_element(pi.begin(), pi.end()) - pi.begin() == win);
  CHECK(pi[win] > 0.9f);
}

TEST_CASE("gumbel: with m = 1 every simulation goes to one action (no halving)", "[mcts][gumbel]") {
  auto g = game::MakeGame("connect4");
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    mcts::Search s(*g, Gumbel(20, 1), seed);
    s.SetRoot(*g->NewInitialState());
    Run(s, Zero);
    std::vector<int> visits(g->ActionCount());
    s.RootVisitCounts(visits.data());
    const int top = static_cast<int>(std::max_element(visits.begin(), visits.end()) - visits.begin());
    CHECK(visits[top] == 20);
    CHECK(std::accumulate(visits.begin(), visits.end(), 0) == 20);
    Rng rng(1);
    CHECK(s.ChooseAction(0.0f, rng) == top);
  }
}

TEST_CASE("gumbel: sequential halving splits the budget as scheduled", "[mcts][gumbel]") {
  // m = 4, n = 8: log2(4) = 2 phases; phase 1 gives each of 4 actions
  // max(1, 8 / (2 * 4)) = 1 visit, phase 2 gives the best 2 of them
  // 8 / (2 * 2) = 2 more: visits {3, 3, 1, 1}, 0 for the rest.
  auto g = game::MakeGame("connect4");
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    mcts::Search s(*g, Gumbel(8, 4), seed);
    s.SetRoot(*g->NewInitialState());
    Run(s, Zero);
    std::vector<int> visits(g->ActionCount());
    s.RootVisitCounts(visits.data());
    std::sort(visits.rbegin(), visits.rend());
    CHECK(visits == std::vector<int>{3, 3, 1, 1, 0, 0, 0});
    // The winner is one of the two most visited.
    Rng rng(1);
    std::vector<int> v(g->ActionCount());
    s.RootVisitCounts(v.data());
    CHECK(v[s.ChooseAction(0.0f, rng)] == 3);
  }
  // n = 100, m = 16 over 7 legal actions: m is capped at 7; 3 phases.
  mcts::Search s(*g, Gumbel(100, 16), 9);
  s.SetRoot(*g->NewInitialState());
  Run(s, Zero);
  std::vector<int> visits(g->ActionCount());
  s.RootVisitCounts(visits.data());
  CHECK(std::accumulate(visits.begin(), visits.end(), 0) == 100);
  CHECK(std::count(visits.begin(), visits.end(), 0) == 0);  // all 7 considered
}

TEST_CASE("gumbel: in-flight leaves (L > 1) keep the budget exact", "[mcts][gumbel]") {
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c = Gumbel(50, 8);
  c.leaves_per_round = 4;
  mcts::Search s(*g, c, 5);
  s.SetRoot(*g->NewInitialState());
  const int evals = Run(s, Zero, 4);
  CHECK(s.RootChildVisits() == 50);
  CHECK(evals == 51);  // the root, then one per simulation (no terminal within reach)
}

TEST_CASE("gumbel self-play games finish and record improved policies", "[mcts][gumbel]") {
  auto g = game::MakeGame("tictactoe");
  mcts::SearchConfig c = Gumbel(16, 4);
  mcts::SelfPlayGame game(*g, c, 1, 42, 0);
  std::vector<float> zeros(game::kMaxActions, 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  while (!game.Finished()) {
    leaves.clear();
    game.NextLeaves(1, &leaves);
    for (const auto& l : leaves) game.OnResult(l.token, zeros.data(), 0.0f, 1);
  }
  const mcts::GameRecord r = game.TakeRecord();
  REQUIRE(r.Positions() == r.moves.size());
  for (size_t p = 0; p < r.Positions(); ++p) {
    double sum = 0;
    for (int a = 0; a < g->ActionCount(); ++a) sum += r.policy[p * g->ActionCount() + a];
    CHECK(sum == Approx(1.0).epsilon(1e-5));
    CHECK(r.full_search[p] == 1);
  }
}

namespace {

// Plays one game with uniform logits; every leaf is worth `value0` to
// player 0 (and -value0 to player 1).
mcts::GameRecord PlayConstant(const game::Game& g, const mcts::SearchConfig& c, uint64_t seed, float value0,
                              int* evals = nullptr) {
  mcts::SelfPlayGame game(g, c, seed, seed, 0);
  std::vector<float> zeros(game::kMaxActions, 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  int n = 0;
  while (!game.Finished()) {
    leaves.clear();
    game.NextLeaves(1, &leaves);
    for (const auto& l : leaves) {
      game.OnResult(l.token, zeros.data(), l.state->CurrentPlayer() == 0 ? value0 : -value0, 1);
      ++n;
    }
  }
  if (evals) *evals = n;
  return game.TakeRecord();
}

}  // namespace

TEST_CASE("playout cap: a share of moves are fast searches, flagged and cheaper", "[mcts][playout]") {
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c;
  c.simulations = 64;
  c.reuse_tree = false;  // each move's evaluations = its budget (+ the root)
  c.playout_cap_fraction = 0.5f;
  c.fast_simulations = 8;
  int full = 0, fast = 0, evals_total = 0;
  size_t positions = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    int evals = 0;
    const mcts::GameRecord r = PlayConstant(*g, c, seed, 0.0f, &evals);
    REQUIRE(r.full_search.size() == r.Positions());
    for (uint8_t f : r.full_search) (f ? full : fast) += 1;
    positions += r.Positions();
    evals_total += evals;
  }
  CHECK(full > 0);
  CHECK(fast > 0);
  // At most (budget + root) evaluations per move; terminal leaves need none.
  CHECK(evals_total <= full * 65 + fast * 9);
  CHECK(evals_total < static_cast<int>(positions) * 65);

  c.playout_cap_fraction = 0.0f;
  const mcts::GameRecord r = PlayConstant(*g, c, 1, 0.0f);
  CHECK(std::count(r.full_search.begin(), r.full_search.end(), 1) == static_cast<long>(r.Positions()));
}

TEST_CASE("resignation: a side below the threshold for R moves resigns", "[mcts][resign]") {
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c;
  c.simulations = 16;
  c.resign_threshold = -0.5f;
  c.resign_moves = 2;
  c.resign_playthrough = 0.0f;
  // Every leaf is -0.9 for player 0, so player 0 resigns on its second
  // move (ply 2); player 1 never does.
  const mcts::GameRecord r = PlayConstant(*g, c, 3, -0.9f);
  CHECK(r.resigned == 0);
  CHECK(r.winner == 1);
  CHECK(r.would_resign == -1);
  CHECK(r.moves.size() == 2);
  CHECK(r.Positions() == 3);
  CHECK(r.z == std::vector<float>{-1.0f, 1.0f, -1.0f});

  // Off (threshold -1): the game is played to the end.
  c.resign_threshold = -1.0f;
  const mcts::GameRecord off = PlayConstant(*g, c, 3, -0.9f);
  CHECK(off.resigned == -1);
  CHECK(off.moves.size() > 6);
}

TEST_CASE("resignation: play-through games record whether resigning would have been wrong",
          "[mcts][resign]") {
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c;
  c.simulations = 16;
  c.resign_threshold = -0.5f;
  c.resign_moves = 2;
  c.resign_playthrough = 1.0f;  // every game plays on
  int checked = 0, false_resign = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const mcts::GameRecord r = PlayConstant(*g, c, seed, -0.9f);
    CHECK(r.resigned == -1);
    CHECK(r.would_resign == 0);  // player 0 hits the condition first
    CHECK(r.winner >= -1);
    checked += 1;
    false_resign += r.FalseResignation();
    CHECK(r.FalseResignation() == (r.winner != 1));
  }
  CHECK(checked == 8);
  // Random-ish play: player 0 does not lose every one of 8 games.
  CHECK(false_resign > 0);
}
