#pragma once
// Reading the shared reference files of the game tests: lines of a text file,
// "[0, 1, 2]" integer lists, and OpenSpiel playthrough traces.
//
// A playthrough is a sequence of blocks:
//   # State k
//   # <board lines, as the game's ToString draws them>
//   IsTerminal() = False      (this line and the four below: full states
//   History() = [..]           only, the first few and the last;
//   CurrentPlayer() = 0        LegalActions() is absent when terminal)
//   LegalActions() = [..]
//   Returns() = [0, 0]
//   # Apply action "x(2,2)"
//   action: 8
// ReadOpenSpielTrace returns one TraceState per "# State k" block; each test
// replays the actions and checks its own game against every field present.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game::reference {

// The lines of a text file, '\r' line ends dropped. REQUIREs that it opens.
inline std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  INFO("reading " << path);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// "[0, 1, 2]" -> {0, 1, 2}
inline std::vector<int> ParseList(const std::string& line) {
  std::string body = line.substr(line.find('[') + 1);
  body = body.substr(0, body.find(']'));
  std::replace(body.begin(), body.end(), ',', ' ');
  std::istringstream in(body);
  std::vector<int> v;
  int x;
  while (in >> x) v.push_back(x);
  return v;
}

// One "# State k" block. The optional fields are set when their line is there.
struct TraceState {
  int index = -1;  // k
  // The "# " lines between "# State k" and "# Apply", without the "# ".
  std::vector<std::string> board;
  std::optional<bool> is_terminal;  // "IsTerminal() = True": set in full states
  std::optional<std::vector<int>> history;
  std::optional<int> current_player;
  std::optional<std::vector<int>> legal_actions;
  std::optional<std::vector<int>> returns;
  std::string applied_text;   // the quoted text of "# Apply action \"...\""
  std::optional<int> action;  // "action: N", played from this state

  bool full() const { return is_terminal.has_value(); }
};

inline std::vector<TraceState> ReadOpenSpielTrace(const std::string& path) {
  std::vector<TraceState> states;
  bool in_state = false;  // between "# State k" and "# Apply"
  for (const std::string& line : ReadLines(path)) {
    const auto starts = [&line](const char* prefix) { return line.rfind(prefix, 0) == 0; };
    if (starts("# State ")) {
      states.emplace_back();
      states.back().index = std::stoi(line.substr(8));
      in_state = true;
      continue;
    }
    if (states.empty()) continue;  // the game's description
    TraceState& s = states.back();
    INFO("reading " << path << " state " << s.index << " line: " << line);
    if (starts("# Apply")) {
      in_state = false;
      if (starts("# Apply action \"")) s.applied_text = line.substr(16, line.size() - 17);
    } else if (in_state && starts("# ")) {
      s.board.push_back(line.substr(2));
    } else if (starts("action: ")) {
      REQUIRE_FALSE(s.action.has_value());
      s.action = std::stoi(line.substr(8));
    } else if (starts("IsTerminal() = ")) {
      s.is_terminal = line.find("True") != std::string::npos;
    } else if (starts("History() = ")) {
      s.history = ParseList(line);
    } else if (starts("CurrentPlayer() = ")) {
      s.current_player = std::stoi(line.substr(18));
    } else if (starts("LegalActions() = ")) {
      s.legal_actions = ParseList(line);
    } else if (starts("Returns() = ")) {
      s.returns = ParseList(line);
    }
  }
  REQUIRE(!states.empty());
  return states;
}

// The checks that need no translation between OpenSpiel's game and ours:
// History() against the actions played so far, CurrentPlayer() (unless
// terminal, where OpenSpiel prints a negative player) and LegalActions().
inline void CheckHistoryPlayerLegal(const TraceState& s, const State& state,
                                    const std::vector<int>& actions) {
  if (s.history) CHECK(*s.history == actions);
  if (s.current_player && !state.IsTerminal()) CHECK(state.CurrentPlayer() == *s.current_player);
  if (s.legal_actions) {
    std::vector<int> legal;
    state.LegalActions(&legal);
    CHECK(legal == *s.legal_actions);
  }
}

// The last Returns() of the trace (empty if there is none).
inline std::vector<int> LastReturns(const std::vector<TraceState>& states) {
  for (auto s = states.rbegin(); s != states.rend(); ++s) {
    if (s->returns) return *s->returns;
  }
  return {};
}

// The game is over, OpenSpiel's last Returns() are `expected` and ours
// (State::Outcome) agree.
inline void CheckFinalReturns(const std::vector<TraceState>& states, const State& state,
                              const std::vector<int>& expected) {
  REQUIRE(state.IsTerminal());
  const std::vector<int> returns = LastReturns(states);
  REQUIRE(returns == expected);
  CHECK(state.Outcome(0) == returns[0]);
  CHECK(state.Outcome(1) == returns[1]);
}

// What replaying a trace ends with.
struct Replayed {
  std::unique_ptr<State> state;  // after the last action
  std::vector<int> actions;      // the trace's actions, in order
  int full_states = 0;           // states with IsTerminal() and the rest
};

// Replays `trace` from the game's initial state, checking on the way what
// every game shares: the state numbers, IsTerminal() in full states,
// CheckHistoryPlayerLegal, and that each action is legal. The game's own
// checks come in as check_full(s, state), for each full state (its board),
// and check_action(s, action), before each action is applied (its text).
template <class CheckFull, class CheckAction>
Replayed ReplayTrace(const Game& game, const std::vector<TraceState>& trace, CheckFull check_full,
                     CheckAction check_action) {
  Replayed r;
  r.state = game.NewInitialState();
  for (const TraceState& s : trace) {
    INFO("state " << s.index << " after moves " << game.FormatMoves(r.actions));
    REQUIRE(s.index == static_cast<int>(r.actions.size()));
    if (s.full()) {
      ++r.full_states;
      CHECK(r.state->IsTerminal() == *s.is_terminal);
      check_full(s, *r.state);
    }
    CheckHistoryPlayerLegal(s, *r.state, r.actions);
    if (s.action) {
      r.actions.push_back(*s.action);
      check_action(s, r.actions.back());
      REQUIRE(r.state->IsLegal(r.actions.back()));
      r.state->Apply(r.actions.back());
    }
  }
  return r;
}

// The board lines joined, each ending in '\n'.
inline std::string JoinLines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

// For games OpenSpiel draws as we do but in lower case (x / o / .): the board
// lines parse back to `state` (G::ParseBoard), ours match them, and a
// terminal state has no legal actions.
template <class G>
void CheckLowerCaseBoard(const G& game, const TraceState& s, const State& state) {
  const std::string drawn = JoinLines(s.board);
  CHECK(game.ParseBoard(drawn)->Equals(state));
  std::string ours = state.ToString();
  std::transform(ours.begin(), ours.end(), ours.begin(), [](char c) { return std::tolower(c); });
  CHECK(ours == drawn);
  if (state.IsTerminal()) {
    std::vector<int> legal{-1};
    state.LegalActions(&legal);
    CHECK(legal.empty());
  }
}

}  // namespace zerofarm::game::reference
