#pragma once
// How many of a farm's games are distinct move sequences (issue 72): a farm's
// first duty is varied data, and a strong network with little exploration
// plays the same game again and again. The writer counts the games it writes;
// the summary reports the share and the supervisor warns once below 90 %.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace zerofarm::proc {

// The hash of a game's whole move sequence (from the initial position, random
// opening moves included), well mixed in every bit.
uint64_t MoveSequenceHash(const std::vector<int16_t>& moves);

// Counts games and distinct sequences in bounded memory: exact while it holds
// at most `max_entries` distinct hashes; beyond, over a sample (adaptive
// sampling: at level L a game is in the sample when the top L bits of its hash
// are 0, so a sequence is in or out with all its copies, and each step up
// halves the sample). The share SampledDistinct / SampledGames estimates the
// share of distinct games. Single-threaded; memory ~ 40 bytes an entry.
class DistinctGames {
 public:
  static constexpr size_t kDefaultMaxEntries = size_t{1} << 17;
  explicit DistinctGames(size_t max_entries = kDefaultMaxEntries) : max_entries_(max_entries) {}
  void Add(uint64_t sequence_hash);
  uint64_t SampledGames() const { return sampled_games_; }
  uint64_t SampledDistinct() const { return counts_.size(); }
  int Level() const { return level_; }  // 0: every game counted (exact)

 private:
  bool InSample(uint64_t hash) const { return level_ == 0 || (hash >> (64 - level_)) == 0; }

  size_t max_entries_;
  std::unordered_map<uint64_t, uint32_t> counts_;  // hash -> games with it (in the sample)
  uint64_t sampled_games_ = 0;
  int level_ = 0;
};

// The share of distinct games below which the farm warns, and the fewest
// games counted before it judges.
inline constexpr double kDistinctWarnShare = 0.90;
inline constexpr uint64_t kDistinctMinGames = 100;

}  // namespace zerofarm::proc
