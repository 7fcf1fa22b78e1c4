#pragma once
// The cross-process hand-off micro-benchmark of `zerofarm bench` (part c):
// what it costs to move one leaf from a worker process to an evaluator
// process and its result back, with no network in between.
//
// The "worker" (this process) writes `batch` leaves of Connect Four size (126
// feature bytes), hands them over in one burst and waits for the 7 policy
// floats and the value of each; the "evaluator" (a fork()ed child) takes
// them, writes a result derived from the features, and hands them back. The
// cost per leaf is the wall time of many such round trips over the leaves
// moved. Transports:
//   leaf_ring   the farm's own: a real segment (InitSegment), LeafRingProducer
//               and LeafRingConsumer, the evaluator's doorbell and the
//               worker's wake word: both sides spin up to `spin_ns`, then
//               sleep in the futex, exactly as in a farm (spin 0: futex only);
//   pipe        two pipes, the features one way and the results the other;
//   boost_spsc  two boost::lockfree::spsc_queue of fixed-size messages placed
//               in a shared-memory segment; the waiting side spins, then
//               yields (no futex: the queue has none).
#include <cstdint>
#include <string>

#include "zerofarm/shm/spin_wait.h"

namespace zerofarm::bench {

enum class HandoffTransport { kLeafRing, kPipe, kBoostSpsc };
const char* TransportName(HandoffTransport t);

struct HandoffResult {
  HandoffTransport transport = HandoffTransport::kLeafRing;
  uint32_t batch = 0;       // leaves per burst
  uint64_t leaves = 0;      // leaves moved there and back
  double seconds = 0;       // wall time of the round trips
  uint64_t spin_ns = 0;     // leaf_ring: the spin budget of both sides
  uint64_t spins_won = 0;   // leaf_ring: the worker side's waits that ended in the spin
  uint64_t spins_lost = 0;  // ... and that ran out of budget and slept
  double NsPerLeaf() const { return leaves ? seconds * 1e9 / static_cast<double>(leaves) : 0; }
};

// Runs round trips of `batch` (1..1024) leaves for about `seconds`; the leaf
// ring's two sides spin up to `spin_ns` before they sleep. Forks
// one child, which exits (and is reaped) before this returns. Throws
// zerofarm::Error on a failed fork/pipe/segment or when the child fails the
// checks on the data it received.
HandoffResult MeasureHandoff(HandoffTransport transport, uint32_t batch, double seconds,
                             uint64_t spin_ns = shm::DefaultSpinBudgetNs());

}  // namespace zerofarm::bench
