// Helpers shared by the board games (see board_util.h).
#include "zerofarm/game/board_util.h"

#include <cctype>
#include <cstring>

namespace zerofarm::game {
namespace {

// True when `ch` is one of `chars` (never for '\0').
bool OneOf(char ch, const char* chars) { return ch != '\0' && std::strchr(chars, ch) != nullptr; }

}  // namespace

std::vector<int> SquareSymmetryCellMap(int size, int symmetry) {
  const int n = size;
  std::vector<int> map(n * n);
  for (int cell = 0; cell < n * n; ++cell) {
    int r = cell / n;
    int c = cell % n;
    if (symmetry >= 4) c = n - 1 - c;         // mirror left-right
    for (int k = 0; k < symmetry % 4; ++k) {  // rotate clockwise: (r, c) -> (c, n-1-r)
      const int nr = c;
      c = n - 1 - r;
      r = nr;
    }
    map[cell] = r * n + c;
  }
  return map;
}

std::vector<std::string> BoardLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (!line.empty()) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string ReadBoardCells(const std::vector<std::string>& rows, int height, int width,
                           const std::string& where, const BoardAliases& aliases) {
  ZF_CHECK(rows.size() >= static_cast<size_t>(height)) << where << rows.size() << " rows";
  std::string cells;
  cells.reserve(static_cast<size_t>(height) * width);
  for (int r = 0; r < height; ++r) {
    if (rows[r].size() != static_cast<size_t>(width)) {
      throw Error(where + "row " + std::to_string(r + 1) + " '" + rows[r] + "' is not " +
                  std::to_string(width) + " characters");
    }
    for (const char ch : rows[r]) {
      if (ch == 'X' || ch == 'x' || OneOf(ch, aliases.x)) {
        cells += 'X';
      } else if (ch == 'O' || ch == 'o' || OneOf(ch, aliases.o)) {
        cells += 'O';
      } else if (ch == '.' || OneOf(ch, aliases.empty)) {
        cells += '.';
      } else {
        throw Error(where + "bad character '" + ch + "' in row " + std::to_string(r + 1));
      }
    }
  }
  return cells;
}

}  // namespace zerofarm::game
