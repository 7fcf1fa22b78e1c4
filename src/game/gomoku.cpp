#include "zerofarm/game/gomoku.h"

#include <array>
#include <cctype>

#include "zerofarm/core/error.h"
#include "zerofarm/game/board_util.h"

namespace zerofarm::game {
namespace {

constexpr int kSize = GomokuGame::kSize;
constexpr int kCells = GomokuGame::kCells;
constexpr int kWords = GomokuGame::kWords;
constexpr int kDirs[4][2] = {{0, 1}, {1, 0}, {1, 1}, {1, -1}};  // (d_row, d_col)

// Zobrist keys: [player][cell], fixed (a pure function of the cell).
const std::array<std::array<uint64_t, kCells>, 2>& Zobrist() {
  static const auto keys = MakeZobristKeys<kCells>(0x60A0C0ULL);
  return keys;
}

std::string BoardError(const std::string& what) { return "gomoku board: " + what; }

}  // namespace

// ---- GomokuGame -------------------------------------------------------------

std::vector<std::string> GomokuGame::PlaneNames() const {
  return {"own", "opponent", "first_player_to_move"};
}

std::unique_ptr<State> GomokuGame::NewInitialState() const {
  return std::make_unique<GomokuState>(standard_);
}

std::vector<int> GomokuGame::CellMap(int symmetry) const {
  ZF_CHECK(symmetry >= 0 && symmetry < 8) << "gomoku symmetry " << symmetry;
  return SquareSymmetryCellMap(kSize, symmetry);
}

std::string GomokuGame::ActionToString(int action) const {
  if (action < 0 || action >= kCells) return "?" + std::to_string(action);
  return std::to_string(action / kSize) + "," + std::to_string(action % kSize);
}

int GomokuGame::ParseAction(const std::string& text) const {
  // A 0-based number of at most two digits in [0, 15), or -1.
  const auto number = [](const std::string& s) {
    if (s.empty() || s.size() > 2) return -1;
    for (char ch : s)
      if (!std::isdigit(static_cast<unsigned char>(ch))) return -1;
    const int v = std::stoi(s);
    return v < kSize ? v : -1;
  };
  const size_t comma = text.find(',');
  if (comma != std::string::npos) {  // "row,col"
    const int row = number(text.substr(0, comma));
    const int col = number(text.substr(comma + 1));
    return row < 0 || col < 0 ? -1 : row * kSize + col;
  }
  std::string t = text;  // AlphaGomoku: [X|O] column letter, 0-based row from the top
  if (t.size() >= 3 && (t[0] == 'X' || t[0] == 'O') && std::isalpha(static_cast<unsigned char>(t[1]))) {
    t = t.substr(1);  // a stone sign; "O10" is column o, row 10
  }
  if (t.size() < 2) return -1;
  const int col = std::tolower(static_cast<unsigned char>(t[0])) - 'a';
  const int row = number(t.substr(1));
  if (col < 0 || col >= kSize || row < 0) return -1;
  return row * kSize + col;
}

std::unique_ptr<State> GomokuGame::ParseBoard(const std::string& text) const {
  std::vector<std::string> rows = BoardLines(text);
  int side_line = -1;  // OpenSpiel's leading "B" / "W"
  if (!rows.empty() && (rows[0] == "B" || rows[0] == "W")) {
    side_line = rows[0] == "B" ? 0 : 1;
    rows.erase(rows.begin());
  }
  if (rows.size() != static_cast<size_t>(kSize)) {
    throw Error(BoardError("expected 15 rows, got " + std::to_string(rows.size())));
  }
  const std::string cells =  // also OpenSpiel's b / w
      ReadBoardCells(rows, kSize, kSize, BoardError(""), {/*x=*/"b", /*o=*/"w"});
  auto state = std::make_unique<GomokuState>(GomokuState::FromCells(cells, standard_));
  if (side_line >= 0 && side_line != state->CurrentPlayer() && !state->IsTerminal()) {
    throw Error(BoardError("the side-to-move line disagrees with the stone counts"));
  }
  return state;
}

// ---- GomokuState ------------------------------------------------------------

int GomokuState::At(int cell) const { return Has(0, cell) ? 0 : Has(1, cell) ? 1 : -1; }

bool GomokuState::WinsAt(int cell, int player) const {
  const int row = cell / kSize;
  const int col = cell % kSize;
  for (const auto& d : kDirs) {
    int run = 1;
    for (int sign = -1; sign <= 1; sign += 2) {
      int r = row + sign * d[0];
      int c = col + sign * d[1];
      while (r >= 0 && r < kSize && c >= 0 && c < kSize && Has(player, r * kSize + c)) {
        ++run;
        r += sign * d[0];
        c += sign * d[1];
      }
    }
    if (standard_ ? run == 5 : run >= 5) return true;
  }
  return false;
}

bool GomokuState::HasWinAnywhere(int player) const {
  // Maximal runs only: a run starts where the previous point is not `player`'s.
  for (int cell = 0; cell < kCells; ++cell) {
    if (!Has(player, cell)) continue;
    const int row = cell / kSize;
    const int col = cell % kSize;
    for (const auto& d : kDirs) {
      const int pr = row - d[0], pc = col - d[1];
      if (pr >= 0 && pr < kSize && pc >= 0 && pc < kSize && Has(player, pr * kSize + pc)) continue;
      int run = 0;
      int r = row, c = col;
      while (r >= 0 && r < kSize && c >= 0 && c < kSize && Has(player, r * kSize + c)) {
        ++run;
        r += d[0];
        c += d[1];
      }
      if (standard_ ? run == 5 : run >= 5) return true;
    }
  }
  return false;
}

GomokuState GomokuState::FromCells(const std::string& cells, bool standard) {
  if (cells.size() != static_cast<size_t>(kCells)) throw Error(BoardError("expected 225 cells"));
  GomokuState s(standard);
  int count[2] = {0, 0};
  for (int c = 0; c < kCells; ++c) {
    const int player = cells[c] == 'X' ? 0 : cells[c] == 'O' ? 1 : -1;
    if (player < 0) continue;
    s.stones_[player][c >> 6] |= 1ULL << (c & 63);
    s.hash_ ^= Zobrist()[player][c];
    ++count[player];
  }
  if (count[0] != count[1] && count[0] != count[1] + 1) {
    throw Error(BoardError(std::to_string(count[0]) + " X and " + std::to_string(count[1]) +
                           " O stones (X moves first, so X = O or O + 1)"));
  }
  s.moves_ = static_cast<int16_t>(count[0] + count[1]);
  if (s.moves_ == 0) return s;
  const int last = count[0] > count[1] ? 0 : 1;  // the player who moved last
  if (s.HasWinAnywhere(1 - last)) {
    throw Error(BoardError("the game went on after a winning line was made"));
  }
  if (!s.HasWinAnywhere(last)) return s;
  // Some stone of the last mover must have made every winning line at once.
  for (int c = 0; c < kCells; ++c) {
    if (!s.Has(last, c)) continue;
    GomokuState before = s;
    before.stones_[last][c >> 6] &= ~(1ULL << (c & 63));
    if (!before.HasWinAnywhere(last) && s.WinsAt(c, last)) {
      s.winner_ = static_cast<int8_t>(last);
      return s;
    }
  }
  throw Error(BoardError("winning lines that no single move could make"));
}

std::unique_ptr<State> GomokuState::Clone() const { return std::make_unique<GomokuState>(*this); }

void GomokuState::CopyFrom(const State& other) { *this = SameGameState<GomokuState>(other); }

bool GomokuState::Equals(const State& other) const {
  const auto* o = dynamic_cast<const GomokuState*>(&other);
  if (o == nullptr || o->standard_ != standard_) return false;
  for (int p = 0; p < 2; ++p)
    for (int w = 0; w < kWords; ++w)
      if (stones_[p][w] != o->stones_[p][w]) return false;
  return true;
}

void GomokuState::LegalActions(std::vector<int>* out) const {
  out->clear();
  if (IsTerminal()) return;
  for (int w = 0; w < kWords; ++w) {
    uint64_t empty = ~(stones_[0][w] | stones_[1][w]);
    if (w == kWords - 1) empty &= (1ULL << (kCells - 64 * w)) - 1;
    while (empty) {
      out->push_back(w * 64 + __builtin_ctzll(empty));
      empty &= empty - 1;
    }
  }
}

bool GomokuState::IsLegal(int action) const {
  if (action < 0 || action >= kCells || IsTerminal()) return false;
  return !Has(0, action) && !Has(1, action);
}

void GomokuState::Apply(int action) {
  ZF_DCHECK(IsLegal(action)) << "gomoku action " << action;
  const int mover = CurrentPlayer();
  stones_[mover][action >> 6] |= 1ULL << (action & 63);
  hash_ ^= Zobrist()[mover][action];
  ++moves_;
  if (WinsAt(action, mover)) winner_ = static_cast<int8_t>(mover);
}

void GomokuState::EncodeFeatures(uint8_t* out) const {
  const int me = CurrentPlayer();
  const uint8_t first = me == 0 ? 1 : 0;
  for (int c = 0; c < kCells; ++c) {
    out[c] = Has(me, c) ? 1 : 0;
    out[kCells + c] = Has(1 - me, c) ? 1 : 0;
    out[2 * kCells + c] = first;
  }
}

std::string GomokuState::ToString() const {
  std::string text;
  AppendBoardRows(
      kSize, kSize, [this](int r, int c) { return At(r * kSize + c); }, &text);
  return text;
}

}  // namespace zerofarm::game
