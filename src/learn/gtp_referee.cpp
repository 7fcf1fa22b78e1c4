// A GTP program as a child process, and the referee that plays two GTP
// players against each other (proc/gtp.h).
#include <sys/wait.h>

#include <cerrno>
#include <cmath>
#include <cstdio>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/learn/gtp.h"

namespace zerofarm::learn {

GtpProcess::GtpProcess(const std::string& command, const std::string& stderr_path, double reply_seconds)
    : command_(command),
      shell_(true),
      reply_seconds_(reply_seconds),
      process_(std::make_unique<proc::PipedProcess>(std::vector<std::string>{"/bin/sh", "-c", command},
                                                    stderr_path)) {}

GtpProcess::GtpProcess(const std::vector<std::string>& argv, const std::string& stderr_path,
                       double reply_seconds)
    : shell_(false),
      reply_seconds_(reply_seconds),
      process_(std::make_unique<proc::PipedProcess>(argv, stderr_path)) {
  command_ = process_->name();
}

GtpProcess::~GtpProcess() {
  if (!process_->reaped() && !process_->Write("quit\n")) { /* it is gone: reaped below */
  }
  process_->Close(2000);
}

std::string GtpProcess::ReadLine(double deadline, const std::string& command) {
  std::string line;
  switch (process_->ReadLine(deadline, &line)) {
    case proc::PipedProcess::Read::kLine:
      return line;
    case proc::PipedProcess::Read::kTimeout: {
      process_->Kill();  // a hung program never holds the caller: its whole group goes
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", reply_seconds_);
      throw GtpPeerError(GtpPeerError::Kind::kTimeout,
                         command_ + ": no answer to '" + command + "' within " + secs + " s (killed)");
    }
    case proc::PipedProcess::Read::kClosed:
      break;
  }
  ThrowGone("the program exited (or closed its output)");
}

void GtpProcess::ThrowGone(const std::string& what) {
  if (!process_->WaitExit(2000)) process_->Kill();
  const int status = process_->status();
  const bool known = status != -1;
  if (shell_ && known && WIFEXITED(status) && WEXITSTATUS(status) == 127) {
    const std::string program = command_.substr(0, command_.find_first_of(" \t"));
    throw ConfigError(command_ + ": '" + program + "' not found on PATH (the shell exited 127)");
  }
  std::string how;
  if (known && WIFEXITED(status)) how = " (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  if (known && WIFSIGNALED(status)) how = " (killed by signal " + std::to_string(WTERMSIG(status)) + ")";
  throw GtpPeerError(GtpPeerError::Kind::kExited, command_ + ": " + what + how);
}

std::string GtpProcess::Command(const std::string& command) {
  if (process_->reaped()) ThrowGone("the program is gone");
  if (!process_->Write(command + "\n")) ThrowGone("the program exited");
  const double deadline = MonotonicSeconds() + reply_seconds_;
  std::string first;
  do first = ReadLine(deadline, command);
  while (first.empty());
  if (first[0] != '=' && first[0] != '?')
    throw GtpPeerError(GtpPeerError::Kind::kProtocol,
                       command_ + ": not a GTP response to '" + command + "': " + PrintableText(first));
  std::string text = first.substr(1);
  const size_t lead = text.find_first_not_of("0123456789");  // an id, if any
  text = lead == std::string::npos ? "" : text.substr(lead);
  if (!text.empty() && text[0] == ' ') text.erase(0, 1);
  for (std::string more; !(more = ReadLine(deadline, command)).empty();) text += "\n" + more;
  if (first[0] == '?') throw GtpError(text);
  return text;
}

std::string GtpGameResult::Result() const {
  if (winner < 0) return "0";
  const std::string side = winner == 0 ? "B+" : "W+";
  if (reason == "resign") return side + "R";
  if (reason == "illegal") return side + "illegal";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", std::fabs(score));
  return side + buf;
}

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void Setup(GtpPlayer& p, int size, double komi) {
  p.Command("boardsize " + std::to_string(size));
  p.Command("clear_board");
  char buf[48];
  std::snprintf(buf, sizeof buf, "komi %g", komi);
  p.Command(buf);
}

// The score each player reports, or "" when it has no final_score.
std::string OwnScore(GtpPlayer& p) {
  try {
    return p.Command("final_score");
  } catch (const GtpError&) {
    return "";
  }
}

}  // namespace

GtpGameResult PlayGtpGame(GtpPlayer& black, GtpPlayer& white, int size, double komi,
                          const std::vector<int>& opening, int max_plies) {
  const game::GoGame game(size, komi);
  game::GoState state = NewGtpGoState(size, komi);
  GtpPlayer* players[2] = {&black, &white};
  Setup(black, size, komi);
  Setup(white, size, komi);
  GtpGameResult r;
  auto lose = [&](int loser, const std::string& reason, const std::string& detail) {
    r.winner = 1 - loser, r.reason = reason, r.detail = detail;
  };
  while (!state.IsTerminal() && static_cast<int>(r.moves.size()) < max_plies) {
    const int me = state.CurrentPlayer();
    const char colour = "bw"[me];
    const size_t ply = r.moves.size();
    std::string text;
    if (ply < opening.size()) {
      text = game.ActionToString(opening[ply]);
      try {
        players[me]->Command(std::string("play ") + colour + " " + text);
      } catch (const GtpError& e) {
        return lose(me, "illegal", "refused opening move " + text + ": " + e.what()), r;
      }
    } else {
      text = Lower(players[me]->Command(std::string("genmove ") + colour));
    }
    if (text == "resign") return lose(me, "resign", ""), r;
    const int action = game.ParseAction(text);
    if (action < 0 || !state.IsLegal(action))
      return lose(me, "illegal", std::string(1, colour) + " " + text), r;
    try {
      players[1 - me]->Command(std::string("play ") + colour + " " + text);
    } catch (const GtpError& e) {  // the other side thinks it illegal: judged by our rules, it is not
      return lose(1 - me, "illegal", std::string("refused ") + colour + " " + text + ": " + e.what()), r;
    }
    state.Apply(action);
    r.moves.push_back(action);
  }
  r.score = state.Score();
  r.winner = r.score > 0 ? 0 : (r.score < 0 ? 1 : -1);
  r.reason = state.ConsecutivePasses() >= 2 ? "score" : "length";
  r.black_score = OwnScore(black);
  r.white_score = OwnScore(white);
  return r;
}

eval::ArenaResult GtpArena(GtpEngine& engine, GtpPlayer& opponent, int size, double komi, int games,
                           int opening_plies, uint64_t seed,
                           const std::function<void(int, const GtpGameResult&, int)>& on_game) {
  eval::ArenaResult a;
  const game::GoGame game(size, komi);
  std::vector<int> opening, legal;
  for (int i = 0; i < games; ++i) {
    if (i % 2 == 0) {  // a new random opening for each pair of games
      Rng rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(i / 2));
      game::GoState s = NewGtpGoState(size, komi);
      opening.clear();
      for (int p = 0; p < opening_plies; ++p) {
        s.LegalActions(&legal);
        legal.pop_back();  // never pass in an opening
        if (legal.empty()) break;
        opening.push_back(legal[rng.Below(legal.size())]);
        s.Apply(opening.back());
      }
    }
    const int engine_colour = i % 2;
    const GtpGameResult r = engine_colour == 0
                                ? PlayGtpGame(engine, opponent, size, komi, opening, 10 * size * size)
                                : PlayGtpGame(opponent, engine, size, komi, opening, 10 * size * size);
    a.games += 1;
    if (r.winner < 0)
      a.draws += 1;
    else if (r.winner == engine_colour)
      a.wins += 1;
    else
      a.losses += 1;
    if (on_game) on_game(i, r, engine_colour);
  }
  return a;
}

}  // namespace zerofarm::learn
