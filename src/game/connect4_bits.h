#pragma once
// Private to the game module: the Pons bitboard layout of Connect Four (see
// zerofarm/game/connect4.h) shared by the rules (connect4.cpp) and the solver
// (connect4_solver.cpp). Bit (col * 7 + row), row 0 = BOTTOM; the 7th bit of
// each column is an always-empty sentinel that stops lines from wrapping.
#include <cstdint>

#include "zerofarm/game/connect4.h"

namespace zerofarm::game::c4bits {

constexpr int kWidth = Connect4Game::kWidth;
constexpr int kHeight = Connect4Game::kHeight;
constexpr int kCells = Connect4Game::kCells;
constexpr int kStride = kHeight + 1;  // bits per column, the top one a sentinel
constexpr uint64_t kColumnBits = (1ULL << kHeight) - 1;

constexpr uint64_t BottomRow() {
  uint64_t b = 0;
  for (int c = 0; c < kWidth; ++c) b |= 1ULL << (c * kStride);
  return b;
}
constexpr uint64_t kBottom = BottomRow();           // the lowest cell of each column
constexpr uint64_t kBoard = kBottom * kColumnBits;  // every playable cell

constexpr uint64_t ColumnMask(int col) { return kColumnBits << (col * kStride); }
constexpr int Bit(int col, int row_from_bottom) { return col * kStride + row_from_bottom; }

// Empty cells (playable now or later) where `stones` would complete a four;
// `mask` is every stone on the board.
inline uint64_t WinningCells(uint64_t stones, uint64_t mask) {
  uint64_t r = (stones << 1) & (stones << 2) & (stones << 3);  // vertical: three below
  for (int s : {kStride, kStride - 1, kStride + 1}) {          // horizontal, both diagonals
    const uint64_t up2 = (stones << s) & (stones << 2 * s);    // two stones on the low side
    r |= up2 & (stones << 3 * s);
    r |= up2 & (stones >> s);
    const uint64_t down2 = (stones >> s) & (stones >> 2 * s);  // two on the high side
    r |= down2 & (stones >> 3 * s);
    r |= down2 & (stones << s);
  }
  return r & (kBoard ^ mask);
}

}  // namespace zerofarm::game::c4bits
