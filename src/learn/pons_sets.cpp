// Test sets of Pons's kinds from random games (pons_sets.h).
#include "zerofarm/learn/pons_sets.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/core/thread_annotations.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/game/connect4_solver.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/safe_files.h"

namespace zerofarm::learn {
namespace {

constexpr int kCells = game::Connect4Game::kCells;

// Stones (L) and plies left (R) of each level 1-3, read off Pons's files.
constexpr int kStones[3][2] = {{1, 14}, {15, 28}, {29, kCells - 1}};
constexpr int kLeft[3][2] = {{1, 14}, {15, 28}, {29, kCells}};

std::string MirrorMoves(std::string moves) {
  for (char& m : moves) m = static_cast<char>('1' + '7' - m);  // column c <-> 8 - c
  return moves;
}

uint64_t KeyOf(const game::Connect4Game& game, const std::string& moves) {
  const auto state = game.Replay(game.ParseMoves(moves));
  return static_cast<const game::Connect4State&>(*state).Key();
}

// The columns where a stone of `player` in the lowest empty cell would
// complete a four (Pons's layout: 7 bits a column, row 0 at the bottom).
std::vector<int> FourColumns(const game::Connect4State& s, int player) {
  std::vector<int> legal, out;
  s.LegalActions(&legal);
  const uint64_t mask = s.Stones(0) | s.Stones(1), stones = s.Stones(player);
  for (const int a : legal) {
    const uint64_t cell = (mask + (uint64_t{1} << (7 * a))) & (uint64_t{0x3F} << (7 * a));
    if (game::Connect4State::HasFour(stones | cell)) out.push_back(a);
  }
  return out;
}

bool WinsAtOnce(const game::Connect4State& s) { return !FourColumns(s, s.CurrentPlayer()).empty(); }

// A move of a random game without blunders a glance shows: block the
// opponent's four when it threatens one, else a uniformly random move that
// does not let the opponent complete a four at once (any move when all do).
int SensibleRandomMove(const game::Connect4State& s, Rng& rng) {
  if (const auto block = FourColumns(s, 1 - s.CurrentPlayer()); !block.empty()) return block.front();
  std::vector<int> legal, safe;
  s.LegalActions(&legal);
  for (const int a : legal) {
    game::Connect4State next = s;
    next.Apply(a);
    if (!WinsAtOnce(next)) safe.push_back(a);
  }
  const std::vector<int>& from = safe.empty() ? legal : safe;
  return from[rng.Below(from.size())];
}

// Candidate `index` of `seed`: its moves, or "" when its game ended on the way
// or the side to move can complete a four at once (a position with nothing to
// measure). Both sides play SensibleRandomMove: with uniformly random moves
// most positions of an R1 kind were such wins, where Pons's files have none
// in L1 and L2 (docs/training.md, "Sets made here").
std::string CandidateMoves(const PonsSetKind& kind, uint64_t seed, uint64_t index) {
  Rng rng(MixSeed(seed, index));
  const int stones = kind.min_stones + static_cast<int>(rng.Below(kind.max_stones - kind.min_stones + 1));
  game::Connect4State state;
  std::string moves;
  for (int i = 0; i < stones; ++i) {
    if (state.IsTerminal() || WinsAtOnce(state)) return "";
    const int a = SensibleRandomMove(state, rng);
    state.Apply(a);
    moves += static_cast<char>('1' + a);
  }
  return state.IsTerminal() || WinsAtOnce(state) ? "" : moves;
}

// A solved candidate: its score, and its verdicts when it is of the kind.
struct Solved {
  int score = 0;       // Connect4Solver::kIllegal: shown not of the kind, not solved
  std::string rating;  // Connect4Solver::MoveQuality per column; "" when not of the kind
};

// Solved candidates ("moves score [rating]" lines) kept across runs. A line
// that does not parse is skipped; a wrong score fails its rating's check later.
std::map<std::string, Solved> ReadWork(const std::string& path) {
  std::map<std::string, Solved> solved;
  if (path.empty()) return solved;
  // Not through a link, and bounded: 64 MiB is over a million candidates.
  const std::optional<std::string> text = io::ReadRunFile(path, size_t{64} << 20);
  if (!text) return solved;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string moves, rating;
    int score = 0;
    if (!(fields >> moves >> score)) continue;
    fields >> rating;
    if (!rating.empty() && rating.size() != static_cast<size_t>(game::Connect4Game::kWidth)) continue;
    solved[moves] = {score, rating};
  }
  return solved;
}

void WriteWork(const std::string& path, const std::map<std::string, Solved>& solved) {
  if (path.empty()) return;
  std::ostringstream text;
  for (const auto& [moves, s] : solved)
    text << moves << ' ' << s.score << (s.rating.empty() ? "" : " ") << s.rating << '\n';
  io::WriteTextFileAtomically(path, text.str());
}

bool OfKind(const PonsSetKind& kind, int stones, int score) {
  if (score == game::Connect4Solver::kIllegal) return false;
  const int left = PliesLeft(stones, score);
  return left >= kind.min_left && left <= kind.max_left;
}

// Whether the exact score of `s` (of `stones` stones) is of the kind:
// null-window tests at the edges of the kind's scores, from the top down,
// each far cheaper than Solve's binary search. The kind's scores are up to
// three runs (losses, a draw, wins) with gaps between them.
bool LeftInKind(const PonsSetKind& kind, game::Connect4Solver& solver, const game::Connect4State& s,
                int stones) {
  using Solver = game::Connect4Solver;
  std::vector<int> ok;  // the kind's scores, ascending
  for (int score = Solver::kMinScore; score <= Solver::kMaxScore; ++score)
    if (OfKind(kind, stones, score)) ok.push_back(score);
  if (ok.empty()) return false;
  if (ok.back() < Solver::kMaxScore && solver.AtLeast(s, ok.back() + 1)) return false;  // wins too fast
  if (ok.front() > Solver::kMinScore && !solver.AtLeast(s, ok.front())) return false;   // loses too fast
  // Known now: ok.front() <= score <= the top of the run the loop is at.
  for (size_t i = ok.size() - 1; i > 0; --i) {
    if (ok[i] == ok[i - 1] + 1) continue;
    if (solver.AtLeast(s, ok[i])) return true;           // in the run above the gap
    if (solver.AtLeast(s, ok[i - 1] + 1)) return false;  // in the gap
  }
  return true;  // in the lowest run
}

// Solves `moves` and, when it is of the kind, rates its moves with the same
// solver (its table already holds most of what the rating asks). A candidate
// that cannot be of the kind gets a score of kIllegal: not solved.
Solved SolveCandidate(const PonsSetKind& kind, game::Connect4Solver& solver, const std::string& moves) {
  const game::Connect4Game game;
  const auto state = game.Replay(game.ParseMoves(moves));
  const auto& c4 = static_cast<const game::Connect4State&>(*state);
  if (!LeftInKind(kind, solver, c4, static_cast<int>(moves.size())))
    return {game::Connect4Solver::kIllegal, ""};
  Solved out{solver.Solve(c4), ""};
  if (OfKind(kind, static_cast<int>(moves.size()), out.score)) {
    const auto rating = solver.RateMoves(c4, out.score);
    out.rating.assign(rating.begin(), rating.end());
  }
  return out;
}

// The candidates of `seed` from `first` on, `n` of them that are new: not
// excluded, not seen (their keys are added to `seen`), and not ended.
std::vector<std::string> NextCandidates(const PonsSetRequest& r, uint64_t* next, size_t n,
                                        std::unordered_set<uint64_t>* seen) {
  std::vector<std::string> out;
  // Enough draws that a kind whose games rarely last (or a seed exhausted of
  // new positions, as L1's first plies are) ends with an error, not a hang.
  const uint64_t give_up = *next + 1000 * n + 100000;
  while (out.size() < n && *next < give_up) {
    const std::string moves = CandidateMoves(r.kind, r.seed, (*next)++);
    if (moves.empty()) continue;
    const uint64_t key = MirrorFreeKey(moves);
    if (r.exclude.count(key) || !seen->insert(key).second) continue;
    out.push_back(moves);
  }
  return out;
}

}  // namespace

PonsSetKind ParsePonsSetKind(const std::string& name) {
  static const std::regex re("(Test_)?L([123])_R([123])");
  std::smatch m;
  if (!std::regex_match(name, m, re))
    throw ConfigError("'" + name + "' is not a kind of Pons set: L1_R1 ... L3_R3 (stones L, plies left R)");
  const int l = m[2].str()[0] - '1', r = m[3].str()[0] - '1';
  const PonsSetKind kind{"L" + m[2].str() + "_R" + m[3].str(), kStones[l][0], kStones[l][1], kLeft[r][0],
                         kLeft[r][1]};
  if (kind.min_stones + kind.min_left > kCells)  // L2_R3, L3_R2, L3_R3
    throw ConfigError("no position is of kind " + kind.name + ": " + std::to_string(kind.min_stones) +
                      " stones and " + std::to_string(kind.min_left) + " plies left make more than 42");
  return kind;
}

int PliesLeft(int stones, int score) {
  if (score == 0) return kCells - stones;
  // The winner wins with its k-th stone, k = 22 - |score| (pons: the file comment of connect4_solver.h).
  const int k = 22 - std::abs(score);
  const int mover = stones % 2, winner = score > 0 ? mover : 1 - mover;
  const int ply = winner == 0 ? 2 * k - 1 : 2 * k;  // the winning stone's ply, 1-based
  return ply - stones;
}

bool IsOfKind(const PonsSetKind& kind, game::Connect4Solver& solver, const game::Connect4State& s) {
  const int stones = s.MoveNumber();
  if (s.IsTerminal() || stones < kind.min_stones || stones > kind.max_stones) return false;
  return LeftInKind(kind, solver, s, stones);
}

uint64_t MirrorFreeKey(const std::string& moves) {
  const game::Connect4Game game;
  return std::min(KeyOf(game, moves), KeyOf(game, MirrorMoves(moves)));
}

namespace {

// Solves the candidates of `fresh` that `solved` lacks, on r.threads solvers,
// into `solved` (guarded by `mu`, with the work file), saving the work file
// every 30 s and once at the end. Rethrows the first solver's error.
void SolveBatch(const PonsSetRequest& r, const std::vector<std::string>& fresh,
                std::map<std::string, Solved>* solved, int kept,
                const std::function<void(int, int)>& progress) {
  struct Shared {
    Mutex mu;  // also orders the work file's writes and the calls of `progress`
    std::map<std::string, Solved>* solved ZF_PT_GUARDED_BY(mu);
    double last_save ZF_GUARDED_BY(mu);
    std::string failure ZF_GUARDED_BY(mu);
  } shared{{}, solved, MonotonicSeconds(), {}};
  std::atomic<size_t> ticket{0};
  auto work = [&] {  // no exception leaves a thread: the first is rethrown after the joins
    try {
      game::Connect4Solver solver(r.tt_log2);
      // relaxed: a ticket; `shared.mu` orders what the threads share.
      for (size_t i; (i = ticket.fetch_add(1, std::memory_order_relaxed)) < fresh.size();) {
        {
          const MutexLock lock(shared.mu);
          if (shared.solved->count(fresh[i])) continue;
        }
        const Solved s = SolveCandidate(r.kind, solver, fresh[i]);
        const MutexLock lock(shared.mu);
        (*shared.solved)[fresh[i]] = s;
        if (MonotonicSeconds() - shared.last_save > 30) {
          WriteWork(r.work_file, *shared.solved);
          shared.last_save = MonotonicSeconds();
        }
        if (progress) progress(kept, static_cast<int>(shared.solved->size()));
      }
    } catch (const std::exception& e) {
      const MutexLock lock(shared.mu);
      if (shared.failure.empty()) shared.failure = e.what();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(r.threads, static_cast<int>(fresh.size())); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  const MutexLock lock(shared.mu);
  WriteWork(r.work_file, *shared.solved);
  if (!shared.failure.empty()) throw Error(shared.failure);
}

}  // namespace

std::vector<PonsPosition> MakePonsSet(const PonsSetRequest& r,
                                      const std::function<void(int, int)>& progress) {
  if (r.count < 1) throw ConfigError("a made set needs at least one position");
  std::map<std::string, Solved> solved = ReadWork(r.work_file);
  std::unordered_set<uint64_t> seen;
  uint64_t next = 0;
  std::vector<PonsPosition> kept;
  // Batches of candidates, solved in parallel, judged in candidate order: the
  // first `count` of the kind, whatever the threads.
  while (static_cast<int>(kept.size()) < r.count) {
    const size_t batch = std::max<size_t>(8, 2 * (r.count - kept.size()));
    const std::vector<std::string> fresh = NextCandidates(r, &next, batch, &seen);
    if (fresh.empty())
      throw Error("no more new positions of kind " + r.kind.name + " from seed " + std::to_string(r.seed) +
                  " after " + std::to_string(next) + " games");
    SolveBatch(r, fresh, &solved, static_cast<int>(kept.size()), progress);
    for (size_t i = 0; i < fresh.size() && static_cast<int>(kept.size()) < r.count; ++i) {
      const Solved& s = solved.at(fresh[i]);
      if (!OfKind(r.kind, static_cast<int>(fresh[i].size()), s.score)) continue;
      if (s.rating.empty())
        throw Error(r.work_file + ": " + fresh[i] + " is of the kind but has no verdicts");
      kept.push_back(PonsPosition{fresh[i], s.score, s.rating});
    }
  }
  return kept;
}

}  // namespace zerofarm::learn
