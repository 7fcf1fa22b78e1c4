#include "zerofarm/core/hash.h"

#include <cstring>

namespace zerofarm {

uint64_t HashBytes(const uint8_t* data, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  // The bytes after the last whole word (none for n = 0, where data may be null).
  if (n > i) std::memcpy(&tail, data + i, n - i);
  h = (h ^ tail) * 0xC4CEB9FE1A85EC53ULL;
  // MurmurHash3's finaliser.
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  return h ^ (h >> 33);
}

}  // namespace zerofarm
