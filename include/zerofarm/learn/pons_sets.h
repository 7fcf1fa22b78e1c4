#pragma once
// Test sets of Pascal Pons's kinds, made here with zerofarm's own solver.
//
// Pons's six benchmark files (blog.gamesolver.org, "Benchmarking solvers")
// are named Test_L<a>_R<b>. Read off the four this project has, L is how many
// stones are on the board (L1: 1-14, L2: 15-28, L3: 29-41) and R how many
// plies the game has left when both sides play perfectly from there (R1:
// 1-14, R2: 15-28, R3: 29 or more). A made set draws its positions from
// uniformly random games and keeps those of its kind, so that strength can be
// measured on positions of the same kinds that are not Pons's (his files are
// what the project reports on; a network must not be tuned to them), and on
// the kinds this repository lacks: L1_R2 and L2_R2, the Beginning-Medium and
// Middle-Medium sets that AlphaZero.jl reports.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "zerofarm/game/connect4.h"
#include "zerofarm/game/connect4_solver.h"
#include "zerofarm/learn/strength.h"

namespace zerofarm::learn {

struct PonsSetKind {
  std::string name;                    // "L1_R3"
  int min_stones = 0, max_stones = 0;  // stones on the board (plies played)
  int min_left = 0, max_left = 0;      // plies to the game's end, both sides perfect
};

// "L1_R3" or "Test_L1_R3" (L1-L3, R1-R3); ConfigError otherwise.
PonsSetKind ParsePonsSetKind(const std::string& name);

// Plies from a position of `stones` stones whose Pons score is `score` to the
// end of the game with perfect play: to the winning stone, or to the full
// board (42 plies) for a draw. 1 when the side to move wins at once.
int PliesLeft(int stones, int score);

// Whether `s` is of the kind: its stones in range, and its plies left with
// perfect play (found by a few null-window searches, not by solving it).
bool IsOfKind(const PonsSetKind& kind, game::Connect4Solver& solver, const game::Connect4State& s);

// A position's key and its mirror's, the lesser: one key for both.
uint64_t MirrorFreeKey(const std::string& moves);

struct PonsSetRequest {
  PonsSetKind kind;
  int count = 0;      // positions wanted
  uint64_t seed = 1;  // the candidate games: one seed, one file
  // MirrorFreeKey()s of positions to leave out (e.g. Pons's own files').
  std::unordered_set<uint64_t> exclude;
  // Every candidate solved is kept here ("moves score [verdicts]" lines, written
  // atomically every 30 s and at the end), so that a stopped run resumes
  // where it was; "" = not kept.
  std::string work_file;
  int threads = 1;   // solvers
  int tt_log2 = 23;  // each solver's table: 2^tt_log2 entries of 8 bytes (23: 64 MiB)
};

// The first `count` positions of the kind among the candidate games 0, 1, 2,
// ... of `seed`. Candidate i draws a number of stones uniformly from the
// kind's range and plays that many uniformly random legal moves; it is dropped
// if the game ends on the way, or if its position or its mirror was an earlier
// candidate's or is excluded. The others are solved, and kept when their
// plies left are in the kind's range, and rated (PonsPosition::rating) by the
// solver that solved them. The result is the same for any `threads`.
// `progress(kept, solved)` is called now and then, from one thread at a time.
std::vector<PonsPosition> MakePonsSet(const PonsSetRequest& request,
                                      const std::function<void(int, int)>& progress = {});

}  // namespace zerofarm::learn
