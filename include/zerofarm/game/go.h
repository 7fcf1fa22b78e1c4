#pragma once
// Go on an n x n board (n = 2..19; registered: "go" and "go9" = 9x9 komi 7.5,
// "go7" = 7x7 komi 4.5, the OpenSpiel playthrough's settings).
//
// Rules: Tromp-Taylor, except that suicide is ILLEGAL. X = Black (player 0)
// moves first. A move places a stone on an empty point; opponent chains left
// without a liberty are captured. A move that would leave its own chain
// without a liberty (after captures) is illegal, and so is one that recreates
// any earlier board colouring (positional superko, checked with Zobrist hashes
// of every board of the game). Pass is always legal; two consecutive passes
// end the game, and so does reaching MaxGameLength() = 3 * n * n plies. The
// final position is scored by area (Tromp-Taylor, no dead-stone removal):
// stones plus empty regions that reach only that colour; White adds komi.
// Black wins if black_area - white_area - komi > 0, White if < 0, else a draw.
//
// Cells and actions: cell = row * n + col, row 0 = TOP row as drawn, col 0 =
// left. Actions: n * n + 1, action = cell for a stone, n * n = pass. (OpenSpiel
// numbers rows from the BOTTOM: its action (n - 1 - row) * n + col is ours
// row * n + col; both use n * n for pass.)
//
// Action text: GTP coordinates: a column letter a..t skipping 'i' (a = left)
// then the row number 1..n counted from the BOTTOM ("a1" = bottom-left =
// action (n - 1) * n, "e5" = the centre of 9x9 = action 40), and "pass".
// ParseAction is case-insensitive ("D4", "PASS", as OpenSpiel prints).
//
// Feature planes, shape {3, n, n}: 0 "own" = stones of the player to move,
// 1 "opponent", 2 "first_player_to_move" = all ones when Black is to move (so
// the net can tell who receives komi). No history planes.
// Symmetries: the 8 of the square (as tictactoe.h: s = 0..3 rotate clockwise s
// quarter turns, s = 4..7 mirror left-right first); pass maps to itself.
//
// ToString / ParseBoard: n lines of n characters, top row first, 'X' (Black),
// 'O' (White), '.' (empty), then a status line "X to move" or "O to move",
// followed by ", 1 pass" (the last ply was a pass) or ", 2 passes", and by
// ", game over" when the game has ended. ParseBoard also accepts '+' for
// empty (OpenSpiel) and lower-case x / o; it rejects a chain without a
// liberty. A parsed position has no history: its superko set holds only the
// current board and MoveNumber() is the number of stones on it.
//
// Equals and Hash cover the board, the side to move, the consecutive passes
// and terminal status; the superko history and MoveNumber() are not compared.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/game.h"

namespace zerofarm::game {

class GoGame : public Game {
 public:
  static constexpr int kMinSize = 2;
  static constexpr int kMaxSize = 19;

  // Throws ConfigError for a size outside [2, 19]. `name` is what Name()
  // returns: shards record it and MakeGame(Name()) must rebuild this game, so
  // pass a registered name for another size or komi. Empty: "go" for 9x9 komi
  // 7.5, "go7" for 7x7 komi 4.5, else "go<size>-komi<komi>" (unregistered).
  explicit GoGame(int size = 9, double komi = 7.5, std::string name = "");

  int size() const { return size_; }
  double komi() const { return komi_; }
  int PassAction() const { return size_ * size_; }

  std::string Name() const override { return name_; }
  int ActionCount() const override { return size_ * size_ + 1; }
  BoardShape Shape() const override { return BoardShape{3, size_, size_}; }
  std::vector<std::string> PlaneNames() const override;
  int MaxGameLength() const override { return 3 * size_ * size_; }
  std::unique_ptr<State> NewInitialState() const override;

  int SymmetryCount() const override { return 8; }
  std::vector<int> CellMap(int symmetry) const override;
  std::vector<int> ActionMap(int symmetry) const override;

  std::string ActionToString(int action) const override;
  int ParseAction(const std::string& text) const override;
  std::unique_ptr<State> ParseBoard(const std::string& text) const override;

 private:
  int size_;
  double komi_;
  std::string name_;
};

class GoState : public State {
 public:
  static constexpr int kMaxCells = GoGame::kMaxSize * GoGame::kMaxSize;
  static constexpr int8_t kEmpty = -1;

  // The empty board, Black to move.
  GoState(int size, double komi, int max_game_length);

  std::unique_ptr<State> Clone() const override;
  // Allocation-free once this state's history has the capacity.
  void CopyFrom(const State& other) override;
  bool Equals(const State& other) const override;

  int CurrentPlayer() const override { return to_move_; }
  int MoveNumber() const override { return moves_; }
  // One chain labelling of the board, then O(1) per empty point plus a
  // superko look-up; pass last.
  void LegalActions(std::vector<int>* out) const override;
  bool IsLegal(int action) const override;
  void Apply(int action) override;
  bool IsTerminal() const override { return terminal_; }
  int Winner() const override { return winner_; }
  void EncodeFeatures(uint8_t* out) const override;
  uint64_t Hash() const override;
  std::string ToString() const override;

  int size() const { return size_; }
  // The stone on `cell`: 0 (Black), 1 (White) or kEmpty.
  int At(int cell) const { return board_[cell]; }
  int ConsecutivePasses() const { return passes_; }
  // Tromp-Taylor areas of the current board (stones + empty regions reaching
  // only that colour) and black_area - white_area - komi.
  void Areas(int* black, int* white) const;
  double Score() const;

  // Builds a position from per-cell stones ('X', 'O' or '.', size * size of
  // them, top row first). Throws zerofarm::Error for a bad length or
  // character or a chain without a liberty. `passes` (0..2) consecutive
  // passes; the game is over when passes == 2 or `game_over`.
  static GoState FromCells(const std::string& cells, int size, double komi, int max_game_length, int to_move,
                           int passes, bool game_over);

  // True when every chain of `cells` (size * size values: 0, 1 or kEmpty) has
  // a liberty: a legal Go position (OEIS A094777 counts them). Uses the same
  // chain labelling as LegalActions.
  static bool EveryChainHasLiberty(const int8_t* cells, int size);

 private:
  bool InHistory(uint64_t board_hash) const;
  void AddHistory(uint64_t board_hash);
  void Finish();  // sets terminal_ and winner_

  int8_t board_[kMaxCells];
  uint64_t board_hash_ = 0;
  std::vector<uint64_t> history_;  // hashes of every board of the game, this one included
  uint64_t bloom_[16] = {};        // a 1024-bit filter over history_
  double komi_;
  int16_t max_moves_;
  int16_t moves_ = 0;
  int8_t size_;
  int8_t to_move_ = 0;
  int8_t passes_ = 0;  // consecutive passes just played
  int8_t winner_ = -1;
  bool terminal_ = false;
};

}  // namespace zerofarm::game
