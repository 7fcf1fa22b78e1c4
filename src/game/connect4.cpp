#include "zerofarm/game/connect4.h"

#include <cctype>

#include "connect4_bits.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/board_util.h"

namespace zerofarm::game {
namespace {

using c4bits::Bit;
using c4bits::ColumnMask;
using c4bits::kBoard;
using c4bits::kBottom;
using c4bits::kCells;
using c4bits::kColumnBits;
using c4bits::kHeight;
using c4bits::kStride;
using c4bits::kWidth;

constexpr uint64_t BottomCell(int col) { return 1ULL << (col * kStride); }
constexpr uint64_t TopCell(int col) { return 1ULL << (col * kStride + kHeight - 1); }

std::string PositionError(const std::string& what) { return "connect4 board: " + what; }

}  // namespace

// ---- Connect4Game -----------------------------------------------------------

std::vector<std::string> Connect4Game::PlaneNames() const {
  std::vector<std::string> names = {"own", "opponent", "first_player_to_move"};
  if (threats()) names.insert(names.end(), {"own_wins", "opponent_wins", "odd_row"});
  return names;
}

std::unique_ptr<State> Connect4Game::NewInitialState() const {
  return std::make_unique<Connect4State>(features_);
}

bool IsConnect4(const Game& game) { return dynamic_cast<const Connect4Game*>(&game) != nullptr; }

std::vector<int> Connect4Game::CellMap(int symmetry) const {
  ZF_CHECK(symmetry == 0 || symmetry == 1) << "connect4 symmetry " << symmetry;
  std::vector<int> map(kCells);
  for (int cell = 0; cell < kCells; ++cell) {
    const int r = cell / kWidth;
    const int c = cell % kWidth;
    map[cell] = r * kWidth + (symmetry == 1 ? kWidth - 1 - c : c);
  }
  return map;
}

std::vector<int> Connect4Game::ActionMap(int symmetry) const {
  ZF_CHECK(symmetry == 0 || symmetry == 1) << "connect4 symmetry " << symmetry;
  std::vector<int> map(kWidth);
  for (int a = 0; a < kWidth; ++a) map[a] = symmetry == 1 ? kWidth - 1 - a : a;
  return map;
}

std::string Connect4Game::ActionToString(int action) const {
  if (action < 0 || action >= kWidth) return "?" + std::to_string(action);
  return std::string(1, static_cast<char>('1' + action));
}

int Connect4Game::ParseAction(const std::string& text) const {
  if (text.size() != 1 || text[0] < '1' || text[0] >= '1' + kWidth) return -1;
  return text[0] - '1';
}

std::string Connect4Game::FormatMoves(const std::vector<int>& moves) const {
  std::string text;
  text.reserve(moves.size());
  for (int m : moves) text += ActionToString(m);
  return text;
}

std::vector<int> Connect4Game::ParseMoves(const std::string& text) const {
  std::vector<int> moves;
  moves.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (std::isspace(static_cast<unsigned char>(ch))) continue;
    if (ch < '1' || ch >= '1' + kWidth) {
      throw Error("connect4: bad move '" + std::string(1, ch) + "' at character " + std::to_string(i + 1) +
                  " of \"" + text + "\" (columns are 1..7)");
    }
    moves.push_back(ch - '1');
  }
  return moves;
}

std::unique_ptr<State> Connect4Game::ParseBoard(const std::string& text) const {
  const std::vector<std::string> rows = BoardLines(text);
  if (rows.size() != static_cast<size_t>(kHeight)) {
    throw Error(PositionError("expected 6 rows, got " + std::to_string(rows.size())));
  }
  const std::string cells = ReadBoardCells(rows, kHeight, kWidth, PositionError(""));
  uint64_t stones[2] = {0, 0};
  for (int r = 0; r < kHeight; ++r) {  // r = 0 is the top row
    for (int c = 0; c < kWidth; ++c) {
      const char ch = cells[r * kWidth + c];
      if (ch != '.') stones[ch == 'X' ? 0 : 1] |= 1ULL << Bit(c, kHeight - 1 - r);
    }
  }
  return std::make_unique<Connect4State>(
      Connect4State::FromStones(stones[0], stones[1]).WithFeatures(features_));
}

// ---- Connect4State ----------------------------------------------------------

bool Connect4State::HasFour(uint64_t p) {
  // Pons's alignment test; the sentinel row stops wrap-around between columns.
  uint64_t m = p & (p >> kStride);  // horizontal
  if (m & (m >> (2 * kStride))) return true;
  m = p & (p >> (kStride - 1));  // diagonal going down to the right
  if (m & (m >> (2 * (kStride - 1)))) return true;
  m = p & (p >> (kStride + 1));  // diagonal going up to the right
  if (m & (m >> (2 * (kStride + 1)))) return true;
  m = p & (p >> 1);  // vertical
  return (m & (m >> 2)) != 0;
}

Connect4State Connect4State::FromStones(uint64_t x, uint64_t o) {
  if ((x | o) & ~kBoard) throw Error(PositionError("stones outside the board"));
  if (x & o) throw Error(PositionError("a cell holds two stones"));
  const uint64_t mask = x | o;
  for (int c = 0; c < kWidth; ++c) {
    const uint64_t col = (mask >> (c * kStride)) & kColumnBits;
    if (col & (col + 1)) {
      throw Error(PositionError("floating stone in column " + std::to_string(c + 1)));
    }
  }
  const int nx = __builtin_popcountll(x);
  const int no = __builtin_popcountll(o);
  if (nx != no && nx != no + 1) {
    throw Error(PositionError(std::to_string(nx) + " X and " + std::to_string(no) +
                              " O stones (X moves first, so X = O or O + 1)"));
  }
  Connect4State s;
  s.stones_[0] = x;
  s.stones_[1] = o;
  s.moves_ = static_cast<int8_t>(nx + no);
  const bool x_four = HasFour(x);
  const bool o_four = HasFour(o);
  if (x_four || o_four) {
    const int last = nx > no ? 0 : 1;  // the player who moved last
    if ((last == 0 && o_four) || (last == 1 && x_four)) {
      throw Error(PositionError("the game went on after a four was completed"));
    }
    // The last move must have completed every four: some top stone of the
    // last mover whose removal leaves no four.
    const uint64_t mine = s.stones_[last];
    bool ok = false;
    for (int c = 0; c < kWidth && !ok; ++c) {
      const uint64_t col = (mask >> (c * kStride)) & kColumnBits;
      if (col == 0) continue;
      const uint64_t top = (col + 1) >> 1 << (c * kStride);  // highest stone of column c
      if (mine & top) ok = !HasFour(mine & ~top);
    }
    if (!ok) throw Error(PositionError("fours that no single move could complete"));
    s.winner_ = static_cast<int8_t>(last);
  }
  return s;
}

uint64_t Connect4State::Key() const {
  // In each column, mask + bottom cell is a single marker bit just above the
  // stones, and X's stones lie below it, so the sum is carry-free and exact.
  return stones_[0] + (stones_[0] | stones_[1]) + kBottom;
}

Connect4State Connect4State::FromKey(uint64_t key) {
  if (key >> (kWidth * kStride)) throw Error(PositionError("key has bits past the board"));
  uint64_t x = 0, o = 0;
  for (int c = 0; c < kWidth; ++c) {
    const uint64_t v = (key >> (c * kStride)) & ((1ULL << kStride) - 1);
    if (v == 0) throw Error(PositionError("key lacks a column marker"));
    const int height = 63 - __builtin_clzll(v);
    const uint64_t col_mask = (1ULL << height) - 1;
    x |= (v & col_mask) << (c * kStride);
    o |= ((v & col_mask) ^ col_mask) << (c * kStride);
  }
  return FromStones(x, o);
}

std::unique_ptr<State> Connect4State::Clone() const { return std::make_unique<Connect4State>(*this); }

void Connect4State::CopyFrom(const State& other) { *this = SameGameState<Connect4State>(other); }

bool Connect4State::Equals(const State& other) const {
  const auto* o = dynamic_cast<const Connect4State*>(&other);
  return o != nullptr && stones_[0] == o->stones_[0] && stones_[1] == o->stones_[1];
}

void Connect4State::LegalActions(std::vector<int>* out) const {
  out->clear();
  if (IsTerminal()) return;
  const uint64_t mask = stones_[0] | stones_[1];
  for (int c = 0; c < kWidth; ++c) {
    if (!(mask & TopCell(c))) out->push_back(c);
  }
}

bool Connect4State::IsLegal(int action) const {
  if (action < 0 || action >= kWidth || IsTerminal()) return false;
  return !((stones_[0] | stones_[1]) & TopCell(action));
}

void Connect4State::Apply(int action) {
  ZF_DCHECK(IsLegal(action)) << "connect4 action " << action;
  const int mover = CurrentPlayer();
  const uint64_t mask = stones_[0] | stones_[1];
  // The lowest empty cell of the column: adding the bottom cell carries
  // through the column's stones.
  stones_[mover] |= (mask + BottomCell(action)) & ColumnMask(action);
  ++moves_;
  if (HasFour(stones_[mover])) winner_ = static_cast<int8_t>(mover);
}

void Connect4State::EncodeFeatures(uint8_t* out) const {
  const int me = CurrentPlayer();
  const uint64_t own = stones_[me];
  const uint64_t opp = stones_[1 - me];
  const uint8_t first = me == 0 ? 1 : 0;
  for (int r = 0; r < kHeight; ++r) {  // r = 0 is the top row
    for (int c = 0; c < kWidth; ++c) {
      const int cell = r * kWidth + c;
      const int bit = Bit(c, kHeight - 1 - r);
      out[cell] = static_cast<uint8_t>((own >> bit) & 1);
      out[kCells + cell] = static_cast<uint8_t>((opp >> bit) & 1);
      out[2 * kCells + cell] = first;
    }
  }
  if (features_ == Connect4Features::kThreats) EncodeThreats(out + 3 * kCells);
}

void Connect4State::EncodeThreats(uint8_t* out) const {
  const int me = CurrentPlayer();
  const uint64_t mask = stones_[0] | stones_[1];
  const uint64_t own_wins = c4bits::WinningCells(stones_[me], mask);
  const uint64_t opp_wins = c4bits::WinningCells(stones_[1 - me], mask);
  for (int r = 0; r < kHeight; ++r) {  // r = 0 is the top row
    const int from_bottom = kHeight - 1 - r;
    const uint8_t odd = (from_bottom % 2 == 0) ? 1 : 0;  // 1st, 3rd, 5th from the bottom
    for (int c = 0; c < kWidth; ++c) {
      const int cell = r * kWidth + c;
      const int bit = Bit(c, from_bottom);
      out[cell] = static_cast<uint8_t>((own_wins >> bit) & 1);
      out[kCells + cell] = static_cast<uint8_t>((opp_wins >> bit) & 1);
      out[2 * kCells + cell] = odd;
    }
  }
}

uint64_t Connect4State::Hash() const { return Fmix64(Key()); }

std::string Connect4State::ToString() const {
  std::string text;
  const auto owner = [this](int r, int c) {
    const uint64_t bit = 1ULL << Bit(c, kHeight - 1 - r);
    return (stones_[0] & bit) ? 0 : (stones_[1] & bit) ? 1 : -1;
  };
  AppendBoardRows(kHeight, kWidth, owner, &text);
  return text;
}

}  // namespace zerofarm::game
