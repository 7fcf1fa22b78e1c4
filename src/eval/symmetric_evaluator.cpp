// SymmetricEvaluator (eval/symmetric_evaluator.h): the mean of a network over
// a game's symmetries, one inner call per batch.
#include "zerofarm/eval/symmetric_evaluator.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/game/symmetry.h"

namespace zerofarm::eval {
namespace {

class SymmetricEvaluator final : public Evaluator {
 public:
  SymmetricEvaluator(const game::Game& game, std::unique_ptr<Evaluator> inner)
      : tables_(game), inner_(std::move(inner)), actions_(game.ActionCount()) {
    ZF_CHECK(inner_->Config().actions == actions_) << "symmetric evaluator: the network is for another game";
  }

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    for (int c = 0; c < num_chunks; ++c)
      if (chunks[c].count > 0) EvaluateChunk(chunks[c]);
  }
  void RegisterHostMemory(void*, size_t) override {}  // the inner network reads our buffers, not the caller's
  uint32_t ModelVersion() const override { return inner_->ModelVersion(); }
  const NetConfig& Config() const override { return inner_->Config(); }
  std::string Describe() const override {
    return inner_->Describe() + ", averaged over " + std::to_string(tables_.Count()) + " symmetries";
  }

 private:
  // The chunk's leaves in every orientation (orientation-major), one inner call,
  // then each leaf's mean written to the caller's policy and value.
  void EvaluateChunk(const LeafChunk& chunk) {
    const size_t n = static_cast<size_t>(chunk.count), fb = static_cast<size_t>(tables_.FeatureBytes());
    const size_t a = static_cast<size_t>(actions_), syms = static_cast<size_t>(tables_.Count());
    features_.resize(syms * n * fb);
    policy_.resize(syms * n * a);
    value_.resize(syms * n);
    for (size_t s = 0; s < syms; ++s)
      for (size_t i = 0; i < n; ++i)
        tables_.TransformFeatures(static_cast<int>(s), chunk.features + i * fb, &features_[(s * n + i) * fb]);
    const LeafChunk all{features_.data(), policy_.data(), value_.data(), static_cast<int>(syms * n)};
    inner_->Evaluate(&all, 1);
    std::vector<float> oriented(a), mean(a);
    for (size_t i = 0; i < n; ++i) {
      std::fill(mean.begin(), mean.end(), 0.0f);
      float value = 0.0f;
      for (size_t s = 0; s < syms; ++s) {
        tables_.UntransformPolicy(static_cast<int>(s), &policy_[(s * n + i) * a], oriented.data());
        AddSoftmax(oriented, &mean);
        value += value_[s * n + i];
      }
      float* out = chunk.policy + i * a;
      for (size_t k = 0; k < a; ++k) out[k] = std::log(std::max(mean[k] / syms, 1e-30f));
      chunk.value[i] = value / syms;
    }
  }

  static void AddSoftmax(const std::vector<float>& logits, std::vector<float>* sum) {
    const float top = *std::max_element(logits.begin(), logits.end());
    float total = 0.0f;
    for (float l : logits) total += std::exp(l - top);
    for (size_t k = 0; k < logits.size(); ++k) (*sum)[k] += std::exp(logits[k] - top) / total;
  }

  const game::SymmetryTables tables_;
  std::unique_ptr<Evaluator> inner_;
  const int actions_;
  std::vector<uint8_t> features_;  // [symmetry][leaf] feature bytes
  std::vector<float> policy_;      // [symmetry][leaf] logits, in that symmetry's orientation
  std::vector<float> value_;       // [symmetry][leaf]
};

}  // namespace

std::unique_ptr<Evaluator> MakeSymmetricEvaluator(const game::Game& game, std::unique_ptr<Evaluator> inner) {
  return std::make_unique<SymmetricEvaluator>(game, std::move(inner));
}

}  // namespace zerofarm::eval
