// The GTP engine of `zerofarm gtp` (proc/gtp.h).
#include "zerofarm/learn/gtp.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "zerofarm/core/rng.h"
#include "zerofarm/core_version.h"
#include "zerofarm/learn/match.h"

namespace zerofarm::learn {
namespace {

const std::vector<std::string>& Commands() {
  static const std::vector<std::string> kCommands = {"protocol_version",
                                                     "name",
                                                     "version",
                                                     "known_command",
                                                     "list_commands",
                                                     "quit",
                                                     "boardsize",
                                                     "clear_board",
                                                     "komi",
                                                     "play",
                                                     "genmove",
                                                     "reg_genmove",
                                                     "undo",
                                                     "final_score",
                                                     "final_status_list",
                                                     "showboard",
                                                     "time_settings",
                                                     "time_left"};
  return kCommands;
}

// GTP preprocessing: control characters other than tab and newline go, tabs
// become spaces, '#' starts a comment.
std::string Clean(const std::string& line) {
  std::string out;
  for (char c : line) {
    if (c == '#') break;
    if (c == '\t') c = ' ';
    if (static_cast<unsigned char>(c) < 32 && c != '\n') continue;
    out += c;
  }
  return out;
}

std::string ScoreText(double score) {
  if (score == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c+%g", score > 0 ? 'B' : 'W', score > 0 ? score : -score);
  return buf;
}

}  // namespace

game::GoState NewGtpGoState(int size, double komi) {
  return game::GoState(size, komi, std::min(30000, 10 * size * size));
}

GtpEngine::GtpEngine(eval::Evaluator& net, int size, double komi, mcts::SearchConfig search, uint64_t seed)
    : net_(net), size_(size), komi_(komi), search_(search), seed_(seed) {
  search_.dirichlet_fraction = 0.0f;
  search_.temperature_plies = 0;
  search_.reuse_tree = false;
  Reset(komi);
}

void GtpEngine::Reset(double komi) {
  komi_ = komi;
  game_ = std::make_unique<game::GoGame>(size_, komi_);
  state_ = std::make_unique<game::GoState>(NewGtpGoState(size_, komi_));
  for (int m : moves_) state_->Apply(m);
}

std::string GtpEngine::Handle(const std::string& raw, bool* quit) {
  std::istringstream in(Clean(raw));
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) return "";
  std::string id;
  if (std::all_of(words[0].begin(), words[0].end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    id = words[0];
    words.erase(words.begin());
    if (words.empty()) return "?" + id + " no command\n\n";
  }
  const std::string name = words[0];
  words.erase(words.begin());
  try {
    return "=" + id + " " + Dispatch(name, words, quit) + "\n\n";
  } catch (const GtpError& e) {
    return "?" + id + " " + e.what() + "\n\n";
  }
}

std::string GtpEngine::Command(const std::string& command) {
  bool quit = false;
  const std::string r = Handle(command, &quit);
  std::string text = r.size() >= 4 ? r.substr(2, r.size() - 4) : "";  // "= text\n\n" without id
  if (!r.empty() && r[0] == '?') throw GtpError(text);
  return text;
}

int GtpEngine::ColourArg(const std::string& text) const {
  std::string t = text;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "b" || t == "black") return 0;
  if (t == "w" || t == "white") return 1;
  throw GtpError("invalid color");
}

std::string GtpEngine::Dispatch(const std::string& name, const std::vector<std::string>& args, bool* quit) {
  if (name == "protocol_version") return "2";
  if (name == "name") return "zerofarm";
  if (name == "version") return ZF_VERSION_STRING;
  if (name == "known_command")
    return args.size() == 1 && std::count(Commands().begin(), Commands().end(), args[0]) ? "true" : "false";
  if (name == "list_commands") {
    std::string out;
    for (const auto& c : Commands()) out += (out.empty() ? "" : "\n") + c;
    return out;
  }
  if (name == "quit") return *quit = true, "";
  if (name == "boardsize") {
    if (args.size() != 1) throw GtpError("syntax error");
    if (args[0] != std::to_string(size_))
      throw GtpError("unacceptable size (this network plays " + std::to_string(size_) + "x" +
                     std::to_string(size_) + ")");
    moves_.clear();
    Reset(komi_);
    return "";
  }
  if (name == "clear_board") return moves_.clear(), Reset(komi_), "";
  if (name == "komi") {
    double k = 0;
    if (args.size() != 1 || std::sscanf(args[0].c_str(), "%lf", &k) != 1) throw GtpError("syntax error");
    Reset(k);
    return "";
  }
  if (name == "play") return Play(args);
  if (name == "genmove" || name == "reg_genmove") return GenMove(args, name == "genmove");
  if (name == "undo") {
    if (moves_.empty()) throw GtpError("cannot undo");
    moves_.pop_back();
    Reset(komi_);
    return "";
  }
  if (name == "final_score") return ScoreText(state_->Score());
  if (name == "final_status_list") return "";
  if (name == "showboard") return "\n" + state_->ToString();
  if (name == "time_settings" || name == "time_left") return "";
  throw GtpError("unknown command");
}

std::string GtpEngine::Play(const std::vector<std::string>& args) {
  if (args.size() != 2) throw GtpError("syntax error");
  const int colour = ColourArg(args[0]);
  const int action = game_->ParseAction(args[1]);
  if (action < 0) throw GtpError("invalid coordinate");
  if (state_->IsTerminal()) throw GtpError("illegal move (the game is over)");
  if (colour != state_->CurrentPlayer())
    throw GtpError(std::string("illegal move (not ") + "bw"[colour] + "'s turn)");
  if (!state_->IsLegal(action)) throw GtpError("illegal move");
  state_->Apply(action);
  moves_.push_back(action);
  return "";
}

std::string GtpEngine::GenMove(const std::vector<std::string>& args, bool commit) {
  if (args.size() != 1) throw GtpError("syntax error");
  const int colour = ColourArg(args[0]);
  if (state_->IsTerminal()) return "pass";
  if (colour != state_->CurrentPlayer()) throw GtpError(std::string("not ") + "bw"[colour] + "'s turn");
  const int action = ChooseMove();
  if (commit) {
    state_->Apply(action);
    moves_.push_back(action);
  }
  return game_->ActionToString(action);
}

int GtpEngine::ChooseMove() {
  return ChooseMatchMove(*game_, *state_, net_, search_, seed_, static_cast<int>(moves_.size()));
}

}  // namespace zerofarm::learn
