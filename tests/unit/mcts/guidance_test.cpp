// The search follows its network: priors steer the visits, values are backed
// up with the mover's sign, and virtual loss spreads the leaves of one tree.
// Every other mcts test feeds uniform priors, which a search that ignored the
// policy would pass; these give priors and values that are not uniform, and
// each fails when its part of the search is broken.
//
// Mutation checks, run once by hand on 2026-12-04 (each applied alone to
// src/mcts/search.cpp, zf_mcts_test run, the file restored):
//   - priors ignored (SelectChild's u with 1 / num_children for child.prior):
//     "visits rank as the priors" and "virtual loss ..." fail (its choice of
//     column 4 rests on the prior); the 17 other [mcts] tests outside
//     [slow] and [gumbel] all still passed;
//   - a value's sign flipped (Backup: v = leaf_value, not -leaf_value): "values
//     are backed up with the mover's sign" fails (X leaves the centre, root
//     value below 0.3); 6 of the 17 others fail too;
//   - virtual loss skipped (SelectLeaves adds no virtual_visits on the path):
//     "virtual loss ..." fails (1 leaf a round, not 4); so does the older
//     uniform-prior test of virtual loss.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>
#include <vector>

#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search.h"

using namespace zerofarm;

namespace {

// A network: the logits over all actions and the value for the player to move.
using Net = std::function<void(const game::State&, float* logits, float* value)>;

mcts::SearchConfig Plain(int simulations, int leaves_per_round = 1) {
  mcts::SearchConfig c;
  c.simulations = simulations;
  c.solver = false;  // plain PUCT: what the network says decides, not proofs
  c.dirichlet_fraction = 0.0f;
  c.temperature_plies = 0;
  c.leaves_per_round = leaves_per_round;
  return c;
}

// Runs the search to its budget, `per_round` leaves at a time; returns the root's visits.
std::vector<int> Run(mcts::Search& s, const game::Game& g, const Net& net, int per_round = 1) {
  std::vector<float> logits(game::kMaxActions);
  std::vector<mcts::LeafRequest> leaves;
  while (!s.Done()) {
    leaves.clear();
    s.SelectLeaves(per_round, &leaves);
    REQUIRE((!leaves.empty() || s.Done()));
    for (const auto& l : leaves) {
      std::fill(logits.begin(), logits.end(), 0.0f);
      float value = 0;
      net(*l.state, logits.data(), &value);
      s.CompleteLeaf(l.token, logits.data(), value);
    }
  }
  std::vector<int> visits(g.ActionCount());
  s.RootVisitCounts(visits.data());
  return visits;
}

// Tic-tac-toe: whose the centre is, from the view of the player to move
// (+1 its own, -1 the opponent's, 0 empty), read from the feature planes
// (plane 0 the mover's stones, plane 1 the opponent's).
float CentreForMover(const game::State& s) {
  uint8_t f[3 * 9];
  s.EncodeFeatures(f);
  return f[4] ? 1.0f : f[9 + 4] ? -1.0f : 0.0f;
}

}  // namespace

TEST_CASE("guidance: PUCT visits rank as the priors when every value is equal", "[mcts][guidance]") {
  // Connect Four, value 0 everywhere, logits 0.4 x column: priors rising from
  // column 1 to column 7 (ratio 1.5 between neighbours). Visits follow them,
  // strictly; uniform priors would tie them.
  auto g = game::MakeGame("connect4");
  mcts::Search s(*g, Plain(300), 3);
  s.SetRoot(*g->NewInitialState());
  const auto visits = Run(s, *g, [](const game::State&, float* logits, float* value) {
    for (int a = 0; a < 7; ++a) logits[a] = 0.4f * static_cast<float>(a);
    *value = 0;
  });
  INFO("visits " << ::Catch::Detail::stringify(visits));
  for (int a = 1; a < 7; ++a) CHECK(visits[a] > visits[a - 1]);
  CHECK(visits[6] > 300 / 4);  // the top prior (35%) gets well over a quarter
  Rng rng(1);
  CHECK(s.ChooseAction(0.0f, rng) == 6);
}

TEST_CASE("guidance: values are backed up with the mover's sign", "[mcts][guidance]") {
  // Tic-tac-toe, X to move. The network rates the centre: +0.6 for the player
  // to move who holds it, -0.6 when the opponent does, at every depth; its
  // prior leans to corner 0 (logit 1.5), away from the centre. A search that
  // backs values up with the right sign at every ply takes the centre, and
  // its root value is X's +0.6 or so; one sign wrong, it flees the centre.
  auto g = game::MakeGame("tictactoe");
  mcts::Search s(*g, Plain(400), 5);
  s.SetRoot(*g->NewInitialState());
  const auto visits = Run(s, *g, [](const game::State& leaf, float* logits, float* value) {
    logits[0] = 1.5f;
    *value = 0.6f * CentreForMover(leaf);
  });
  INFO("visits " << ::Catch::Detail::stringify(visits));
  CHECK(*std::max_element(visits.begin(), visits.end()) == visits[4]);
  CHECK(visits[4] > 400 / 2);
  CHECK(visits[4] > 4 * visits[0]);  // the value overrules the prior
  CHECK(s.RootValue() > 0.3f);
  CHECK(s.RootValue() <= 0.6f + 1e-4f);
  Rng rng(1);
  CHECK(s.ChooseAction(0.0f, rng) == 4);
}

TEST_CASE("guidance: virtual loss spreads the leaves of one tree where the network favours one move",
          "[mcts][guidance]") {
  // Connect Four, 4 leaves per round: the prior favours column 4 (logit 1: 31%),
  // and every move is good for the player who made it (-0.3 for the mover). Without virtual loss
  // every leaf of a round would descend to the same node (a collision: fewer
  // leaves); with it the round's leaves are distinct, and once they are all
  // back the search chooses as the one-leaf search does.
  auto g = game::MakeGame("connect4");
  const Net net = [](const game::State& leaf, float* logits, float* value) {
    logits[3] = 1.0f;
    *value = leaf.MoveNumber() > 0 ? -0.3f : 0.0f;  // the player who just moved is better off
  };
  mcts::Search s(*g, Plain(200, 4), 9);
  s.SetRoot(*g->NewInitialState());
  std::vector<mcts::LeafRequest> leaves;
  REQUIRE(s.SelectLeaves(4, &leaves) == 1);  // the root first, alone
  std::vector<float> logits(g->ActionCount());
  auto complete = [&](const mcts::LeafRequest& l) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    float value = 0;
    net(*l.state, logits.data(), &value);
    s.CompleteLeaf(l.token, logits.data(), value);
  };
  complete(leaves[0]);
  // Each round asks for 4 leaves. Without virtual loss the second descent of
  // a round repeats the first (nothing changed in between) and meets its
  // leaf in flight: 1 leaf a round. With it, each round gives 4 here (a far
  // stronger prior, logit 3, can outweigh a virtual loss and collide).
  std::vector<int> per_round;
  for (int round = 0; round < 10; ++round) {
    leaves.clear();
    per_round.push_back(s.SelectLeaves(4, &leaves));
    std::set<uint64_t> hashes;
    for (const auto& l : leaves) hashes.insert(l.state->Hash());
    CHECK(hashes.size() == leaves.size());  // distinct nodes
    CHECK(s.InFlight() == static_cast<int>(leaves.size()));
    for (const auto& l : leaves) complete(l);
    CHECK(s.InFlight() == 0);
  }
  INFO("leaves per round " << ::Catch::Detail::stringify(per_round));
  CHECK(per_round[0] == 4);
  CHECK(std::accumulate(per_round.begin(), per_round.end(), 0) >= 30);
  const auto visits = Run(s, *g, net, 4);
  CHECK(std::accumulate(visits.begin(), visits.end(), 0) == 200);
  mcts::Search one(*g, Plain(200, 1), 9);
  one.SetRoot(*g->NewInitialState());
  Run(one, *g, net, 1);
  Rng rng(1);
  CHECK(s.ChooseAction(0.0f, rng) == 3);
  CHECK(one.ChooseAction(0.0f, rng) == 3);
}
