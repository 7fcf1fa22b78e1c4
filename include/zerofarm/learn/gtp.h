#pragma once
// Go Text Protocol (GTP v2, https://www.lysator.liu.se/~gunnar/gtp/): an
// engine that plays Go with a network and MCTS (`zerofarm gtp`), a client
// that drives any GTP program as a child process, and a referee that plays
// two GTP players against each other (the `gtp` tests; `zerofarm eval
// --against-gtp`). Implementation: src/proc/gtp.cpp (engine),
// src/proc/gtp_referee.cpp (client, referee, arena).
//
// Rules: zerofarm's Go (game/go.h): Tromp-Taylor area scoring, suicide
// illegal, positional superko, komi to White. Scores ("final_score") are the
// Tromp-Taylor area of the board as it stands: no dead stones are removed, so
// a game should be played out (both sides pass only when nothing is left).
//
// Thread safety: none; each object belongs to one thread.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/eval/arena_result.h"
#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/go.h"
#include "zerofarm/mcts/search_config.h"
#include "zerofarm/proc/piped_process.h"

namespace zerofarm::learn {

// A GTP command's failure ("? text"), or a peer that broke the protocol.
class GtpError : public Error {
 public:
  using Error::Error;
};

// Anything that answers GTP commands: Command("genmove b") returns the text
// of a "=" response (without "=", id or the blank line) and throws GtpError
// with the text of a "?" response.
class GtpPlayer {
 public:
  virtual ~GtpPlayer() = default;
  virtual std::string Command(const std::string& command) = 0;
  virtual std::string Name() const = 0;
};

// The engine behind `zerofarm gtp`. Commands: protocol_version, name,
// version, known_command, list_commands, quit, boardsize (the net's size
// only), clear_board, komi, play, genmove, undo, final_score,
// final_status_list (Tromp-Taylor: no stone is dead), showboard,
// time_settings and time_left (accepted, ignored), reg_genmove.
// `play`/`genmove` for the side not to move are refused ("? not X's turn").
//
// genmove: a fresh PUCT search of `search.simulations` (no root noise), then
// the most visited move that does not fill one of its own single-point eyes
// (every neighbour its own stone); pass when there is none, or when the
// opponent just passed and the Tromp-Taylor score already wins for the mover
// (so games end by two passes instead of filling every eye).
class GtpEngine : public GtpPlayer {
 public:
  // `net` must be a Go net for a board of `size`; it must outlive the engine.
  GtpEngine(eval::Evaluator& net, int size, double komi, mcts::SearchConfig search, uint64_t seed);

  // One line of input -> the whole response ("=id text\n\n" or "?id text\n\n");
  // "" for an empty or comment-only line. Sets *quit after "quit".
  std::string Handle(const std::string& line, bool* quit);
  // GtpPlayer: the command run directly (no id), as a client would see it.
  std::string Command(const std::string& command) override;
  std::string Name() const override { return "zerofarm"; }

  const game::GoState& state() const { return *state_; }
  // The move genmove would play now (no state change). Precondition: not terminal.
  int ChooseMove();

 private:
  std::string Dispatch(const std::string& name, const std::vector<std::string>& args, bool* quit);
  std::string Play(const std::vector<std::string>& args);
  std::string GenMove(const std::vector<std::string>& args, bool commit);
  void Reset(double komi);                       // a new game with this komi, replaying moves_
  int ColourArg(const std::string& text) const;  // 0 black, 1 white; throws GtpError

  eval::Evaluator& net_;
  int size_;
  double komi_;
  mcts::SearchConfig search_;
  uint64_t seed_;
  std::unique_ptr<game::GoGame> game_;
  std::unique_ptr<game::GoState> state_;
  std::vector<int> moves_;  // of the current game, for undo and komi changes
};

// The game as the engine and the referee play it: `size` x `size`, `komi`,
// and room for long games (10 * size * size plies, at most 30000).
game::GoState NewGtpGoState(int size, double komi);

// A GTP peer that broke the protocol: it did not answer in time (kTimeout;
// its process group is then killed), went away (kExited), or answered
// something that is not a GTP response (kProtocol).
class GtpPeerError : public Error {
 public:
  enum class Kind { kTimeout, kExited, kProtocol };
  GtpPeerError(Kind kind, const std::string& what) : Error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// A GTP program run as a child (proc::PipedProcess: its own process group),
// its stdin and stdout piped here, its stderr appended to `stderr_path` ("" =
// /dev/null). Two ways to name it: `command` is run by `/bin/sh -c`; `argv`
// is run as it is, no shell (ConfigError "NAME: cannot run: ..." when it
// cannot be). The destructor sends "quit", closes its stdin, waits up to 2 s,
// then SIGKILLs its process group and reaps it.
class GtpProcess : public GtpPlayer {
 public:
  GtpProcess(const std::string& command, const std::string& stderr_path = "", double reply_seconds = 600);
  GtpProcess(const std::vector<std::string>& argv, const std::string& stderr_path, double reply_seconds);
  ~GtpProcess() override;
  GtpProcess(const GtpProcess&) = delete;
  GtpProcess& operator=(const GtpProcess&) = delete;

  // Throws GtpError for "?" responses, GtpPeerError when the program exits,
  // closes its output, answers no GTP or does not answer within
  // reply_seconds (then its process group is killed at once); ConfigError
  // "CMD: not found on PATH" when the shell could not find the program (exit 127).
  std::string Command(const std::string& command) override;
  std::string Name() const override { return command_; }
  // The deadline of each later answer (a match gives a fresh engine longer for its first: its start).
  void set_reply_seconds(double seconds) { reply_seconds_ = seconds; }

 private:
  std::string ReadLine(double deadline, const std::string& command);
  // The error for a program that went away: waits up to 2 s for it, and names
  // a program the shell did not find (exit status 127). Reaps it.
  [[noreturn]] void ThrowGone(const std::string& what);
  std::string command_;
  bool shell_;  // run by /bin/sh -c (exit 127: not found)
  double reply_seconds_;
  std::unique_ptr<proc::PipedProcess> process_;
};

// One refereed game.
struct GtpGameResult {
  int winner = -1;  // 0 Black, 1 White, -1 draw
  // "score" (two passes), "resign", "illegal" (the loser's move, or a legal
  // move the loser refused), "length" (max_plies or the state's own limit)
  std::string reason;
  std::string detail;                    // the illegal move or refused command, for reason "illegal"
  double score = 0.0;                    // Tromp-Taylor black - white - komi of the final board
  std::vector<int> moves;                // every move played (actions of GoGame(size))
  std::string black_score, white_score;  // each player's own final_score ("" if it has none)
  std::string Result() const;            // "B+3.5", "W+R", "0", "B+illegal"
};

// Plays one game: boardsize, komi and clear_board to both, then `opening`
// (moves played as given to both, e.g. random), then genmove to the side to
// move and play of that move to the other, until two passes in a row, a
// resignation, an illegal move (judged by zerofarm's rules) or a move the
// other side refuses, or max_plies. Throws Error when a player stops answering.
GtpGameResult PlayGtpGame(GtpPlayer& black, GtpPlayer& white, int size, double komi,
                          const std::vector<int>& opening, int max_plies);

// `games` games of `engine` against `opponent`, colours alternating (the
// engine is Black in even games), games 2k and 2k+1 starting from the same
// `opening_plies` random legal moves (from `seed` and k). Score from the
// engine's view; `on_game(i, result, engine_colour)` after each game.
eval::ArenaResult GtpArena(GtpEngine& engine, GtpPlayer& opponent, int size, double komi, int games,
                           int opening_plies, uint64_t seed,
                           const std::function<void(int, const GtpGameResult&, int)>& on_game = {});

}  // namespace zerofarm::learn
