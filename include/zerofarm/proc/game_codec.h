#pragma once
// GameRecord <-> the bytes of one finished-game message in shared memory
// (worker -> writer). Fixed header, then the columns back to back; all
// fields native-endian (both ends are processes of one machine and binary).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "zerofarm/game/game.h"
#include "zerofarm/mcts/game_record.h"

namespace zerofarm::proc {

// The largest message a game of `game` can need (the queue's slot size).
size_t MaxGameMessageBytes(const game::Game& game);
// Serialises `record` into `out` (resized). Precondition: it fits the bound.
void EncodeGame(const mcts::GameRecord& record, const game::Game& game, std::vector<uint8_t>* out);
// Parses a message; nullopt if it is malformed (lengths out of bounds), so a
// torn or corrupt slot is reported, never trusted.
std::optional<mcts::GameRecord> DecodeGame(const uint8_t* data, size_t size, const game::Game& game);
// The game id in a message's header, read alone (nothing else is trusted);
// nullopt when the message is shorter than its header.
std::optional<uint64_t> GameIdOfMessage(const uint8_t* data, size_t size);

}  // namespace zerofarm::proc
