// Fuzz target: shards (io::ShardReader, as `zerofarm inspect`, `export` and
// the trainer read a run directory's shards from other hosts): open, the
// game it names (MakeGame), then every game with its moves, every position row, and every game record. The
// reader promises (shard.h) that rows and moves of the games it returns lie
// in range: each is checked here. Seeds: tiny valid shards made by
// zf_fuzz_seeds. The HDF5 library itself runs uninstrumented (a crash there
// shows as a SEGV, not an ASan report).
#include <cstdint>
#include <cstdlib>

#include "fuzz_input.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace zf = zerofarm;
  if (size > (1u << 20)) return -1;
  const std::string& path = zf::fuzz::InputFile(data, size, ".h5");
  zf::fuzz::ExpectOnlyErrors([&] {
    const zf::io::ShardReader r(path);
    zf::fuzz::ExpectOnlyErrors([&] { zf::game::MakeGame(r.meta().game); });  // as every command does
    if (r.Positions() > (1u << 16)) return;  // rows are read whole: stay within the fuzzer's memory
    const auto games = r.ReadGames();
    for (const auto& g : games)
      if (g.first_position < 0 || g.position_count < 0 ||
          static_cast<uint64_t>(g.first_position) + static_cast<uint64_t>(g.position_count) > r.Positions())
        std::abort();
    zf::fuzz::ExpectOnlyErrors([&] { r.ReadAllPositions(); });
    zf::fuzz::ExpectOnlyErrors([&] { r.ReadGameRecords(); });
  });
  return 0;
}
