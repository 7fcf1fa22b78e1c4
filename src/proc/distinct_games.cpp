// Distinct move sequences of a farm's games (include/zerofarm/proc/distinct_games.h).
#include "zerofarm/proc/distinct_games.h"

#include "zerofarm/core/hash.h"

namespace zerofarm::proc {

uint64_t MoveSequenceHash(const std::vector<int16_t>& moves) {
  uint64_t h = HashBytes(reinterpret_cast<const uint8_t*>(moves.data()), moves.size() * sizeof(int16_t));
  h ^= moves.size();
  // splitmix64's finaliser: the sample takes the top bits, so every bit must depend on every byte.
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

void DistinctGames::Add(uint64_t sequence_hash) {
  if (!InSample(sequence_hash)) return;
  ++counts_[sequence_hash];
  ++sampled_games_;
  while (counts_.size() > max_entries_ && level_ < 63) {
    ++level_;
    for (auto it = counts_.begin(); it != counts_.end();) {
      if (InSample(it->first)) {
        ++it;
      } else {
        sampled_games_ -= it->second;
        it = counts_.erase(it);
      }
    }
  }
}

}  // namespace zerofarm::proc
