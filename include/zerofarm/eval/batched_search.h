#pragma once
// The one batched in-process search driver: many searches (a position's MCTS,
// a self-play game) run in one process, their leaves gathered into one
// Evaluator call per round. `zerofarm selfplay` (eval/inprocess_selfplay.h),
// `zerofarm eval` and `loop` (learn/strength.h: move error, arena), the GTP
// engine and the tests all drive their searches through it. The farm's
// workers do not: they hand their leaves to an evaluator process through a
// shared-memory ring instead.
//
// Thread safety: none; a BatchedSearch belongs to one thread.
#include <cstdint>
#include <vector>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/mcts/search.h"

namespace zerofarm::eval {

// A search in progress, as the driver sees it.
class LeafSource {
 public:
  virtual ~LeafSource() = default;
  // True when this source will ask for no more leaves.
  virtual bool Done() const = 0;
  // Appends up to `max` leaves that need the network to `out` (see
  // mcts::Search::SelectLeaves); returns how many.
  virtual int NextLeaves(int max, std::vector<mcts::LeafRequest>* out) = 0;
  // The network's answer for the leaf `token`: ActionCount() logits and the
  // value for the player to move there, from the model `model_version`.
  virtual void Complete(int token, const float* logits, float value, uint32_t model_version) = 0;
};

class BatchedSearch {
 public:
  // `net` must outlive this object; max_batch < 1 counts as 1.
  BatchedSearch(const game::Game& game, Evaluator& net, int max_batch);

  // One round: starting at sources[start] and going round (wrapping), every
  // source that is not Done() adds up to `per_source` leaves (0: as many as
  // the batch has room for) while they fit, then the batch is evaluated in one
  // Evaluate call (none when it is empty) and each leaf's result handed back.
  // Returns false when every source was Done().
  bool Round(const std::vector<LeafSource*>& sources, size_t start, int per_source);

  int64_t Leaves() const { return leaves_; }    // evaluated by the network
  int64_t Batches() const { return batches_; }  // Evaluate calls

 private:
  int Gather(const std::vector<LeafSource*>& sources, size_t start, int per_source, bool* pending);

  Evaluator& net_;
  size_t feature_bytes_;
  size_t actions_;
  int max_batch_;
  // The batch, laid out as one chunk (structure of arrays), and who asked for each row.
  std::vector<uint8_t> features_;
  std::vector<float> policy_;
  std::vector<float> value_;
  struct Owner {
    LeafSource* source;
    int token;
  };
  std::vector<Owner> owners_;
  std::vector<mcts::LeafRequest> leaves_buffer_;
  int64_t leaves_ = 0;
  int64_t batches_ = 0;
};

// Runs every search to its budget, batching the leaves of all of them into
// one Evaluate call per round (at most max_batch leaves), the round's first
// search moving on by one each round so that a small max_batch still serves
// every search. Each search must have its root set.
void RunSearches(const game::Game& game, Evaluator& net, const std::vector<mcts::Search*>& searches,
                 int max_batch);

}  // namespace zerofarm::eval
