// Game defaults shared by every game (move-list text, Replay) and the registry
// of games by name.
#include "zerofarm/game/game.h"

#include <array>
#include <cctype>
#include <functional>

#include "zerofarm/core/error.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/game/go.h"
#include "zerofarm/game/gomoku.h"
#include "zerofarm/game/othello.h"
#include "zerofarm/game/tictactoe.h"

namespace zerofarm::game {

// Games written as one source file (docs/adding-a-game.md): their factories.
std::unique_ptr<Game> MakeBreakthroughGame();  // breakthrough.cpp

namespace {

// Text for an action in an error message: ActionToString when the action is
// in range, else the raw integer (ActionToString need not handle bad input).
std::string DescribeAction(const Game& game, int action) {
  if (action < 0 || action >= game.ActionCount()) return "action " + std::to_string(action);
  return game.ActionToString(action);
}

struct Registered {
  std::string name;
  std::function<std::unique_ptr<Game>()> make;
};

// The registry, in the order GameNames() lists it.
const std::vector<Registered>& Registry() {
  static const std::vector<Registered> registry = {
      {"connect4", [] { return std::unique_ptr<Game>(new Connect4Game()); }},
      {"connect4-threats",
       [] { return std::unique_ptr<Game>(new Connect4Game(Connect4Features::kThreats)); }},
      {"tictactoe", [] { return std::unique_ptr<Game>(new TicTacToeGame()); }},
      {"gomoku", [] { return std::unique_ptr<Game>(new GomokuGame(/*standard=*/false)); }},
      {"gomoku-standard", [] { return std::unique_ptr<Game>(new GomokuGame(/*standard=*/true)); }},
      {"othello", [] { return std::unique_ptr<Game>(new OthelloGame()); }},
      {"go", [] { return std::unique_ptr<Game>(new GoGame(9, 7.5, "go")); }},
      {"go9", [] { return std::unique_ptr<Game>(new GoGame(9, 7.5, "go9")); }},
      {"go7", [] { return std::unique_ptr<Game>(new GoGame(7, 4.5, "go7")); }},
      {"breakthrough", MakeBreakthroughGame},
  };
  return registry;
}

// The games registered at run time (RegisterGame), after the built-in ones.
std::vector<Registered>& Plugins() {
  static std::vector<Registered> plugins;
  return plugins;
}

// The built-in games, then the plugins'.
std::array<const std::vector<Registered>*, 2> AllGames() { return {&Registry(), &Plugins()}; }

// The registered game of this name, or nullptr.
const Registered* FindGame(const std::string& name) {
  for (const auto* list : AllGames())
    for (const Registered& r : *list)
      if (name == r.name) return &r;
  return nullptr;
}

}  // namespace

std::string Game::FormatMoves(const std::vector<int>& moves) const {
  std::string text;
  for (size_t i = 0; i < moves.size(); ++i) {
    if (i > 0) text += ' ';
    text += DescribeAction(*this, moves[i]);
  }
  return text;
}

std::vector<int> Game::ParseMoves(const std::string& text) const {
  std::vector<int> moves;
  size_t i = 0;
  while (i < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !std::isspace(static_cast<unsigned char>(text[end]))) ++end;
    const std::string token = text.substr(i, end - i);
    const int action = ParseAction(token);
    if (action < 0) {
      throw Error(Name() + ": bad move '" + token + "' (move " + std::to_string(moves.size() + 1) +
                  ") in \"" + text + "\"");
    }
    moves.push_back(action);
    i = end;
  }
  return moves;
}

std::unique_ptr<State> Game::Replay(const std::vector<int>& moves) const {
  std::unique_ptr<State> state = NewInitialState();
  for (size_t i = 0; i < moves.size(); ++i) {
    const int action = moves[i];
    const std::string where =
        Name() + ": move " + std::to_string(i + 1) + " (" + DescribeAction(*this, action) + ")";
    if (state->IsTerminal()) throw Error(where + " is after the game ended");
    if (!state->IsLegal(action)) throw Error(where + " is illegal");
    state->Apply(action);
  }
  return state;
}

std::unique_ptr<Game> MakeGame(const std::string& name) {
  if (const Registered* r = FindGame(name)) return r->make();
  std::string known;
  for (const std::string& n : GameNames()) known += (known.empty() ? "" : ", ") + n;
  // A shard's or model's game comes from others: shown escaped, never raw.
  throw ConfigError("unknown game '" + PrintableText(name) + "' (known games: " + known +
                    "; a plugin's needs --game-plugin FILE.so)");
}

std::vector<std::string> GameNames() {
  std::vector<std::string> names;
  for (const auto* list : AllGames())
    for (const Registered& r : *list) names.emplace_back(r.name);
  return names;
}

void RegisterGame(const std::string& name, std::function<std::unique_ptr<Game>()> make) {
  if (FindGame(name)) throw ConfigError("a game named '" + name + "' exists already");
  Plugins().push_back({name, std::move(make)});
}

}  // namespace zerofarm::game
