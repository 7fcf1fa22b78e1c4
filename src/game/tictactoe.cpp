#include "zerofarm/game/tictactoe.h"

#include <cctype>

#include "zerofarm/core/error.h"

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

// MurmurHash3's 64-bit finaliser: a bijection, so distinct keys never collide.
uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

}  // namespace

// ---- TicTacToeGame ----------------------------------------------------------

std::vector<std::string> TicTacToeGame::PlaneNames() const {
  return {"own", "opponent", "first_player_to_move"};
}

std::unique_ptr<State> TicTacToeGame::NewInitialState() const {
  return std::make_unique<TicTacToeState>();
}

std::vector<int> TicTacToeGame::CellMap(int symmetry) const {
  ZF_CHECK(symmetry >= 0 && symmetry < 8) << "tictactoe symmetry " << symmetry;
  std::vector<int> map(kCells);
  for (int cell = 0; cell < kCells; ++cell) {
    int r = cell / kSize;
    int c = cell % kSize;
    if (symmetry >= 4) c = kSize - 1 - c;     // mirror left-right
    for (int k = 0; k < symmetry % 4; ++k) {  // rotate clockwise: (r, c) -> (c, n-1-r)
      const int nr = c;
      const int nc = kSize - 1 - r;
      r = nr;
      c = nc;
    }
    map[cell] = r * kSize + c;
  }
  return map;
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
  // Lines, trailing whitespace (and '\r') dropped, blank lines skipped.
  std::vector<std::string> rows;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) rows.push_back(line);
    start = end + 1;
  }
  if (rows.size() != static_cast<size_t>(kSize)) {
    throw Error("tictactoe board: expected 3 rows, got " + std::to_string(rows.size()));
  }
  uint32_t stones[2] = {0, 0};
  for (int r = 0; r < kSize; ++r) {
    if (rows[r].size() != static_cast<size_t>(kSize)) {
      throw Error("tictactoe board: row " + std::to_string(r + 1) + " '" + rows[r] +
                  "' is not 3 characters");
    }
    for (int c = 0; c < kSize; ++c) {
      const char ch = rows[r][c];
      const uint32_t bit = 1u << (r * kSize + c);
      if (ch == 'X' || ch == 'x') {
        stones[0] |= bit;
      } else if (ch == 'O' || ch == 'o') {
        stones[1] |= bit;
      } else if (ch != '.') {
        throw Error(std::string("tictactoe board: bad character '") + ch + "' in row " +
                    std::to_string(r + 1));
      }
    }
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

std::unique_ptr<State> TicTacToeState::Clone() const {
  return std::make_unique<TicTacToeState>(*this);
}

void TicTacToeState::CopyFrom(const State& other) {
  ZF_DCHECK(dynamic_cast<const TicTacToeState*>(&other) != nullptr);
  *this = static_cast<const TicTacToeState&>(other);
}

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
  text.reserve(kSize * (kSize + 1));
  for (int r = 0; r < kSize; ++r) {
    for (int c = 0; c < kSize; ++c) {
      const int cell = r * kSize + c;
      text += ((stones_[0] >> cell) & 1u) ? 'X' : ((stones_[1] >> cell) & 1u) ? 'O' : '.';
    }
    text += '\n';
  }
  return text;
}

}  // namespace zerofarm::game
