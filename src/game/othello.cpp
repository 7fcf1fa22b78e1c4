#include "zerofarm/game/othello.h"

#include <algorithm>
#include <cctype>

#include "zerofarm/core/error.h"
#include "zerofarm/game/board_util.h"

namespace zerofarm::game {
namespace {

constexpr int kSize = OthelloGame::kSize;
constexpr int kCells = OthelloGame::kCells;
constexpr int kPass = OthelloGame::kPass;
constexpr uint64_t kNotFileA = ~0x0101010101010101ULL;  // clears col 0 after a shift east
constexpr uint64_t kNotFileH = ~0x8080808080808080ULL;  // clears col 7 after a shift west

// One step in each of the 8 directions (bit = row * 8 + col, row 0 = rank 1).
template <int kDir>
inline uint64_t Step(uint64_t x) {
  if constexpr (kDir == 0) return (x << 1) & kNotFileA;  // east
  if constexpr (kDir == 1) return (x >> 1) & kNotFileH;  // west
  if constexpr (kDir == 2) return x << 8;                // down (rank + 1)
  if constexpr (kDir == 3) return x >> 8;                // up
  if constexpr (kDir == 4) return (x << 9) & kNotFileA;  // down-east
  if constexpr (kDir == 5) return (x << 7) & kNotFileH;  // down-west
  if constexpr (kDir == 6) return (x >> 7) & kNotFileA;  // up-east
  if constexpr (kDir == 7) return (x >> 9) & kNotFileH;  // up-west
  return 0;
}

template <int kDir>
inline uint64_t MovesInDirection(uint64_t own, uint64_t opp, uint64_t empty) {
  uint64_t x = Step<kDir>(own) & opp;  // runs of opponent discs next to own discs
  x |= Step<kDir>(x) & opp;
  x |= Step<kDir>(x) & opp;
  x |= Step<kDir>(x) & opp;
  x |= Step<kDir>(x) & opp;
  x |= Step<kDir>(x) & opp;
  return Step<kDir>(x) & empty;
}

template <int kDir>
inline uint64_t FlipsInDirection(uint64_t own, uint64_t opp, uint64_t bit) {
  uint64_t flips = 0;
  uint64_t x = Step<kDir>(bit);
  while (x & opp) {
    flips |= x;
    x = Step<kDir>(x);
  }
  return (x & own) ? flips : 0;
}

}  // namespace

// ---- OthelloGame ------------------------------------------------------------

std::vector<std::string> OthelloGame::PlaneNames() const {
  return {"own", "opponent", "first_player_to_move"};
}

std::unique_ptr<State> OthelloGame::NewInitialState() const { return std::make_unique<OthelloState>(); }

std::vector<int> OthelloGame::CellMap(int symmetry) const {
  ZF_CHECK(symmetry >= 0 && symmetry < 4) << "othello symmetry " << symmetry;
  // In SquareSymmetryCellMap's numbering: identity, half turn, mirror + three
  // quarter turns = (r, c) -> (c, r), mirror + one quarter turn.
  constexpr int kDihedral[4] = {0, 2, 7, 5};
  return SquareSymmetryCellMap(kSize, kDihedral[symmetry]);
}

std::vector<int> OthelloGame::ActionMap(int symmetry) const {
  std::vector<int> map = CellMap(symmetry);
  map.push_back(kPass);
  return map;
}

std::string OthelloGame::ActionToString(int action) const {
  if (action == kPass) return "pass";
  if (action < 0 || action > kPass) return "?" + std::to_string(action);
  std::string text;
  text += static_cast<char>('a' + action % kSize);
  text += static_cast<char>('1' + action / kSize);
  return text;
}

int OthelloGame::ParseAction(const std::string& text) const {
  std::string t;
  for (char ch : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (t == "pass") return kPass;
  if (t.size() != 2) return -1;
  const int col = t[0] - 'a';
  const int row = t[1] - '1';
  if (col < 0 || col >= kSize || row < 0 || row >= kSize) return -1;
  return row * kSize + col;
}

std::unique_ptr<State> OthelloGame::ParseBoard(const std::string& text) const {
  const std::vector<std::string> rows = BoardLines(text);
  if (rows.size() != static_cast<size_t>(kSize + 1)) {
    throw Error("othello board: expected 8 rows and a side-to-move line, got " + std::to_string(rows.size()) +
                " lines");
  }
  const std::string cells =
      ReadBoardCells(rows, kSize, kSize, "othello board: ", {/*x=*/"", /*o=*/"", /*empty=*/"-"});
  uint64_t discs[2] = {0, 0};
  for (int c = 0; c < kCells; ++c) {
    if (cells[c] != '.') discs[cells[c] == 'X' ? 0 : 1] |= 1ULL << c;
  }
  const std::string& side = rows[kSize];
  if (side != "X to move" && side != "O to move") {
    throw Error("othello board: expected \"X to move\" or \"O to move\", got '" + side + "'");
  }
  return std::make_unique<OthelloState>(OthelloState::FromDiscs(discs[0], discs[1], side[0] == 'X' ? 0 : 1));
}

// ---- OthelloState -----------------------------------------------------------

OthelloState::OthelloState() {
  // d4 = cell 27 and e5 = cell 36 White; e4 = 28 and d5 = 35 Black.
  discs_[0] = (1ULL << 28) | (1ULL << 35);
  discs_[1] = (1ULL << 27) | (1ULL << 36);
  Refresh();
}

uint64_t OthelloState::Moves(uint64_t own, uint64_t opp) {
  const uint64_t empty = ~(own | opp);
  return MovesInDirection<0>(own, opp, empty) | MovesInDirection<1>(own, opp, empty) |
         MovesInDirection<2>(own, opp, empty) | MovesInDirection<3>(own, opp, empty) |
         MovesInDirection<4>(own, opp, empty) | MovesInDirection<5>(own, opp, empty) |
         MovesInDirection<6>(own, opp, empty) | MovesInDirection<7>(own, opp, empty);
}

uint64_t OthelloState::Flips(uint64_t own, uint64_t opp, int cell) {
  const uint64_t bit = 1ULL << cell;
  return FlipsInDirection<0>(own, opp, bit) | FlipsInDirection<1>(own, opp, bit) |
         FlipsInDirection<2>(own, opp, bit) | FlipsInDirection<3>(own, opp, bit) |
         FlipsInDirection<4>(own, opp, bit) | FlipsInDirection<5>(own, opp, bit) |
         FlipsInDirection<6>(own, opp, bit) | FlipsInDirection<7>(own, opp, bit);
}

void OthelloState::Refresh() {
  legal_ = Moves(discs_[to_move_], discs_[1 - to_move_]);
  terminal_ = legal_ == 0 && Moves(discs_[1 - to_move_], discs_[to_move_]) == 0;
}

OthelloState OthelloState::FromDiscs(uint64_t black, uint64_t white, int to_move) {
  if (black & white) throw Error("othello board: a square holds two discs");
  if (to_move != 0 && to_move != 1) throw Error("othello board: the side to move must be 0 or 1");
  OthelloState s;
  s.discs_[0] = black;
  s.discs_[1] = white;
  s.to_move_ = static_cast<int8_t>(to_move);
  s.moves_ = static_cast<int16_t>(std::max(0, __builtin_popcountll(black | white) - 4));
  s.Refresh();
  return s;
}

std::unique_ptr<State> OthelloState::Clone() const { return std::make_unique<OthelloState>(*this); }

void OthelloState::CopyFrom(const State& other) { *this = SameGameState<OthelloState>(other); }

bool OthelloState::Equals(const State& other) const {
  const auto* o = dynamic_cast<const OthelloState*>(&other);
  return o != nullptr && discs_[0] == o->discs_[0] && discs_[1] == o->discs_[1] && to_move_ == o->to_move_;
}

void OthelloState::LegalActions(std::vector<int>* out) const {
  out->clear();
  if (terminal_) return;
  if (legal_ == 0) {
    out->push_back(kPass);
    return;
  }
  for (uint64_t m = legal_; m; m &= m - 1) out->push_back(__builtin_ctzll(m));
}

bool OthelloState::IsLegal(int action) const {
  if (terminal_ || action < 0 || action > kPass) return false;
  if (action == kPass) return legal_ == 0;
  return (legal_ >> action) & 1;
}

void OthelloState::Apply(int action) {
  ZF_DCHECK(IsLegal(action)) << "othello action " << action;
  if (action != kPass) {
    const int me = to_move_;
    const uint64_t flips = Flips(discs_[me], discs_[1 - me], action);
    discs_[me] |= flips | (1ULL << action);
    discs_[1 - me] &= ~flips;
  }
  to_move_ ^= 1;
  ++moves_;
  Refresh();
}

int OthelloState::Winner() const {
  const int black = __builtin_popcountll(discs_[0]);
  const int white = __builtin_popcountll(discs_[1]);
  return black > white ? 0 : white > black ? 1 : -1;
}

void OthelloState::EncodeFeatures(uint8_t* out) const {
  const int me = to_move_;
  const uint8_t first = me == 0 ? 1 : 0;
  for (int c = 0; c < kCells; ++c) {
    out[c] = static_cast<uint8_t>((discs_[me] >> c) & 1);
    out[kCells + c] = static_cast<uint8_t>((discs_[1 - me] >> c) & 1);
    out[2 * kCells + c] = first;
  }
}

uint64_t OthelloState::Hash() const {
  return Fmix64(discs_[0] ^ Fmix64(discs_[1] ^ 0x5851F42D4C957F2DULL) ^ static_cast<uint64_t>(to_move_));
}

std::string OthelloState::ToString() const {
  std::string text;
  text.reserve(kSize * (kSize + 1) + 10);
  const auto owner = [this](int r, int c) {
    const int cell = r * kSize + c;
    return ((discs_[0] >> cell) & 1) ? 0 : ((discs_[1] >> cell) & 1) ? 1 : -1;
  };
  AppendBoardRows(kSize, kSize, owner, &text);
  text += to_move_ == 0 ? "X to move\n" : "O to move\n";
  return text;
}

}  // namespace zerofarm::game
