#pragma once
// The game interface: rules, feature planes, symmetries and text formats.
//
// A Game is the immutable description and rule book of one game (one instance
// may be shared by every thread of a process). A State is one position; it is
// cheap to copy (CopyFrom into an existing object does not allocate) and is
// owned by exactly one thread.
//
// Players are 0 (moves first) and 1. Actions are integers in [0, ActionCount()).
// Feature planes are uint8, laid out [plane][row][col] (row 0 = top of the board
// as drawn by ToString), always from the point of view of the player to move.
//
// Game plugins (game/plugin.h) are built against these classes: a change to
// them that alters their layout or virtual functions must raise ZF_GAME_PLUGIN_ABI.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace zerofarm::game {

// A bound on the action count of every game in the tree (Breakthrough's 768
// is the largest), for the tests' fixed buffers. The farm sizes everything
// from ActionCount(); shards store moves as int16, so ActionCount() <= 32768.
inline constexpr int kMaxActions = 1024;

struct BoardShape {
  int planes = 0;
  int height = 0;
  int width = 0;
  int Cells() const { return height * width; }
  int FeatureBytes() const { return planes * height * width; }
};

class State;

class Game {
 public:
  virtual ~Game() = default;

  virtual std::string Name() const = 0;                     // "connect4", "tictactoe"
  virtual int ActionCount() const = 0;                      // length of the policy vector
  virtual BoardShape Shape() const = 0;                     // shape of the feature planes
  virtual std::vector<std::string> PlaneNames() const = 0;  // Shape().planes names
  virtual int MaxGameLength() const = 0;                    // most plies a game can last
  virtual std::unique_ptr<State> NewInitialState() const = 0;

  // ---- symmetries --------------------------------------------------------
  // Symmetry 0 is the identity. For symmetry s, CellMap(s)[c] is where board
  // cell c (row * width + col) goes, and ActionMap(s)[a] is where action a
  // goes; both are permutations. Applied to features and policy targets by
  // the helpers in symmetry.h.
  virtual int SymmetryCount() const = 0;
  virtual std::vector<int> CellMap(int symmetry) const = 0;
  virtual std::vector<int> ActionMap(int symmetry) const = 0;

  // ---- text --------------------------------------------------------------
  // One action as text ("4" for Connect Four's 4th column in Pons's 1-based
  // notation; "b2" for tic-tac-toe). ParseAction returns -1 for bad text.
  virtual std::string ActionToString(int action) const = 0;
  virtual int ParseAction(const std::string& text) const = 0;
  // A move list as text. Connect Four concatenates digits ("4455") as the
  // Pons test files do; other games separate moves with spaces. ParseMoves
  // throws zerofarm::Error naming the bad token; it does not check legality.
  virtual std::string FormatMoves(const std::vector<int>& moves) const;
  virtual std::vector<int> ParseMoves(const std::string& text) const;
  // The inverse of State::ToString: throws zerofarm::Error on bad text.
  virtual std::unique_ptr<State> ParseBoard(const std::string& text) const = 0;

  // Plays `moves` from the initial state; throws zerofarm::Error at the first
  // illegal move or a move after the game has ended.
  std::unique_ptr<State> Replay(const std::vector<int>& moves) const;
};

class State {
 public:
  virtual ~State() = default;

  virtual std::unique_ptr<State> Clone() const = 0;
  // Makes *this equal to `other`, which must be a state of the same game.
  virtual void CopyFrom(const State& other) = 0;
  virtual bool Equals(const State& other) const = 0;

  virtual int CurrentPlayer() const = 0;  // 0 or 1
  virtual int MoveNumber() const = 0;     // plies played so far
  // Legal actions in increasing order; empty when terminal.
  virtual void LegalActions(std::vector<int>* out) const = 0;
  virtual bool IsLegal(int action) const = 0;
  // Precondition: IsLegal(action) (checked in debug builds).
  virtual void Apply(int action) = 0;
  virtual bool IsTerminal() const = 0;
  // Valid when IsTerminal(): 0 or 1 for the winner, -1 for a draw.
  virtual int Winner() const = 0;
  // Writes Shape().FeatureBytes() bytes of feature planes.
  virtual void EncodeFeatures(uint8_t* out) const = 0;
  // A hash of the position and the side to move (equal states hash equally).
  virtual uint64_t Hash() const = 0;
  // A multi-line ASCII board that Game::ParseBoard reads back.
  virtual std::string ToString() const = 0;

  // +1 if `player` won, -1 if it lost, 0 for a draw. Precondition: terminal.
  float Outcome(int player) const {
    const int w = Winner();
    return w < 0 ? 0.0f : (w == player ? 1.0f : -1.0f);
  }
};

// Games by name: connect4, connect4-threats, tictactoe, gomoku, gomoku-standard,
// othello, go (9x9), go9, go7, breakthrough (see docs/games.md), then the
// registered plugins' games. Throws ConfigError for an unknown name, listing
// the known ones.
std::unique_ptr<Game> MakeGame(const std::string& name);
std::vector<std::string> GameNames();
// Adds a game to the registry (a plugin's: io/game_plugin.h). Throws
// ConfigError when a game of that name exists. Not thread-safe: register
// before any other thread reads the registry.
void RegisterGame(const std::string& name, std::function<std::unique_ptr<Game>()> make);

}  // namespace zerofarm::game
