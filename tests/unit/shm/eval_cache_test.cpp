// The shared evaluation cache: round trips, eviction, entries left mid-write
// by a dead writer, and writers and readers in several processes (some
// SIGKILLed mid-way) never handing out a torn entry. Only the parent asserts.
#include "zerofarm/shm/eval_cache.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "shm_test_util.h"
#include "zerofarm/core/hash.h"

namespace zerofarm::shm {
namespace {

using testing::Children;

// The payload a key implies, so a reader can tell a consistent copy.
void Payload(uint64_t key, int actions, std::vector<float>* logits, float* value) {
  logits->resize(actions);
  for (int a = 0; a < actions; ++a) (*logits)[a] = static_cast<float>((key >> (a % 48)) & 0xFFFF) + a;
  *value = static_cast<float>(key & 0xFF) / 256.0f;
}

bool Consistent(uint64_t key, const std::vector<float>& got, float value) {
  std::vector<float> want;
  float v;
  Payload(key, static_cast<int>(got.size()), &want, &v);
  return got == want && value == v;
}

// The state word of entry `index` (white box: it is the entry's first 8 bytes).
std::atomic<uint64_t>& StateWord(const EvalCacheMemory& m, uint64_t index) {
  return *reinterpret_cast<std::atomic<uint64_t>*>(static_cast<uint8_t*>(m.data()) +
                                                   index * EvalCache::EntryBytes(m.actions()));
}

}  // namespace

TEST_CASE("eval cache: entries round trip, miss when absent, and evict within a bucket", "[shm][cache]") {
  EvalCacheMemory memory(100, 7);
  CHECK(memory.entries() == 128);  // rounded up to a power of two
  CHECK(EvalCache::EntryBytes(7) == 64);
  EvalCache cache(memory);
  std::vector<float> logits, got(7);
  float value = 0, got_value = 0;
  uint32_t version = 0;
  const uint64_t key = EvalCache::MakeKey(12345, 3);
  CHECK(key != EvalCache::MakeKey(12345, 4));
  CHECK((key & 1) == 1);
  CHECK_FALSE(cache.Lookup(key, got.data(), &got_value, &version));
  Payload(key, 7, &logits, &value);
  CHECK(cache.Insert(key, logits.data(), value, 3, getpid()) == CacheInsert::kStored);
  CHECK(cache.Insert(key, logits.data(), value, 3, getpid()) == CacheInsert::kPresent);
  REQUIRE(cache.Lookup(key, got.data(), &got_value, &version));
  CHECK(got == logits);
  CHECK(got_value == value);
  CHECK(version == 3);

  // Six keys in one bucket of four: the newest four are never all lost, each
  // hit is consistent, and at most four hit.
  std::vector<uint64_t> keys;
  for (uint64_t i = 1; keys.size() < 6; ++i) {
    const uint64_t k = (i << 20) | 0x41;  // same bucket bits, nonzero
    keys.push_back(k);
    Payload(k, 7, &logits, &value);
    CHECK(cache.Insert(k, logits.data(), value, 1, getpid()) == CacheInsert::kStored);
  }
  int hits = 0;
  for (uint64_t k : keys) {
    if (cache.Lookup(k, got.data(), &got_value, &version)) {
      ++hits;
      CHECK(Consistent(k, got, got_value));
    }
  }
  CHECK(hits >= 1);
  CHECK(hits <= 4);
  CHECK(cache.Lookup(keys.back(), got.data(), &got_value, &version));  // the last insert is there

  // Feature hashes: equal bytes hash equally, one changed byte changes it.
  std::vector<uint8_t> a(126, 1), b(126, 1);
  CHECK(HashBytes(a.data(), a.size()) == HashBytes(b.data(), b.size()));
  b[125] = 2;
  CHECK(HashBytes(a.data(), a.size()) != HashBytes(b.data(), b.size()));
}

TEST_CASE("eval cache: entries left mid-write are skipped, never wedge, and are reclaimed", "[shm][cache]") {
  EvalCacheMemory memory(64, 5);
  EvalCache cache(memory);
  const uint64_t key = 0x1234'5678'0000'0021ULL;
  const uint64_t bucket = key & 63 & ~3ULL;
  const pid_t dead = 999999;  // as if a writer with this pid died mid-write in every entry of the bucket
  for (uint64_t i = 0; i < 4; ++i) StateWord(memory, bucket + i).store((7ULL << 32) | dead);
  CHECK(cache.EntriesBeingWritten() == 4);
  std::vector<float> logits, got(5);
  float value, got_value;
  uint32_t version;
  Payload(key, 5, &logits, &value);
  CHECK(cache.Insert(key, logits.data(), value, 1, getpid()) == CacheInsert::kBusy);  // returns at once
  CHECK_FALSE(cache.Lookup(key, got.data(), &got_value, &version));
  CHECK(cache.ReclaimFrom(dead + 1) == 0);  // someone else's entries are left alone
  CHECK(cache.ReclaimFrom(dead) == 4);
  CHECK(cache.EntriesBeingWritten() == 0);
  CHECK(cache.Insert(key, logits.data(), value, 1, getpid()) == CacheInsert::kStored);
  REQUIRE(cache.Lookup(key, got.data(), &got_value, &version));
  CHECK(Consistent(key, got, got_value));
}

TEST_CASE("eval cache: writers and readers in several processes never see a torn entry, even when killed",
          "[shm][cache][multiprocess]") {
  // A small table so that writers collide all the time.
  EvalCacheMemory memory(64, 31);
  EvalCache cache(memory);
  Children children;
  constexpr int kOps = 200000;
  // Writers insert keys drawn from a small set; readers check every hit.
  auto writer = [&](uint64_t seed) {
    return [&cache, seed]() {
      uint64_t s = seed;
      std::vector<float> logits;
      float value;
      for (int i = 0; i < kOps; ++i) {
        const uint64_t k = EvalCache::MakeKey(SplitMix64(s) % 512, 0);
        Payload(k, 31, &logits, &value);
        cache.Insert(k, logits.data(), value, 0, getpid());
      }
      return 0;
    };
  };
  auto reader = [&](uint64_t seed) {
    return [&cache, seed]() {
      uint64_t s = seed;
      std::vector<float> got(31);
      float value;
      uint32_t version;
      int hits = 0;
      for (int i = 0; i < kOps; ++i) {
        const uint64_t k = EvalCache::MakeKey(SplitMix64(s) % 512, 0);
        if (cache.Lookup(k, got.data(), &value, &version)) {
          ++hits;
          if (!Consistent(k, got, value)) return 1;  // a torn copy was accepted
        }
      }
      return hits > 0 ? 0 : 2;
    };
  };
  const pid_t w1 = children.Spawn(writer(1));
  const pid_t w2 = children.Spawn(writer(2));
  const pid_t victim = children.Spawn(writer(3));
  const pid_t r1 = children.Spawn(reader(4));
  const pid_t r2 = children.Spawn(reader(5));
  // SIGKILL one writer while everything runs (it may die mid-write).
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  children.Kill(victim);
  CHECK(children.Wait(w1, 120) == 0);
  CHECK(children.Wait(w2, 120) == 0);
  CHECK(children.Wait(r1, 120) == 0);
  CHECK(children.Wait(r2, 120) == 0);
  // Only the dead writer can hold entries now; reclaiming frees them all.
  const uint64_t stuck = cache.EntriesBeingWritten();
  CHECK(cache.ReclaimFrom(victim) == stuck);
  CHECK(cache.EntriesBeingWritten() == 0);
  // Everything still there is consistent.
  std::vector<float> got(31);
  float value;
  uint32_t version;
  int hits = 0;
  for (uint64_t h = 0; h < 512; ++h) {
    const uint64_t k = EvalCache::MakeKey(h, 0);
    if (cache.Lookup(k, got.data(), &value, &version)) {
      ++hits;
      CHECK(Consistent(k, got, value));
    }
  }
  CHECK(hits > 0);
}

}  // namespace zerofarm::shm
