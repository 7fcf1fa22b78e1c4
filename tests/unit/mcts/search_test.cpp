#include "zerofarm/mcts/search.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <set>

#include "zerofarm/game/game.h"
#include "zerofarm/mcts/selfplay_game.h"

using namespace zerofarm;

namespace {

// Plain PUCT unless asked: the solver's one-ply lookahead at expansion would
// make the tactical tests below trivial (it sees a win or loss in one at once).
mcts::SearchConfig Quiet(int simulations, bool solver = false) {
  mcts::SearchConfig c;
  c.simulations = simulations;
  c.solver = solver;
  c.dirichlet_fraction = 0.0f;
  c.temperature_plies = 0;
  return c;
}

// Runs a search to completion with a uniform policy and value 0; returns the
// number of network evaluations it asked for.
int RunUniform(mcts::Search& s) {
  std::vector<float> zeros(game::kMaxActions, 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  int evals = 0;
  while (!s.Done()) {
    leaves.clear();
    s.SelectLeaves(8, &leaves);
    REQUIRE((!leaves.empty() || s.Done()));
    for (const auto& l : leaves) {
      s.CompleteLeaf(l.token, zeros.data(), 0.0f);
      ++evals;
    }
  }
  return evals;
}

int BestMove(const game::Game& g, const std::string& moves, int simulations) {
  auto state = g.Replay(g.ParseMoves(moves));
  mcts::Search s(g, Quiet(simulations), 7);
  s.SetRoot(*state);
  RunUniform(s);
  Rng rng(1);
  return s.ChooseAction(0.0f, rng);
}

}  // namespace

TEST_CASE("uniform search finds a win in one in Connect Four", "[mcts]") {
  auto g = game::MakeGame("connect4");
  // X holds columns 1,2,3 on the bottom row; column 4 wins (action 3).
  CHECK(BestMove(*g, "112233", 200) == 3);
  // Vertical: X has three in column 5 (action 4).
  CHECK(BestMove(*g, "515151", 200) == 4);
}

TEST_CASE("uniform search blocks a loss in one in Connect Four", "[mcts]") {
  auto g = game::MakeGame("connect4");
  // O (second player) has three in column 7; X must play column 7 (action 6).
  CHECK(BestMove(*g, "171727", 400) == 6);
  // O holds 4,5,6 on the bottom row and X already holds 7: X must play 3.
  CHECK(BestMove(*g, "741516", 800) == 2);
}

TEST_CASE("root child visits add up to the simulations", "[mcts]") {
  auto g = game::MakeGame("connect4");
  for (bool reuse : {false, true}) {
    mcts::SearchConfig c = Quiet(64);
    c.reuse_tree = reuse;
    mcts::Search s(*g, c, 3);
    s.SetRoot(*g->NewInitialState());
    RunUniform(s);
    CHECK(s.RootChildVisits() == 64);
    std::vector<float> policy(g->ActionCount());
    s.RootPolicy(policy.data());
    CHECK(std::accumulate(policy.begin(), policy.end(), 0.0f) == Approx(1.0f));
    Rng rng(5);
    s.Advance(s.ChooseAction(0.0f, rng));
    const int evals = RunUniform(s);
    CHECK(s.RootChildVisits() == 64);
    if (reuse)
      CHECK(evals < 64);  // the kept subtree's visits count
    else
      CHECK(evals == 65);  // 64 children visits + the root itself
  }
}

TEST_CASE("terminal positions are resolved without the network", "[mcts]") {
  auto g = game::MakeGame("tictactoe");
  // X to move with one empty square left: its only child is terminal.
  auto state = g->NewInitialState();
  for (int a : {0, 1, 2, 4, 3, 5, 7, 6}) state->Apply(a);
  REQUIRE_FALSE(state->IsTerminal());
  mcts::Search s(*g, Quiet(50), 1);
  s.SetRoot(*state);
  CHECK(RunUniform(s) == 1);  // only the root needed the network
  CHECK(s.RootChildVisits() == 50);
}

TEST_CASE("virtual loss spreads L leaves of one tree over distinct nodes", "[mcts]") {
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c = Quiet(100);
  c.leaves_per_round = 4;
  mcts::Search s(*g, c, 9);
  s.SetRoot(*g->NewInitialState());
  std::vector<float> zeros(g->ActionCount(), 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  REQUIRE(s.SelectLeaves(4, &leaves) == 1);  // the root first, alone
  s.CompleteLeaf(leaves[0].token, zeros.data(), 0.0f);
  leaves.clear();
  REQUIRE(s.SelectLeaves(4, &leaves) == 4);
  std::set<uint64_t> hashes;
  for (const auto& l : leaves) hashes.insert(l.state->Hash());
  CHECK(hashes.size() == 4);
  CHECK(s.InFlight() == 4);
  for (const auto& l : leaves) s.CompleteLeaf(l.token, zeros.data(), 0.0f);
  CHECK(s.InFlight() == 0);
  RunUniform(s);
  CHECK(s.RootChildVisits() == 100);
}

TEST_CASE("leaves of many games interleave behind a gated evaluator", "[mcts]") {
  // The gate holds every result until all games have a leaf in flight, then
  // releases them in reverse order: the searches must not depend on order.
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c = Quiet(16);
  c.temperature_plies = 4;
  constexpr int kGames = 6;
  std::vector<std::unique_ptr<mcts::SelfPlayGame>> games;
  for (int i = 0; i < kGames; ++i)
    games.push_back(std::make_unique<mcts::SelfPlayGame>(*g, c, i, 100 + i, 0));
  std::vector<float> zeros(g->ActionCount(), 0.0f);
  int rounds = 0, max_in_flight = 0;
  while (std::any_of(games.begin(), games.end(), [](auto& x) { return !x->Finished(); })) {
    struct Held {
      int game;
      int token;
    };
    std::vector<Held> gate;
    for (int i = 0; i < kGames; ++i) {
      std::vector<mcts::LeafRequest> leaves;
      games[i]->NextLeaves(1, &leaves);
      for (auto& l : leaves) gate.push_back({i, l.token});
    }
    int in_flight = 0;
    for (auto& x : games) in_flight += x->InFlight();
    max_in_flight = std::max(max_in_flight, in_flight);
    REQUIRE(in_flight == static_cast<int>(gate.size()));
    for (auto it = gate.rbegin(); it != gate.rend(); ++it)
      games[it->game]->OnResult(it->token, zeros.data(), 0.0f, 1);
    REQUIRE(++rounds < 100000);
  }
  CHECK(max_in_flight == kGames);
  for (auto& x : games) {
    auto r = x->TakeRecord();
    CHECK(r.Positions() == r.moves.size());
    CHECK(r.Positions() >= 7);
  }
}

namespace {

// Exact tic-tac-toe value for the player to move: +1 win, 0 draw, -1 loss.
int Negamax(const game::State& s) {
  if (s.IsTerminal()) return s.Winner() < 0 ? 0 : (s.Winner() == s.CurrentPlayer() ? 1 : -1);
  std::vector<int> legal;
  s.LegalActions(&legal);
  int best = -2;
  for (int a : legal) {
    auto child = s.Clone();
    child->Apply(a);
    best = std::max(best, -Negamax(*child));
  }
  return best;
}

// Searches with uniform priors and exact values; returns the root's visit counts.
std::vector<int> ExactSearch(const game::Game& g, const game::State& root, float discount, int simulations) {
  mcts::SearchConfig c = Quiet(simulations);
  c.value_discount = discount;
  mcts::Search s(g, c, 11);
  s.SetRoot(root);
  std::vector<float> zeros(game::kMaxActions, 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  while (!s.Done()) {
    leaves.clear();
    s.SelectLeaves(4, &leaves);
    for (const auto& l : leaves) s.CompleteLeaf(l.token, zeros.data(), static_cast<float>(Negamax(*l.state)));
  }
  std::vector<int> visits(g.ActionCount());
  s.RootVisitCounts(visits.data());
  return visits;
}

}  // namespace

TEST_CASE("a value discount makes the search prefer the quickest win", "[mcts]") {
  auto g = game::MakeGame("tictactoe");
  // X holds 0 and 4, O holds 1 and 2; X to move. Square 8 wins at once; 3, 5
  // and 6 make a double threat and win two moves later: all are won (value +1).
  const auto root = g->Replay({0, 1, 4, 2});
  REQUIRE(Negamax(*root) == 1);
  const std::vector<int> plain = ExactSearch(*g, *root, 1.0f, 400);
  const std::vector<int> discounted = ExactSearch(*g, *root, 0.9f, 400);
  INFO("visits, plain: " << ::Catch::Detail::stringify(plain)
                         << " discounted: " << ::Catch::Detail::stringify(discounted));
  // Undiscounted, every winning move looks as good as the quickest: visits spread.
  CHECK(plain[8] < 300);
  CHECK(plain[3] + plain[5] + plain[6] > 100);
  // Discounted, a win two moves later is worth 0.9^2 of one now.
  CHECK(discounted[8] > 300);
  CHECK(discounted[8] == *std::max_element(discounted.begin(), discounted.end()));
}

// ---- MCTS-solver ------------------------------------------------------------

namespace {

// Exact tic-tac-toe result for the player to move (+1, 0, -1) and its length
// in plies with best play (quickest win, slowest loss).
std::pair<int, int> NegamaxPlies(const game::State& s) {
  if (s.IsTerminal()) return {s.Winner() < 0 ? 0 : (s.Winner() == s.CurrentPlayer() ? 1 : -1), 0};
  std::vector<int> legal;
  s.LegalActions(&legal);
  std::pair<int, int> best{-2, 0};
  for (int a : legal) {
    auto child = s.Clone();
    child->Apply(a);
    const auto [v, plies] = NegamaxPlies(*child);
    const std::pair<int, int> mine{-v, plies + 1};
    const bool better = mine.first > best.first ||
                        (mine.first == best.first && mine.first > 0 && mine.second < best.second) ||
                        (mine.first == best.first && mine.first < 0 && mine.second > best.second);
    if (better) best = mine;
  }
  return best;
}

// A search with uniform priors and value 0 (no knowledge but the rules).
std::unique_ptr<mcts::Search> Blind(const game::Game& g, const game::State& root, int simulations,
                                    bool solver, float discount = 1.0f) {
  mcts::SearchConfig c = Quiet(simulations);
  c.solver = solver;
  c.value_discount = discount;
  auto s = std::make_unique<mcts::Search>(g, c, 5);
  s->SetRoot(root);
  RunUniform(*s);
  return s;
}

// Every position `plies` moves into a tic-tac-toe game (non-terminal).
std::vector<std::unique_ptr<game::State>> TicTacToePositions(const game::Game& g, int plies) {
  std::vector<std::unique_ptr<game::State>> out, next;
  out.push_back(g.NewInitialState());
  for (int p = 0; p < plies; ++p) {
    next.clear();
    for (const auto& s : out) {
      std::vector<int> legal;
      s->LegalActions(&legal);
      for (int a : legal) {
        auto child = s->Clone();
        child->Apply(a);
        if (!child->IsTerminal()) next.push_back(std::move(child));
      }
    }
    out.swap(next);
  }
  return out;
}

}  // namespace

TEST_CASE("the MCTS-solver proves tic-tac-toe results and never plays a losing move", "[mcts][slow]") {
  auto g = game::MakeGame("tictactoe");
  const float d = 0.9f;
  int proven = 0, positions = 0;
  for (int plies : {4, 5}) {
    for (const auto& pos : TicTacToePositions(*g, plies)) {
      ++positions;
      const auto [exact, length] = NegamaxPlies(*pos);
      auto s = Blind(*g, *pos, 3000, true, d);
      INFO("position after " << plies << " plies, exact " << exact << " in " << length);
      REQUIRE(s->RootProven());
      ++proven;
      // The proof's outcome is exact; its length bounds a win's from above.
      if (exact == 0) CHECK(s->RootValue() == 0.0f);
      if (exact > 0) CHECK((s->RootValue() > 0.0f && s->RootValue() <= std::pow(d, length - 1) + 1e-6f));
      if (exact < 0) CHECK((s->RootValue() < 0.0f && s->RootValue() >= -std::pow(d, length - 1) - 1e-6f));
      Rng rng(3);
      auto child = pos->Clone();
      child->Apply(s->ChooseAction(0.0f, rng));
      CHECK(-NegamaxPlies(*child).first == exact);
    }
  }
  CHECK(proven == positions);
  CHECK(positions > 500);
}

TEST_CASE("the MCTS-solver plays a win in one after one simulation, and the slowest loss", "[mcts]") {
  auto g = game::MakeGame("tictactoe");
  Rng rng(1);
  // X holds 0 and 4, O holds 1 and 2; X to move: 8 wins at once. Expanding
  // the root proves it, so one simulation is enough.
  auto win = g->Replay({0, 1, 4, 2});
  auto s = Blind(*g, *win, 1, true, 0.9f);
  CHECK(s->RootProven());
  CHECK(s->RootValue() == Approx(0.9f));
  CHECK(s->ChooseAction(0.0f, rng) == 8);
  CHECK(s->ChooseAction(1.0f, rng) == 8);  // even when sampling
  // Lost positions where some moves lose at once and others later: never
  // the immediate loss.
  int checked = 0;
  for (const auto& pos : TicTacToePositions(*g, 4)) {
    if (NegamaxPlies(*pos).first >= 0) continue;
    std::vector<int> legal, lengths;
    pos->LegalActions(&legal);
    for (int a : legal) {
      auto child = pos->Clone();
      child->Apply(a);
      lengths.push_back(NegamaxPlies(*child).second + 1);
    }
    if (*std::min_element(lengths.begin(), lengths.end()) ==
        *std::max_element(lengths.begin(), lengths.end()))
      continue;
    auto lost = Blind(*g, *pos, 2000, true, 0.9f);
    REQUIRE(lost->RootProven());
    CHECK(lost->RootValue() < 0.0f);
    const int a = lost->ChooseAction(0.0f, rng);
    const size_t i = std::find(legal.begin(), legal.end(), a) - legal.begin();
    CHECK(lengths[i] > *std::min_element(lengths.begin(), lengths.end()));
    ++checked;
  }
  CHECK(checked > 10);
}

TEST_CASE("the MCTS-solver avoids a move proven lost that plain PUCT would play", "[mcts]") {
  auto g = game::MakeGame("connect4");
  // O has three in column 7: X must block with column 7 (action 6). The
  // other six moves are proven lost as soon as each is expanded once.
  auto state = g->Replay(g->ParseMoves("171727"));
  Rng rng(1);
  auto with = Blind(*g, *state, 40, true);
  CHECK(with->ChooseAction(0.0f, rng) == 6);
  std::vector<int> visits(g->ActionCount());
  with->RootVisitCounts(visits.data());
  CHECK(visits[6] > 40 - 7);  // each losing move needed one visit to be proven
  // Without the solver, values of 0 everywhere leave 40 simulations blind.
  auto without = Blind(*g, *state, 40, false);
  CHECK_FALSE(without->RootProven());
  without->RootVisitCounts(visits.data());
  CHECK(visits[6] < 20);
}

TEST_CASE("proof-shaped policy targets keep the exact result and prefer the quickest win", "[mcts][slow]") {
  auto g = game::MakeGame("tictactoe");
  const int n = g->ActionCount();
  std::vector<float> target(n);
  int won = 0, lost = 0, win_in_one = 0;
  for (int plies : {4, 5}) {
    for (const auto& pos : TicTacToePositions(*g, plies)) {
      const auto [exact, length] = NegamaxPlies(*pos);
      auto s = Blind(*g, *pos, 3000, true, 0.9f);
      REQUIRE(s->RootProven());
      s->RootPolicy(target.data());
      INFO("position after " << plies << " plies, exact " << exact << " in " << length);
      CHECK(std::accumulate(target.begin(), target.end(), 0.0f) == Approx(1.0f));
      // Every move the target names keeps the exact result, and in a lost
      // position loses as slowly as possible.
      for (int a = 0; a < n; ++a) {
        if (target[a] == 0.0f) continue;
        auto child = pos->Clone();
        child->Apply(a);
        const auto [v, child_plies] = NegamaxPlies(*child);
        CHECK(-v == exact);
        if (exact < 0) CHECK(child_plies + 1 == length);
        if (exact > 0 && length == 1) CHECK(child->IsTerminal());
      }
      won += exact > 0;
      lost += exact < 0;
      win_in_one += exact > 0 && length == 1;
    }
  }
  CHECK(won > 100);
  CHECK(lost > 20);
  CHECK(win_in_one > 50);
}

TEST_CASE("proof-shaped policy targets drop moves proven lost but --no-proof-targets keeps the visits",
          "[mcts]") {
  auto g = game::MakeGame("connect4");
  auto state = g->Replay(g->ParseMoves("171727"));  // X must block column 7 (action 6)
  std::vector<float> target(g->ActionCount());
  std::vector<int> visits(g->ActionCount());
  auto with = Blind(*g, *state, 40, true);
  CHECK_FALSE(with->RootProven());  // the block itself is not proven
  with->RootPolicy(target.data());
  CHECK(target[6] == 1.0f);
  with->RootVisitCounts(visits.data());
  CHECK(visits[6] < 40);  // the raw visits would have put mass on lost moves

  mcts::SearchConfig c = Quiet(40, true);
  c.proof_targets = false;
  mcts::Search raw(*g, c, 5);
  raw.SetRoot(*state);
  RunUniform(raw);
  raw.RootPolicy(target.data());
  raw.RootVisitCounts(visits.data());
  for (int a = 0; a < g->ActionCount(); ++a) CHECK(target[a] == Approx(visits[a] / 40.0f));
  CHECK(target[6] < 1.0f);
  CHECK(c.Describe().find("proof_targets") == std::string::npos);
  CHECK(Quiet(40, true).Describe().find("solver=1 proof_targets=1") != std::string::npos);
}

TEST_CASE("the opening temperature is a step by default and falls linearly with temperature_falls",
          "[mcts]") {
  mcts::SearchConfig c;
  c.temperature_plies = 20;
  c.final_temperature = 0.3f;
  CHECK(c.MoveTemperature(0) == 1.0f);
  CHECK(c.MoveTemperature(19) == 1.0f);
  CHECK(c.MoveTemperature(20) == Approx(0.3f));
  CHECK(c.MoveTemperature(60) == Approx(0.3f));
  CHECK(c.Describe().find("temperature_falls") == std::string::npos);

  c.temperature_falls = true;
  CHECK(c.MoveTemperature(0) == 1.0f);
  CHECK(c.MoveTemperature(10) == Approx(0.65f));  // halfway from 1 to 0.3
  CHECK(c.MoveTemperature(19) == Approx(1.0f - 0.7f * 19.0f / 20.0f));
  CHECK(c.MoveTemperature(20) == Approx(0.3f));
  CHECK(c.MoveTemperature(60) == Approx(0.3f));
  CHECK(c.Describe().find(" temperature_falls=1") != std::string::npos);

  c.final_temperature = 0.0f;  // falls towards the most visited move, which ply 20 on plays
  CHECK(c.MoveTemperature(15) == Approx(0.25f));
  CHECK(c.MoveTemperature(20) == 0.0f);
}

TEST_CASE("a small temperature samples the most visited move, not an overflow", "[mcts]") {
  // n^(1/T) for n = 100 visits and T = 0.005 is 10^400, past a double: the weights
  // are taken relative to the most visited move so that they cannot become inf.
  auto g = game::MakeGame("connect4");
  auto state = g->Replay(g->ParseMoves("112233"));  // column 4 (action 3) wins at once
  mcts::Search s(*g, Quiet(400), 7);
  s.SetRoot(*state);
  RunUniform(s);
  Rng rng(2);
  for (int i = 0; i < 50; ++i) CHECK(s.ChooseAction(0.005f, rng) == 3);
  // Temperature 1 still samples the others in proportion to their visits.
  std::set<int> seen;
  for (int i = 0; i < 400; ++i) seen.insert(s.ChooseAction(1.0f, rng));
  CHECK(seen.size() > 1);
}

namespace {

// Plays one self-play game to its end with a uniform network (value 0).
mcts::GameRecord PlayUniform(const game::Game& g, const mcts::SearchConfig& c, uint64_t seed) {
  mcts::SelfPlayGame sp(g, c, seed, seed, 0);
  std::vector<float> zeros(g.ActionCount(), 0.0f);
  std::vector<mcts::LeafRequest> leaves;
  for (int rounds = 0; !sp.Finished(); ++rounds) {
    REQUIRE(rounds < 100000);
    leaves.clear();
    sp.NextLeaves(8, &leaves);
    for (const auto& l : leaves) sp.OnResult(l.token, zeros.data(), 0.0f, 1);
  }
  return sp.TakeRecord();
}

}  // namespace

TEST_CASE("a random opening starts each self-play game with 0 to N random moves that have no rows",
          "[mcts]") {
  auto g = game::MakeGame("connect4");
  mcts::SearchConfig c = Quiet(8);
  c.random_opening_plies = 6;
  CHECK(c.Describe().find(" random_opening_plies=6") != std::string::npos);
  CHECK(Quiet(8).Describe().find("random_opening") == std::string::npos);
  std::set<size_t> openings;
  std::set<std::vector<int16_t>> first_moves;  // the opening's moves, game by game
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const mcts::GameRecord r = PlayUniform(*g, c, seed);
    REQUIRE(r.Positions() >= 1);
    const size_t k = r.moves.size() - r.Positions();  // no resignation: one row per searched move
    REQUIRE(k <= 6);
    openings.insert(k);
    first_moves.emplace(r.moves.begin(), r.moves.begin() + static_cast<long>(k));
    // The rows start at ply k, one a ply, and the first is the position after the opening.
    for (size_t i = 0; i < r.Positions(); ++i) CHECK(r.ply[i] == static_cast<int16_t>(k + i));
    auto state = g->Replay(std::vector<int>(r.moves.begin(), r.moves.begin() + static_cast<long>(k)));
    CHECK_FALSE(state->IsTerminal());
    std::vector<uint8_t> features(static_cast<size_t>(g->Shape().FeatureBytes()));
    state->EncodeFeatures(features.data());
    CHECK(std::equal(features.begin(), features.end(), r.features.begin()));
    // The same seed plays the same game.
    CHECK(PlayUniform(*g, c, seed).moves == r.moves);
  }
  CHECK(openings.count(0) == 1);  // k is uniform in [0, 6]: 60 games miss a value with p < 1e-3
  CHECK(openings.count(6) == 1);
  CHECK(first_moves.size() > 40);  // random moves, not a fixed line
}

TEST_CASE("a random opening never plays a move that ends the game", "[mcts]") {
  // Tic-tac-toe lasts at most 9 plies: an opening of up to 9 random moves
  // would end many games before their first search if it could.
  auto g = game::MakeGame("tictactoe");
  mcts::SearchConfig c = Quiet(4);
  c.random_opening_plies = 9;
  size_t longest = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const mcts::GameRecord r = PlayUniform(*g, c, seed);
    REQUIRE(r.Positions() >= 1);  // the game's last move was searched
    const size_t k = r.moves.size() - r.Positions();
    longest = std::max(longest, k);
    CHECK_FALSE(
        g->Replay(std::vector<int>(r.moves.begin(), r.moves.begin() + static_cast<long>(k)))->IsTerminal());
  }
  CHECK(longest >= 6);  // openings long enough that a move ending the game was there to avoid
}
