#pragma once
// The network's architecture and a set of named weight tensors, independent of
// LibTorch (so io can read and write weights files without including it).
//
// Tensor names are those of PyTorch's state_dict for the same module tree
// ("stem.conv.weight", "blocks.0.bn1.running_mean", "policy_head.fc.bias"),
// so Python with h5py or PyTorch can read and write the same file.
#include <cstdint>
#include <string>
#include <vector>

namespace zerofarm::game {
class Game;
}  // namespace zerofarm::game

namespace zerofarm::eval {

// A residual tower shaped by the game: stem conv3x3 -> `blocks` residual blocks
// of `filters` channels -> policy head (conv1x1 to 2 channels, fc to actions)
// and value head (conv1x1 to 1 channel, fc to value_hidden, fc to 1, tanh).
struct NetConfig {
  std::string game;  // Game::Name() it was built for
  int planes = 0;    // input feature planes
  int height = 0;
  int width = 0;
  int actions = 0;  // policy length
  int blocks = 6;
  int filters = 64;
  int value_hidden = 64;

  bool SameShape(const NetConfig& o) const {
    return game == o.game && planes == o.planes && height == o.height && width == o.width &&
           actions == o.actions && blocks == o.blocks && filters == o.filters &&
           value_hidden == o.value_hidden;
  }
  std::string Describe() const;  // "connect4 3x6x7 -> 7, 6 blocks x 64 filters"
};

// A network for `game`: its name and input and output shapes, with a tower of
// `blocks` x `filters` and `value_hidden` units in the value head.
NetConfig GameNetConfig(const game::Game& game, int blocks = 6, int filters = 64, int value_hidden = 64);

struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  // Exactly one of these is used: float32 parameters and buffers, or int64
  // buffers (BatchNorm's num_batches_tracked).
  std::vector<float> data;
  std::vector<int64_t> int_data;
  bool is_int() const { return !int_data.empty() || (data.empty() && shape.empty()); }
  int64_t Elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct WeightSet {
  NetConfig config;
  uint32_t version = 0;  // model version; 0 = randomly initialised
  std::vector<NamedTensor> tensors;

  const NamedTensor* Find(const std::string& name) const {
    for (const auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
};

}  // namespace zerofarm::eval
