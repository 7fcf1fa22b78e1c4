#pragma once
// Connect Four: 7 columns x 6 rows, X (player 0) moves first, four in a row
// (horizontal, vertical or diagonal) wins, a full board (42 plies) without a
// four is a draw.
//
// Actions: 7, action = column 0..6 with 0 the leftmost (OpenSpiel's
// numbering). Action text is Pons's 1-based column digit "1".."7"; a move list
// is those digits concatenated with no separator ("4455"), as in Pons's test
// files, and ParseMoves ignores whitespace.
//
// Feature planes, shape {3, 6, 7}, row 0 = TOP row, col 0 = left: 0 "own" =
// stones of the player to move, 1 "opponent", 2 "first_player_to_move" = all
// ones when X is to move. The game "connect4-threats" (Connect4Features::
// kThreats; same rules, its own shards and weights) adds three, shape {6, 6, 7}:
// 3 "own_wins" = empty cells where a stone of the player to move would
// complete a four (playable now or later), 4 "opponent_wins" = the same for
// the opponent, 5 "odd_row" = ones on the 1st, 3rd and 5th rows from the
// bottom (with plane 2, which threats a filled-up board makes good: Allis's
// zugzwang rule). Symmetries: 0 identity, 1 left-right mirror.
//
// ToString / ParseBoard: six lines of seven characters, top row first, 'X'
// (player 0), 'O' (player 1), '.' (empty), each line ending in '\n'.
// ParseBoard also accepts OpenSpiel's lower-case 'x' / 'o'. The side to move
// and terminal status are derived from the stones.
//
// Bitboards are Pascal Pons's layout: bit (col * 7 + row), row 0 = BOTTOM,
// 7 bits per column (the 7th is an always-empty sentinel), 49 bits in all.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

// Which feature planes a state encodes (see the file comment).
enum class Connect4Features : int8_t { kStones, kThreats };

class Connect4Game : public Game {
 public:
  static constexpr int kWidth = 7;
  static constexpr int kHeight = 6;
  static constexpr int kCells = kWidth * kHeight;

  explicit Connect4Game(Connect4Features features = Connect4Features::kStones) : features_(features) {}

  std::string Name() const override { return threats() ? "connect4-threats" : "connect4"; }
  int ActionCount() const override { return kWidth; }
  BoardShape Shape() const override { return BoardShape{threats() ? 6 : 3, kHeight, kWidth}; }
  std::vector<std::string> PlaneNames() const override;
  int MaxGameLength() const override { return kCells; }
  std::unique_ptr<State> NewInitialState() const override;

  int SymmetryCount() const override { return 2; }
  std::vector<int> CellMap(int symmetry) const override;
  std::vector<int> ActionMap(int symmetry) const override;

  std::string ActionToString(int action) const override;
  int ParseAction(const std::string& text) const override;
  std::string FormatMoves(const std::vector<int>& moves) const override;
  std::vector<int> ParseMoves(const std::string& text) const override;
  std::unique_ptr<State> ParseBoard(const std::string& text) const override;

 private:
  bool threats() const { return features_ == Connect4Features::kThreats; }
  Connect4Features features_;
};

// True for every feature set of Connect Four (the rules, the solver and Pons's
// sets are the same for all of them).
bool IsConnect4(const Game& game);

class Connect4State : public State {
 public:
  explicit Connect4State(Connect4Features features = Connect4Features::kStones) : features_(features) {}

  std::unique_ptr<State> Clone() const override;
  void CopyFrom(const State& other) override;
  bool Equals(const State& other) const override;

  int CurrentPlayer() const override { return moves_ & 1; }
  int MoveNumber() const override { return moves_; }
  void LegalActions(std::vector<int>* out) const override;
  bool IsLegal(int action) const override;
  // No allocation; a handful of shifts for the win test.
  void Apply(int action) override;
  bool IsTerminal() const override { return winner_ >= 0 || moves_ == Connect4Game::kCells; }
  int Winner() const override { return winner_; }
  void EncodeFeatures(uint8_t* out) const override;
  // Fmix64(Key()): a bijection of an exact key, so it never collides.
  uint64_t Hash() const override;
  std::string ToString() const override;

  // Stones of `player` (0 or 1) as a Pons bitboard (see the file comment).
  uint64_t Stones(int player) const { return stones_[player]; }
  // An exact 49-bit key of the position (Pons: X's stones + mask + bottom
  // row); the side to move follows from the stone counts. FromKey inverts it.
  uint64_t Key() const;
  // Rebuilds a state from Key(); throws zerofarm::Error for a key that is not
  // a valid position (see FromStones).
  static Connect4State FromKey(uint64_t key);
  // Builds a position from two bitboards; throws zerofarm::Error unless the
  // stones rest on each other (no floating stones), the counts are X = O or
  // O + 1, at most the last mover has a four and one of its top stones
  // completed every four it has.
  static Connect4State FromStones(uint64_t x, uint64_t o);
  // The same position, encoding `features` (FromKey and FromStones give kStones).
  Connect4State WithFeatures(Connect4Features features) const {
    Connect4State s = *this;
    s.features_ = features;
    return s;
  }

  // True when `stones` (a bitboard) holds four in a row.
  static bool HasFour(uint64_t stones);

 private:
  void EncodeThreats(uint8_t* out) const;  // planes 3-5 of kThreats

  uint64_t stones_[2] = {0, 0};  // bitboards of X and O
  int8_t moves_ = 0;             // stones on the board = plies played
  int8_t winner_ = -1;           // 0 / 1 once someone has a four, else -1
  Connect4Features features_;    // what EncodeFeatures writes; not part of the position
};

}  // namespace zerofarm::game
