#pragma once
// Tic-tac-toe: 3x3, X (player 0) moves first, three in a row wins, a full
// board without a line is a draw.
//
// Cells and actions: action = row * 3 + col with row 0 the TOP row and col 0
// the left column (the same numbering as OpenSpiel's tic_tac_toe), so cell c
// and action c are the same square.
//
// Action text is chess-like: a column letter a..c (left to right) then a row
// digit 1..3 with row 1 the BOTTOM row. So "a3" = action 0 (top left),
// "c1" = action 8 (bottom right), "b2" = action 4 (centre).
//
// Feature planes (3, 3x3, row 0 = top): 0 "own" = stones of the player to
// move, 1 "opponent", 2 "first_player_to_move" = all ones when X is to move.
//
// ToString / ParseBoard: three lines of three characters, top row first,
// 'X' (player 0), 'O' (player 1), '.' (empty), each line ending in '\n'. The
// side to move is derived from the stone counts.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

class TicTacToeGame : public Game {
 public:
  static constexpr int kSize = 3;
  static constexpr int kCells = kSize * kSize;

  std::string Name() const override { return "tictactoe"; }
  int ActionCount() const override { return kCells; }
  BoardShape Shape() const override { return BoardShape{3, kSize, kSize}; }
  std::vector<std::string> PlaneNames() const override;
  int MaxGameLength() const override { return kCells; }
  std::unique_ptr<State> NewInitialState() const override;

  // The dihedral group: s = 0..3 rotate clockwise by s quarter turns; s = 4..7
  // mirror left-right first, then rotate by s - 4 quarter turns.
  int SymmetryCount() const override { return 8; }
  std::vector<int> CellMap(int symmetry) const override;
  std::vector<int> ActionMap(int symmetry) const override { return CellMap(symmetry); }

  std::string ActionToString(int action) const override;
  int ParseAction(const std::string& text) const override;
  std::unique_ptr<State> ParseBoard(const std::string& text) const override;
};

class TicTacToeState : public State {
 public:
  TicTacToeState() = default;

  std::unique_ptr<State> Clone() const override;
  void CopyFrom(const State& other) override;
  bool Equals(const State& other) const override;

  int CurrentPlayer() const override { return moves_ & 1; }
  int MoveNumber() const override { return moves_; }
  void LegalActions(std::vector<int>* out) const override;
  bool IsLegal(int action) const override;
  void Apply(int action) override;
  bool IsTerminal() const override { return winner_ >= 0 || moves_ == TicTacToeGame::kCells; }
  int Winner() const override { return winner_; }
  void EncodeFeatures(uint8_t* out) const override;
  uint64_t Hash() const override;
  std::string ToString() const override;

  // Stones of `player` (0 or 1) as a bitboard: bit c set = cell c occupied.
  uint32_t Stones(int player) const { return stones_[player]; }

  // Builds a position from two bitboards; throws zerofarm::Error unless it can
  // arise in play (disjoint, counts X = O or O + 1, at most the last mover has
  // a line and it was completed by one of its stones).
  static TicTacToeState FromStones(uint32_t x, uint32_t o);

  // True when `stones` (a bitboard) contains three in a row.
  static bool HasLine(uint32_t stones);

 private:
  uint32_t stones_[2] = {0, 0};  // bitboards of X and O, 9 bits each
  int8_t moves_ = 0;             // stones on the board = plies played
  int8_t winner_ = -1;           // 0 / 1 once someone has a line, else -1
};

}  // namespace zerofarm::game
