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
// and value head (conv1x1 to value_channels channels, 1 by default, fc to
// value_hidden, fc to 1, tanh; or,
// with score_plies > 0, fc to ScoreBins() logits: the score head below).
//
// The score head (docs/training.md, "The score head") predicts how the game
// ends, from the side to move's view, as a distribution over 2 x P + 1 bins
// (P = score_plies, the game's MaxGameLength()): bin d - 1 (d = 1..P) is "the
// side to move wins, the game's last move d plies from now" (d = 1: this
// move ends it), bin P + d - 1 the same lost, bin 2P a draw. Its value for
// the search is sum over d of discount^(d - 1) x (p(win at d) - p(loss at d)),
// the expectation of the scalar head's target (z x discount^(plies left)),
// with the discount given at evaluation (TorchOptions::value_discount).
struct NetConfig {
  std::string game;  // Game::Name() it was built for
  int planes = 0;    // input feature planes
  int height = 0;
  int width = 0;
  int actions = 0;  // policy length
  int blocks = 6;
  int filters = 64;
  int value_hidden = 64;
  int score_plies = 0;     // 0: the scalar value head; else the score head over this many plies
  int value_channels = 1;  // the value head's conv1x1 outputs (AlphaZero's 1; AlphaZero.jl's Connect Four 32)
  // A TorchScript model of the user's (docs/models.md): only game, planes,
  // height, width and actions hold; blocks and filters are 0, no tower.
  bool scripted = false;

  int ScoreBins() const { return score_plies > 0 ? 2 * score_plies + 1 : 1; }  // value_head.fc2's outputs
  bool SameShape(const NetConfig& o) const {
    return game == o.game && planes == o.planes && height == o.height && width == o.width &&
           actions == o.actions && blocks == o.blocks && filters == o.filters &&
           value_hidden == o.value_hidden && value_channels == o.value_channels &&
           score_plies == o.score_plies && scripted == o.scripted;
  }
  // "connect4 3x6x7 -> 7, 6 blocks x 64 filters", ", value head of 32 channels"
  // where value_channels is not 1, and ", score head" with one; "connect4
  // 3x6x7 -> 7, TorchScript" for a scripted model
  std::string Describe() const;
};

// A network for `game`: its name and input and output shapes, with a tower of
// `blocks` x `filters` and `value_hidden` units in the value head; with
// `score_head`, the score head over the game's MaxGameLength() plies; its
// conv1x1 to `value_channels` channels.
NetConfig GameNetConfig(const game::Game& game, int blocks = 6, int filters = 64, int value_hidden = 64,
                        bool score_head = false, int value_channels = 1);

// The score head's bin for a position whose game ended `plies` plies later
// (1: its own move ended it) with `outcome` for its side to move (+1 won, -1
// lost, 0 drawn), in a net over `score_plies`; -1 if plies is outside 1..score_plies.
int ScoreBin(int score_plies, int plies, int outcome);

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
  // A TorchScript archive's bytes (a .pt model file, docs/models.md), read
  // and checked by io::ReadWeights: then config.scripted, and no tensors.
  std::string script;
  bool package = false;  // script holds an AOTInductor package (.pt2), not TorchScript
  std::string source;    // the file it was read from, for messages (may be empty)

  const NamedTensor* Find(const std::string& name) const {
    for (const auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
};

}  // namespace zerofarm::eval
