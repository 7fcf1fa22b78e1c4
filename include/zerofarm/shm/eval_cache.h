#pragma once
// A network-evaluation cache shared by every worker of a host: a fixed-size
// table of (key -> policy logits, value, model version) in shared memory,
// consulted before a leaf goes to an evaluator (docs/search.md).
//
//   EvalCacheMemory  owns the table: an anonymous MAP_SHARED mapping made by
//                    the supervisor before it forks the workers (they inherit
//                    it; the kernel frees it when the last process is gone, so
//                    a crash never leaves it behind). Move-only.
//   EvalCache        a view of the table; any number of processes use it at
//                    once, without locks.
//
// Entries are seqlocks (Boehm, "Can seqlocks get along with programming
// language memory models?", MSPC 2012). Each entry's `state` word packs
// (sequence << 32 | writer pid): even sequence = stable, odd = being written
// by that pid. A writer claims an entry by CAS from (even s, 0) to (s + 1,
// pid), writes key and payload with relaxed atomic stores, and releases it
// with (s + 2, 0). A reader loads state (acquire), copies key and payload
// (relaxed), fences (acquire), reloads state, and accepts only an equal, even
// state and a matching key: a torn copy is never used.
//
// Crash safety: a writer killed mid-write leaves its entry odd. Readers miss
// it and writers skip it (it never wedges anyone: nobody waits on an entry),
// so it is only lost capacity until the supervisor, which reaps the dead
// worker, calls ReclaimFrom(pid): that CASes each entry still held by the
// pid to an even state with key 0 (empty). Nothing else can hold an entry
// that pid claimed, so the reclaim cannot race with a live writer.
//
// Keys are 64-bit hashes (of a leaf's feature bytes, see HashBytes in
// core/hash.h, and the model version);
// key 0 means empty, so callers pass keys with the low bit set (MakeKey).
// Thread safety: all methods may run concurrently in any processes.
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace zerofarm::shm {

class EvalCacheMemory {
 public:
  EvalCacheMemory() = default;
  // Maps a zero-filled table of `entries` (rounded up to a power of two, at
  // least 4) for policies of `actions` logits. Throws zerofarm::Error when
  // the mapping fails.
  EvalCacheMemory(uint64_t entries, int actions);
  EvalCacheMemory(EvalCacheMemory&& other) noexcept;
  EvalCacheMemory& operator=(EvalCacheMemory&& other) noexcept;
  EvalCacheMemory(const EvalCacheMemory&) = delete;
  EvalCacheMemory& operator=(const EvalCacheMemory&) = delete;
  ~EvalCacheMemory();  // unmaps (this process's mapping only)

  bool valid() const noexcept { return data_ != nullptr; }
  void* data() const noexcept { return data_; }
  size_t bytes() const noexcept { return bytes_; }
  uint64_t entries() const noexcept { return entries_; }
  int actions() const noexcept { return actions_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  uint64_t entries_ = 0;
  int actions_ = 0;
};

// What an insert did (for tests and statistics).
enum class CacheInsert { kStored, kPresent, kBusy };

class EvalCache {
 public:
  // A view of `memory`, which must outlive it.
  explicit EvalCache(const EvalCacheMemory& memory);

  // Bytes one entry takes for `actions` logits (a multiple of 64).
  static size_t EntryBytes(int actions);
  // A nonzero key from a 64-bit feature hash and the network's version.
  static uint64_t MakeKey(uint64_t feature_hash, uint32_t model_version);

  // Copies the entry for `key` into logits[actions()] / *value / *version;
  // false on a miss (absent, being written, or torn by a concurrent write).
  bool Lookup(uint64_t key, float* logits, float* value, uint32_t* version) const;
  // Stores an entry for `key`, evicting one of its bucket's others if full.
  // kBusy: every candidate entry was being written (the insert is dropped).
  CacheInsert Insert(uint64_t key, const float* logits, float value, uint32_t version, pid_t writer);
  // Frees the entries a dead writer left mid-write; returns how many.
  uint64_t ReclaimFrom(pid_t dead_writer);
  // Entries currently left mid-write (a scan; for tests and diagnostics).
  uint64_t EntriesBeingWritten() const;

  uint64_t entries() const { return entries_; }
  int actions() const { return actions_; }

 private:
  struct Entry;
  Entry* At(uint64_t index) const;

  uint8_t* base_;
  uint64_t entries_;
  int actions_;
  size_t stride_;
};

}  // namespace zerofarm::shm
