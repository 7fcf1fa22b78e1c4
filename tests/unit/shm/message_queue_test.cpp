#include "zerofarm/shm/message_queue.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>

#include "shm_test_util.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::shm {
namespace {

using testing::LocalSegment;

LayoutParams QueueParams(uint32_t depth, uint32_t slot_bytes) {
  LayoutParams p;
  p.num_workers = 2;
  p.game_queue_depth = depth;
  p.game_slot_bytes = slot_bytes;
  return p;
}

std::string Text(const Message& m) { return std::string(reinterpret_cast<const char*>(m.data), m.size); }

PushResult Push(MessageQueueProducer& p, const std::string& s) {
  return p.TryPush(s.data(), static_cast<uint32_t>(s.size()));
}

TEST_CASE("Message queue: messages come out in order, with their lengths", "[shm]") {
  LocalSegment seg(QueueParams(4, 100));
  MessageQueueProducer p = seg.map().MakeGameProducer(1);
  MessageQueueConsumer c = seg.map().MakeGameConsumer(1);
  CHECK(p.MaxMessageBytes() == 100);
  CHECK_FALSE(c.ReadNext().has_value());
  CHECK(Push(p, "one") == PushResult::kOk);
  CHECK(Push(p, "") == PushResult::kOk);
  CHECK(Push(p, std::string(100, 'x')) == PushResult::kOk);
  CHECK(c.Unread() == 3);
  CHECK(c.Pending() == 3);
  auto m = c.ReadNext();
  REQUIRE(m);
  CHECK(m->seq == 0);
  CHECK(Text(*m) == "one");
  m = c.ReadNext();
  REQUIRE(m);
  CHECK(m->size == 0);
  m = c.ReadNext();
  REQUIRE(m);
  CHECK(Text(*m) == std::string(100, 'x'));
  CHECK_FALSE(c.ReadNext().has_value());
  CHECK(c.Pending() == 3);  // read, not committed
  c.Commit(3);
  CHECK(c.Pending() == 0);
  CHECK(seg.map().GameQueue(1).committed_tail.load() == 3);
}

TEST_CASE("Message queue: full and too large are told apart", "[shm]") {
  LocalSegment seg(QueueParams(3, 16));
  MessageQueueProducer p(seg.map().GameQueue(0), Doorbell());
  MessageQueueConsumer c(seg.map().GameQueue(0));
  CHECK(Push(p, std::string(17, 'a')) == PushResult::kTooLarge);
  CHECK(Push(p, "a") == PushResult::kOk);
  CHECK(Push(p, "b") == PushResult::kOk);
  CHECK(Push(p, "c") == PushResult::kOk);
  CHECK(p.FreeSlots() == 0);
  CHECK(Push(p, "d") == PushResult::kFull);
  CHECK(Push(p, std::string(17, 'a')) == PushResult::kTooLarge);
  CHECK_FALSE(p.WaitForSpace(1'000'000));  // times out
  CHECK(seg.map().GameQueue(0).producer_full_waits.load() == 1);
  REQUIRE(c.ReadNext());
  CHECK(Push(p, "d") == PushResult::kFull);  // read is not enough: the slot is freed by Commit
  c.Commit(1);
  CHECK(p.WaitForSpace(1'000'000));
  CHECK(Push(p, "d") == PushResult::kOk);
  CHECK(Push(p, "e") == PushResult::kFull);
}

TEST_CASE("Message queue: Peek does not advance, Rewind goes back to the last commit", "[shm]") {
  LocalSegment seg(QueueParams(8, 16));
  MessageQueueProducer p(seg.map().GameQueue(0), Doorbell());
  MessageQueueConsumer c(seg.map().GameQueue(0));
  for (const char* s : {"a", "b", "c", "d"}) REQUIRE(Push(p, s) == PushResult::kOk);
  REQUIRE(c.Peek(0));
  CHECK(Text(*c.Peek(0)) == "a");
  CHECK(Text(*c.Peek(3)) == "d");
  CHECK_FALSE(c.Peek(4).has_value());
  CHECK(c.ReadCursor() == 0);
  c.ReadNext();
  c.ReadNext();
  c.Commit(1);
  c.ReadNext();
  CHECK(c.ReadCursor() == 3);
  c.Rewind();
  CHECK(c.ReadCursor() == 1);
  CHECK(Text(*c.ReadNext()) == "b");
}

TEST_CASE("Message queue: a replacement consumer re-reads what was not committed", "[shm]") {
  LocalSegment seg(QueueParams(4, 32));
  MessageQueueControl& q = seg.map().GameQueue(0);
  MessageQueueProducer p(q, Doorbell());
  for (const char* s : {"g0", "g1", "g2", "g3"}) REQUIRE(Push(p, s) == PushResult::kOk);
  {
    MessageQueueConsumer dead(q);
    dead.ReadNext();
    dead.ReadNext();
    dead.ReadNext();
    dead.Commit(1);  // g0 is durable; g1 and g2 were read but not written out
  }
  MessageQueueConsumer c(q);
  CHECK(c.Committed() == 1);
  CHECK(c.ReadCursor() == 1);
  CHECK(c.Pending() == 3);
  auto m = c.ReadNext();
  REQUIRE(m);
  CHECK(m->seq == 1);
  CHECK(Text(*m) == "g1");
  CHECK(Push(p, "g4") == PushResult::kOk);  // g0's slot was released
  CHECK(Push(p, "g5") == PushResult::kFull);
}

TEST_CASE("Message queue: game numbers survive a producer restart", "[shm]") {
  LocalSegment seg(QueueParams(4, 32));
  {
    MessageQueueProducer first = seg.map().MakeGameProducer(0);
    CHECK(first.NextSequence() == 0);
    CHECK(first.NextSequence() == 1);
    REQUIRE(Push(first, "x") == PushResult::kOk);
  }
  MessageQueueProducer second = seg.map().MakeGameProducer(0);
  CHECK(second.NextSequence() == 2);
  CHECK(second.Head() == 1);
  MessageQueueProducer other = seg.map().MakeGameProducer(1);
  CHECK(other.NextSequence() == 0);  // per queue
}

TEST_CASE("Message queue: pushes ring the writer's doorbell only when it sleeps", "[shm]") {
  LocalSegment seg(QueueParams(4, 32));
  MessageQueueProducer p = seg.map().MakeGameProducer(0);
  Doorbell bell = seg.map().WriterDoorbell();
  REQUIRE(Push(p, "a") == PushResult::kOk);
  CHECK(seg.map().header().writer_doorbell.word.load() == 0);
  const uint32_t ticket = bell.PrepareToSleep();
  REQUIRE(Push(p, "b") == PushResult::kOk);
  CHECK(seg.map().header().writer_doorbell.word.load() == 1);
  CHECK(bell.Sleep(ticket, 5'000'000'000ULL));
}

TEST_CASE("Message queue: two-thread fuzz with a checksum", "[shm]") {
  const uint32_t depth = GENERATE(1u, 5u, 64u);
  const uint64_t total = (testing::kTsan ? 60'000 : 200'000) / (depth < 8 ? 5 : 1);
  const uint32_t slot_bytes = 200;
  LocalSegment seg(QueueParams(depth, slot_bytes));
  const SegmentMap& m = seg.map();
  testing::FuzzTotals produced, consumed;
  std::thread writer([&] {
    MessageQueueConsumer c = m.MakeGameConsumer(1);
    consumed = testing::RunMessageConsumer(c, m.WriterDoorbell(), total, 5, slot_bytes);
  });
  MessageQueueProducer p = m.MakeGameProducer(1);
  produced = testing::RunMessageProducer(p, total, 5);
  writer.join();
  INFO("depth " << depth);
  CHECK(produced.errors == 0);
  CHECK(consumed.errors == 0);
  CHECK(consumed.leaves == total);
  CHECK(produced.checksum == consumed.checksum);
}

TEST_CASE("Message queue: an impossible head or length is refused, never read past", "[shm]") {
  LocalSegment seg(QueueParams(4, 100));
  MessageQueueControl& q = seg.map().GameQueue(0);
  MessageQueueProducer p(q, Doorbell());
  CHECK(Push(p, "one") == PushResult::kOk);
  SECTION("a head more than the queue ahead of the commit") {
    q.head.store(1000);
    MessageQueueConsumer c(q);
    CHECK(c.Corrupt());
    CHECK_FALSE(c.ReadNext().has_value());
  }
  SECTION("a head that goes backwards after attach") {
    MessageQueueConsumer c(q);
    CHECK(c.Unread() == 1);
    q.head.store(0);
    CHECK(c.Unread() == 1);  // the last good head
    CHECK(c.Corrupt());
  }
  SECTION("a length larger than the slot comes back empty, for the caller to count and skip") {
    auto* lengths = reinterpret_cast<uint32_t*>(reinterpret_cast<uint8_t*>(&q) + q.lengths_offset);
    lengths[0] = 1u << 30;
    MessageQueueConsumer c(q);
    const auto m = c.ReadNext();
    REQUIRE(m.has_value());
    CHECK(m->data == nullptr);
    CHECK(m->size == 0);
    CHECK_FALSE(c.Corrupt());
  }
}

}  // namespace
}  // namespace zerofarm::shm
