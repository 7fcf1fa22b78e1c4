// The batched in-process search driver (eval/batched_search.h).
#include "zerofarm/eval/batched_search.h"

#include <algorithm>

namespace zerofarm::eval {

BatchedSearch::BatchedSearch(const game::Game& game, Evaluator& net, int max_batch)
    : net_(net),
      feature_bytes_(static_cast<size_t>(game.Shape().FeatureBytes())),
      actions_(static_cast<size_t>(game.ActionCount())),
      max_batch_(std::max(1, max_batch)),
      features_(static_cast<size_t>(max_batch_) * feature_bytes_),
      policy_(static_cast<size_t>(max_batch_) * actions_),
      value_(static_cast<size_t>(max_batch_)) {
  owners_.reserve(static_cast<size_t>(max_batch_));
}

int BatchedSearch::Gather(const std::vector<LeafSource*>& sources, size_t start, int per_source,
                          bool* pending) {
  owners_.clear();
  *pending = false;
  for (size_t k = 0; k < sources.size(); ++k) {
    LeafSource* s = sources[(start + k) % sources.size()];
    if (s->Done()) continue;
    *pending = true;
    const int room = max_batch_ - static_cast<int>(owners_.size());
    const int ask = per_source > 0 ? per_source : room;
    if (room <= 0 || room < ask) break;
    leaves_buffer_.clear();
    s->NextLeaves(ask, &leaves_buffer_);
    for (const auto& leaf : leaves_buffer_) {
      leaf.state->EncodeFeatures(&features_[owners_.size() * feature_bytes_]);
      owners_.push_back(Owner{s, leaf.token});
    }
  }
  return static_cast<int>(owners_.size());
}

bool BatchedSearch::Round(const std::vector<LeafSource*>& sources, size_t start, int per_source) {
  bool pending = false;
  const int n = Gather(sources, start, per_source, &pending);
  if (n == 0) return pending;  // nothing to evaluate (terminal leaves were backed up already)
  const LeafChunk chunk{features_.data(), policy_.data(), value_.data(), n};
  net_.Evaluate(&chunk, 1);
  leaves_ += n;
  batches_ += 1;
  const uint32_t version = net_.ModelVersion();
  for (size_t i = 0; i < owners_.size(); ++i)
    owners_[i].source->Complete(owners_[i].token, &policy_[i * actions_], value_[i], version);
  return pending;
}

namespace {

// An mcts::Search as a LeafSource.
class SearchSource : public LeafSource {
 public:
  explicit SearchSource(mcts::Search* search) : search_(search) {}
  bool Done() const override { return search_->Done(); }
  int NextLeaves(int max, std::vector<mcts::LeafRequest>* out) override {
    return search_->SelectLeaves(max, out);
  }
  void Complete(int token, const float* logits, float value, uint32_t /*model_version*/) override {
    search_->CompleteLeaf(token, logits, value);
  }

 private:
  mcts::Search* search_;
};

}  // namespace

void RunSearches(const game::Game& game, Evaluator& net, const std::vector<mcts::Search*>& searches,
                 int max_batch) {
  std::vector<SearchSource> sources(searches.begin(), searches.end());
  std::vector<LeafSource*> ptrs;
  for (auto& s : sources) ptrs.push_back(&s);
  BatchedSearch driver(game, net, max_batch);
  size_t next = 0;  // round-robin start, so a small max_batch still serves every search
  while (driver.Round(ptrs, next, 0)) next = (next + 1) % ptrs.size();
}

}  // namespace zerofarm::eval
