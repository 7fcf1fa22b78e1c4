// Misère tic-tac-toe as a game plugin (docs/adding-a-game.md): built outside
// zerofarm's tree against its installed headers, loaded with
//   zerofarm run --game-plugin misere.so --games 20 --out /tmp/misere ...
// (the plugin names its game: no --game needed).
//
// Rules: tic-tac-toe on 3x3, X (player 0) first, but whoever completes three
// in a row LOSES; a full board without a line is a draw. MaxGameLength: 9.
// Actions: cell = row * 3 + col, row 0 the top row. Text: "a3" (top left) to
// "c1" (bottom right), column letter then row digit, row 1 at the bottom.
// Planes: own, opponent, first_player_to_move. Symmetries: the 8 of the square.
// Board text: three rows of X, O and '.', top row first; the side to move
// follows from the stone counts.
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/board_util.h"
#include "zerofarm/game/plugin.h"

namespace {

using zerofarm::Error;
using zerofarm::game::BoardShape;
using zerofarm::game::Game;
using zerofarm::game::State;

constexpr int kSize = 3, kCells = 9;
constexpr uint32_t kLines[8] = {0007, 0070, 0700, 0111, 0222, 0444, 0421, 0124};

bool HasLine(uint32_t stones) {
  for (const uint32_t line : kLines)
    if ((stones & line) == line) return true;
  return false;
}

class MisereState : public State {
 public:
  std::unique_ptr<State> Clone() const override { return std::make_unique<MisereState>(*this); }
  void CopyFrom(const State& other) override { *this = zerofarm::game::SameGameState<MisereState>(other); }
  bool Equals(const State& other) const override {
    const auto* o = dynamic_cast<const MisereState*>(&other);
    return o != nullptr && o->stones_[0] == stones_[0] && o->stones_[1] == stones_[1];
  }
  int CurrentPlayer() const override { return moves_ & 1; }
  int MoveNumber() const override { return moves_; }
  void LegalActions(std::vector<int>* out) const override {
    out->clear();
    for (int c = 0; c < kCells; ++c)
      if (IsLegal(c)) out->push_back(c);
  }
  bool IsLegal(int a) const override {
    return a >= 0 && a < kCells && !IsTerminal() && !(((stones_[0] | stones_[1]) >> a) & 1u);
  }
  void Apply(int a) override {
    const int mover = CurrentPlayer();
    stones_[mover] |= 1u << a;
    ++moves_;
    if (HasLine(stones_[mover])) winner_ = 1 - mover;  // the line's maker loses
  }
  bool IsTerminal() const override { return winner_ >= 0 || moves_ == kCells; }
  int Winner() const override { return winner_; }
  void EncodeFeatures(uint8_t* out) const override {
    const int me = CurrentPlayer();
    for (int c = 0; c < kCells; ++c) {
      out[c] = (stones_[me] >> c) & 1u;
      out[kCells + c] = (stones_[1 - me] >> c) & 1u;
      out[2 * kCells + c] = me == 0;
    }
  }
  uint64_t Hash() const override { return zerofarm::game::Fmix64(stones_[0] | uint64_t{stones_[1]} << 16); }
  std::string ToString() const override {
    std::string text;
    zerofarm::game::AppendBoardRows(
        kSize, kSize, [this](int r, int c) { return Owner(r * kSize + c); }, &text);
    return text;
  }

  // A position from the cells' text ('X', 'O', '.'); Error unless it can arise in play.
  static MisereState FromCells(const std::string& cells) {
    MisereState s;
    for (int c = 0; c < kCells; ++c)
      if (cells[c] != '.') s.stones_[cells[c] == 'X' ? 0 : 1] |= 1u << c;
    const int nx = __builtin_popcount(s.stones_[0]), no = __builtin_popcount(s.stones_[1]);
    if (nx != no && nx != no + 1) throw Error("misere board: X must have as many stones as O, or one more");
    s.moves_ = nx + no;
    const int last = nx > no ? 0 : 1;
    if (HasLine(s.stones_[1 - last]))
      throw Error("misere board: the game went on after a line was completed");
    if (HasLine(s.stones_[last])) {
      bool one_move = false;  // some stone of the last mover completed every line at once
      for (int c = 0; c < kCells; ++c)
        if ((s.stones_[last] >> c) & 1u) one_move = one_move || !HasLine(s.stones_[last] & ~(1u << c));
      if (!one_move) throw Error("misere board: lines that no single move could complete");
      s.winner_ = 1 - last;
    }
    return s;
  }

 private:
  int Owner(int cell) const { return (stones_[0] >> cell) & 1u ? 0 : (stones_[1] >> cell) & 1u ? 1 : -1; }

  uint32_t stones_[2] = {0, 0};
  int moves_ = 0;
  int winner_ = -1;
};

class MisereGame : public Game {
 public:
  std::string Name() const override { return "misere"; }
  int ActionCount() const override { return kCells; }
  BoardShape Shape() const override { return BoardShape{3, kSize, kSize}; }
  std::vector<std::string> PlaneNames() const override { return {"own", "opponent", "first_player_to_move"}; }
  int MaxGameLength() const override { return kCells; }
  std::unique_ptr<State> NewInitialState() const override { return std::make_unique<MisereState>(); }
  int SymmetryCount() const override { return 8; }
  std::vector<int> CellMap(int s) const override { return zerofarm::game::SquareSymmetryCellMap(kSize, s); }
  std::vector<int> ActionMap(int s) const override { return CellMap(s); }
  std::string ActionToString(int a) const override {
    if (a < 0 || a >= kCells) return "#" + std::to_string(a);
    return std::string(1, static_cast<char>('a' + a % kSize)) + static_cast<char>('3' - a / kSize);
  }
  int ParseAction(const std::string& text) const override {
    if (text.size() != 2 || text[0] < 'a' || text[0] > 'c' || text[1] < '1' || text[1] > '3') return -1;
    return ('3' - text[1]) * kSize + (text[0] - 'a');
  }
  std::unique_ptr<State> ParseBoard(const std::string& text) const override {
    const std::vector<std::string> rows = zerofarm::game::BoardLines(text);
    if (rows.size() != kSize)
      throw Error("misere board: expected 3 rows, got " + std::to_string(rows.size()));
    const std::string cells = zerofarm::game::ReadBoardCells(rows, kSize, kSize, "misere board: ");
    return std::make_unique<MisereState>(MisereState::FromCells(cells));
  }
};

}  // namespace

ZF_GAME_PLUGIN("misere", MisereGame)
