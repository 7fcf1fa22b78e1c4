#include "zerofarm/shm/layout.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <string>

#include "shm_test_util.h"
#include "zerofarm/core/error.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::shm {
namespace {

using testing::LocalSegment;

LayoutParams Params(uint32_t workers, uint32_t evaluators, uint32_t slots, uint32_t feature_bytes,
                    uint32_t actions, uint32_t game_bytes = 1000, uint32_t depth = 3) {
  LayoutParams p;
  p.num_workers = workers;
  p.num_evaluators = evaluators;
  p.ring_slots = slots;
  p.feature_bytes = feature_bytes;
  p.actions = actions;
  p.game_slot_bytes = game_bytes;
  p.game_queue_depth = depth;
  return p;
}

// [offset, offset + bytes) as a region, for overlap checks.
struct Region {
  uint64_t begin, end;
  std::string what;
};

void CheckLayout(const Layout& l) {
  const LayoutParams& p = l.params;
  INFO("workers " << p.num_workers << " evaluators " << p.num_evaluators << " slots " << p.ring_slots
                  << " feature_bytes " << p.feature_bytes << " actions " << p.actions);
  CHECK(l.total_bytes % kRingAlign == 0);
  CHECK(l.header_bytes == sizeof(SegmentHeader));
  CHECK(l.processes_offset % kRegionAlign == 0);
  CHECK(l.evaluators_offset % kRegionAlign == 0);
  CHECK(l.evaluator_stride % kRegionAlign == 0);
  CHECK(l.rings_offset % kRingAlign == 0);
  CHECK(l.ring_stride % kRingAlign == 0);
  for (uint64_t o :
       {l.ring_features_offset, l.ring_policy_offset, l.ring_value_offset, l.ring_model_version_offset,
        l.queues_offset, l.queue_stride, l.queue_slot_stride, l.queue_lengths_offset, l.queue_data_offset}) {
    CHECK(o % kRegionAlign == 0);
  }
  // Arrays inside a ring hold what they must and do not overlap.
  const uint64_t slots = p.ring_slots;
  CHECK(l.ring_features_offset >= sizeof(LeafRingControl));
  CHECK(l.ring_policy_offset >= l.ring_features_offset + slots * p.feature_bytes);
  CHECK(l.ring_value_offset >= l.ring_policy_offset + slots * p.actions * 4);
  CHECK(l.ring_model_version_offset >= l.ring_value_offset + slots * 4);
  CHECK(l.ring_bytes >= l.ring_model_version_offset + slots * 4);
  CHECK(l.ring_stride >= l.ring_bytes);
  CHECK(l.queue_slot_stride >= p.game_slot_bytes);
  CHECK(l.queue_lengths_offset >= sizeof(MessageQueueControl));
  CHECK(l.queue_data_offset >= l.queue_lengths_offset + p.game_queue_depth * 4);
  CHECK(l.queue_stride >= l.queue_data_offset + p.game_queue_depth * l.queue_slot_stride);
  // Top-level regions in order, disjoint, inside the segment.
  std::vector<Region> regions = {
      {0, l.header_bytes, "header"},
      {l.processes_offset, l.processes_offset + l.num_processes * sizeof(ProcessSlot), "processes"},
      {l.evaluators_offset, l.evaluators_offset + p.num_evaluators * l.evaluator_stride, "evaluators"},
      {l.rings_offset, l.rings_offset + p.num_workers * l.ring_stride, "rings"},
      {l.queues_offset, l.queues_offset + p.num_workers * l.queue_stride, "queues"},
  };
  for (size_t i = 1; i < regions.size(); ++i) {
    INFO(regions[i].what);
    CHECK(regions[i].begin >= regions[i - 1].end);
  }
  CHECK(regions.back().end <= l.total_bytes);
  CHECK(l.num_processes == uint64_t{p.num_workers} + p.num_evaluators + 1);
}

TEST_CASE("Layout regions are aligned, disjoint and in bounds", "[shm]") {
  CheckLayout(ComputeLayout(Params(1, 1, 1, 1, 1, 1, 1)));
  CheckLayout(ComputeLayout(Params(14, 2, 256, 126, 7)));
  CheckLayout(ComputeLayout(Params(3, 2, 61, 17, 5, 333, 5)));
  CheckLayout(ComputeLayout(Params(64, 8, 1024, 1152, 362, 1 << 20, 16)));
}

TEST_CASE("Layout size grows with every parameter", "[shm]") {
  const LayoutParams base = Params(4, 2, 64, 126, 7, 4096, 4);
  const uint64_t size = ComputeLayout(base).total_bytes;
  auto grown = [&](auto mutate) {
    LayoutParams p = base;
    mutate(p);
    return ComputeLayout(p).total_bytes;
  };
  CHECK(grown([](LayoutParams& p) { p.num_workers = 8; }) > size);
  CHECK(grown([](LayoutParams& p) { p.num_evaluators = 200; }) > size);  // small growth hides in page padding
  CHECK(grown([](LayoutParams& p) { p.ring_slots = 1024; }) > size);
  CHECK(grown([](LayoutParams& p) { p.feature_bytes = 4096; }) > size);
  CHECK(grown([](LayoutParams& p) { p.actions = 4096; }) > size);
  CHECK(grown([](LayoutParams& p) { p.game_slot_bytes = 1 << 20; }) > size);
  CHECK(grown([](LayoutParams& p) { p.game_queue_depth = 64; }) > size);
  CHECK(ComputeLayout(base) == ComputeLayout(base));  // pure
}

TEST_CASE("ComputeLayout rejects numbers out of range with a ConfigError", "[shm]") {
  CHECK_THROWS_AS(ComputeLayout(Params(0, 1, 64, 1, 1)), ConfigError);
  CHECK_THROWS_AS(ComputeLayout(Params(1, 0, 64, 1, 1)), ConfigError);
  CHECK_THROWS_AS(ComputeLayout(Params(1, 1, 64, 0, 1)), ConfigError);
  CHECK_THROWS_AS(ComputeLayout(Params(1, 1, 64, 1, 0)), ConfigError);
  CHECK_THROWS_AS(ComputeLayout(Params(1, 1, 64, 1, 1, 0)), ConfigError);
  CHECK_THROWS_AS(ComputeLayout(Params(1, 1, 64, 1, 1, 1, 0)), ConfigError);
  try {
    ComputeLayout(Params(1, 1, 0, 1, 1));
    FAIL("ring_slots = 0 accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("ring_slots = 0") != std::string::npos);
  }
  CHECK_NOTHROW(ComputeLayout(Params(1, 1, 1, 1, 1)));
  CHECK_NOTHROW(ComputeLayout(Params(1, 1, 1000, 1, 1)));  // any slot count, not only powers of two
}

TEST_CASE("The magic reads ZFSHM001 in the first bytes", "[shm]") {
  char bytes[8];
  std::memcpy(bytes, &kSegmentMagic, 8);
  CHECK(std::string(bytes, 8) == "ZFSHM001");
}

TEST_CASE("InitSegment writes a header that ValidateSegment accepts", "[shm]") {
  const LayoutParams p = Params(5, 2, 61, 33, 7, 500, 3);
  LocalSegment seg(p, 0xC0FFEE);
  const SegmentHeader& h = ValidateSegment(seg.base(), seg.layout().total_bytes);
  CHECK(h.magic == kSegmentMagic);
  CHECK(h.layout_version == kLayoutVersion);
  CHECK(h.segment_id == 0xC0FFEE);
  CHECK(h.owner_uid == ::geteuid());
  CHECK(h.layout.params == p);
  CHECK(h.stop.load() == 0);
  const SegmentMap& m = seg.map();
  CHECK(m.Ring(3).worker == 3);
  CHECK(m.Ring(3).evaluator == 1);
  CHECK(m.Ring(4).slots == 61);
  CHECK(m.GameQueue(4).depth == 3);
  CHECK(m.GameQueue(4).slot_bytes == 500);
  CHECK(m.EvaluatorOf(0) == 0);
  CHECK(m.EvaluatorOf(3) == 1);
  CHECK(m.WorkersOf(0) == std::vector<uint32_t>{0, 2, 4});
  CHECK(m.WorkersOf(1) == std::vector<uint32_t>{1, 3});
  std::set<const void*> slots;
  for (uint32_t w = 0; w < 5; ++w) slots.insert(&m.WorkerProcess(w));
  for (uint32_t e = 0; e < 2; ++e) slots.insert(&m.EvaluatorProcess(e));
  slots.insert(&m.WriterProcess());
  CHECK(slots.size() == 8);
  CHECK(reinterpret_cast<uintptr_t>(&m.Ring(1)) % kRingAlign == 0);
  m.RequestStop(2);
  CHECK(m.StopRequested() == 2);
  RecordBatch(m.Evaluator(1), 5, 100);
  RecordBatch(m.Evaluator(1), 1, 100);
  CHECK(m.Evaluator(1).batches.load() == 2);
  CHECK(m.Evaluator(1).leaves.load() == 6);
  CHECK(m.Evaluator(1).batch_size_log2[2].load() == 1);  // 5 in [4, 8)
  CHECK(m.Evaluator(1).batch_size_log2[0].load() == 1);  // 1 in [1, 2)
}

TEST_CASE("ValidateSegment rejects a bad magic, version, size or offsets", "[shm]") {
  LocalSegment seg(Params(3, 2, 16, 8, 4));
  const size_t size = seg.layout().total_bytes;
  auto* h = static_cast<SegmentHeader*>(seg.base());
  auto message = [&](size_t n) -> std::string {
    try {
      ValidateSegment(seg.base(), n);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  REQUIRE(message(size).empty());
  SECTION("magic") {
    h->magic ^= 1;
    CHECK(message(size).find("magic") != std::string::npos);
  }
  SECTION("version") {
    h->layout_version = kLayoutVersion + 1;
    CHECK(message(size).find("version") != std::string::npos);
  }
  SECTION("truncated mapping") {
    CHECK(message(size - 4096).find("truncated") != std::string::npos);
    CHECK(message(16).find("truncated") != std::string::npos);
  }
  SECTION("offsets that do not match the config numbers") {
    h->layout.ring_stride += 4096;
    CHECK(message(size).find("offsets") != std::string::npos);
  }
  SECTION("config numbers out of range") {
    h->layout.params.ring_slots = 0;
    CHECK(message(size).find("config") != std::string::npos);
  }
  SECTION("a corrupt ring control block") {
    seg.map().Ring(2).slots = 17;
    CHECK(message(size).find("leaf ring 2") != std::string::npos);
  }
  SECTION("a corrupt queue control block") {
    seg.map().GameQueue(1).depth = 0;
    CHECK(message(size).find("game queue 1") != std::string::npos);
  }
}

TEST_CASE("A real segment initialized by its creator validates in a view", "[shm]") {
  const Layout layout = ComputeLayout(Params(2, 1, 32, 64, 9));
  ShmSegment seg = ShmSegment::Create("layout", layout.total_bytes);
  InitSegment(seg, layout, 7);
  ShmView view(seg.name());
  SegmentMap map(view.data(), view.size());
  CHECK(map.header().segment_id == 7);
  CHECK(map.params().ring_slots == 32);
  ShmSegment small = ShmSegment::Create("small", 4096);
  CHECK_THROWS_AS(InitSegment(small, layout, 7), Error);
  CHECK_THROWS_AS(SegmentMap(small.data(), small.size()), Error);  // zeros: bad magic
}

TEST_CASE("OwedGames: a dead worker lost the games it held, less those it pushed after counting them",
          "[shm]") {
  using O = OwedGames;
  const uint64_t word = O::Pack(5, 1000);
  CHECK(O::Held(word) == 5);
  CHECK(O::Head(word) == 1000);
  CHECK(O::Lost(word, 1000) == 5);  // nothing pushed since: all five lost
  CHECK(O::Lost(word, 1001) == 4);  // killed between a push and its next count
  CHECK(O::Lost(word, 1005) == 0);
  CHECK(O::Lost(word, 2000) == 0);  // a stale word (exchanged) never gives back more than it held
  CHECK(O::Lost(O::Pack(0, 7), 7) == 0);
  // The head is kept modulo 2^40: a count across the wrap still subtracts right.
  const uint64_t wrap = O::kHeadMask;  // 2^40 - 1
  CHECK(O::Lost(O::Pack(3, wrap), wrap + 2) == 1);
  CHECK(O::Held(O::Pack((uint64_t{1} << O::kHeldBits) - 1, wrap)) == (uint64_t{1} << O::kHeldBits) - 1);
  CHECK(O::Head(O::Pack((uint64_t{1} << O::kHeldBits) - 1, wrap)) == wrap);
}

}  // namespace
}  // namespace zerofarm::shm

namespace zerofarm::shm {
TEST_CASE("WriterBlock totals: a published copy is read whole and the copy being filled is not", "[shm]") {
  WriterBlock block;
  CHECK(block.Totals().shards == 0);
  CHECK(block.Totals().next_shard_index == 0);
  WriterTotals t;
  t.games = 5;
  t.positions = 50;
  t.shards = 1;
  t.bytes = 4096;
  t.next_shard_index = 8;
  block.Publish(t);
  WriterTotals r = block.Totals();
  CHECK(r.games == 5);
  CHECK(r.positions == 50);
  CHECK(r.shards == 1);
  CHECK(r.bytes == 4096);
  CHECK(r.next_shard_index == 8);
  // A writer killed while filling the other copy: readers still see the published one.
  block.totals[block.current.load() ^ 1u][0].store(999);
  CHECK(block.Totals().games == 5);
  t.games = 7;
  block.Publish(t);
  CHECK(block.Totals().games == 7);
}
}  // namespace zerofarm::shm
