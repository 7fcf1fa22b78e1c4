// The evaluator's batches in flight and their NaN check (batch_pipeline.h).
#include "batch_pipeline.h"

#include <cmath>

#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"

namespace zerofarm::proc {

void BatchPipeline::Start(eval::Evaluator& net, const std::vector<shm::LeafRun>& runs, uint64_t leaves,
                          const std::vector<shm::LeafRingConsumer>& rings, uint64_t now_ns) {
  ZF_CHECK(!Full(net)) << "a batch started with " << batches_.size() << " in flight";
  Batch b;
  b.version = net.ModelVersion();
  b.leaves = leaves;
  b.start_ns = now_ns;
  b.runs = runs;
  for (const auto& ring : rings) b.taken.push_back(ring.Taken());
  std::vector<eval::LeafChunk> chunks;
  chunks.reserve(runs.size());
  for (const auto& run : runs)
    chunks.push_back(eval::LeafChunk{run.features, run.policy, run.value, static_cast<int>(run.count)});
  b.ticket = net.Start(chunks.data(), static_cast<int>(chunks.size()));
  batches_.push_back(std::move(b));
  if (batches_.size() == 1) oldest_waited_ = false;
}

const BatchPipeline::Batch& BatchPipeline::WaitOldest(eval::Evaluator& net) {
  ZF_CHECK(!batches_.empty()) << "no batch in flight";
  Batch& b = batches_.front();
  if (oldest_waited_) return b;
  net.Finish(b.ticket);
  for (const auto& run : b.runs)
    for (uint32_t i = 0; i < run.count; ++i) run.model_version[i] = b.version;
  oldest_waited_ = true;
  return b;
}

void BatchPipeline::CompleteOldest(std::vector<shm::LeafRingConsumer>& rings) {
  ZF_CHECK(!batches_.empty() && oldest_waited_) << "completing a batch not waited for";
  const Batch& b = batches_.front();
  ZF_CHECK(b.taken.size() == rings.size()) << "rings changed with a batch in flight";
  for (size_t i = 0; i < rings.size(); ++i) rings[i].Complete(b.taken[i]);
  batches_.pop_front();
  oldest_waited_ = false;
}

bool NonFiniteCheck::NewModel(uint32_t version) {
  if (seen_ && version == version_) return false;
  seen_ = true;
  version_ = version;
  logged_ = false;
  block_.model_nonfinite.store(0, std::memory_order_relaxed);  // relaxed: a flag for the summary
  return true;
}

void NonFiniteCheck::Check(const std::vector<shm::LeafRun>& runs, uint32_t actions, uint32_t version,
                           uint64_t batch) {
  uint64_t bad = 0;
  for (const auto& run : runs)
    for (uint32_t i = 0; i < run.count; ++i)
      bad += !Finite(run.policy + uint64_t{i} * actions, actions, run.value[i]);
  if (bad == 0) return;
  // relaxed: statistics and a flag, read by the supervisor.
  block_.nonfinite_leaves.fetch_add(bad, std::memory_order_relaxed);
  const bool current = version == version_;
  if (current) block_.model_nonfinite.store(1, std::memory_order_relaxed);
  bool& logged = current ? logged_ : logged_older_;
  if (logged) return;
  logged = true;
  ZF_LOG(ERROR) << "model version " << version << " produced NaN or Inf for " << bad << " of " << batch
                << " leaves; the workers drop the games that asked (logged once per model version)";
}

bool NonFiniteCheck::Finite(const float* policy, uint32_t actions, float value) {
  if (!std::isfinite(value)) return false;
  for (uint32_t a = 0; a < actions; ++a)
    if (!std::isfinite(policy[a])) return false;
  return true;
}

}  // namespace zerofarm::proc
