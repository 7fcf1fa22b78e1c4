#include "zerofarm/proc/game_codec.h"

#include <cstddef>
#include <cstring>

namespace zerofarm::proc {
namespace {

constexpr uint32_t kMagic = 0x5A464732;  // "ZFG2" (ZFG1 had no full_search column)

struct Header {
  uint32_t magic;
  uint32_t positions;
  uint32_t moves;
  int32_t worker;
  int32_t winner;
  int16_t resigned;      // GameRecord::resigned
  int16_t would_resign;  // GameRecord::would_resign
  uint64_t game_id;
  uint64_t seed;
};
static_assert(sizeof(Header) == 40);

size_t BytesPerPosition(const game::Game& g) {
  return static_cast<size_t>(g.Shape().FeatureBytes()) + sizeof(float) * g.ActionCount() + sizeof(float) * 2 +
         sizeof(int16_t) + sizeof(uint32_t) + sizeof(uint8_t);
}

template <typename T>
void Put(std::vector<uint8_t>* out, size_t* at, const std::vector<T>& v) {
  std::memcpy(out->data() + *at, v.data(), v.size() * sizeof(T));
  *at += v.size() * sizeof(T);
}

template <typename T>
bool Get(const uint8_t* data, size_t size, size_t* at, size_t n, std::vector<T>* v) {
  if (*at + n * sizeof(T) > size) return false;
  v->resize(n);
  std::memcpy(v->data(), data + *at, n * sizeof(T));
  *at += n * sizeof(T);
  return true;
}

}  // namespace

size_t MaxGameMessageBytes(const game::Game& game) {
  const size_t n = static_cast<size_t>(game.MaxGameLength());
  return sizeof(Header) + n * sizeof(int16_t) + n * BytesPerPosition(game);
}

void EncodeGame(const mcts::GameRecord& r, const game::Game& game, std::vector<uint8_t>* out) {
  const size_t n = r.Positions();
  Header h{kMagic,   static_cast<uint32_t>(n),         static_cast<uint32_t>(r.moves.size()), r.worker,
           r.winner, static_cast<int16_t>(r.resigned), static_cast<int16_t>(r.would_resign),  r.game_id,
           r.seed};
  out->resize(sizeof(Header) + r.moves.size() * sizeof(int16_t) + n * BytesPerPosition(game));
  std::memcpy(out->data(), &h, sizeof h);
  size_t at = sizeof h;
  Put(out, &at, r.moves);
  Put(out, &at, r.features);
  Put(out, &at, r.policy);
  Put(out, &at, r.z);
  Put(out, &at, r.root_value);
  Put(out, &at, r.ply);
  Put(out, &at, r.model_version);
  if (r.full_search.size() == n) {
    Put(out, &at, r.full_search);
  } else {  // a record without the column: every search was a full one
    std::memset(out->data() + at, 1, n);
    at += n;
  }
}

std::optional<mcts::GameRecord> DecodeGame(const uint8_t* data, size_t size, const game::Game& game) {
  if (size < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, data, sizeof h);
  const size_t max_len = static_cast<size_t>(game.MaxGameLength());
  if (h.magic != kMagic || h.positions > max_len || h.moves > max_len) return std::nullopt;
  mcts::GameRecord r;
  r.game_id = h.game_id;
  r.seed = h.seed;
  r.worker = h.worker;
  r.winner = h.winner;
  r.resigned = h.resigned;
  r.would_resign = h.would_resign;
  size_t at = sizeof h;
  const size_t n = h.positions;
  const size_t fb = static_cast<size_t>(game.Shape().FeatureBytes());
  const size_t actions = static_cast<size_t>(game.ActionCount());
  if (!Get(data, size, &at, h.moves, &r.moves) || !Get(data, size, &at, n * fb, &r.features) ||
      !Get(data, size, &at, n * actions, &r.policy) || !Get(data, size, &at, n, &r.z) ||
      !Get(data, size, &at, n, &r.root_value) || !Get(data, size, &at, n, &r.ply) ||
      !Get(data, size, &at, n, &r.model_version) || !Get(data, size, &at, n, &r.full_search) || at != size)
    return std::nullopt;
  return r;
}

std::optional<uint64_t> GameIdOfMessage(const uint8_t* data, size_t size) {
  if (data == nullptr || size < sizeof(Header)) return std::nullopt;
  uint64_t id;
  std::memcpy(&id, data + offsetof(Header, game_id), sizeof id);
  return id;
}

}  // namespace zerofarm::proc
