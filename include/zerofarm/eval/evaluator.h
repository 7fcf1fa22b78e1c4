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

#include "zerofarm/core/error.h"
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
  // Batches in flight (issue 77): Start begins a batch and returns its
  // ticket; Finish(ticket) returns once its outputs are in the chunks' memory.
  // From Start to Finish that memory (features, policy, value) belongs to the
  // evaluator: the caller neither reads, rewrites nor hands it back. At most
  // Depth() batches are started and not finished, finished in the order they
  // started (Error otherwise). UpdateWeights between a Start and its Finish
  // is allowed: the batch gets the weights in use at its Start. Destroying
  // the evaluator waits for what is in flight (nothing is written after).
  // The default, for evaluators that do not pipeline: Start evaluates at once.
  virtual int Depth() const { return 1; }
  virtual uint64_t Start(const LeafChunk* chunks, int num_chunks) {
    Evaluate(chunks, num_chunks);
    return 0;
  }
  virtual void Finish(uint64_t ticket) {}
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

// The tickets of a pipelined evaluator (Start/Finish): 1, 2, ... in order,
// at most `depth` unfinished, finished oldest first. Ticket t uses lane
// t % depth (its buffers, its stream). Not thread-safe.
class BatchTickets {
 public:
  static constexpr int kMaxDepth = 4;
  // ConfigError unless 1 <= depth <= kMaxDepth.
  explicit BatchTickets(int depth) : depth_(depth) {
    if (depth < 1 || depth > kMaxDepth)
      throw ConfigError("evaluator depth " + std::to_string(depth) + " is not between 1 and " +
                        std::to_string(kMaxDepth));
  }
  int Depth() const { return depth_; }
  // The next ticket; Error when `depth` batches are unfinished.
  uint64_t Begin() {
    if (InFlight() >= depth_)
      throw Error("evaluator: a batch started with " + std::to_string(depth_) + " in flight");
    return ++started_;
  }
  // Error unless `ticket` is the oldest unfinished one.
  void End(uint64_t ticket) {
    if (InFlight() == 0 || ticket != finished_ + 1)
      throw Error("evaluator: batch " + std::to_string(ticket) + " finished out of order");
    finished_ = ticket;
  }
  int Lane(uint64_t ticket) const { return static_cast<int>(ticket % static_cast<uint64_t>(depth_)); }
  int InFlight() const { return static_cast<int>(started_ - finished_); }
  // The oldest unfinished ticket (when InFlight() > 0).
  uint64_t Oldest() const { return finished_ + 1; }

 private:
  int depth_;
  uint64_t started_ = 0, finished_ = 0;  // tickets (finished_, started_] are in flight
};

// Deterministic pseudo-random outputs computed from the features (no LibTorch):
// the evaluator of builds with ZF_WITH_TORCH=OFF and of fast tests.
std::unique_ptr<Evaluator> MakeRandomEvaluator(const NetConfig& config, uint64_t seed);

}  // namespace zerofarm::eval
