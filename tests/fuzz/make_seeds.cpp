// zf_fuzz_seeds DIR: writes the binary seeds of the weights and shard
// targets (DIR/weights/, DIR/shard/): a weights file of a tiny
// tic-tac-toe net (1 block x 2 filters, every tensor zero) and a shard of two
// short tic-tac-toe games, each a few kilobytes, so that the fuzzer starts
// from valid files. The text targets' seeds are written by hand.
#include <cstdio>
#include <filesystem>
#include <string>

#include "zerofarm/eval/weights.h"
#include "zerofarm/game/tictactoe.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/weights_file.h"

namespace {
namespace zf = zerofarm;

void WriteWeightsSeed(const std::string& dir) {
  const zf::game::TicTacToeGame game;
  zf::eval::WeightSet w;
  w.config = zf::eval::GameNetConfig(game, 1, 2, 2);
  for (const auto& t : zf::io::NetTensors(w.config)) {
    zf::eval::NamedTensor n{t.name, t.shape, {}, {}};
    if (t.is_int)
      n.int_data.assign(static_cast<size_t>(n.Elements()), 0);
    else
      n.data.assign(static_cast<size_t>(n.Elements()), 0.0f);
    w.tensors.push_back(std::move(n));
  }
  zf::io::WriteWeights(dir + "/tictactoe-1x2.h5", w);
}

void WriteShardSeed(const std::string& dir) {
  const zf::game::TicTacToeGame game;
  zf::io::ShardMeta meta = zf::io::ShardMetaForGame(game);
  meta.search = "simulations=2";
  meta.config = "workers=1\n";
  zf::io::ShardWriter writer(dir, "seed", meta, zf::io::Compression{1, true, 64, 4});
  for (uint64_t id = 1; id <= 2; ++id) {
    zf::mcts::GameRecord r;
    r.game_id = id;
    r.winner = id == 1 ? 0 : -1;
    r.moves = {4, 0, 8};
    for (int i = 0; i < 3; ++i) {
      r.features.insert(r.features.end(), static_cast<size_t>(meta.FeatureBytes()),
                        static_cast<uint8_t>(i % 2));
      for (int a = 0; a < meta.actions; ++a) r.policy.push_back(1.0f / static_cast<float>(meta.actions));
      r.z.push_back(r.winner < 0 ? 0.0f : (i % 2 == 0 ? 1.0f : -1.0f));
      r.root_value.push_back(0.25f);
      r.ply.push_back(static_cast<int16_t>(i));
      r.model_version.push_back(1);
      r.full_search.push_back(1);
    }
    writer.Add(r);
  }
  writer.Flush(0, {1});
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: zf_fuzz_seeds DIR (writes DIR/weights/*.h5 and DIR/shard/*.h5)\n");
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir + "/weights");
  std::filesystem::create_directories(dir + "/shard");
  WriteWeightsSeed(dir + "/weights");
  WriteShardSeed(dir + "/shard");
  return 0;
}
