#include "zerofarm/game/tictactoe.h"

#include <cctype>

#include "zerofarm/core/error.h"
#include "zerofarm/game/board_util.h"

namespace zerofarm::game {
namespace {

constexpr int kSize = TicTacToeGame::kSize;
constexpr int kCells = TicTacToeGame::kCells;
constexpr uint32_t kFull = (1u << kCells) - 1;

// The eight lines as bitboards (bit = row * 3 + col).
constexpr uint32_t kLines[8] = {
    0007, 0070, 0700,  // rows
    0111, 0222, 0444,  // columns
    0421, 0124,        // diagonals
};

int PopCount(uint32_t x) { return __builtin_popcount(x); }

}  // namespace

// ---- TicTacToeGame ----------------------------------------------------------

std::vector<std::string> TicTacToeGame::PlaneNames() const {
  return {"own", "opponent", "first_player_to_move"};
}

std::unique_ptr<State> TicTacToeGame::NewInitialState() const { return std::make_unique<TicTacToeState>(); }

std::vector<int> TicTacToeGame::CellMap(int symmetry) const {
  ZF_CHECK(symmetry >= 0 && symmetry < 8) << "tictactoe symmetry " << symmetry;
  return SquareSymmetryCellMap(kSize, symmetry);
}

std::string TicTacToeGame::ActionToString(int action) const {
  if (action < 0 || action >= kCells) return "?" + std::to_string(action);
  const int row = action / kSize;
  const int col = action % kSize;
  std::string text;
  text += static_cast<char>('a' + col);
  text += static_cast<char>('1' + (kSize - 1 - row));  // row 1 = bottom
  return text;
}

int TicTacToeGame::ParseAction(const std::string& text) const {
  if (text.size() != 2) return -1;
  const int col = std::tolower(static_cast<unsigned char>(text[0])) - 'a';
  const int rank = text[1] - '1';
  if (col < 0 || col >= kSize || rank < 0 || rank >= kSize) return -1;
  return (kSize - 1 - rank) * kSize + col;
}

std::unique_ptr<State> TicTacToeGame::ParseBoard(const std::string& text) const {
  const std::vector<std::string> rows = BoardLines(text);
  if (rows.size() != static_cast<size_t>(kSize)) {
    throw Error("tictactoe board: expected 3 rows, got " + std::to_string(rows.size()));
  }
  const std::string cells = ReadBoardCells(rows, kSize, kSize, "tictactoe board: ");
  uint32_t stones[2] = {0, 0};
  for (int c = 0; c < kCells; ++c) {
    if (cells[c] != '.') stones[cells[c] == 'X' ? 0 : 1] |= 1u << c;
  }
  return std::make_unique<TicTacToeState>(TicTacToeState::FromStones(stones[0], stones[1]));
}

// ---- TicTacToeState ---------------------------------------------------------

bool TicTacToeState::HasLine(uint32_t stones) {
  for (uint32_t line : kLines) {
    if ((stones & line) == line) return true;
  }
  return false;
}

TicTacToeState TicTacToeState::FromStones(uint32_t x, uint32_t o) {
  if ((x | o) & ~kFull) throw Error("tictactoe board: stones outside the board");
  if (x & o) throw Error("tictactoe board: a cell holds two stones");
  const int nx = PopCount(x);
  const int no = PopCount(o);
  if (nx != no && nx != no + 1) {
    throw Error("tictactoe board: " + std::to_string(nx) + " X and " + std::to_string(no) +
                " O stones (X moves first, so X = O or O + 1)");
  }
  TicTacToeState s;
  s.stones_[0] = x;
  s.stones_[1] = o;
  s.moves_ = static_cast<int8_t>(nx + no);
  const bool x_line = HasLine(x);
  const bool o_line = HasLine(o);
  if (x_line || o_line) {
    const int last = nx > no ? 0 : 1;  // the player who moved last
    if ((last == 0 && o_line) || (last == 1 && x_line)) {
      throw Error("tictactoe board: the game went on after a line was completed");
    }
    // Some stone of the last mover must have completed every line at once.
    const uint32_t mine = s.stones_[last];
    bool ok = false;
    for (int c = 0; c < kCells && !ok; ++c) {
      if ((mine >> c) & 1u) ok = !HasLine(mine & ~(1u << c));
    }
    if (!ok) throw Error("tictactoe board: lines that no single move could complete");
    s.winner_ = static_cast<int8_t>(last);
  }
  return s;
}

std::unique_ptr<State> TicTacToeState::Clone() const { return std::make_unique<TicTacToeState>(*this); }

void TicTacToeState::CopyFrom(const State& other) { *this = SameGameState<TicTacToeState>(other); }

bool TicTacToeState::Equals(const State& other) const {
  const auto* o = dynamic_cast<const TicTacToeState*>(&other);
  return o != nullptr && stones_[0] == o->stones_[0] && stones_[1] == o->stones_[1];
}

void TicTacToeState::LegalActions(std::vector<int>* out) const {
  out->clear();
  if (IsTerminal()) return;
  const uint32_t occupied = stones_[0] | stones_[1];
  for (int c = 0; c < kCells; ++c) {
    if (!((occupied >> c) & 1u)) out->push_back(c);
  }
}

bool TicTacToeState::IsLegal(int action) const {
  if (action < 0 || action >= kCells || IsTerminal()) return false;
  return !(((stones_[0] | stones_[1]) >> action) & 1u);
}

void TicTacToeState::Apply(int action) {
  ZF_DCHECK(IsLegal(action)) << "tictactoe action " << action;
  const int mover = CurrentPlayer();
  stones_[mover] |= 1u << action;
  ++moves_;
  if (HasLine(stones_[mover])) winner_ = static_cast<int8_t>(mover);
}

void TicTacToeState::EncodeFeatures(uint8_t* out) const {
  const int me = CurrentPlayer();
  const uint8_t first = me == 0 ? 1 : 0;
  for (int c = 0; c < kCells; ++c) {
    out[c] = static_cast<uint8_t>((stones_[me] >> c) & 1u);
    out[kCells + c] = static_cast<uint8_t>((stones_[1 - me] >> c) & 1u);
    out[2 * kCells + c] = first;
  }
}

uint64_t TicTacToeState::Hash() const {
  // The side to move follows from the stone counts, so the two bitboards are
  // an exact key; Fmix64 is a bijection, so distinct positions never collide.
  return Fmix64((static_cast<uint64_t>(stones_[1]) << 16) | stones_[0] | (1ULL << 40));
}

std::string TicTacToeState::ToString() const {
  std::string text;
  const auto owner = [this](int r, int c) {
    const int cell = r * kSize + c;
    return ((stones_[0] >> cell) & 1u) ? 0 : ((stones_[1] >> cell) & 1u) ? 1 : -1;
  };
  AppendBoardRows(kSize, kSize, owner, &text);
  return text;
}

}  // namespace zerofarm::game
