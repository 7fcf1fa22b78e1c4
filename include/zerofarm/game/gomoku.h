#pragma once
// Gomoku on a 15x15 board: X (player 0, OpenSpiel's Black "b") moves first,
// players alternate placing a stone on any empty point, and a line of five
// (horizontal, vertical or diagonal) made by the last move wins. A full board
// (225 plies) without a win is a draw. No passes, no forbidden moves.
//
// Two rules (a constructor flag, two registered names):
//   "gomoku"          freestyle: five OR MORE in a row wins (OpenSpiel's gomoku).
//   "gomoku-standard" standard: EXACTLY five wins; an overline (6+) made by
//                     the last move does not win unless that move also makes
//                     an exact five in another direction.
//
// Cells and actions: 225, action = row * 15 + col, row 0 = TOP row as drawn
// (OpenSpiel's numbering), col 0 = left; cell c and action c are the same point.
//
// Action text: OpenSpiel's "row,col", 0-based ("7,7" = the centre = action
// 112). ParseAction also accepts AlphaGomoku's notation used in
// gomoku_rule_cases.txt: a column letter a..o then the 0-based row from the
// top ("h7" = action 112), optionally prefixed by a stone sign "X"/"O" which
// is ignored ("Xa5" = "a5" = "5,0"). Move lists are space separated.
//
// Feature planes, shape {3, 15, 15}: 0 "own" = stones of the player to move,
// 1 "opponent", 2 "first_player_to_move" = all ones when X is to move.
// Symmetries: the 8 of the square (as tictactoe.h: s = 0..3 rotate clockwise
// s quarter turns, s = 4..7 mirror left-right first); ActionMap = CellMap.
//
// ToString / ParseBoard: 15 lines of 15 characters, top row first, 'X'
// (player 0), 'O' (player 1), '.' (empty), each line ending in '\n'.
// ParseBoard also accepts OpenSpiel's 'b' / 'w' and a leading side-to-move line
// "B" / "W" (as in OpenSpiel's ToString), which must agree with the counts.
// The side to move, the winner and terminal status are derived from the stones.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

class GomokuGame : public Game {
 public:
  static constexpr int kSize = 15;
  static constexpr int kCells = kSize * kSize;
  static constexpr int kWords = (kCells + 63) / 64;  // uint64 words per bitboard

  // standard = true: exactly five wins ("gomoku-standard"); false: freestyle.
  explicit GomokuGame(bool standard = false) : standard_(standard) {}

  bool standard() const { return standard_; }
  std::string Name() const override { return standard_ ? "gomoku-standard" : "gomoku"; }
  int ActionCount() const override { return kCells; }
  BoardShape Shape() const override { return BoardShape{3, kSize, kSize}; }
  std::vector<std::string> PlaneNames() const override;
  int MaxGameLength() const override { return kCells; }
  std::unique_ptr<State> NewInitialState() const override;

  int SymmetryCount() const override { return 8; }
  std::vector<int> CellMap(int symmetry) const override;
  std::vector<int> ActionMap(int symmetry) const override { return CellMap(symmetry); }

  std::string ActionToString(int action) const override;
  int ParseAction(const std::string& text) const override;
  std::unique_ptr<State> ParseBoard(const std::string& text) const override;

 private:
  bool standard_;
};

class GomokuState : public State {
 public:
  explicit GomokuState(bool standard = false) : standard_(standard) {}

  std::unique_ptr<State> Clone() const override;
  void CopyFrom(const State& other) override;
  // Same rule and same stones (the rest follows from the stones).
  bool Equals(const State& other) const override;

  int CurrentPlayer() const override { return moves_ & 1; }
  int MoveNumber() const override { return moves_; }
  void LegalActions(std::vector<int>* out) const override;
  bool IsLegal(int action) const override;
  // No allocation: sets one bit, then walks the 4 lines through the point.
  void Apply(int action) override;
  bool IsTerminal() const override { return winner_ >= 0 || moves_ == GomokuGame::kCells; }
  int Winner() const override { return winner_; }
  void EncodeFeatures(uint8_t* out) const override;
  // Zobrist hash of the stones (the side to move follows from the counts).
  uint64_t Hash() const override { return hash_; }
  std::string ToString() const override;

  // The stone on `cell`: 0 (X), 1 (O) or -1 (empty).
  int At(int cell) const;
  bool standard() const { return standard_; }

  // Builds a position from per-cell stones ('X', 'O' or '.', 225 of them, top
  // row first); throws zerofarm::Error unless it can arise in play: counts X =
  // O or O + 1, the player to move has no winning line, and if the last mover
  // has one, a single stone of it completed every winning line.
  static GomokuState FromCells(const std::string& cells, bool standard);

  // True when placing `player`'s stone on `cell` (already set in the
  // bitboards) makes a win under the rule: the longest run through the cell
  // in some direction is >= 5 (freestyle) or == 5 (standard).
  bool WinsAt(int cell, int player) const;

 private:
  bool Has(int player, int cell) const { return (stones_[player][cell >> 6] >> (cell & 63)) & 1; }
  // True when `player` has a winning line anywhere on the board.
  bool HasWinAnywhere(int player) const;

  uint64_t stones_[2][GomokuGame::kWords] = {};  // bit c of word c / 64: stone on cell c
  uint64_t hash_ = 0;
  int16_t moves_ = 0;   // stones on the board = plies played
  int8_t winner_ = -1;  // 0 / 1 once someone has won, else -1
  bool standard_ = false;
};

}  // namespace zerofarm::game
