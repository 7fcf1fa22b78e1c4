// OrientedEvaluator (eval/symmetric_evaluator.h): a network asked about each
// leaf in another orientation, or in every one and averaged; one inner call
// per chunk.
#include "zerofarm/eval/symmetric_evaluator.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/game/symmetry.h"

namespace zerofarm::eval {

std::string Orientation::Name() const {
  if (kind == kCanonical) return "canonical";
  if (kind == kMean) return "mean";
  return symmetry == 0 ? "as-is" : std::to_string(symmetry);
}

int Orientation::EvaluationsPerLeaf(const game::Game& game) const {
  return kind == kMean ? game.SymmetryCount() : 1;
}

Orientation ParseOrientation(const std::string& text, const game::Game& game) {
  if (text == "as-is") return {};
  if (text == "canonical") return {Orientation::kCanonical, 0};
  if (text == "mean") return {Orientation::kMean, 0};
  const int count = game.SymmetryCount();
  if (text.size() == 1 && text[0] >= '0' && text[0] - '0' < count)
    return {Orientation::kFixed, text[0] - '0'};
  throw ConfigError("--orientation " + text + ": expected as-is, canonical, mean" +
                    (count > 1
                         ? " or a symmetry of " + game.Name() + " in [1, " + std::to_string(count - 1) + "]"
                         : std::string(" (") + game.Name() + " has no other symmetry)"));
}

namespace {

class OrientedEvaluator final : public Evaluator {
 public:
  OrientedEvaluator(const game::Game& game, std::unique_ptr<Evaluator> inner, Orientation o)
      : tables_(game), inner_(std::move(inner)), actions_(game.ActionCount()), orientation_(o) {
    ZF_CHECK(inner_->Config().actions == actions_) << "oriented evaluator: the network is for another game";
    ZF_CHECK(o.symmetry >= 0 && o.symmetry < tables_.Count()) << o.symmetry;
  }

  void Evaluate(const LeafChunk* chunks, int num_chunks) override {
    for (int c = 0; c < num_chunks; ++c) {
      if (chunks[c].count == 0) continue;
      if (orientation_.kind == Orientation::kMean)
        EvaluateMean(chunks[c]);
      else
        EvaluateTurned(chunks[c]);
    }
  }
  void RegisterHostMemory(void*, size_t) override {}  // the inner network reads our buffers, not the caller's
  uint32_t ModelVersion() const override { return inner_->ModelVersion(); }
  const NetConfig& Config() const override { return inner_->Config(); }
  std::string Describe() const override {
    switch (orientation_.kind) {
      case Orientation::kMean:
        return inner_->Describe() + ", averaged over " + std::to_string(tables_.Count()) + " symmetries";
      case Orientation::kCanonical:
        return inner_->Describe() + ", each position in its canonical orientation";
      default:
        return inner_->Describe() + ", each position turned by symmetry " +
               std::to_string(orientation_.symmetry);
    }
  }

 private:
  // Each leaf turned by its symmetry, one inner call, each policy turned back.
  void EvaluateTurned(const LeafChunk& chunk) {
    const size_t n = static_cast<size_t>(chunk.count), fb = static_cast<size_t>(tables_.FeatureBytes());
    const size_t a = static_cast<size_t>(actions_);
    features_.resize(n * fb);
    policy_.resize(n * a);
    turned_by_.resize(n);
    scratch_.resize(fb);
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* leaf = chunk.features + i * fb;
      turned_by_[i] = orientation_.kind == Orientation::kCanonical
                          ? game::HashCanonical(tables_, leaf, scratch_.data()).symmetry
                          : orientation_.symmetry;
      tables_.TransformFeatures(turned_by_[i], leaf, &features_[i * fb]);
    }
    const LeafChunk turned{features_.data(), policy_.data(), chunk.value, static_cast<int>(n)};
    inner_->Evaluate(&turned, 1);
    for (size_t i = 0; i < n; ++i)
      tables_.UntransformPolicy(turned_by_[i], &policy_[i * a], chunk.policy + i * a);
  }

  // The chunk's leaves in every orientation (orientation-major), one inner call,
  // then each leaf's mean written to the caller's policy and value.
  void EvaluateMean(const LeafChunk& chunk) {
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
  const Orientation orientation_;
  std::vector<uint8_t> features_;  // [symmetry][leaf] feature bytes (kMean), else [leaf]
  std::vector<float> policy_;  // [symmetry][leaf] logits, in that symmetry's orientation (kMean), else [leaf]
  std::vector<float> value_;   // [symmetry][leaf] (kMean)
  std::vector<int> turned_by_;    // [leaf]: the symmetry it was shown in (kFixed, kCanonical)
  std::vector<uint8_t> scratch_;  // HashCanonical's
};

}  // namespace

std::unique_ptr<Evaluator> MakeOrientedEvaluator(const game::Game& game, std::unique_ptr<Evaluator> inner,
                                                 Orientation o) {
  if (o.AsIs()) return inner;
  return std::make_unique<OrientedEvaluator>(game, std::move(inner), o);
}

}  // namespace zerofarm::eval
