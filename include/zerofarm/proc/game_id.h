#pragma once
// Game ids: unique within a run directory, across its hosts and their
// restarts (docs/schema.md). Pure functions.
#include <cstdint>
#include <string>

namespace zerofarm::proc {

// Bits of a game id, high to low: host index 16 | epoch 12 | worker 10 | sequence 26.
inline constexpr int kGameIdSequenceBits = 26;
inline constexpr int kGameIdWorkerBits = 10;
inline constexpr int kGameIdEpochBits = 12;
inline constexpr int kGameIdHostBits = 16;
inline constexpr uint32_t kMaxEpochs = 1u << kGameIdEpochBits;
inline constexpr uint64_t kMaxGameSequence = 1ull << kGameIdSequenceBits;  // games per worker and epoch
// The id of a game: unique within a run directory, across its hosts and their
// restarts. Each argument must be below its field's limit (checked).
uint64_t MakeGameId(uint32_t host_index, uint32_t epoch, uint32_t worker, uint64_t sequence);
// The fields of a game id: the inverse of MakeGameId (any id splits).
struct GameIdFields {
  uint32_t host_index, epoch, worker;
  uint64_t sequence;
};
inline GameIdFields SplitGameId(uint64_t id) {
  constexpr int kWorkerShift = kGameIdSequenceBits, kEpochShift = kWorkerShift + kGameIdWorkerBits,
                kHostShift = kEpochShift + kGameIdEpochBits;
  return {static_cast<uint32_t>(id >> kHostShift),
          static_cast<uint32_t>((id >> kEpochShift) & ((1u << kGameIdEpochBits) - 1)),
          static_cast<uint32_t>((id >> kWorkerShift) & ((1u << kGameIdWorkerBits) - 1)),
          id & (kMaxGameSequence - 1)};
}

// The host index of a host id: the number itself for a decimal number below
// 65536 (no leading zeros), else the FNV-1a hash of the id folded to 16 bits.
uint32_t HostIndexOf(const std::string& id);

}  // namespace zerofarm::proc
