// The leaf ring and the message queue across fork() over a real ShmSegment.
// Only the parent asserts: children report through their exit code and a
// result struct in a MAP_SHARED page. Children are killed and reaped, and the
// segment unlinked, even when a REQUIRE fails (Children and ShmSegment are RAII;
// children leave with _exit and so never unlink).
#include <sys/mman.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "shm_test_util.h"
#include "zerofarm/shm/futex.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::shm {
namespace {

using testing::Children;
using testing::FuzzTotals;
using Clock = std::chrono::steady_clock;

constexpr double kChildTimeoutS = 120.0;

// What the children report: one record per role, in a shared anonymous page.
struct Reports {
  FuzzTotals producer;
  FuzzTotals consumer;
  FuzzTotals replacement_producer;
  FuzzTotals replacement_consumer;
};

class SharedReports {
 public:
  SharedReports() {
    void* p = ::mmap(nullptr, sizeof(Reports), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    reports_ = new (p) Reports();
  }
  ~SharedReports() { ::munmap(reports_, sizeof(Reports)); }
  Reports* operator->() const { return reports_; }

 private:
  Reports* reports_;
};

int ExitCode(const FuzzTotals& t, uint64_t want_leaves) {
  if (t.errors != 0) return 1;
  if (want_leaves != 0 && t.leaves != want_leaves) return 2;
  return 0;
}

// Waits (bounded) until pred() holds.
template <class Pred>
bool WaitUntil(Pred pred, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

LayoutParams ForkParams(uint32_t slots) {
  LayoutParams p;
  p.num_workers = 2;
  p.num_evaluators = 1;
  p.ring_slots = slots;
  p.feature_bytes = 40;
  p.actions = 7;
  p.game_slot_bytes = 300;
  p.game_queue_depth = 16;
  return p;
}

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST_CASE("Futex: a process wakes a sleeper in another process", "[shm][multiprocess]") {
  ShmSegment seg = ShmSegment::Create("futex", 4096);
  auto* word = new (seg.data()) std::atomic<uint32_t>(0);
  auto* asleep = new (static_cast<char*>(seg.data()) + 64) std::atomic<uint32_t>(0);
  Children children;
  const pid_t child = children.Spawn([&] {
    const auto t0 = Clock::now();
    asleep->store(1);
    // A FUTEX_PRIVATE wait would not see the parent's wake and would time out.
    while (word->load() == 0) {
      if (!FutexWait(word, 0, 5'000'000'000ULL)) return 1;  // timed out: not woken
    }
    return Since(t0) < 4.0 ? 0 : 2;
  });
  REQUIRE(child > 0);
  REQUIRE(WaitUntil([&] { return asleep->load() == 1; }, 10.0));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let it reach FUTEX_WAIT
  word->store(1);
  FutexWakeAll(word);
  CHECK(children.Wait(child, 30.0) == 0);
}

TEST_CASE("Leaf ring across fork: millions of leaves with a checksum", "[shm][multiprocess][slow]") {
  const uint64_t total = testing::kTsan ? 200'000 : 3'000'000;
  const uint32_t slots = GENERATE(64u, 250u);
  const Layout layout = ComputeLayout(ForkParams(slots));
  ShmSegment seg = ShmSegment::Create("ringfork", layout.total_bytes);
  InitSegment(seg, layout, 1);
  SharedReports reports;
  Children children;
  const auto t0 = Clock::now();
  // The evaluator opens the segment by name, as an exec'd evaluator does.
  const pid_t evaluator = children.Spawn([&, name = seg.name()] {
    ShmView view(name);
    SegmentMap m(view.data(), view.size());
    LeafRingConsumer c = m.MakeLeafConsumer(1);
    reports->consumer = testing::RunLeafConsumer(c, m.EvaluatorDoorbell(0), total, 3, 64);
    return ExitCode(reports->consumer, total);
  });
  // The worker uses the mapping inherited through fork, as a worker does.
  const pid_t worker = children.Spawn([&] {
    SegmentMap m(seg.data(), seg.size());
    LeafRingProducer p = m.MakeLeafProducer(1);
    reports->producer = testing::RunLeafProducer(p, total, 3, 32);
    return ExitCode(reports->producer, total);
  });
  REQUIRE(evaluator > 0);
  REQUIRE(worker > 0);
  const int worker_code = children.Wait(worker, kChildTimeoutS);
  const int evaluator_code = children.Wait(evaluator, kChildTimeoutS);
  const double seconds = Since(t0);
  INFO("slots " << slots << ": " << total << " leaves in " << seconds << " s; worker waits "
                << reports->producer.waits << ", evaluator waits " << reports->consumer.waits);
  WARN("leaf ring across fork, " << slots << " slots: " << total << " leaves in " << seconds << " s ("
                                 << static_cast<uint64_t>(total / seconds)
                                 << " leaves/s; futex sleeps: worker " << reports->producer.waits
                                 << ", evaluator " << reports->consumer.waits << ")");
  CHECK(worker_code == 0);
  CHECK(evaluator_code == 0);
  CHECK(reports->producer.errors == 0);
  CHECK(reports->producer.leaves == total);
  CHECK(reports->consumer.leaves == total);
  CHECK(reports->producer.checksum == reports->consumer.checksum);
  const SegmentMap m(seg.data(), seg.size());
  CHECK(ReadCounts(m.Ring(1)).done == total);
}

TEST_CASE("Leaf ring across fork: futex ping-pong never loses a wake-up", "[shm][multiprocess]") {
  const uint64_t total = testing::kTsan ? 5'000 : 20'000;
  // 0: every wait sleeps; 2 us: some waits end in the spin, others sleep.
  const uint64_t spin_ns = GENERATE(0u, 2'000u);
  const Layout layout = ComputeLayout(ForkParams(4));
  ShmSegment seg = ShmSegment::Create("pingpong", layout.total_bytes);
  InitSegment(seg, layout, 1);
  const SegmentMap m(seg.data(), seg.size());
  SharedReports reports;
  Children children;
  const auto t0 = Clock::now();
  const pid_t evaluator = children.Spawn([&] {
    LeafRingConsumer c = m.MakeLeafConsumer(0);
    reports->consumer = testing::RunPingPongConsumer(c, m.EvaluatorDoorbell(0), total, spin_ns);
    return ExitCode(reports->consumer, total);
  });
  const pid_t worker = children.Spawn([&] {
    LeafRingProducer p = m.MakeLeafProducer(0);
    reports->producer = testing::RunPingPongProducer(p, total, 4, spin_ns);
    return ExitCode(reports->producer, total);
  });
  REQUIRE((evaluator > 0 && worker > 0));
  const int worker_code = children.Wait(worker, kChildTimeoutS);
  const int evaluator_code = children.Wait(evaluator, kChildTimeoutS);
  WARN("futex ping-pong across fork, spin " << spin_ns << " ns: " << total << " round trips in " << Since(t0)
                                            << " s; sleeps: worker " << reports->producer.waits
                                            << ", evaluator " << reports->consumer.waits);
  CHECK(worker_code == 0);
  CHECK(evaluator_code == 0);
  CHECK(reports->producer.errors == 0);  // no timeouts, no wrong results
  CHECK(reports->consumer.errors == 0);
  CHECK(reports->producer.checksum == reports->consumer.checksum);
}

TEST_CASE("Leaf ring across fork: a killed worker and a killed evaluator are replaced",
          "[shm][multiprocess][slow]") {
  const uint64_t total = testing::kTsan ? 200'000 : 1'000'000;
  const Layout layout = ComputeLayout(ForkParams(100));
  ShmSegment seg = ShmSegment::Create("ringkill", layout.total_bytes);
  InitSegment(seg, layout, 1);
  const SegmentMap m(seg.data(), seg.size());
  const LeafRingControl& ring = m.Ring(0);
  SharedReports reports;
  Children children;
  auto evaluator_fn = [&](FuzzTotals* out) {
    return [&, out] {
      LeafRingConsumer c = m.MakeLeafConsumer(0);
      m.EvaluatorDoorbell(0).CancelSleep();  // clear a dead predecessor's flag
      *out = testing::RunLeafConsumer(c, m.EvaluatorDoorbell(0), total, 9, 40);
      return ExitCode(*out, 0);
    };
  };
  auto worker_fn = [&](FuzzTotals* out) {
    return [&, out] {
      LeafRingProducer p = m.MakeLeafProducer(0);
      *out = testing::RunLeafProducer(p, total, 9, 24);
      return ExitCode(*out, 0);
    };
  };
  const pid_t evaluator1 = children.Spawn(evaluator_fn(&reports->consumer));
  const pid_t worker1 = children.Spawn(worker_fn(&reports->producer));
  REQUIRE((evaluator1 > 0 && worker1 > 0));

  REQUIRE(WaitUntil([&] { return ReadCounts(ring).done >= total / 4; }, 60.0));
  children.Kill(worker1);
  const LeafRingCounts at_worker_kill = ReadCounts(ring);
  const pid_t worker2 = children.Spawn(worker_fn(&reports->replacement_producer));
  REQUIRE(worker2 > 0);

  REQUIRE(WaitUntil([&] { return ReadCounts(ring).done >= total / 2; }, 60.0));
  children.Kill(evaluator1);
  const pid_t evaluator2 = children.Spawn(evaluator_fn(&reports->replacement_consumer));
  REQUIRE(evaluator2 > 0);

  CHECK(children.Wait(worker2, kChildTimeoutS) == 0);
  CHECK(children.Wait(evaluator2, kChildTimeoutS) == 0);
  INFO("worker killed at head " << at_worker_kill.head << " done " << at_worker_kill.done);
  CHECK(reports->replacement_producer.errors == 0);  // ghosts' results checked too
  CHECK(ReadCounts(ring).done == total);
  CHECK(ReadCounts(ring).head == total);
  // The replacement worker produced and checked everything after its ghosts.
  CHECK(reports->replacement_producer.leaves + at_worker_kill.head >= total);
}

TEST_CASE("Message queue across fork: 100k messages with a checksum", "[shm][multiprocess][slow]") {
  const uint64_t total = testing::kTsan ? 20'000 : 100'000;
  const LayoutParams params = ForkParams(16);
  const Layout layout = ComputeLayout(params);
  ShmSegment seg = ShmSegment::Create("mqfork", layout.total_bytes);
  InitSegment(seg, layout, 1);
  const SegmentMap m(seg.data(), seg.size());
  SharedReports reports;
  Children children;
  const auto t0 = Clock::now();
  const pid_t writer = children.Spawn([&] {
    MessageQueueConsumer c = m.MakeGameConsumer(1);
    reports->consumer = testing::RunMessageConsumer(c, m.WriterDoorbell(), total, 21, params.game_slot_bytes);
    return ExitCode(reports->consumer, total);
  });
  const pid_t worker = children.Spawn([&] {
    MessageQueueProducer p = m.MakeGameProducer(1);
    reports->producer = testing::RunMessageProducer(p, total, 21);
    return ExitCode(reports->producer, total);
  });
  REQUIRE((writer > 0 && worker > 0));
  CHECK(children.Wait(worker, kChildTimeoutS) == 0);
  CHECK(children.Wait(writer, kChildTimeoutS) == 0);
  WARN("message queue across fork: " << total << " messages in " << Since(t0) << " s");
  CHECK(reports->consumer.errors == 0);
  CHECK(reports->consumer.leaves == total);
  CHECK(reports->producer.checksum == reports->consumer.checksum);
  CHECK(m.GameQueue(1).committed_tail.load() == total);
}

TEST_CASE("Message queue across fork: a killed writer's replacement re-reads uncommitted messages",
          "[shm][multiprocess][slow]") {
  const uint64_t total = testing::kTsan ? 20'000 : 100'000;
  const LayoutParams params = ForkParams(16);
  const Layout layout = ComputeLayout(params);
  ShmSegment seg = ShmSegment::Create("mqkill", layout.total_bytes);
  InitSegment(seg, layout, 1);
  const SegmentMap m(seg.data(), seg.size());
  const MessageQueueControl& q = m.GameQueue(0);
  SharedReports reports;
  Children children;
  auto writer_fn = [&](FuzzTotals* out) {
    return [&, out] {
      MessageQueueConsumer c = m.MakeGameConsumer(0);
      *out = testing::RunMessageConsumer(c, m.WriterDoorbell(), total, 8, params.game_slot_bytes);
      return ExitCode(*out, 0);
    };
  };
  const pid_t writer1 = children.Spawn(writer_fn(&reports->consumer));
  const pid_t worker = children.Spawn([&] {
    MessageQueueProducer p = m.MakeGameProducer(0);
    reports->producer = testing::RunMessageProducer(p, total, 8);
    return ExitCode(reports->producer, total);
  });
  REQUIRE((writer1 > 0 && worker > 0));
  REQUIRE(WaitUntil([&] { return q.committed_tail.load() >= total / 3; }, 60.0));
  children.Kill(writer1);
  const uint64_t committed_at_kill = q.committed_tail.load();
  const pid_t writer2 = children.Spawn(writer_fn(&reports->replacement_consumer));
  REQUIRE(writer2 > 0);
  CHECK(children.Wait(worker, kChildTimeoutS) == 0);
  CHECK(children.Wait(writer2, kChildTimeoutS) == 0);
  // The replacement checked that its first message was committed_at_kill and
  // every later one in order.
  CHECK(reports->replacement_consumer.errors == 0);
  CHECK(reports->replacement_consumer.leaves == total - committed_at_kill);
  CHECK(q.committed_tail.load() == total);
}

}  // namespace
}  // namespace zerofarm::shm
