// zerofarm against an outside GTP engine, Go and Othello (learn/match.h).
#include "zerofarm/learn/match.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/batched_search.h"
#include "zerofarm/game/go.h"
#include "zerofarm/game/othello.h"
#include "zerofarm/learn/gtp.h"
#include "zerofarm/mcts/search.h"

namespace zerofarm::learn {
namespace {

constexpr double kStartSeconds = 30;  // a fresh engine's first answer, its start included

std::string Trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The game's pass move, or -1 when it has none.
int PassOf(const game::Game& game) {
  if (const auto* go = dynamic_cast<const game::GoGame*>(&game)) return go->PassAction();
  if (dynamic_cast<const game::OthelloGame*>(&game)) return game::OthelloGame::kPass;
  return -1;
}

std::unique_ptr<game::State> NewMatchState(const game::Game& game) {
  if (const auto* go = dynamic_cast<const game::GoGame*>(&game))
    return std::make_unique<game::GoState>(NewGtpGoState(go->size(), go->komi()));
  return game.NewInitialState();
}

// Whether `action` fills one of the mover's own single-point eyes (every neighbour its own stone).
bool FillsOwnEye(const game::GoState& state, int action) {
  const int size = state.size();
  if (action >= size * size) return false;
  const int me = state.CurrentPlayer(), row = action / size, col = action % size;
  const int dr[4] = {-1, 1, 0, 0}, dc[4] = {0, 0, -1, 1};
  for (int k = 0; k < 4; ++k) {
    const int r = row + dr[k], c = col + dc[k];
    if (r >= 0 && r < size && c >= 0 && c < size && state.At(r * size + c) != me) return false;
  }
  return true;
}

int BoardSize(const game::Game& game) { return game.Shape().width; }

// "B+3.5" for a margin from Black's view; "0" for none.
std::string Margin(double black_minus_white) {
  if (black_minus_white == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c+%g", black_minus_white > 0 ? 'B' : 'W', std::fabs(black_minus_white));
  return buf;
}

// The winner an engine's final_score names (0, 1, -1 draw), or -2 when it names none.
int ScoreWinner(const std::string& text) {
  const std::string t = Lower(Trimmed(text));
  if (t == "0" || t == "draw") return -1;
  if (t.size() >= 2 && t[1] == '+') return t[0] == 'b' ? 0 : (t[0] == 'w' ? 1 : -2);
  return -2;
}

// Scores a finished (or cut-off) game by zerofarm's rules into g.
void Adjudicate(const game::State& state, MatchGame* g) {
  if (const auto* go = dynamic_cast<const game::GoState*>(&state)) {
    const double score = go->Score();
    g->winner = score > 0 ? 0 : (score < 0 ? 1 : -1);
    g->result = Margin(score);
    if (go->ConsecutivePasses() < 2) g->end = MatchEnd::kLength;
    return;
  }
  if (const auto* o = dynamic_cast<const game::OthelloState*>(&state)) {
    const int diff = __builtin_popcountll(o->Discs(0)) - __builtin_popcountll(o->Discs(1));
    g->winner = diff > 0 ? 0 : (diff < 0 ? 1 : -1);
    g->result = Margin(diff);
    if (!state.IsTerminal()) g->end = MatchEnd::kLength;
    return;
  }
  g->winner = state.IsTerminal() ? state.Winner() : -1;
  g->result = g->winner < 0 ? "0" : (g->winner == 0 ? "B+" : "W+");
  if (!state.IsTerminal()) g->end = MatchEnd::kLength;
}

void Fail(MatchGame* g, MatchEnd end, const std::string& detail) {
  g->end = end, g->detail = detail, g->winner = -1, g->result = "Void";
}

MatchEnd PeerEnd(const GtpPeerError& e) {
  switch (e.kind()) {
    case GtpPeerError::Kind::kTimeout:
      return MatchEnd::kHang;
    case GtpPeerError::Kind::kExited:
      return MatchEnd::kCrash;
    case GtpPeerError::Kind::kProtocol:
      break;
  }
  return MatchEnd::kNoGtp;
}

struct Players {
  const game::Game& game;
  eval::Evaluator& net;
  const mcts::SearchConfig& search;
  uint64_t seed;
};

// One ply: the opening's move, zerofarm's, or the engine's; false when the game ended (g says how).
bool PlayPly(const Players& p, GtpPlayer& engine, const std::vector<int>& opening, game::State& state,
             MatchGame* g) {
  const int me = state.CurrentPlayer(), ply = static_cast<int>(g->moves.size());
  const std::string colour(1, "bw"[me]);
  int action;
  if (ply < static_cast<int>(opening.size()) || me == g->zerofarm_colour) {
    action =
        ply < static_cast<int>(opening.size())
            ? opening[static_cast<size_t>(ply)]
            : ChooseMatchMove(p.game, state, p.net, p.search, p.seed + static_cast<uint64_t>(g->index), ply);
    const std::string text = p.game.ActionToString(action);
    try {
      engine.Command("play " + colour + " " + text);
    } catch (const GtpError& e) {
      // Othello's pass is forced (the only legal move); GRhino refuses `play X pass` and passes by itself.
      const bool forced_pass = action == PassOf(p.game) && dynamic_cast<const game::OthelloGame*>(&p.game);
      if (!forced_pass)
        return Fail(g, MatchEnd::kRefused,
                    "the engine refused the legal move " + colour + " " + text + ": " + e.what()),
               false;
    }
  } else {
    const std::string text = Lower(Trimmed(engine.Command("genmove " + colour)));
    if (text == "resign")
      return g->end = MatchEnd::kResign, g->winner = 1 - me, g->result = me ? "B+R" : "W+R", false;
    action = p.game.ParseAction(text);
    if (action < 0 || !state.IsLegal(action))
      return Fail(g, MatchEnd::kIllegal,
                  "the engine played an illegal move: " + colour + " " + PrintableText(text)),
             false;
  }
  state.Apply(action);
  g->moves.push_back(action);
  return true;
}

void PlayGame(const Players& p, GtpPlayer& engine, const std::vector<int>& opening, int max_plies,
              MatchGame* g) {
  const auto* go = dynamic_cast<const game::GoGame*>(&p.game);
  try {
    engine.Command("boardsize " + std::to_string(BoardSize(p.game)));
    engine.Command("clear_board");
    if (go) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "komi %g", go->komi());
      engine.Command(buf);
    }
  } catch (const GtpError& e) {
    return Fail(g, MatchEnd::kRefused, std::string("the engine refused the game's setup: ") + e.what());
  }
  const std::unique_ptr<game::State> state = NewMatchState(p.game);
  while (!state->IsTerminal() && static_cast<int>(g->moves.size()) < max_plies)
    if (!PlayPly(p, engine, opening, *state, g)) return;
  g->end = MatchEnd::kScore;
  Adjudicate(*state, g);
  try {
    g->engine_score = Trimmed(engine.Command("final_score"));
  } catch (const GtpError&) {  // it has none (or cannot score this one)
  }
  const int theirs = ScoreWinner(g->engine_score);
  g->score_agrees = g->engine_score.empty() || theirs == -2 || theirs == g->winner;
}

std::string EngineName(GtpPlayer& engine) {
  std::string name = engine.Name();
  try {
    name = Trimmed(engine.Command("name"));
    name += " " + Trimmed(engine.Command("version"));
  } catch (const GtpError&) {  // no version: the name alone
  }
  return name;
}

}  // namespace

const char* MatchEndName(MatchEnd end) {
  static const char* const kNames[] = {"score", "resign", "length",  "hang",
                                       "crash", "no_gtp", "illegal", "refused"};
  return kNames[static_cast<int>(end)];
}

int ChooseMatchMove(const game::Game& game, const game::State& state, eval::Evaluator& net,
                    const mcts::SearchConfig& search, uint64_t seed, int ply) {
  const auto* go = dynamic_cast<const game::GoState*>(&state);
  const int pass = PassOf(game);
  if (go) {
    const double score = go->Score();
    const bool winning = go->CurrentPlayer() == 0 ? score > 0 : score < 0;
    if (go->ConsecutivePasses() == 1 && winning) return pass;
  }
  mcts::Search tree(game, search, seed + static_cast<uint64_t>(ply));
  tree.SetRoot(state);
  tree.SetMoveBudget(search.simulations, false);
  eval::RunSearches(game, net, {&tree}, std::max(1, search.leaves_per_round));
  std::vector<int> visits(static_cast<size_t>(game.ActionCount()));
  tree.RootVisitCounts(visits.data());
  // Ties (unvisited moves at a small budget) go to the first from a random start.
  Rng rng(seed ^ (0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(ply) + 1)));
  const int n = go ? pass : game.ActionCount();  // Go: pass is weighed last, below
  const int start = static_cast<int>(rng.Below(static_cast<uint64_t>(n)));
  int best = go ? pass : -1, best_visits = -1;
  for (int k = 0; k < n; ++k) {
    const int a = (start + k) % n;
    if (visits[a] > best_visits && state.IsLegal(a) && !(go && FillsOwnEye(*go, a)))
      best = a, best_visits = visits[a];
  }
  // Go: passing is chosen only when the search likes it best of all, or nothing else is left.
  if (go && best_visits >= 0 && visits[pass] > best_visits && go->ConsecutivePasses() == 0) return pass;
  return best;
}

std::vector<int> RandomOpening(const game::Game& game, int plies, uint64_t seed, int k) {
  Rng rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(k));
  const std::unique_ptr<game::State> s = NewMatchState(game);
  const int pass = PassOf(game);
  std::vector<int> opening, legal;
  for (int p = 0; p < plies && !s->IsTerminal(); ++p) {
    s->LegalActions(&legal);
    legal.erase(std::remove(legal.begin(), legal.end(), pass), legal.end());
    if (legal.empty()) break;
    opening.push_back(legal[rng.Below(legal.size())]);
    s->Apply(opening.back());
  }
  return opening;
}

std::vector<std::vector<int>> ParseOpenings(const game::Game& game, const std::string& text,
                                            const std::string& where) {
  std::vector<std::vector<int>> out;
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    line = Trimmed(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::unique_ptr<game::State> s = NewMatchState(game);
    std::vector<int> moves;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      const int a = game.ParseAction(w);
      if (a < 0 || s->IsTerminal() || !s->IsLegal(a))
        throw ConfigError(where + ":" + std::to_string(number) + ": '" + PrintableText(w) +
                          "' is not a legal " + game.Name() + " move there");
      s->Apply(a);
      moves.push_back(a);
    }
    out.push_back(moves);
  }
  if (out.empty()) throw ConfigError(where + ": no opening in it (one a line, moves separated by spaces)");
  return out;
}

MatchResult PlayMatch(const game::Game& game, eval::Evaluator& net, const mcts::SearchConfig& search,
                      const MatchConfig& config, const std::function<void(const MatchGame&)>& on_game) {
  MatchResult m;
  mcts::SearchConfig s = search;
  s.dirichlet_fraction = 0.0f, s.temperature_plies = 0, s.reuse_tree = false;
  const Players players{game, net, s, config.seed};
  const int max_plies = config.max_plies > 0 ? config.max_plies : 1 << 30;
  std::unique_ptr<GtpProcess> engine;
  std::vector<int> opening;
  for (int i = 0; i < config.games; ++i) {
    MatchGame g;
    g.index = i, g.zerofarm_colour = i % 2, g.opening = i / 2;
    if (i % 2 == 0)
      opening = config.openings.empty()
                    ? RandomOpening(game, config.opening_plies, config.seed, i / 2)
                    : config.openings[static_cast<size_t>(i / 2) % config.openings.size()];
    try {
      if (!engine) {
        // Its start may take longer than a move: the first answer (`name`) gets kStartSeconds at least.
        engine = std::make_unique<GtpProcess>(config.engine, config.engine_stderr,
                                              std::max(config.move_seconds, kStartSeconds));
        const std::string name = EngineName(*engine);
        engine->set_reply_seconds(config.move_seconds);
        if (m.engine_name.empty()) m.engine_name = name;
      }
      PlayGame(players, *engine, opening, max_plies, &g);
    } catch (const GtpPeerError& e) {
      Fail(&g, PeerEnd(e), e.what());
    }
    if (!g.Scored()) engine.reset();  // a fresh engine for the next game
    m.games += 1;
    (g.zerofarm_colour == 0 ? m.zerofarm_black : m.zerofarm_white) += 1;
    if (!g.Scored()) {
      m.failures[static_cast<int>(g.end)] += 1;
    } else {
      m.score.games += 1;
      if (g.winner < 0)
        m.score.draws += 1;
      else
        (g.winner == g.zerofarm_colour ? m.score.wins : m.score.losses) += 1;
      m.score_disagreements += g.score_agrees ? 0 : 1;
    }
    if (on_game) on_game(g);
  }
  if (m.engine_name.empty()) m.engine_name = config.engine.empty() ? "" : config.engine[0];
  return m;
}

}  // namespace zerofarm::learn
