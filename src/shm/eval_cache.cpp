#include "zerofarm/shm/eval_cache.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"

namespace zerofarm::shm {

// One entry; `actions` std::atomic<uint32_t> logits (float bits) follow it.
// Every field is an atomic so that a reader racing a writer is a detected
// torn copy, never undefined behaviour.
struct EvalCache::Entry {
  std::atomic<uint64_t> state{0};       // sequence << 32 | writer pid (see the header)
  std::atomic<uint64_t> key{0};         // 0 = empty
  std::atomic<uint32_t> version{0};     // model version that computed it
  std::atomic<uint32_t> value_bits{0};  // the value, float bits
};
static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

namespace {

constexpr uint64_t kBucket = 4;  // entries probed per key

uint64_t Sequence(uint64_t state) { return state >> 32; }
uint32_t Writer(uint64_t state) { return static_cast<uint32_t>(state); }
uint64_t State(uint64_t sequence, uint32_t writer) { return (sequence << 32) | writer; }

std::atomic<uint32_t>* Logits(void* entry) {
  return reinterpret_cast<std::atomic<uint32_t>*>(static_cast<uint8_t*>(entry) + 24);
}

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float Float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

uint64_t RoundUpPow2(uint64_t n) {
  uint64_t p = kBucket;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

size_t EvalCache::EntryBytes(int actions) {
  static_assert(sizeof(Entry) == 24);
  const size_t raw = sizeof(Entry) + sizeof(uint32_t) * static_cast<size_t>(actions);
  return (raw + 63) / 64 * 64;
}

uint64_t EvalCache::MakeKey(uint64_t feature_hash, uint32_t model_version) {
  return MixSeed(feature_hash, model_version + 1ULL) | 1ULL;
}

EvalCacheMemory::EvalCacheMemory(uint64_t entries, int actions) {
  ZF_CHECK(actions >= 1) << actions;
  entries_ = RoundUpPow2(entries);
  actions_ = actions;
  const size_t stride = EvalCache::EntryBytes(actions);
  bytes_ = static_cast<size_t>(entries_) * stride;
  void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw Error("evaluation cache: cannot map " + std::to_string(bytes_) + " bytes: " + std::strerror(errno));
  data_ = p;
  // Construct the atomics (the mapping is zero-filled, which they equal).
  auto* base = static_cast<uint8_t*>(data_);
  for (uint64_t i = 0; i < entries_; ++i) {
    uint8_t* e = base + i * stride;
    new (e) std::atomic<uint64_t>(0);
    new (e + 8) std::atomic<uint64_t>(0);
    new (e + 16) std::atomic<uint32_t>(0);
    new (e + 20) std::atomic<uint32_t>(0);
    for (int a = 0; a < actions; ++a) new (e + 24 + 4 * a) std::atomic<uint32_t>(0);
  }
}

EvalCacheMemory::EvalCacheMemory(EvalCacheMemory&& o) noexcept
    : data_(o.data_), bytes_(o.bytes_), entries_(o.entries_), actions_(o.actions_) {
  o.data_ = nullptr;
  o.bytes_ = 0;
}

EvalCacheMemory& EvalCacheMemory::operator=(EvalCacheMemory&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, bytes_);
    data_ = o.data_;
    bytes_ = o.bytes_;
    entries_ = o.entries_;
    actions_ = o.actions_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

EvalCacheMemory::~EvalCacheMemory() {
  if (data_) ::munmap(data_, bytes_);
}

EvalCache::EvalCache(const EvalCacheMemory& memory)
    : base_(static_cast<uint8_t*>(memory.data())),
      entries_(memory.entries()),
      actions_(memory.actions()),
      stride_(EntryBytes(memory.actions())) {
  ZF_CHECK(memory.valid());
}

EvalCache::Entry* EvalCache::At(uint64_t index) const {
  return reinterpret_cast<Entry*>(base_ + index * stride_);
}

bool EvalCache::Lookup(uint64_t key, float* logits, float* value, uint32_t* version) const {
  const uint64_t bucket = key & (entries_ - 1) & ~(kBucket - 1);
  for (uint64_t i = 0; i < kBucket; ++i) {
    Entry* e = At(bucket + i);
    // acquire: pairs with the writer's release store of the even state, so a
    // stable entry's key and payload are visible below.
    const uint64_t s1 = e->state.load(std::memory_order_acquire);
    if (Sequence(s1) & 1) continue;
    // relaxed: validated by the state re-check below.
    if (e->key.load(std::memory_order_relaxed) != key) continue;
    const std::atomic<uint32_t>* l = Logits(e);
    for (int a = 0; a < actions_; ++a) logits[a] = Float(l[a].load(std::memory_order_relaxed));
    *value = Float(e->value_bits.load(std::memory_order_relaxed));
    *version = e->version.load(std::memory_order_relaxed);
    // acquire fence: if any load above saw a concurrent writer's store, the
    // writer's release fence after its odd state is visible, so the reload
    // below cannot return s1.
    std::atomic_thread_fence(std::memory_order_acquire);
    // relaxed: ordered by the fence above.
    if (e->state.load(std::memory_order_relaxed) != s1) return false;  // torn: a writer got in
    // A writer may have replaced the key between our two state loads only
    // by moving the state, so an equal state means a consistent copy.
    return true;
  }
  return false;
}

CacheInsert EvalCache::Insert(uint64_t key, const float* logits, float value, uint32_t version,
                              pid_t writer) {
  const uint64_t bucket = key & (entries_ - 1) & ~(kBucket - 1);
  // Already there (stable): nothing to do.
  for (uint64_t i = 0; i < kBucket; ++i) {
    Entry* e = At(bucket + i);
    // acquire/relaxed: a hint only; a stale answer costs one duplicate or one skipped insert.
    const uint64_t s = e->state.load(std::memory_order_acquire);
    if (!(Sequence(s) & 1) && e->key.load(std::memory_order_relaxed) == key) return CacheInsert::kPresent;
  }
  // Victims: empty entries first, then the others starting at a key-chosen one.
  const uint64_t start = (key >> 40) & (kBucket - 1);
  for (int pass = 0; pass < 2; ++pass) {
    for (uint64_t j = 0; j < kBucket; ++j) {
      Entry* e = At(bucket + ((start + j) & (kBucket - 1)));
      // relaxed: the CAS below decides; this only filters.
      uint64_t s = e->state.load(std::memory_order_relaxed);
      if (Sequence(s) & 1) continue;  // being written (or left so by a dead writer)
      if (pass == 0 && e->key.load(std::memory_order_relaxed) != 0) continue;
      // acq_rel on success: the claim is ordered before our stores below
      // (together with the release fence); relaxed on failure: we move on.
      if (!e->state.compare_exchange_strong(s, State(Sequence(s) + 1, static_cast<uint32_t>(writer)),
                                            std::memory_order_acq_rel, std::memory_order_relaxed))
        continue;
      // release fence: a reader that sees any store below also sees the odd
      // state after its acquire fence (Boehm's seqlock writer).
      std::atomic_thread_fence(std::memory_order_release);
      // relaxed: published by the release store of the even state.
      e->key.store(key, std::memory_order_relaxed);
      std::atomic<uint32_t>* l = Logits(e);
      for (int a = 0; a < actions_; ++a) l[a].store(Bits(logits[a]), std::memory_order_relaxed);
      e->value_bits.store(Bits(value), std::memory_order_relaxed);
      e->version.store(version, std::memory_order_relaxed);
      // release: publishes the key and payload to readers that acquire the state.
      e->state.store(State(Sequence(s) + 2, 0), std::memory_order_release);
      return CacheInsert::kStored;
    }
  }
  return CacheInsert::kBusy;
}

uint64_t EvalCache::ReclaimFrom(pid_t dead_writer) {
  uint64_t reclaimed = 0;
  for (uint64_t i = 0; i < entries_; ++i) {
    Entry* e = At(i);
    // relaxed: the dead writer's stores are ordered by waitpid in the caller.
    uint64_t s = e->state.load(std::memory_order_relaxed);
    if (!(Sequence(s) & 1) || Writer(s) != static_cast<uint32_t>(dead_writer)) continue;
    // Only this caller acts for a reaped pid: empty the key, then make the
    // entry stable. relaxed key store: published by the release CAS.
    e->key.store(0, std::memory_order_relaxed);
    if (e->state.compare_exchange_strong(s, State(Sequence(s) + 1, 0), std::memory_order_release,
                                         std::memory_order_relaxed))
      ++reclaimed;
  }
  return reclaimed;
}

uint64_t EvalCache::EntriesBeingWritten() const {
  uint64_t n = 0;
  // relaxed: a diagnostic count.
  for (uint64_t i = 0; i < entries_; ++i) n += Sequence(At(i)->state.load(std::memory_order_relaxed)) & 1;
  return n;
}

}  // namespace zerofarm::shm
