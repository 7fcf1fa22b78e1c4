#include "zerofarm/proc/game_id.h"

#include <algorithm>
#include <cctype>

#include "zerofarm/core/error.h"

namespace zerofarm::proc {

uint32_t HostIndexOf(const std::string& id) {
  const bool digits = !id.empty() && id.size() <= 5 && std::all_of(id.begin(), id.end(), [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch));
  });
  if (digits && (id == "0" || id[0] != '0')) {
    const unsigned long n = std::stoul(id);
    if (n < (1ul << kGameIdHostBits)) return static_cast<uint32_t>(n);
  }
  uint32_t h = 2166136261u;  // FNV-1a, 32 bits, folded to 16
  for (unsigned char ch : id) h = (h ^ ch) * 16777619u;
  return (h >> 16) ^ (h & 0xFFFFu);
}

uint64_t MakeGameId(uint32_t host_index, uint32_t epoch, uint32_t worker, uint64_t sequence) {
  if (host_index >= (1u << kGameIdHostBits) || epoch >= kMaxEpochs || worker >= (1u << kGameIdWorkerBits) ||
      sequence >= kMaxGameSequence)
    throw Error("game id out of range: host " + std::to_string(host_index) + ", epoch " +
                std::to_string(epoch) + ", worker " + std::to_string(worker) + ", sequence " +
                std::to_string(sequence));
  return (static_cast<uint64_t>(host_index) << (kGameIdEpochBits + kGameIdWorkerBits + kGameIdSequenceBits)) |
         (static_cast<uint64_t>(epoch) << (kGameIdWorkerBits + kGameIdSequenceBits)) |
         (static_cast<uint64_t>(worker) << kGameIdSequenceBits) | sequence;
}

}  // namespace zerofarm::proc
