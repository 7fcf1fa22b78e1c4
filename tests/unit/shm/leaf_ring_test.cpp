#include "zerofarm/shm/leaf_ring.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "hang_bound.h"
#include "shm_test_util.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::shm {
namespace {

using testing::LocalSegment;

LayoutParams RingParams(uint32_t slots, uint32_t feature_bytes = 4, uint32_t actions = 3) {
  LayoutParams p;
  p.num_workers = 2;
  p.num_evaluators = 1;
  p.ring_slots = slots;
  p.feature_bytes = feature_bytes;
  p.actions = actions;
  return p;
}

// Writes leaf seq's features as four bytes of (uint8_t)seq.
void Write(LeafRingProducer& p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    std::memset(p.SlotFeatures(p.Head() + i), static_cast<int>((p.Head() + i) & 0xFF), 4);
  p.Publish(n);
}
// "Evaluates" a run: value = first feature byte, policy[a] = a, version 9.
void Answer(const LeafRun& run, uint32_t actions) {
  for (uint32_t k = 0; k < run.count; ++k) {
    run.value[k] = run.features[k * 4];
    for (uint32_t a = 0; a < actions; ++a) run.policy[k * actions + a] = static_cast<float>(a);
    run.model_version[k] = 9;
  }
}

TEST_CASE("Leaf ring: a fresh ring is empty", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingProducer p(seg.map().Ring(0), seg.map().EvaluatorDoorbell(0));
  LeafRingConsumer c(seg.map().Ring(0));
  CHECK(p.FreeSlots() == 8);
  CHECK(p.Head() == 0);
  CHECK(p.Ghosts().size() == 0);
  CHECK(c.Available() == 0);
  const LeafRuns runs = c.Take(100);
  CHECK(runs.num_runs == 0);
  CHECK(runs.total == 0);
  CHECK(p.PollCompleted() == 0);
}

TEST_CASE("Leaf ring: a full ring refuses more leaves until results are consumed", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingProducer p(seg.map().Ring(0), Doorbell());
  LeafRingConsumer c(seg.map().Ring(0));
  Write(p, 8);
  CHECK(p.FreeSlots() == 0);
  CHECK(p.InFlight() == 8);
  CHECK(ReadCounts(seg.map().Ring(0)).head == 8);
  CHECK(c.Available() == 8);
  LeafRuns runs = c.Take(100);
  REQUIRE(runs.num_runs == 1);
  CHECK(runs.runs[0].count == 8);
  Answer(runs.runs[0], 3);
  c.Complete(5);
  CHECK(p.FreeSlots() == 0);  // completed is not consumed
  CHECK(p.PollCompleted() == 5);
  CHECK(p.FreeSlots() == 0);
  for (uint64_t s = 0; s < 5; ++s) {
    const LeafResult r = p.Result(s);
    CHECK(r.value == static_cast<float>(s));
    CHECK(r.model_version == 9);
    CHECK(r.policy[2] == 2.0f);
  }
  p.Consume(3);
  CHECK(p.FreeSlots() == 3);
  p.Consume(5);
  CHECK(p.FreeSlots() == 5);
  c.CompleteAllTaken();
  CHECK(p.PollCompleted() == 8);
  CHECK(ReadCounts(seg.map().Ring(0)).done == 8);
}

TEST_CASE("Leaf ring: a range that wraps around is taken as two runs", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingControl& ring = seg.map().Ring(1);
  LeafRingProducer p(ring, Doorbell());
  LeafRingConsumer c(ring);
  Write(p, 5);
  LeafRuns first = c.Take(5);
  Answer(first.runs[0], 3);
  c.CompleteAllTaken();
  p.PollCompleted();
  p.Consume(5);
  Write(p, 6);  // seqs 5..10 in slots 5, 6, 7, 0, 1, 2
  const LeafRuns runs = c.Take(100);
  REQUIRE(runs.num_runs == 2);
  CHECK(runs.total == 6);
  CHECK(runs.runs[0].start_seq == 5);
  CHECK(runs.runs[0].count == 3);
  CHECK(runs.runs[1].start_seq == 8);
  CHECK(runs.runs[1].count == 3);
  const auto* base = reinterpret_cast<const uint8_t*>(&ring);
  CHECK(runs.runs[1].features == base + ring.features_offset);  // slot 0
  CHECK(runs.runs[0].features == base + ring.features_offset + 5 * 4);
  CHECK(runs.runs[1].features[0] == 8);
  CHECK(runs.runs[1].value == reinterpret_cast<const float*>(base + ring.value_offset));
  Answer(runs.runs[0], 3);
  Answer(runs.runs[1], 3);
  c.Complete(8);  // the first run only
  CHECK(p.PollCompleted() == 8);
  c.Complete(11);
  CHECK(p.PollCompleted() == 11);
  for (uint64_t s = 5; s < 11; ++s) CHECK(p.Result(s).value == static_cast<float>(s));
}

TEST_CASE("Leaf ring: Take respects max and a one-slot ring works", "[shm]") {
  SECTION("max") {
    LocalSegment seg(RingParams(16));
    LeafRingProducer p(seg.map().Ring(0), Doorbell());
    LeafRingConsumer c(seg.map().Ring(0));
    Write(p, 10);
    CHECK(c.Take(4).total == 4);
    CHECK(c.Available() == 6);
    CHECK(c.Take(100).total == 6);
    CHECK(c.Taken() == 10);
    CHECK(c.Done() == 0);
  }
  SECTION("one slot") {
    LocalSegment seg(RingParams(1));
    LeafRingProducer p(seg.map().Ring(0), Doorbell());
    LeafRingConsumer c(seg.map().Ring(0));
    for (uint64_t s = 0; s < 5; ++s) {
      REQUIRE(p.FreeSlots() == 1);
      Write(p, 1);
      CHECK(p.FreeSlots() == 0);
      const LeafRuns runs = c.Take(8);
      REQUIRE(runs.total == 1);
      Answer(runs.runs[0], 3);
      c.CompleteAllTaken();
      REQUIRE(p.PollCompleted() == s + 1);
      CHECK(p.Result(s).value == static_cast<float>(s));
      p.Consume(s + 1);
    }
  }
}

TEST_CASE("Leaf ring: a replacement worker sees the dead worker's leaves as ghosts", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingControl& ring = seg.map().Ring(0);
  LeafRingConsumer c(ring);
  {
    LeafRingProducer dead(ring, Doorbell());
    Write(dead, 5);
    const LeafRuns runs = c.Take(3);
    Answer(runs.runs[0], 3);
    c.Complete(2);
  }  // the worker dies with leaves 2..4 in flight
  LeafRingProducer p(ring, Doorbell());
  const SeqRange ghosts = p.Ghosts();
  CHECK(ghosts.begin == 2);
  CHECK(ghosts.end == 5);
  CHECK(p.Consumed() == 2);
  CHECK(p.Head() == 5);
  CHECK(p.FreeSlots() == 5);  // ghosts hold their slots
  CHECK(p.IsGhost(4));
  CHECK_FALSE(p.IsGhost(5));
  Write(p, 5);  // its own leaves 5..9
  CHECK(p.FreeSlots() == 0);
  const LeafRuns runs = c.Take(100);
  CHECK(runs.total == 7);  // leaves 3..9 (2 was taken before)
  for (uint32_t r = 0; r < runs.num_runs; ++r) Answer(runs.runs[r], 3);
  c.CompleteAllTaken();
  CHECK(p.PollCompleted() == 10);
  for (uint64_t s = 5; s < 10; ++s) CHECK(p.Result(s).value == static_cast<float>(s));
  p.Consume(10);
  CHECK(p.FreeSlots() == 8);
  const SeqRange again = p.AttachAsProducer();  // nothing in flight: no ghosts
  CHECK(again.size() == 0);
}

TEST_CASE("Leaf ring: a replacement evaluator redoes leaves taken but not completed", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingControl& ring = seg.map().Ring(0);
  LeafRingProducer p(ring, Doorbell());
  Write(p, 6);
  {
    LeafRingConsumer dead(ring);
    const LeafRuns runs = dead.Take(6);
    Answer(runs.runs[0], 3);
    dead.Complete(2);
  }
  LeafRingConsumer c(ring);
  CHECK(c.Done() == 2);
  CHECK(c.Taken() == 2);
  CHECK(c.Available() == 4);
  const LeafRuns runs = c.Take(100);
  REQUIRE(runs.num_runs == 1);
  CHECK(runs.runs[0].start_seq == 2);
  CHECK(runs.runs[0].count == 4);
}

TEST_CASE("Leaf ring: WaitForResults returns ready, times out, or reports a dead peer", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingProducer p(seg.map().Ring(0), Doorbell());
  LeafRingConsumer c(seg.map().Ring(0));
  Write(p, 2);
  CHECK(p.WaitForResults(1'000'000) == WaitStatus::kTimeout);
  CHECK(p.WaitForResults(1'000'000, [] { return false; }) == WaitStatus::kPeerDead);
  CHECK(p.WaitForResults(1'000'000, [] { return true; }) == WaitStatus::kTimeout);
  CHECK(seg.map().Ring(0).worker_waits.load() == 3);
  Answer(c.Take(1).runs[0], 3);
  c.CompleteAllTaken();
  CHECK(p.WaitForResults(5'000'000'000ULL) == WaitStatus::kReady);  // at once
  CHECK(p.Completed() == 1);

  SECTION("the evaluator's Complete wakes a sleeping worker") {
    // Not timed (hang_bound.h): one wait of kLongWaitNs, which only a lost
    // wake-up runs out; the hand-off's speed is `zerofarm bench`'s (handoff).
    p.Consume(1);
    std::thread evaluator([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      Answer(c.Take(1).runs[0], 3);
      c.CompleteAllTaken();
    });
    const auto t0 = std::chrono::steady_clock::now();
    WaitStatus s = WaitStatus::kTimeout;
    while (s != WaitStatus::kReady && zerofarm::testing::SecondsSince(t0) < zerofarm::testing::kHangSeconds)
      s = p.WaitForResults(zerofarm::testing::kLongWaitNs);
    const double took = zerofarm::testing::SecondsSince(t0);
    evaluator.join();
    CHECK(s == WaitStatus::kReady);
    CHECK(took < zerofarm::testing::kHangSeconds);
    CHECK(p.PollCompleted() == 2);
    CHECK(p.Result(1).value == 1);  // the evaluator's answer to leaf 1 (its first feature byte)
  }
}

TEST_CASE("Leaf ring: Publish rings the evaluator's doorbell only when it sleeps", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingProducer p = seg.map().MakeLeafProducer(1);
  LeafRingConsumer c = seg.map().MakeLeafConsumer(1);
  Doorbell bell = seg.map().EvaluatorDoorbell(0);
  DoorbellWords& words = seg.map().Evaluator(0).doorbell;
  Write(p, 1);
  CHECK(words.word.load() == 0);  // nobody slept: no bump, no syscall
  c.Take(1);
  const uint32_t ticket = bell.PrepareToSleep();
  CHECK(c.Available() == 0);
  Write(p, 1);
  CHECK(words.word.load() == 1);
  CHECK(bell.Sleep(ticket, 5'000'000'000ULL));  // returns at once
  CHECK(c.Available() == 1);
}

TEST_CASE("Leaf ring: two-thread fuzz with a checksum", "[shm]") {
  const uint32_t slots = GENERATE(1u, 7u, 64u, 256u);
  // A tiny ring is one hand-off per leaf or two: fewer leaves keep it quick.
  const uint64_t total = (testing::kTsan ? 300'000 : 1'000'000) / (slots < 8 ? 10 : 1);
  LayoutParams params = RingParams(slots, 37, 5);
  LocalSegment seg(params);
  const SegmentMap& m = seg.map();
  testing::FuzzTotals produced, consumed;
  std::thread evaluator([&] {
    LeafRingConsumer c = m.MakeLeafConsumer(0);
    consumed = testing::RunLeafConsumer(c, m.EvaluatorDoorbell(0), total, 11, 48);
  });
  LeafRingProducer p = m.MakeLeafProducer(0);
  produced = testing::RunLeafProducer(p, total, 11, 32);
  evaluator.join();
  INFO("slots " << slots << ", producer waits " << produced.waits << ", consumer waits " << consumed.waits);
  CHECK(produced.errors == 0);
  CHECK(produced.leaves == total);
  CHECK(consumed.leaves == total);
  CHECK(produced.checksum == consumed.checksum);
  CHECK(ReadCounts(m.Ring(0)).done == total);
}

TEST_CASE("Leaf ring: futex ping-pong between two threads never loses a wake-up", "[shm]") {
  const uint64_t total = testing::kTsan ? 5'000 : 20'000;
  // 0: every wait sleeps; 2 us: some waits end in the spin, others sleep.
  const uint64_t spin_ns = GENERATE(0u, 2'000u);
  LocalSegment seg(RingParams(4, 16, 2));
  const SegmentMap& m = seg.map();
  testing::FuzzTotals produced, consumed;
  std::thread evaluator([&] {
    LeafRingConsumer c = m.MakeLeafConsumer(0);
    consumed = testing::RunPingPongConsumer(c, m.EvaluatorDoorbell(0), total, spin_ns);
  });
  LeafRingProducer p = m.MakeLeafProducer(0);
  produced = testing::RunPingPongProducer(p, total, 4, spin_ns);
  evaluator.join();  // on a failure it returns after one timeout of its own
  INFO("spin " << spin_ns << " ns, worker sleeps " << produced.waits << ", evaluator sleeps "
               << consumed.waits);
  CHECK(produced.errors == 0);  // no timeouts, no wrong results
  CHECK(consumed.errors == 0);
  CHECK(produced.leaves == total);
  CHECK(produced.checksum == consumed.checksum);
}

TEST_CASE("Leaf ring: impossible counters make either side refuse the ring, never read past it", "[shm]") {
  LocalSegment seg(RingParams(8));
  LeafRingControl& ring = seg.map().Ring(0);
  LeafRingProducer p(ring, Doorbell());
  Write(p, 3);
  SECTION("done above head: results for leaves never published") {
    ring.done.store(5);
    CHECK(p.PollCompleted() == 0);  // the last good value, not 5
    CHECK(p.Corrupt());
  }
  SECTION("done going backwards") {
    LeafRingConsumer c(ring);
    Answer(c.Take(3).runs[0], 3);
    c.CompleteAllTaken();
    CHECK(p.PollCompleted() == 3);
    ring.done.store(1);
    CHECK(p.PollCompleted() == 3);
    CHECK(p.Corrupt());
  }
  SECTION("a producer attaching to more than a ring's worth in flight") {
    ring.head.store(100);
    LeafRingProducer q(ring, Doorbell());
    CHECK(q.Corrupt());
    CHECK(q.InFlight() == 0);  // attached to nothing: no slot is read on the ring's word
  }
  SECTION("an evaluator attaching to a head more than a ring ahead of done") {
    ring.head.store(100);
    LeafRingConsumer c(ring);
    CHECK(c.Corrupt());
    CHECK(c.Take(8).total == 0);
  }
  SECTION("sound counters are not corrupt") {
    LeafRingConsumer c(ring);
    CHECK_FALSE(c.Corrupt());
    CHECK(p.PollCompleted() == 0);
    CHECK_FALSE(p.Corrupt());
    CHECK_FALSE(p.Refused());
  }
  SECTION("an evaluator that stops serving the ring says so to its worker") {
    LeafRingConsumer c(ring);
    CHECK_FALSE(p.Refused());
    c.Refuse();
    CHECK(p.Refused());
    LeafRingProducer successor(ring, Doorbell());  // a restarted worker sees it too
    CHECK(successor.Refused());
  }
}

}  // namespace
}  // namespace zerofarm::shm
