#pragma once
// A zip archive made in a test, as torch.jit.save lays one out: for model
// files whose archive is what is tested (tests/unit/io/torchscript_test.cpp)
// or a .pt that io::ReadWeights takes without LibTorch (tests/fault).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zerofarm::testing {

// A zip archive of `entries` {name, bytes}, each stored with compression
// `method` (0: stored, as torch.jit.save writes its data), no CRCs. Each
// entry declares `inflated` bytes uncompressed (0: its own size).
inline std::string Zip(const std::vector<std::pair<std::string, std::string>>& entries, uint64_t method = 0,
                       uint64_t inflated = 0) {
  std::string out, dir;
  const auto le = [](std::string* s, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  using Fields = std::vector<std::pair<uint64_t, int>>;  // {value, bytes}, little-endian
  const auto put = [&](std::string* s, const Fields& fields) {
    for (auto [v, n] : fields) le(s, v, n);
  };
  for (const auto& [name, data] : entries) {
    const uint64_t offset = out.size();
    // From the compression method on, the local and the central header agree.
    const Fields common = {
        {method, 2},      {0, 4}, {0, 4}, {data.size(), 4}, {inflated != 0 ? inflated : data.size(), 4},
        {name.size(), 2}, {0, 2}};
    put(&out, {{0x04034b50, 4}, {20, 2}, {0, 2}});
    put(&out, common);
    out += name + data;
    put(&dir, {{0x02014b50, 4}, {20, 2}, {20, 2}, {0, 2}});
    put(&dir, common);
    put(&dir, {{0, 2}, {0, 2}, {0, 2}, {0, 4}, {offset, 4}});
    dir += name;
  }
  const uint64_t dir_offset = out.size();
  out += dir;
  for (auto [v, n] : std::vector<std::pair<uint64_t, int>>{{0x06054b50, 4},
                                                           {0, 2},
                                                           {0, 2},
                                                           {entries.size(), 2},
                                                           {entries.size(), 2},
                                                           {dir.size(), 4},
                                                           {dir_offset, 4},
                                                           {0, 2}})
    le(&out, v, n);
  return out;
}

// The zerofarm.json of a model of `game` (3 x 6 x 7 planes, 7 actions, version 1).
inline std::string ModelMetadata(const std::string& game) {
  return "{\"game\": \"" + game +
         "\", \"planes\": 3, \"height\": 6, \"width\": 7, \"actions\": 7, \"version\": 1}";
}

}  // namespace zerofarm::testing
