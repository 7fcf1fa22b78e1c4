#include "zerofarm/shm/layout.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <new>
#include <string>

#include "zerofarm/core/error.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::shm {
namespace {

uint64_t RoundUp(uint64_t n, uint64_t align) { return (n + align - 1) / align * align; }

// Overflow-checked arithmetic for the layout (the limits keep it far from
// 2^64, but the checks make that obvious).
uint64_t Mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw ConfigError("shm layout: size overflows 64 bits");
  return r;
}
uint64_t Add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw ConfigError("shm layout: size overflows 64 bits");
  return r;
}

void CheckRange(const char* field, uint32_t value, uint32_t lo, uint32_t hi) {
  if (value < lo || value > hi) {
    throw ConfigError(std::string("shm layout: ") + field + " = " + std::to_string(value) + ", want " +
                      std::to_string(lo) + ".." + std::to_string(hi));
  }
}

[[noreturn]] void Invalid(const std::string& why) { throw Error("shm: invalid segment: " + why); }

}  // namespace

bool operator==(const LayoutParams& a, const LayoutParams& b) noexcept {
  return a.num_workers == b.num_workers && a.num_evaluators == b.num_evaluators &&
         a.ring_slots == b.ring_slots && a.feature_bytes == b.feature_bytes && a.actions == b.actions &&
         a.game_slot_bytes == b.game_slot_bytes && a.game_queue_depth == b.game_queue_depth &&
         a.reserved == b.reserved;
}

bool operator==(const Layout& a, const Layout& b) noexcept {
  return a.params == b.params && a.header_bytes == b.header_bytes &&
         a.processes_offset == b.processes_offset && a.num_processes == b.num_processes &&
         a.evaluators_offset == b.evaluators_offset && a.evaluator_stride == b.evaluator_stride &&
         a.workers_offset == b.workers_offset && a.worker_stride == b.worker_stride &&
         a.rings_offset == b.rings_offset && a.ring_stride == b.ring_stride && a.ring_bytes == b.ring_bytes &&
         a.ring_features_offset == b.ring_features_offset && a.ring_policy_offset == b.ring_policy_offset &&
         a.ring_value_offset == b.ring_value_offset &&
         a.ring_model_version_offset == b.ring_model_version_offset && a.queues_offset == b.queues_offset &&
         a.queue_stride == b.queue_stride && a.queue_slot_stride == b.queue_slot_stride &&
         a.queue_lengths_offset == b.queue_lengths_offset && a.queue_data_offset == b.queue_data_offset &&
         a.total_bytes == b.total_bytes;
}

Layout ComputeLayout(const LayoutParams& p) {
  CheckRange("num_workers", p.num_workers, 1, 4096);
  CheckRange("num_evaluators", p.num_evaluators, 1, 1024);
  CheckRange("ring_slots", p.ring_slots, 1, 1u << 24);
  CheckRange("feature_bytes", p.feature_bytes, 1, 1u << 24);
  CheckRange("actions", p.actions, 1, 1u << 20);
  CheckRange("game_slot_bytes", p.game_slot_bytes, 1, 1u << 30);
  CheckRange("game_queue_depth", p.game_queue_depth, 1, 1u << 20);
  if (p.reserved != 0) throw ConfigError("shm layout: reserved field must be 0");

  Layout l;
  l.params = p;
  l.header_bytes = sizeof(SegmentHeader);
  uint64_t off = RoundUp(sizeof(SegmentHeader), kRegionAlign);

  l.num_processes = uint64_t{p.num_workers} + p.num_evaluators + 1;
  l.processes_offset = off;
  off = Add(off, RoundUp(Mul(l.num_processes, sizeof(ProcessSlot)), kRegionAlign));

  l.evaluator_stride = RoundUp(sizeof(EvaluatorBlock), kRegionAlign);
  l.evaluators_offset = off;
  off = Add(off, Mul(p.num_evaluators, l.evaluator_stride));

  l.worker_stride = RoundUp(sizeof(WorkerBlock), kRegionAlign);
  l.workers_offset = off;
  off = Add(off, Mul(p.num_workers, l.worker_stride));

  // One leaf ring: control block, then the four arrays, each 64-aligned.
  const uint64_t slots = p.ring_slots;
  l.ring_features_offset = RoundUp(sizeof(LeafRingControl), kRegionAlign);
  l.ring_policy_offset = Add(l.ring_features_offset, RoundUp(Mul(slots, p.feature_bytes), kRegionAlign));
  l.ring_value_offset =
      Add(l.ring_policy_offset, RoundUp(Mul(Mul(slots, p.actions), sizeof(float)), kRegionAlign));
  l.ring_model_version_offset = Add(l.ring_value_offset, RoundUp(Mul(slots, sizeof(float)), kRegionAlign));
  l.ring_bytes = Add(l.ring_model_version_offset, RoundUp(Mul(slots, sizeof(uint32_t)), kRegionAlign));
  l.ring_stride = RoundUp(l.ring_bytes, kRingAlign);
  l.rings_offset = RoundUp(off, kRingAlign);
  off = Add(l.rings_offset, Mul(p.num_workers, l.ring_stride));

  // One game queue: control block, lengths, messages.
  const uint64_t depth = p.game_queue_depth;
  l.queue_slot_stride = RoundUp(p.game_slot_bytes, kRegionAlign);
  l.queue_lengths_offset = RoundUp(sizeof(MessageQueueControl), kRegionAlign);
  l.queue_data_offset = Add(l.queue_lengths_offset, RoundUp(Mul(depth, sizeof(uint32_t)), kRegionAlign));
  l.queue_stride = RoundUp(Add(l.queue_data_offset, Mul(depth, l.queue_slot_stride)), kRegionAlign);
  l.queues_offset = off;
  off = Add(off, Mul(p.num_workers, l.queue_stride));

  l.total_bytes = RoundUp(off, kRingAlign);
  return l;
}

uint32_t LatencyBucket(uint64_t ns) noexcept {
  const double us = static_cast<double>(ns) * 1e-3;
  if (us < 1.0) return 0;
  const auto b = static_cast<uint32_t>(4.0 * std::log2(us));
  return b < kLatencyBuckets ? b : kLatencyBuckets - 1;
}

double LatencyBucketUpperUs(uint32_t bucket) noexcept { return std::exp2((bucket + 1) / 4.0); }

void RecordBatch(EvaluatorBlock& block, uint64_t size, uint64_t busy_ns) noexcept {
  uint32_t bucket = 0;
  while (bucket + 1 < kBatchHistogramBuckets && (size >> (bucket + 1)) != 0) ++bucket;
  // relaxed (all four): statistics with a single writer; readers only display them.
  block.batches.fetch_add(1, std::memory_order_relaxed);
  block.leaves.fetch_add(size, std::memory_order_relaxed);
  block.busy_ns.fetch_add(busy_ns, std::memory_order_relaxed);
  block.batch_size_log2[bucket].fetch_add(1, std::memory_order_relaxed);
}

void InitSegment(void* base, const Layout& l, uint64_t segment_id) {
  ZF_CHECK(reinterpret_cast<uintptr_t>(base) % kRingAlign == 0) << "segment base not page-aligned";
  ZF_CHECK(ComputeLayout(l.params) == l) << "layout does not match its own params";
  auto* bytes = static_cast<uint8_t*>(base);
  auto* h = new (bytes) SegmentHeader();
  h->layout_version = kLayoutVersion;
  h->header_bytes = sizeof(SegmentHeader);
  h->total_bytes = l.total_bytes;
  h->segment_id = segment_id;
  h->owner_uid = static_cast<uint32_t>(::geteuid());
  h->creator_pid = static_cast<uint32_t>(::getpid());
  h->layout = l;
  const LayoutParams& p = l.params;

  for (uint64_t i = 0; i < l.num_processes; ++i)
    new (bytes + l.processes_offset + i * sizeof(ProcessSlot)) ProcessSlot();
  for (uint32_t e = 0; e < p.num_evaluators; ++e)
    new (bytes + l.evaluators_offset + e * l.evaluator_stride) EvaluatorBlock();
  for (uint32_t w = 0; w < p.num_workers; ++w)
    new (bytes + l.workers_offset + w * l.worker_stride) WorkerBlock();
  for (uint32_t w = 0; w < p.num_workers; ++w) {
    auto* r = new (bytes + l.rings_offset + w * l.ring_stride) LeafRingControl();
    r->slots = p.ring_slots;
    r->feature_bytes = p.feature_bytes;
    r->actions = p.actions;
    r->features_offset = l.ring_features_offset;
    r->policy_offset = l.ring_policy_offset;
    r->value_offset = l.ring_value_offset;
    r->model_version_offset = l.ring_model_version_offset;
    r->worker = w;
    r->evaluator = w % p.num_evaluators;
    auto* q = new (bytes + l.queues_offset + w * l.queue_stride) MessageQueueControl();
    q->depth = p.game_queue_depth;
    q->slot_bytes = p.game_slot_bytes;
    q->worker = w;
    q->slot_stride = l.queue_slot_stride;
    q->lengths_offset = l.queue_lengths_offset;
    q->data_offset = l.queue_data_offset;
  }
  // Written last: a segment with a valid magic is fully initialized. No fence
  // needed: children start (fork/exec) after this returns, which orders it.
  h->magic = kSegmentMagic;
}

void InitSegment(ShmSegment& segment, const Layout& layout, uint64_t segment_id) {
  if (segment.size() < layout.total_bytes) {
    throw Error("shm: segment " + segment.name() + " has " + std::to_string(segment.size()) +
                " bytes, the layout needs " + std::to_string(layout.total_bytes));
  }
  InitSegment(segment.data(), layout, segment_id);
}

const SegmentHeader& ValidateSegment(const void* base, size_t size) {
  if (base == nullptr) Invalid("no mapping");
  if (reinterpret_cast<uintptr_t>(base) % kRingAlign != 0) Invalid("mapping is not page-aligned");
  if (size < sizeof(SegmentHeader)) {
    Invalid("truncated: " + std::to_string(size) + " bytes, the header alone needs " +
            std::to_string(sizeof(SegmentHeader)));
  }
  const auto* h = static_cast<const SegmentHeader*>(base);
  if (h->magic != kSegmentMagic) Invalid("bad magic (not a zerofarm segment, or not initialized yet)");
  if (h->layout_version != kLayoutVersion) {
    Invalid("layout version " + std::to_string(h->layout_version) + ", this build reads version " +
            std::to_string(kLayoutVersion) + " (a zerofarm of another version created it)");
  }
  if (h->header_bytes != sizeof(SegmentHeader)) {
    Invalid("header of " + std::to_string(h->header_bytes) + " bytes, want " +
            std::to_string(sizeof(SegmentHeader)));
  }
  if (h->total_bytes > size) {
    Invalid("truncated: the header says " + std::to_string(h->total_bytes) + " bytes, the mapping has " +
            std::to_string(size));
  }
  Layout expected;
  try {
    expected = ComputeLayout(h->layout.params);
  } catch (const ConfigError& e) {
    Invalid(std::string("bad config numbers in the header (") + e.what() + ")");
  }
  if (!(expected == h->layout) || expected.total_bytes != h->total_bytes) {
    Invalid("offsets in the header do not match its config numbers");
  }
  const auto* bytes = static_cast<const uint8_t*>(base);
  const Layout& l = h->layout;
  for (uint32_t w = 0; w < l.params.num_workers; ++w) {
    const auto* r = reinterpret_cast<const LeafRingControl*>(bytes + l.rings_offset + w * l.ring_stride);
    if (r->slots != l.params.ring_slots || r->feature_bytes != l.params.feature_bytes ||
        r->actions != l.params.actions || r->features_offset != l.ring_features_offset ||
        r->policy_offset != l.ring_policy_offset || r->value_offset != l.ring_value_offset ||
        r->model_version_offset != l.ring_model_version_offset || r->worker != w) {
      Invalid("leaf ring " + std::to_string(w) + " does not match the header");
    }
    const auto* q =
        reinterpret_cast<const MessageQueueControl*>(bytes + l.queues_offset + w * l.queue_stride);
    if (q->depth != l.params.game_queue_depth || q->slot_bytes != l.params.game_slot_bytes ||
        q->slot_stride != l.queue_slot_stride || q->lengths_offset != l.queue_lengths_offset ||
        q->data_offset != l.queue_data_offset || q->worker != w) {
      Invalid("game queue " + std::to_string(w) + " does not match the header");
    }
  }
  return *h;
}

// ---- SegmentMap ------------------------------------------------------------------

SegmentMap::SegmentMap(void* base, size_t size) : base_(base) { ValidateSegment(base, size); }

LeafRingControl& SegmentMap::Ring(uint32_t worker) const noexcept {
  ZF_DCHECK(worker < params().num_workers) << worker;
  return *reinterpret_cast<LeafRingControl*>(At(layout().rings_offset + worker * layout().ring_stride));
}
MessageQueueControl& SegmentMap::GameQueue(uint32_t worker) const noexcept {
  ZF_DCHECK(worker < params().num_workers) << worker;
  return *reinterpret_cast<MessageQueueControl*>(At(layout().queues_offset + worker * layout().queue_stride));
}
EvaluatorBlock& SegmentMap::Evaluator(uint32_t evaluator) const noexcept {
  ZF_DCHECK(evaluator < params().num_evaluators) << evaluator;
  return *reinterpret_cast<EvaluatorBlock*>(
      At(layout().evaluators_offset + evaluator * layout().evaluator_stride));
}
ProcessSlot& SegmentMap::Process(uint32_t index) const noexcept {
  ZF_DCHECK(index < layout().num_processes) << index;
  return *reinterpret_cast<ProcessSlot*>(
      At(layout().processes_offset + uint64_t{index} * sizeof(ProcessSlot)));
}
WorkerBlock& SegmentMap::Worker(uint32_t worker) const noexcept {
  ZF_DCHECK(worker < params().num_workers) << worker;
  return *reinterpret_cast<WorkerBlock*>(At(layout().workers_offset + worker * layout().worker_stride));
}

ProcessSlot& SegmentMap::EvaluatorProcess(uint32_t evaluator) const noexcept {
  return Process(params().num_workers + evaluator);
}
ProcessSlot& SegmentMap::WriterProcess() const noexcept {
  return Process(params().num_workers + params().num_evaluators);
}

std::vector<uint32_t> SegmentMap::WorkersOf(uint32_t evaluator) const {
  std::vector<uint32_t> out;
  for (uint32_t w = evaluator; w < params().num_workers; w += params().num_evaluators) out.push_back(w);
  return out;
}

LeafRingProducer SegmentMap::MakeLeafProducer(uint32_t worker) const noexcept {
  return LeafRingProducer(Ring(worker), EvaluatorDoorbell(EvaluatorOf(worker)));
}
LeafRingConsumer SegmentMap::MakeLeafConsumer(uint32_t worker) const noexcept {
  return LeafRingConsumer(Ring(worker));
}
MessageQueueProducer SegmentMap::MakeGameProducer(uint32_t worker) const noexcept {
  return MessageQueueProducer(GameQueue(worker), WriterDoorbell());
}
MessageQueueConsumer SegmentMap::MakeGameConsumer(uint32_t worker) const noexcept {
  return MessageQueueConsumer(GameQueue(worker));
}

void SegmentMap::RequestStop(uint32_t reason) const noexcept {
  ZF_DCHECK(reason != 0);
  // release: whatever the supervisor wrote before asking to stop is visible
  // to a process that sees the flag.
  header().stop.store(reason, std::memory_order_release);
}
uint32_t SegmentMap::StopRequested() const noexcept {
  // acquire: pairs with the release in RequestStop().
  return header().stop.load(std::memory_order_acquire);
}

}  // namespace zerofarm::shm
