// Breakthrough on 8x8 (Dan Troyka, 2000), as OpenSpiel's "breakthrough":
// the sixth game, added as one source file plus one registry line
// (docs/adding-a-game.md walks through it).
//
// Rules: Black (player 0, 'b') starts on the top two rows and moves first,
// down the board; White (player 1, 'w') starts on the bottom two rows and
// moves up. A piece steps one row forward: straight ahead onto an empty
// cell, or diagonally forward onto an empty cell or an enemy piece, which is
// captured. A player wins by reaching the far row or capturing every enemy
// piece. There are no draws and no passes; the most advanced piece always
// has a diagonal move, so the player to move always has a legal move.
//
// Cells: cell = row * 8 + col, row 0 = the TOP row as drawn (rank 8), col 0 =
// file a. Actions are OpenSpiel's 768: ((row * 8 + col) * 6 + dir) * 2 +
// capture, for the piece on (row, col); dir 0..2 go down-left, down,
// down-right (Black), 3..5 up-left, up, up-right (White); capture is 1 when
// the move takes a piece. Only the action with the right capture bit is legal.
//
// Action text: OpenSpiel's, file and rank of the piece then of the target,
// "*" for a capture: "c7d6", "d5e4*". Actions that leave the board (never
// legal) are written "#N" (N the action number); ParseAction reads both.
//
// Feature planes, shape {3, 8, 8}: 0 "own" = pieces of the player to move,
// 1 "opponent", 2 "first_player_to_move" = all ones when Black is to move
// (the net learns from it which way the player to move goes).
// Symmetry: the left-right mirror (file a <-> h); it maps dir 0 <-> 2 and
// 3 <-> 5. Up-down is no symmetry: the sides move in opposite directions.
//
// ToString / ParseBoard: OpenSpiel's drawing, rank 8 first, each row its rank
// digit then 8 cells 'b' / 'w' / '.', then the line " abcdefgh", then a
// status line "black to move, ply N" (or "white ..."; N = MoveNumber()).
// Terminal states draw the player who would move next.
//
// MaxGameLength: each move takes a piece one row forward. Without reaching
// the far row, a side's pieces can advance 8 * 6 + 8 * 5 = 88 rows in all,
// so a game lasts at most 88 + 88 + 1 = 177 plies.
#include <array>
#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/game/board_util.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

constexpr int kSize = 8;
constexpr int kCells = kSize * kSize;
constexpr int kDirs = 6;
constexpr int kActions = kCells * kDirs * 2;  // 768
constexpr int kDirRow[kDirs] = {1, 1, 1, -1, -1, -1};
constexpr int kDirCol[kDirs] = {-1, 0, 1, -1, 0, 1};

// An action's parts, and where it goes (to_row / to_col may be off the board).
struct Move {
  int row, col, dir, capture;
  int to_row() const { return row + kDirRow[dir]; }
  int to_col() const { return col + kDirCol[dir]; }
  bool OnBoard() const { return to_row() >= 0 && to_row() < kSize && to_col() >= 0 && to_col() < kSize; }
  int Action() const { return ((row * kSize + col) * kDirs + dir) * 2 + capture; }
};

Move Unrank(int action) {
  return Move{action / (kSize * kDirs * 2), action / (kDirs * 2) % kSize, action / 2 % kDirs, action % 2};
}

std::string Square(int row, int col) {
  return std::string(1, static_cast<char>('a' + col)) + static_cast<char>('0' + kSize - row);
}

uint64_t Bit(int cell) { return uint64_t{1} << cell; }

std::string BoardError(const std::string& what) { return "breakthrough board: " + what; }

class BreakthroughState : public State {
 public:
  BreakthroughState() {
    pieces_[0] = 0xFFFFULL;        // rows 0 and 1
    pieces_[1] = 0xFFFFULL << 48;  // rows 6 and 7
  }

  std::unique_ptr<State> Clone() const override { return std::make_unique<BreakthroughState>(*this); }
  void CopyFrom(const State& other) override { *this = SameGameState<BreakthroughState>(other); }
  bool Equals(const State& other) const override {
    const auto& o = SameGameState<BreakthroughState>(other);
    return pieces_[0] == o.pieces_[0] && pieces_[1] == o.pieces_[1] && CurrentPlayer() == o.CurrentPlayer();
  }

  int CurrentPlayer() const override { return moves_ & 1; }
  int MoveNumber() const override { return moves_; }
  void LegalActions(std::vector<int>* out) const override;
  bool IsLegal(int action) const override;
  void Apply(int action) override;
  bool IsTerminal() const override { return winner_ >= 0; }
  int Winner() const override { return winner_; }
  void EncodeFeatures(uint8_t* out) const override;
  uint64_t Hash() const override {
    return Fmix64(pieces_[0] * 0x9E3779B97F4A7C15ULL ^ Fmix64(pieces_[1]) ^
                  static_cast<uint64_t>(CurrentPlayer()));
  }
  std::string ToString() const override;

  // The position drawn by ToString; throws zerofarm::Error on bad text.
  static BreakthroughState Parse(const std::string& text);

 private:
  int At(int row, int col) const {
    const uint64_t b = Bit(row * kSize + col);
    return (pieces_[0] & b) ? 0 : (pieces_[1] & b) ? 1 : -1;
  }
  // The winner of a position (-1: none), from the far rows and piece counts.
  int FindWinner() const {
    if ((pieces_[0] >> 56) != 0 || pieces_[1] == 0) return 0;
    if ((pieces_[1] & 0xFFULL) != 0 || pieces_[0] == 0) return 1;
    return -1;
  }

  uint64_t pieces_[2];  // bitboards of Black and White, bit = cell
  int16_t moves_ = 0;   // plies played
  int8_t winner_ = -1;
};

void BreakthroughState::LegalActions(std::vector<int>* out) const {
  out->clear();
  if (IsTerminal()) return;
  const int me = CurrentPlayer();
  for (int cell = 0; cell < kCells; ++cell) {
    if (!(pieces_[me] & Bit(cell))) continue;
    for (int d = 3 * me; d < 3 * me + 3; ++d) {
      Move m{cell / kSize, cell % kSize, d, 0};
      if (!m.OnBoard()) continue;
      const int target = At(m.to_row(), m.to_col());
      if (target == -1) {
        out->push_back(m.Action());
      } else if (target == 1 - me && kDirCol[d] != 0) {
        m.capture = 1;
        out->push_back(m.Action());
      }
    }
  }
}

bool BreakthroughState::IsLegal(int action) const {
  if (IsTerminal() || action < 0 || action >= kActions) return false;
  const Move m = Unrank(action);
  const int me = CurrentPlayer();
  if (m.dir / 3 != me || !m.OnBoard() || At(m.row, m.col) != me) return false;
  const int target = At(m.to_row(), m.to_col());
  return m.capture ? (target == 1 - me && kDirCol[m.dir] != 0) : target == -1;
}

void BreakthroughState::Apply(int action) {
  ZF_DCHECK(IsLegal(action)) << "breakthrough: illegal action " << action;
  const Move m = Unrank(action);
  const int me = CurrentPlayer();
  const uint64_t to = Bit(m.to_row() * kSize + m.to_col());
  pieces_[me] = (pieces_[me] & ~Bit(m.row * kSize + m.col)) | to;
  pieces_[1 - me] &= ~to;
  ++moves_;
  winner_ = static_cast<int8_t>(FindWinner());
}

void BreakthroughState::EncodeFeatures(uint8_t* out) const {
  const int me = CurrentPlayer();
  for (int cell = 0; cell < kCells; ++cell) {
    out[cell] = (pieces_[me] >> cell) & 1;
    out[kCells + cell] = (pieces_[1 - me] >> cell) & 1;
    out[2 * kCells + cell] = me == 0 ? 1 : 0;
  }
}

std::string BreakthroughState::ToString() const {
  std::string text;
  for (int r = 0; r < kSize; ++r) {
    text += static_cast<char>('0' + kSize - r);
    for (int c = 0; c < kSize; ++c) text += "bw."[At(r, c) < 0 ? 2 : At(r, c)];
    text += '\n';
  }
  text += " abcdefgh\n";
  text += std::string(CurrentPlayer() == 0 ? "black" : "white") + " to move, ply " + std::to_string(moves_) +
          "\n";
  return text;
}

BreakthroughState BreakthroughState::Parse(const std::string& text) {
  const std::vector<std::string> lines = BoardLines(text);
  if (lines.size() != kSize + 2)
    throw Error(BoardError("expected 10 lines, got " + std::to_string(lines.size())));
  BreakthroughState s;
  s.pieces_[0] = s.pieces_[1] = 0;
  for (int r = 0; r < kSize; ++r) {
    const std::string& line = lines[r];
    if (line.size() != kSize + 1 || line[0] != '0' + kSize - r)
      throw Error(
          BoardError("row " + std::to_string(r + 1) + " '" + line + "' is not its rank digit and 8 cells"));
    for (int c = 0; c < kSize; ++c) {
      const char ch = line[c + 1];
      if (ch == 'b' || ch == 'w')
        s.pieces_[ch == 'w'] |= Bit(r * kSize + c);
      else if (ch != '.')
        throw Error(BoardError(std::string("bad character '") + ch + "' in row " + std::to_string(r + 1)));
    }
  }
  if (lines[kSize] != " abcdefgh" && lines[kSize] != "abcdefgh")
    throw Error(BoardError("expected the file line ' abcdefgh', got '" + lines[kSize] + "'"));
  const std::string& status = lines[kSize + 1];
  const int player = status.rfind("black to move, ply ", 0) == 0   ? 0
                     : status.rfind("white to move, ply ", 0) == 0 ? 1
                                                                   : -1;
  const std::string ply = player < 0 ? "" : status.substr(19);
  if (ply.empty() || ply.size() > 3 || ply.find_first_not_of("0123456789") != std::string::npos)
    throw Error(
        BoardError("expected 'black to move, ply N' or 'white to move, ply N', got '" + status + "'"));
  s.moves_ = static_cast<int16_t>(std::stoi(ply));
  if ((s.moves_ & 1) != player) throw Error(BoardError("'" + status + "': black moves at even plies"));
  s.winner_ = static_cast<int8_t>(s.FindWinner());
  if ((s.pieces_[0] >> 56) != 0 && (s.pieces_[1] & 0xFFULL) != 0)
    throw Error(BoardError("both sides have reached the far row"));
  return s;
}

class BreakthroughGame : public Game {
 public:
  std::string Name() const override { return "breakthrough"; }
  int ActionCount() const override { return kActions; }
  BoardShape Shape() const override { return BoardShape{3, kSize, kSize}; }
  std::vector<std::string> PlaneNames() const override { return {"own", "opponent", "first_player_to_move"}; }
  int MaxGameLength() const override { return 177; }
  std::unique_ptr<State> NewInitialState() const override { return std::make_unique<BreakthroughState>(); }

  int SymmetryCount() const override { return 2; }
  std::vector<int> CellMap(int symmetry) const override {
    std::vector<int> map(kCells);
    for (int cell = 0; cell < kCells; ++cell)
      map[cell] = symmetry == 0 ? cell : cell - cell % kSize + (kSize - 1 - cell % kSize);
    return map;
  }
  std::vector<int> ActionMap(int symmetry) const override {
    std::vector<int> map(kActions);
    for (int a = 0; a < kActions; ++a) {
      Move m = Unrank(a);
      if (symmetry == 1) {
        m.col = kSize - 1 - m.col;
        m.dir -= 2 * kDirCol[m.dir];  // 0 <-> 2, 3 <-> 5
      }
      map[a] = m.Action();
    }
    return map;
  }

  std::string ActionToString(int action) const override {
    const Move m = Unrank(action);
    if (action < 0 || action >= kActions || !m.OnBoard()) return "#" + std::to_string(action);
    return Square(m.row, m.col) + Square(m.to_row(), m.to_col()) + (m.capture ? "*" : "");
  }
  int ParseAction(const std::string& text) const override;
  std::unique_ptr<State> ParseBoard(const std::string& text) const override {
    return std::make_unique<BreakthroughState>(BreakthroughState::Parse(text));
  }
};

int BreakthroughGame::ParseAction(const std::string& text) const {
  if (text.size() >= 2 && text.size() <= 4 && text[0] == '#' &&
      text.find_first_not_of("0123456789", 1) == std::string::npos) {
    const int action = std::stoi(text.substr(1));
    return action < kActions && !Unrank(action).OnBoard() ? action : -1;
  }
  if (text.size() != 4 && !(text.size() == 5 && text[4] == '*')) return -1;
  int rc[4];  // row, col, to_row, to_col
  for (int i = 0; i < 2; ++i) {
    rc[2 * i + 1] = text[2 * i] - 'a';
    rc[2 * i] = kSize - (text[2 * i + 1] - '0');
    if (rc[2 * i + 1] < 0 || rc[2 * i + 1] >= kSize || rc[2 * i] < 0 || rc[2 * i] >= kSize) return -1;
  }
  for (int d = 0; d < kDirs; ++d) {
    const Move m{rc[0], rc[1], d, text.size() == 5 ? 1 : 0};
    if (m.to_row() == rc[2] && m.to_col() == rc[3]) return m.Action();
  }
  return -1;
}

}  // namespace

std::unique_ptr<Game> MakeBreakthroughGame() { return std::make_unique<BreakthroughGame>(); }

}  // namespace zerofarm::game
