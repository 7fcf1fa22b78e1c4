#pragma once
// Othello (Reversi) on 8x8: X = Black (player 0) moves first from the standard
// start (d4 = O, e4 = X, d5 = X, e5 = O). A move places a disc that flanks a
// straight line of opponent discs, which flip. A player with no such move
// must pass; the game ends when neither player can move (full board or not),
// and the side with more discs wins (equal counts: a draw).
//
// Cells: cell = row * 8 + col, row 0 = rank 1 = TOP row as drawn (OpenSpiel
// prints rank 1 at the top), col 0 = file a. Actions: 65, action = cell for a
// disc ("a1" = 0, "h1" = 7, "a2" = 8, "h8" = 63), 64 = pass. Pass is legal
// exactly when the side to move has no disc move and the game is not over, and
// then it is the only legal action. This is OpenSpiel's othello numbering.
//
// Action text: file letter a..h + rank digit 1..8 ("d3"), and "pass".
// ParseAction is case-insensitive ("D3", "PASS" and the FFO files' "G8").
//
// Feature planes, shape {3, 8, 8}: 0 "own" = discs of the player to move,
// 1 "opponent", 2 "first_player_to_move" = all ones when Black (X) is to move.
// No legal-moves plane (the policy is masked by the legal actions anyway).
// Symmetries: 4, the symmetries of the square that fix the start position:
// 0 identity, 1 half turn, 2 reflection in the a1-h8 diagonal (cell (r, c) ->
// (c, r)), 3 reflection in the h1-a8 diagonal ((r, c) -> (7 - c, 7 - r)).
// ActionMap maps the 64 cells as CellMap and pass (64) to itself. (The rules
// are invariant under all 8 of the square, but a quarter turn or a mirror of
// a game is not a game from the standard start, which the project's symmetry
// tests require: replaying the mapped moves from the initial state.)
//
// ToString / ParseBoard: 8 lines of 8 characters, rank 1 (top) first, 'X'
// (Black), 'O' (White), '.' (empty), then a line "X to move" or "O to move"
// (when the game is over, the player who would move next). ParseBoard also
// accepts '-' for empty and lower-case x / o. Passes are not part of a
// position: ParseBoard's MoveNumber() is discs - 4 (as if no one had passed).
//
// Max game length: 120 plies (60 disc moves; a pass is always followed by a
// disc move, so at most 60 passes).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

class OthelloGame : public Game {
 public:
  static constexpr int kSize = 8;
  static constexpr int kCells = 64;
  static constexpr int kPass = 64;

  std::string Name() const override { return "othello"; }
  int ActionCount() const override { return kCells + 1; }
  BoardShape Shape() const override { return BoardShape{3, kSize, kSize}; }
  std::vector<std::string> PlaneNames() const override;
  int MaxGameLength() const override { return 120; }
  std::unique_ptr<State> NewInitialState() const override;

  int SymmetryCount() const override { return 4; }
  std::vector<int> CellMap(int symmetry) const override;
  std::vector<int> ActionMap(int symmetry) const override;

  std::string ActionToString(int action) const override;
  int ParseAction(const std::string& text) const override;
  std::unique_ptr<State> ParseBoard(const std::string& text) const override;
};

class OthelloState : public State {
 public:
  OthelloState();  // the standard start position, Black to move

  std::unique_ptr<State> Clone() const override;
  void CopyFrom(const State& other) override;
  // Same discs and same side to move.
  bool Equals(const State& other) const override;

  int CurrentPlayer() const override { return to_move_; }
  int MoveNumber() const override { return moves_; }
  void LegalActions(std::vector<int>* out) const override;
  bool IsLegal(int action) const override;
  // No allocation: flips by shifts, then one or two move generations for the
  // next position (cached: LegalActions only reads the mask).
  void Apply(int action) override;
  bool IsTerminal() const override { return terminal_; }
  // More discs wins; equal counts draw.
  int Winner() const override;
  void EncodeFeatures(uint8_t* out) const override;
  uint64_t Hash() const override;
  std::string ToString() const override;

  // Discs of `player` (0 = Black, 1 = White): bit c = cell c (see above).
  uint64_t Discs(int player) const { return discs_[player]; }
  // The disc moves of the side to move as a mask (0 when it must pass or the
  // game is over).
  uint64_t MoveMask() const { return legal_; }

  // Builds a position; throws zerofarm::Error if the discs overlap or
  // `to_move` is not 0 or 1. Any other disc pattern is accepted (the FFO
  // positions need not be reachable in a particular number of plies).
  // MoveNumber() is popcount - 4 (at least 0).
  static OthelloState FromDiscs(uint64_t black, uint64_t white, int to_move);

  // Bitboard primitives: the squares where `own` can move against `opp`, and
  // the discs a move on `cell` flips.
  static uint64_t Moves(uint64_t own, uint64_t opp);
  static uint64_t Flips(uint64_t own, uint64_t opp, int cell);

 private:
  // Sets legal_ and terminal_ from the discs and to_move_.
  void Refresh();

  uint64_t discs_[2] = {0, 0};
  uint64_t legal_ = 0;  // disc moves of the side to move
  int16_t moves_ = 0;   // plies played, passes included
  int8_t to_move_ = 0;
  bool terminal_ = false;
};

}  // namespace zerofarm::game
