#pragma once
// The only interface the rest of zerofarm sees of a network.
//
// A batch is a list of chunks; each chunk is `count` consecutive leaves laid
// out contiguously (structure of arrays, as in a shared-memory leaf ring):
// features  count x FeatureBytes uint8, read in place;
// policy    count x actions float, written in place (raw logits: masking
//           illegal moves and the softmax are the search's job);
// value     count float in [-1, 1] from the point of view of the player to
//           move, written in place.
// No copies beyond the one conversion of the features to the network's dtype.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "zerofarm/eval/weights.h"

namespace zerofarm::eval {

struct LeafChunk {
  const uint8_t* features = nullptr;
  float* policy = nullptr;
  float* value = nullptr;
  int count = 0;
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Evaluates every leaf of every chunk. Not thread-safe: one caller at a time.
  virtual void Evaluate(const LeafChunk* chunks, int num_chunks) = 0;
  // Memory that chunks will point into (a shared-memory segment), so a GPU
  // evaluator can pin it (cudaHostRegister) and copy straight from and to it
  // by DMA. Optional; a CPU evaluator ignores it. Call once, before Evaluate.
  virtual void RegisterHostMemory(void* base, size_t bytes) {}
  // Puts `weights` (a net of the same shape) in place of the ones in use,
  // keeping what was set up around them (pinned memory, CUDA graphs): a hot
  // reload without a new network. False where this evaluator cannot (the
  // caller then makes a new one). ConfigError for weights that do not fit,
  // checked before anything is copied, so the old ones stay in use.
  virtual bool UpdateWeights(const WeightSet& weights) { return false; }
  // The version of the weights in use (recorded with every position).
  virtual uint32_t ModelVersion() const = 0;
  virtual const NetConfig& Config() const = 0;
  virtual std::string Describe() const = 0;
};

// Deterministic pseudo-random outputs computed from the features (no LibTorch):
// the evaluator of builds with ZF_WITH_TORCH=OFF and of fast tests.
std::unique_ptr<Evaluator> MakeRandomEvaluator(const NetConfig& config, uint64_t seed);

}  // namespace zerofarm::eval
