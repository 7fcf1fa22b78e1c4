#pragma once
// `zerofarm match` (docs/match.md): games between zerofarm (a network and
// MCTS) and any outside GTP engine, for Go and Othello, refereed by
// zerofarm's own rules. Implementation: src/learn/match.cpp.
//
// Each game: the engine is told `boardsize`, `clear_board` and (Go) `komi`;
// the opening's moves are played to both; then zerofarm's moves go to the
// engine by `play` and the engine's come from `genmove`, each checked against
// zerofarm's rules. Scoring is zerofarm's (Go: Tromp-Taylor area on the board
// as it stands; Othello: discs), and the engine's own `final_score`, where it
// has one, is compared with it. An engine that does not answer within the
// deadline (its process group is then killed), exits, answers no GTP, plays
// an illegal move or refuses a legal one ends that game: the game is counted
// as an engine failure, not scored, and the next game starts a fresh engine.
//
// Thread safety: none; one thread plays a match.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/eval/arena_result.h"
#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search_config.h"

namespace zerofarm::learn {

struct MatchConfig {
  std::vector<std::string> engine;  // the engine's argv (no shell)
  std::string engine_stderr;        // its stderr is appended here ("" = /dev/null)
  double move_seconds = 60;  // the deadline of each engine answer (a fresh engine's first: 30 s at least)
  int games = 2;
  int opening_plies = 4;  // random opening plies (when `openings` is empty)
  // A fixed opening set: pair k (games 2k and 2k+1) plays openings[k % size()].
  std::vector<std::vector<int>> openings;
  uint64_t seed = 1;
  int max_plies = 0;  // a game longer than this is scored as it stands; 0 = the game's own limit
};

// Why a game ended. Scored: kScore (played out), kResign (the engine
// resigned), kLength (max_plies). Not scored (engine failures): the rest.
enum class MatchEnd { kScore, kResign, kLength, kHang, kCrash, kNoGtp, kIllegal, kRefused };
const char* MatchEndName(MatchEnd end);  // "score", ..., "hang", "crash", "no_gtp", "illegal", "refused"

struct MatchGame {
  int index = 0;
  int zerofarm_colour = 0;  // 0 Black (even games), 1 White
  int opening = 0;          // the opening's index (the pair)
  std::vector<int> moves;   // every move played, opening included
  MatchEnd end = MatchEnd::kScore;
  int winner = -1;           // 0 Black, 1 White, -1 draw; scored games only
  std::string result;        // SGF RE: "B+3.5", "W+R", "B+" (Othello), "0", "Void" (not scored)
  std::string detail;        // an engine failure's one line
  std::string engine_score;  // the engine's final_score ("" when it has none)
  bool score_agrees = true;  // false: engine_score names another winner
  bool Scored() const {
    return end == MatchEnd::kScore || end == MatchEnd::kResign || end == MatchEnd::kLength;
  }
};

// zerofarm's move in `state` (not terminal), the `ply`-th of the game: the
// most visited move of a fresh PUCT search of `search.simulations` (no root
// noise); for Go with GtpEngine's rules (no filling of its own single-point
// eyes, a pass when winning after a pass). `net` plays `game`.
int ChooseMatchMove(const game::Game& game, const game::State& state, eval::Evaluator& net,
                    const mcts::SearchConfig& search, uint64_t seed, int ply);

// The opening of pair `k`: `plies` random legal moves, never a pass, from
// `seed` and k (fewer when the game ends first).
std::vector<int> RandomOpening(const game::Game& game, int plies, uint64_t seed, int k);
// A fixed opening set: one opening a line of `text`, moves in the game's
// move text separated by spaces ("c4 e3", "D5 E5"); blank lines and '#'
// comments skipped. ConfigError "WHERE:LINE: ..." for a move that is not one
// or not legal there, or a file with no opening.
std::vector<std::vector<int>> ParseOpenings(const game::Game& game, const std::string& text,
                                            const std::string& where);

// The whole match; `on_game` after each game (the SGF, the line, ...).
// Score from zerofarm's view, scored games only. Throws ConfigError when the
// engine cannot be run at all.
struct MatchResult {
  eval::ArenaResult score;  // wins, draws, losses of zerofarm
  int games = 0;            // played: scored + failures
  int failures[8] = {};     // per MatchEnd (only the failure kinds are counted)
  int score_disagreements = 0;
  int zerofarm_black = 0, zerofarm_white = 0;
  std::string engine_name;  // the engine's `name` and `version`, else its command
};
MatchResult PlayMatch(const game::Game& game, eval::Evaluator& net, const mcts::SearchConfig& search,
                      const MatchConfig& config, const std::function<void(const MatchGame&)>& on_game);

}  // namespace zerofarm::learn
