#include "zerofarm/game/go.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <sstream>

#include "zerofarm/core/error.h"
#include "zerofarm/game/board_util.h"

namespace zerofarm::game {
namespace {

constexpr int kMaxCells = GoState::kMaxCells;
constexpr int8_t kEmpty = GoState::kEmpty;
constexpr char kColumns[] = "abcdefghjklmnopqrst";    // GTP: no 'i'
constexpr uint64_t kSideKey = 0x9E3779B97F4A7C15ULL;  // Hash(): White to move
constexpr uint64_t kPassKey = 0xC2B2AE3D27D4EB4FULL;  // Hash(): times consecutive passes
constexpr uint64_t kOverKey = 0x165667B19E3779F9ULL;  // Hash(): the game is over

// Keys by [colour][cell]: cell = row * size + col for any size, so a board's
// hash depends on its size only through the cells it uses.
const std::array<std::array<uint64_t, kMaxCells>, 2> kZobrist = MakeZobristKeys<kMaxCells>(0x60D0B0ULL);

// The up to 4 orthogonal neighbours of `cell` on an n x n board.
inline int Neighbors(int cell, int n, int* out) {
  const int r = cell / n;
  const int c = cell % n;
  int k = 0;
  if (r > 0) out[k++] = cell - n;
  if (r < n - 1) out[k++] = cell + n;
  if (c > 0) out[k++] = cell - 1;
  if (c < n - 1) out[k++] = cell + 1;
  return k;
}

// Every chain of a board: its id per stone, distinct liberties and the
// Zobrist xor of its stones.
struct Chains {
  int count = 0;
  int16_t id[kMaxCells];    // chain of each stone; -1 for an empty point
  int16_t libs[kMaxCells];  // by chain id
  uint64_t key[kMaxCells];  // by chain id
};

void LabelChains(const int8_t* board, int n, Chains* ch) {
  const int cells = n * n;
  int16_t stamp[kMaxCells];  // the last chain that counted this point as a liberty
  int16_t stack[kMaxCells];
  for (int i = 0; i < cells; ++i) ch->id[i] = stamp[i] = -1;
  ch->count = 0;
  for (int s = 0; s < cells; ++s) {
    if (board[s] == kEmpty || ch->id[s] >= 0) continue;
    const int16_t cid = static_cast<int16_t>(ch->count++);
    const int color = board[s];
    int libs = 0, top = 0;
    uint64_t key = 0;
    stack[top++] = static_cast<int16_t>(s);
    ch->id[s] = cid;
    while (top > 0) {
      const int p = stack[--top];
      key ^= kZobrist[color][p];
      int nb[4];
      const int k = Neighbors(p, n, nb);
      for (int i = 0; i < k; ++i) {
        const int q = nb[i];
        if (board[q] == kEmpty) {
          if (stamp[q] != cid) {
            stamp[q] = cid;
            ++libs;
          }
        } else if (board[q] == color && ch->id[q] < 0) {
          ch->id[q] = cid;
          stack[top++] = static_cast<int16_t>(q);
        }
      }
    }
    ch->libs[cid] = static_cast<int16_t>(libs);
    ch->key[cid] = key;
  }
}

// Walks the chain through `start` (a stone), marking it in `seen` and listing
// its stones in `stones` (may be null). Returns whether it has a liberty other
// than `except` (-1: any liberty); *key gets the xor of its Zobrist keys.
bool WalkChain(const int8_t* board, int n, int start, int except, uint8_t* seen, int16_t* stones, int* count,
               uint64_t* key) {
  int16_t stack[kMaxCells];
  const int color = board[start];
  bool liberty = false;
  int top = 0, listed = 0;
  stack[top++] = static_cast<int16_t>(start);
  seen[start] = 1;
  *key = 0;
  while (top > 0) {
    const int p = stack[--top];
    *key ^= kZobrist[color][p];
    if (stones) stones[listed++] = static_cast<int16_t>(p);
    int nb[4];
    const int k = Neighbors(p, n, nb);
    for (int i = 0; i < k; ++i) {
      const int q = nb[i];
      if (board[q] == kEmpty) {
        liberty = liberty || q != except;
      } else if (board[q] == color && !seen[q]) {
        seen[q] = 1;
        stack[top++] = static_cast<int16_t>(q);
      }
    }
  }
  if (count) *count = listed;
  return liberty;
}

}  // namespace

// ---- GoGame -----------------------------------------------------------------

GoGame::GoGame(int size, double komi, std::string name) : size_(size), komi_(komi), name_(std::move(name)) {
  if (size < kMinSize || size > kMaxSize) {
    throw ConfigError("go: board size " + std::to_string(size) + " is not in [2, 19]");
  }
  if (name_.empty()) {
    if (size == 9 && komi == 7.5) {
      name_ = "go";
    } else if (size == 7 && komi == 4.5) {
      name_ = "go7";
    } else {
      std::ostringstream os;
      os << "go" << size << "-komi" << komi;
      name_ = os.str();
    }
  }
}

std::vector<std::string> GoGame::PlaneNames() const { return {"own", "opponent", "first_player_to_move"}; }

std::unique_ptr<State> GoGame::NewInitialState() const {
  return std::make_unique<GoState>(size_, komi_, MaxGameLength());
}

std::vector<int> GoGame::CellMap(int symmetry) const {
  ZF_CHECK(symmetry >= 0 && symmetry < 8) << "go symmetry " << symmetry;
  return SquareSymmetryCellMap(size_, symmetry);
}

std::vector<int> GoGame::ActionMap(int symmetry) const {
  std::vector<int> map = CellMap(symmetry);
  map.push_back(PassAction());
  return map;
}

std::string GoGame::ActionToString(int action) const {
  if (action == PassAction()) return "pass";
  if (action < 0 || action > PassAction()) return "?" + std::to_string(action);
  return kColumns[action % size_] + std::to_string(size_ - action / size_);
}

int GoGame::ParseAction(const std::string& text) const {
  std::string t;
  for (char ch : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (t == "pass") return PassAction();
  if (t.size() < 2 || t.size() > 3) return -1;
  const char* letter = std::strchr(kColumns, t[0]);
  if (t[0] == '\0' || letter == nullptr) return -1;
  const int col = static_cast<int>(letter - kColumns);
  if (col >= size_ || !std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '0') return -1;
  if (t.size() == 3 && !std::isdigit(static_cast<unsigned char>(t[2]))) return -1;
  const int number = std::stoi(t.substr(1));
  if (number < 1 || number > size_) return -1;
  return (size_ - number) * size_ + col;
}

std::unique_ptr<State> GoGame::ParseBoard(const std::string& text) const {
  const std::vector<std::string> rows = BoardLines(text);
  const std::string where = "go board (" + std::to_string(size_) + "x" + std::to_string(size_) + "): ";
  if (rows.size() != static_cast<size_t>(size_ + 1)) {
    throw Error(where + "expected " + std::to_string(size_) + " rows and a status line, got " +
                std::to_string(rows.size()) + " lines");
  }
  const std::string cells =  // also OpenSpiel's '+' for empty
      ReadBoardCells(rows, size_, size_, where, {/*x=*/"", /*o=*/"", /*empty=*/"+"});
  // "X to move" [", 1 pass" | ", 2 passes"] [", game over"]
  const std::string& status = rows[size_];
  const std::string bad_status = where + "bad status line '" + status +
                                 "' (expected e.g. \"X to move\", \"O to move, 1 pass\", "
                                 "\"X to move, 2 passes, game over\")";
  if (status.rfind("X to move", 0) != 0 && status.rfind("O to move", 0) != 0) throw Error(bad_status);
  std::string rest = status.substr(9);
  int passes = 0;
  bool over = false;
  if (rest.rfind(", 1 pass", 0) == 0 && rest.rfind(", 1 passes", 0) != 0) {
    passes = 1;
    rest = rest.substr(8);
  } else if (rest.rfind(", 2 passes", 0) == 0) {
    passes = 2;
    rest = rest.substr(10);
  }
  if (rest == ", game over") {
    over = true;
  } else if (!rest.empty()) {
    throw Error(bad_status);
  }
  return std::make_unique<GoState>(
      GoState::FromCells(cells, size_, komi_, MaxGameLength(), status[0] == 'X' ? 0 : 1, passes, over));
}

// ---- GoState ----------------------------------------------------------------

GoState::GoState(int size, double komi, int max_game_length)
    : komi_(komi), max_moves_(static_cast<int16_t>(max_game_length)), size_(static_cast<int8_t>(size)) {
  ZF_CHECK(size >= GoGame::kMinSize && size <= GoGame::kMaxSize) << "go size " << size;
  std::fill(board_, board_ + kMaxCells, kEmpty);
  history_.reserve(static_cast<size_t>(max_game_length) + 1);
  AddHistory(board_hash_);
}

bool GoState::EveryChainHasLiberty(const int8_t* cells, int size) {
  Chains ch;
  LabelChains(cells, size, &ch);
  for (int c = 0; c < ch.count; ++c)
    if (ch.libs[c] == 0) return false;
  return true;
}

GoState GoState::FromCells(const std::string& cells, int size, double komi, int max_game_length, int to_move,
                           int passes, bool game_over) {
  const int n = size;
  if (cells.size() != static_cast<size_t>(n * n)) {
    throw Error("go board: expected " + std::to_string(n * n) + " cells, got " +
                std::to_string(cells.size()));
  }
  if (to_move != 0 && to_move != 1) throw Error("go board: the side to move must be 0 or 1");
  if (passes < 0 || passes > 2) throw Error("go board: consecutive passes must be 0, 1 or 2");
  GoState s(size, komi, max_game_length);
  int stones = 0;
  for (int c = 0; c < n * n; ++c) {
    const char ch = cells[c];
    if (ch == '.') continue;
    if (ch != 'X' && ch != 'O') throw Error(std::string("go board: bad cell '") + ch + "'");
    const int8_t color = ch == 'X' ? 0 : 1;
    s.board_[c] = color;
    s.board_hash_ ^= kZobrist[color][c];
    ++stones;
  }
  if (!EveryChainHasLiberty(s.board_, n)) throw Error("go board: a chain has no liberty");
  s.history_.clear();
  std::fill(s.bloom_, s.bloom_ + 16, 0);
  s.AddHistory(s.board_hash_);
  s.to_move_ = static_cast<int8_t>(to_move);
  s.passes_ = static_cast<int8_t>(passes);
  s.moves_ = static_cast<int16_t>(stones);
  if (passes == 2 || game_over) s.Finish();
  return s;
}

bool GoState::InHistory(uint64_t board_hash) const {
  const uint64_t bit = board_hash & 1023;
  if (!((bloom_[bit >> 6] >> (bit & 63)) & 1)) return false;
  return std::find(history_.begin(), history_.end(), board_hash) != history_.end();
}

void GoState::AddHistory(uint64_t board_hash) {
  const uint64_t bit = board_hash & 1023;
  bloom_[bit >> 6] |= 1ULL << (bit & 63);
  history_.push_back(board_hash);
}

std::unique_ptr<State> GoState::Clone() const { return std::make_unique<GoState>(*this); }

void GoState::CopyFrom(const State& other) { *this = SameGameState<GoState>(other); }

bool GoState::Equals(const State& other) const {
  const auto* o = dynamic_cast<const GoState*>(&other);
  return o != nullptr && o->size_ == size_ && o->komi_ == komi_ && o->to_move_ == to_move_ &&
         o->passes_ == passes_ && o->terminal_ == terminal_ &&
         std::equal(board_, board_ + size_ * size_, o->board_);
}

void GoState::LegalActions(std::vector<int>* out) const {
  out->clear();
  if (terminal_) return;
  const int n = size_;
  const int me = to_move_;
  Chains ch;
  LabelChains(board_, n, &ch);
  for (int p = 0; p < n * n; ++p) {
    if (board_[p] != kEmpty) continue;
    bool liberty = false;  // the new stone's chain keeps a liberty
    uint64_t key = board_hash_ ^ kZobrist[me][p];
    int captured[4], taken = 0;
    int nb[4];
    const int k = Neighbors(p, n, nb);
    for (int i = 0; i < k; ++i) {
      const int q = nb[i];
      if (board_[q] == kEmpty) {
        liberty = true;
        continue;
      }
      const int cid = ch.id[q];
      if (board_[q] == me) {
        if (ch.libs[cid] >= 2) liberty = true;  // p is one of them
      } else if (ch.libs[cid] == 1) {           // p is its last liberty: captured
        liberty = true;
        if (std::find(captured, captured + taken, cid) == captured + taken) {
          captured[taken++] = cid;
          key ^= ch.key[cid];
        }
      }
    }
    if (liberty && !InHistory(key)) out->push_back(p);
  }
  out->push_back(n * n);
}

bool GoState::IsLegal(int action) const {
  const int n = size_;
  if (terminal_ || action < 0 || action > n * n) return false;
  if (action == n * n) return true;
  if (board_[action] != kEmpty) return false;
  const int me = to_move_;
  uint64_t key = board_hash_ ^ kZobrist[me][action];
  bool liberty = false;
  uint8_t seen[kMaxCells];
  std::memset(seen, 0, static_cast<size_t>(n * n));
  int nb[4];
  const int k = Neighbors(action, n, nb);
  for (int i = 0; i < k; ++i) {
    const int q = nb[i];
    if (board_[q] == kEmpty) {
      liberty = true;
    } else if (!seen[q]) {
      uint64_t chain_key = 0;
      const bool other = WalkChain(board_, n, q, action, seen, nullptr, nullptr, &chain_key);
      if (board_[q] == me) {
        liberty = liberty || other;
      } else if (!other) {
        liberty = true;
        key ^= chain_key;
      }
    }
  }
  return liberty && !InHistory(key);
}

void GoState::Apply(int action) {
  ZF_DCHECK(IsLegal(action)) << "go action " << action;
  const int n = size_;
  if (action == n * n) {
    ++passes_;
  } else {
    const int me = to_move_;
    board_[action] = static_cast<int8_t>(me);
    board_hash_ ^= kZobrist[me][action];
    uint8_t seen[kMaxCells];
    std::memset(seen, 0, static_cast<size_t>(n * n));
    int16_t stones[kMaxCells];
    int nb[4];
    const int k = Neighbors(action, n, nb);
    for (int i = 0; i < k; ++i) {
      const int q = nb[i];
      if (board_[q] != 1 - me || seen[q]) continue;
      int count = 0;
      uint64_t chain_key = 0;
      if (WalkChain(board_, n, q, -1, seen, stones, &count, &chain_key)) continue;
      for (int j = 0; j < count; ++j) board_[stones[j]] = kEmpty;  // captured
      board_hash_ ^= chain_key;
    }
    passes_ = 0;
    AddHistory(board_hash_);
  }
  to_move_ ^= 1;
  ++moves_;
  if (passes_ >= 2 || moves_ >= max_moves_) Finish();
}

void GoState::Areas(int* black, int* white) const {
  const int n = size_;
  *black = *white = 0;
  uint8_t seen[kMaxCells];
  std::memset(seen, 0, static_cast<size_t>(n * n));
  int16_t stack[kMaxCells];
  for (int s = 0; s < n * n; ++s) {
    if (board_[s] != kEmpty) {
      ++(board_[s] == 0 ? *black : *white);
      continue;
    }
    if (seen[s]) continue;
    int top = 0, region = 0;
    bool reaches[2] = {false, false};
    stack[top++] = static_cast<int16_t>(s);
    seen[s] = 1;
    while (top > 0) {
      const int p = stack[--top];
      ++region;
      int nb[4];
      const int k = Neighbors(p, n, nb);
      for (int i = 0; i < k; ++i) {
        const int q = nb[i];
        if (board_[q] != kEmpty) {
          reaches[board_[q]] = true;
        } else if (!seen[q]) {
          seen[q] = 1;
          stack[top++] = static_cast<int16_t>(q);
        }
      }
    }
    if (reaches[0] && !reaches[1]) *black += region;
    if (reaches[1] && !reaches[0]) *white += region;
  }
}

double GoState::Score() const {
  int black = 0, white = 0;
  Areas(&black, &white);
  return black - white - komi_;
}

void GoState::Finish() {
  terminal_ = true;
  const double score = Score();
  winner_ = static_cast<int8_t>(score > 0 ? 0 : score < 0 ? 1 : -1);
}

void GoState::EncodeFeatures(uint8_t* out) const {
  const int cells = size_ * size_;
  const int me = to_move_;
  const uint8_t first = me == 0 ? 1 : 0;
  for (int c = 0; c < cells; ++c) {
    out[c] = board_[c] == me ? 1 : 0;
    out[cells + c] = board_[c] == 1 - me ? 1 : 0;
    out[2 * cells + c] = first;
  }
}

uint64_t GoState::Hash() const {
  return board_hash_ ^ (to_move_ ? kSideKey : 0) ^ (kPassKey * static_cast<uint64_t>(passes_)) ^
         (terminal_ ? kOverKey : 0);
}

std::string GoState::ToString() const {
  const int n = size_;
  std::string text;
  text.reserve(n * (n + 1) + 32);
  AppendBoardRows(
      n, n, [this, n](int r, int c) { return board_[r * n + c]; }, &text);
  text += to_move_ == 0 ? "X to move" : "O to move";
  if (passes_ == 1) text += ", 1 pass";
  if (passes_ == 2) text += ", 2 passes";
  if (terminal_) text += ", game over";
  text += '\n';
  return text;
}

}  // namespace zerofarm::game
