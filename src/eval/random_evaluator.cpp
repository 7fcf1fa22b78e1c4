// RandomEvaluator: outputs drawn from a hash of each leaf's features, so the
// same position always gets the same answer. No LibTorch. And NetConfig's own
// functions (weights.h).
#include <sstream>

#include "zerofarm/core/rng.h"
#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"

namespace zerofarm::eval {

std::string NetConfig::Describe() const {
  std::ostringstream os;
  os << game << " " << planes << "x" << height << "x" << width << " -> " << actions << ", ";
  if (scripted) return os.str() + "TorchScript";
  os << blocks << " blocks x " << filters << " filters";
  if (value_channels != 1) os << ", value head of " << value_channels << " channels";
  if (score_plies > 0) os << ", score head";
  return os.str();
}

int ScoreBin(int score_plies, int plies, int outcome) {
  if (plies < 1 || plies > score_plies) return -1;
  if (outcome == 0) return 2 * score_plies;
  return (outcome > 0 ? 0 : score_plies) + plies - 1;
}

NetConfig GameNetConfig(const game::Game& game, int blocks, int filters, int value_hidden, bool score_head,
                        int value_channels) {
  NetConfig c;
  c.game = game.Name();
  c.planes = game.Shape().planes;
  c.height = game.Shape().height;
  c.width = game.Shape().width;
  c.actions = game.ActionCount();
  c.blocks = blocks;
  c.filters = filters;
  c.value_hidden = value_hidden;
  c.value_channels = value_channels;
  c.score_plies = score_head ? game.MaxGameLength() : 0;
  return c;
}

namespace {

class RandomEvaluator final : public Evaluator {
 public:
  RandomEvaluator(const NetConfig& config, uint64_t seed) : config_(config), seed_(seed) {}

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    const size_t feature_bytes = static_cast<size_t>(config_.planes) * config_.height * config_.width;
    for (int c = 0; c < num_chunks; ++c) {
      const LeafChunk& chunk = chunks[c];
      for (int i = 0; i < chunk.count; ++i) {
        const uint8_t* f = chunk.features + i * feature_bytes;
        uint64_t h = seed_ ^ 0xCBF29CE484222325ULL;
        for (size_t b = 0; b < feature_bytes; ++b) h = (h ^ f[b]) * 0x100000001B3ULL;
        Rng rng(h);
        float* policy = chunk.policy + static_cast<size_t>(i) * config_.actions;
        for (int a = 0; a < config_.actions; ++a) policy[a] = static_cast<float>(rng.Uniform() * 2.0 - 1.0);
        chunk.value[i] = static_cast<float>(rng.Uniform() * 0.4 - 0.2);
      }
    }
  }
  uint32_t ModelVersion() const override { return 0; }
  const NetConfig& Config() const override { return config_; }
  std::string Describe() const override { return "random evaluator (" + config_.game + ")"; }

 private:
  NetConfig config_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Evaluator> MakeRandomEvaluator(const NetConfig& config, uint64_t seed) {
  return std::make_unique<RandomEvaluator>(config, seed);
}

}  // namespace zerofarm::eval
