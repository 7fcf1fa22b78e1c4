#pragma once
// Small, fast, seedable random numbers. Not thread-safe: one per thread.
#include <cstdint>
#include <limits>

namespace zerofarm {

// SplitMix64: used to expand a seed and to derive per-game/per-worker seeds.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A stateless mix of two values (seed derivation: MixSeed(run_seed, game_id)).
inline uint64_t MixSeed(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xD1B54A32D192ED03ULL);
  return SplitMix64(s);
}

// xoshiro256**: satisfies UniformRandomBitGenerator, so it works with <random>.
class Rng {
 public:
  using result_type = uint64_t;
  explicit Rng(uint64_t seed = 0x5EEDULL) {
    uint64_t s = seed;
    for (auto& x : s_) x = SplitMix64(s);
  }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint64_t>::max(); }
  result_type operator()() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n).
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>(Uniform() * static_cast<double>(n)); }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace zerofarm
