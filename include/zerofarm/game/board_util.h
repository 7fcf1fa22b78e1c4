#pragma once
// Helpers shared by the board games' implementations: the symmetries of a
// square board, hashing, and the board text format ('X' = player 0, 'O' =
// player 1, '.' = empty, one line per row, top row first).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {

// ---- symmetries -------------------------------------------------------------

// The dihedral group of a size x size board: s = 0..3 rotate clockwise by s
// quarter turns; s = 4..7 mirror left-right first, then rotate by s - 4
// quarter turns. map[cell] is where cell (row * size + col) goes.
std::vector<int> SquareSymmetryCellMap(int size, int symmetry);

// ---- states -----------------------------------------------------------------

// `other` as the concrete state type T (CopyFrom's precondition that both
// states belong to the same game is checked in debug builds).
template <typename T>
const T& SameGameState(const State& other) {
  ZF_DCHECK(dynamic_cast<const T*>(&other) != nullptr);
  return static_cast<const T&>(other);
}

// ---- hashing ----------------------------------------------------------------

// MurmurHash3's 64-bit finaliser: a bijection, so distinct keys never collide.
inline uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// Zobrist keys by [player][cell]: SplitMix64 from `seed`, player 0's first.
template <size_t kCells>
std::array<std::array<uint64_t, kCells>, 2> MakeZobristKeys(uint64_t seed) {
  std::array<std::array<uint64_t, kCells>, 2> keys{};
  for (auto& player : keys)
    for (uint64_t& key : player) key = SplitMix64(seed);
  return keys;
}

// ---- board text -------------------------------------------------------------

// The lines of `text`, trailing whitespace (and '\r') dropped, blank lines
// skipped.
std::vector<std::string> BoardLines(const std::string& text);

// The characters a board reader accepts besides 'X' / 'x', 'O' / 'o' and '.'.
struct BoardAliases {
  const char* x = "";      // also player 0
  const char* o = "";      // also player 1
  const char* empty = "";  // also empty
};

// Reads rows[0, height) (rows may hold more lines after them), each of
// `width` characters, into height * width cells 'X', 'O' or '.', top row
// first. Throws zerofarm::Error "<where>row R '<row>' is not W characters"
// or "<where>bad character 'c' in row R" (R counted from 1).
std::string ReadBoardCells(const std::vector<std::string>& rows, int height, int width,
                           const std::string& where, const BoardAliases& aliases = {});

// Appends `height` lines of `width` characters, each ending in '\n':
// owner(row, col) is 0 ('X'), 1 ('O') or anything else ('.').
template <typename Owner>
void AppendBoardRows(int height, int width, Owner owner, std::string* text) {
  text->reserve(text->size() + static_cast<size_t>(height) * (width + 1));
  for (int r = 0; r < height; ++r) {
    for (int c = 0; c < width; ++c) {
      const int p = owner(r, c);
      *text += p == 0 ? 'X' : p == 1 ? 'O' : '.';
    }
    *text += '\n';
  }
}

}  // namespace zerofarm::game
