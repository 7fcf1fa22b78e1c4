// `zerofarm eval` (learn/strength.h): move error against the exact Connect
// Four solver, and an arena between two networks.
#include "zerofarm/learn/strength.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/core/thread_annotations.h"
#include "zerofarm/eval/batched_search.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/game/connect4_solver.h"
#include "zerofarm/io/files.h"

namespace zerofarm::learn {
namespace fs = std::filesystem;

// ---- move error ---------------------------------------------------------------

std::vector<PonsPosition> ReadPonsFile(const std::string& path, int limit) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": No such file or directory");
  game::Connect4Game game;
  std::vector<PonsPosition> out;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line) && (limit <= 0 || static_cast<int>(out.size()) < limit)) {
    ++line_no;
    if (line.empty()) continue;
    std::istringstream ls(line);
    PonsPosition p;
    if (!(ls >> p.moves >> p.score) || p.score < game::Connect4Solver::kMinScore ||
        p.score > game::Connect4Solver::kMaxScore)
      throw ConfigError(path + ":" + std::to_string(line_no) + ": expected 'moves score', got '" + line +
                        "'");
    try {
      const auto state = game.Replay(game.ParseMoves(p.moves));
      if (state->IsTerminal()) throw Error("the game is over");
    } catch (const Error& e) {
      throw ConfigError(path + ":" + std::to_string(line_no) + ": " + e.what());
    }
    out.push_back(std::move(p));
  }
  if (out.empty()) throw ConfigError(path + ": no positions");
  return out;
}

namespace {

using RatingCache = std::map<std::string, std::pair<int, std::string>>;  // moves -> (score, rating)

RatingCache ReadRatings(const std::vector<std::string>& sources) {
  RatingCache cache;
  for (const auto& path : sources) {
    std::ifstream in(path);
    std::string moves, rating;
    int score = 0;
    while (in >> moves >> score >> rating)
      if (rating.size() == static_cast<size_t>(game::Connect4Game::kWidth)) cache[moves] = {score, rating};
  }
  return cache;
}

// The solver's verdict on each move of `p`; Error if no move scores p.score.
std::string RateOne(const game::Connect4Game& game, game::Connect4Solver& solver, const PonsPosition& p) {
  const auto state = game.Replay(game.ParseMoves(p.moves));
  const auto& c4 = static_cast<const game::Connect4State&>(*state);
  const auto rating = solver.RateMoves(c4, p.score);
  std::string out(rating.begin(), rating.end());
  // The best move must score exactly the file's score; otherwise the line is wrong.
  if (out.find(game::Connect4Solver::kOptimal) == std::string::npos)
    throw Error("the solver finds no move scoring " + std::to_string(p.score) + " in position " + p.moves +
                ": the file's score is wrong");
  return out;
}

}  // namespace

std::string RatingLine(const std::string& moves, int score, const std::string& rating) {
  return moves + ' ' + std::to_string(score) + ' ' + rating + '\n';
}

void RatePositions(std::vector<PonsPosition>* positions, const std::string& cache_path,
                   const std::vector<std::string>& known, const std::function<void(int, int)>& progress,
                   int threads) {
  std::vector<std::string> sources = known;
  if (!cache_path.empty()) sources.push_back(cache_path);
  RatingCache cache = ReadRatings(sources);
  std::vector<PonsPosition*> unrated;
  for (auto& p : *positions) {
    const auto it = cache.find(p.moves);
    if (it != cache.end() && it->second.first == p.score)
      p.rating = it->second.second;
    else
      unrated.push_back(&p);
  }
  const int total = static_cast<int>(positions->size());
  const int done = total - static_cast<int>(unrated.size());
  if (progress && done < total) progress(done, total);  // before the solver starts: the caller may say so
  struct Shared {
    Mutex mu;  // also orders the cache file's writes and the calls of `progress`
    RatingCache* cache ZF_PT_GUARDED_BY(mu);
    int done ZF_GUARDED_BY(mu);
    int fresh ZF_GUARDED_BY(mu);
    double last_save ZF_GUARDED_BY(mu);
    std::string failure ZF_GUARDED_BY(mu);
  } shared{{}, &cache, done, 0, MonotonicSeconds(), {}};
  auto save = [&]() ZF_REQUIRES(shared.mu) {
    if (cache_path.empty() || shared.fresh == 0) return;
    std::string text;
    for (const auto& [moves, entry] : *shared.cache) text += RatingLine(moves, entry.first, entry.second);
    io::WriteTextFileAtomically(cache_path, text);  // issue 21: .tmp created fresh, never through a link
    shared.fresh = 0;
  };
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};  // a position's score was wrong: the others stop early
  auto rate = [&] {               // takes positions until none is left
    const game::Connect4Game game;
    game::Connect4Solver solver;
    while (!stop.load(std::memory_order_relaxed)) {                   // relaxed: only a hint to stop sooner
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);  // relaxed: a ticket; mu orders the rest
      if (i >= unrated.size()) return;
      PonsPosition& p = *unrated[i];
      const std::string rating = RateOne(game, solver, p);
      const MutexLock lock(shared.mu);
      p.rating = rating;
      (*shared.cache)[p.moves] = {p.score, rating};
      ++shared.fresh;
      ++shared.done;
      if (MonotonicSeconds() - shared.last_save > 30) {
        save();
        shared.last_save = MonotonicSeconds();
      }
      if (progress && (shared.done % 25 == 0 || shared.done == total)) progress(shared.done, total);
    }
  };
  auto work = [&] {  // no exception leaves a thread: the first is rethrown after the joins
    try {
      rate();
    } catch (const std::exception& e) {
      const MutexLock lock(shared.mu);
      if (shared.failure.empty()) shared.failure = e.what();
      stop.store(true, std::memory_order_relaxed);  // relaxed: a hint; `failure` is read after the joins
    }
  };
  const int n = std::max(1, std::min(threads, static_cast<int>(unrated.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  if (!unrated.empty()) work();  // no solver (64 MiB) when every position was found
  for (auto& t : pool) t.join();
  const MutexLock lock(shared.mu);
  save();  // what was rated is kept, even when a line was wrong
  if (!shared.failure.empty()) throw Error(shared.failure);
  if (progress && unrated.empty()) progress(shared.done, total);
}

MoveErrorResult MoveError(const game::Game& game, eval::Evaluator& net,
                          const std::vector<PonsPosition>& positions, mcts::SearchConfig search,
                          int max_batch) {
  if (!game::IsConnect4(game)) throw ConfigError("move error needs connect4 weights, not " + game.Name());
  const double t0 = MonotonicSeconds();
  MoveErrorResult r;
  r.positions = static_cast<int>(positions.size());
  r.simulations = search.simulations;
  r.moves.resize(positions.size());
  const int fb = game.Shape().FeatureBytes();
  const int actions = game.ActionCount();
  std::vector<std::unique_ptr<game::State>> states;
  for (const auto& p : positions) {
    if (p.rating.size() != static_cast<size_t>(actions)) throw Error("position " + p.moves + " is not rated");
    states.push_back(game.Replay(game.ParseMoves(p.moves)));
  }
  auto judge = [&](const PonsPosition& p, int action, int* errors, int* outcome_errors) {
    const char q = p.rating[static_cast<size_t>(action)];
    if (q != game::Connect4Solver::kOptimal) ++*errors;
    if (q == game::Connect4Solver::kWorseOutcome || q == game::Connect4Solver::kIllegalMove)
      ++*outcome_errors;
  };
  // The network alone: argmax of the logits over legal moves, in batches.
  std::vector<uint8_t> features(static_cast<size_t>(max_batch) * fb);
  std::vector<float> policy(static_cast<size_t>(max_batch) * actions);
  std::vector<float> value(max_batch);
  std::vector<int> legal;
  for (size_t first = 0; first < states.size(); first += max_batch) {
    const int n = static_cast<int>(std::min<size_t>(max_batch, states.size() - first));
    for (int i = 0; i < n; ++i) states[first + i]->EncodeFeatures(&features[static_cast<size_t>(i) * fb]);
    const eval::LeafChunk chunk{features.data(), policy.data(), value.data(), n};
    net.Evaluate(&chunk, 1);
    for (int i = 0; i < n; ++i) {
      states[first + i]->LegalActions(&legal);
      const float* logits = &policy[static_cast<size_t>(i) * actions];
      int best = legal.front();
      for (int a : legal)
        if (logits[a] > logits[best]) best = a;
      judge(positions[first + i], best, &r.net_errors, &r.net_outcome_errors);
      const int score = positions[first + i].score;
      const int outcome = score > 0 ? 2 : score == 0 ? 1 : 0;
      const float v = value[static_cast<size_t>(i)];
      r.moves[first + i].net_move = best;
      r.moves[first + i].net_value = v;
      const int read = v > 1.0f / 3 ? 2 : v < -1.0f / 3 ? 0 : 1;
      r.value_mean[outcome] += v;
      ++r.value_count[outcome];
      if (read == outcome) ++r.value_agree;
    }
  }
  for (int o = 0; o < 3; ++o)
    if (r.value_count[o] > 0) r.value_mean[o] /= r.value_count[o];
  // MCTS: all positions searched at once, leaves batched.
  if (search.simulations > 0) {
    search.dirichlet_fraction = 0.0f;
    search.reuse_tree = false;
    Rng rng(1);
    constexpr size_t kGroup = 256;
    for (size_t first = 0; first < states.size(); first += kGroup) {
      const size_t n = std::min(kGroup, states.size() - first);
      std::vector<std::unique_ptr<mcts::Search>> trees;
      std::vector<mcts::Search*> ptrs;
      for (size_t i = 0; i < n; ++i) {
        trees.push_back(std::make_unique<mcts::Search>(game, search, 1000 + first + i));
        trees.back()->SetRoot(*states[first + i]);
        ptrs.push_back(trees.back().get());
      }
      eval::RunSearches(game, net, ptrs, max_batch);
      for (size_t i = 0; i < n; ++i) {
        MoveErrorResult::Moves& m = r.moves[first + i];
        m.mcts_move = trees[i]->ChooseAction(0.0f, rng);
        m.mcts_value = trees[i]->RootValue();
        judge(positions[first + i], m.mcts_move, &r.mcts_errors, &r.mcts_outcome_errors);
      }
    }
  }
  r.seconds = MonotonicSeconds() - t0;
  return r;
}

std::string MoveErrorCsvFields(const MoveErrorResult& m) {
  std::ostringstream os;
  os << m.positions << ',' << m.simulations << ',' << m.NetRate() << ',' << m.MctsRate() << ','
     << m.NetOutcomeRate() << ',' << m.MctsOutcomeRate() << ',' << m.ValueAgreement();
  return os.str();
}

std::string PositionCsvRow(const std::string& file, const PonsPosition& p, const MoveErrorResult::Moves& m) {
  // A verdict is a digit of `rating`; '-' where the chooser did not choose.
  const auto verdict = [&](int move) {
    return move >= 0 && static_cast<size_t>(move) < p.rating.size() ? p.rating[static_cast<size_t>(move)]
                                                                    : '-';
  };
  std::string name = file;  // a file name is the user's: no column or row breaks from it
  for (char& c : name)
    if (c == ',' || c == '"' || c == '\n' || c == '\r') c = '_';
  std::ostringstream os;
  os << name << ',' << p.moves << ',' << p.score << ',' << p.rating << ',' << m.net_move + 1 << ','
     << verdict(m.net_move) << ',' << m.net_value << ',';
  if (m.mcts_move >= 0)
    os << m.mcts_move + 1 << ',' << verdict(m.mcts_move) << ',' << m.mcts_value;
  else
    os << ",,";
  return os.str();
}

// ---- arena -----------------------------------------------------------------------

ArenaResult Arena(const game::Game& game, eval::Evaluator& a, eval::Evaluator& b, int games,
                  mcts::SearchConfig search, int opening_plies, uint64_t seed, int concurrent) {
  if (games < 1) throw ConfigError("an arena needs at least one game");
  search.dirichlet_fraction = 0.0f;
  search.reuse_tree = false;  // the two players must not share a tree
  struct Match {
    int index = 0;
    std::unique_ptr<game::State> state;
    std::unique_ptr<mcts::Search> tree;
    Rng rng;
  };
  ArenaResult result;
  int started = 0;
  std::vector<Match> live;
  auto start_game = [&] {
    Match m;
    m.index = started;
    m.state = game.NewInitialState();
    // The pair's opening: random legal moves that do not end the game.
    Rng opening(MixSeed(seed ^ 0x0FE1, static_cast<uint64_t>(started / 2)));
    std::vector<int> legal, quiet;
    for (int ply = 0; ply < opening_plies; ++ply) {
      m.state->LegalActions(&legal);
      quiet.clear();
      for (int action : legal) {
        auto next = m.state->Clone();
        next->Apply(action);
        if (!next->IsTerminal()) quiet.push_back(action);
      }
      if (quiet.empty()) break;
      m.state->Apply(quiet[opening.Below(quiet.size())]);
    }
    m.tree = std::make_unique<mcts::Search>(game, search, MixSeed(seed, static_cast<uint64_t>(started)));
    m.rng = Rng(MixSeed(seed ^ 0xA5A5, static_cast<uint64_t>(started)));
    ++started;
    live.push_back(std::move(m));
  };
  while (started < games && static_cast<int>(live.size()) < concurrent) start_game();
  // Network a plays player 0 in even games: the mover of game i uses a iff
  // (player to move) == (i % 2).
  while (!live.empty()) {
    for (int side = 0; side < 2; ++side) {
      std::vector<mcts::Search*> batch;
      for (auto& m : live)
        if (!m.state->IsTerminal() && (m.state->CurrentPlayer() == m.index % 2) == (side == 0)) {
          m.tree->SetRoot(*m.state);
          batch.push_back(m.tree.get());
        }
      if (batch.empty()) continue;
      eval::RunSearches(game, side == 0 ? a : b, batch, 256);
      for (auto& m : live)
        if (!m.state->IsTerminal() && (m.state->CurrentPlayer() == m.index % 2) == (side == 0))
          m.state->Apply(m.tree->ChooseAction(0.0f, m.rng));
    }
    for (size_t i = 0; i < live.size();) {
      if (!live[i].state->IsTerminal()) {
        ++i;
        continue;
      }
      const int winner = live[i].state->Winner();
      const int a_player = live[i].index % 2;
      ++result.games;
      if (winner < 0)
        ++result.draws;
      else if (winner == a_player)
        ++result.wins;
      else
        ++result.losses;
      live.erase(live.begin() + static_cast<long>(i));
      if (started < games) start_game();
    }
  }
  return result;
}

}  // namespace zerofarm::learn
