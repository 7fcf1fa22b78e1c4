#pragma once
// Helpers for the shm tests: an in-process segment, the leaf-ring and message
// queue fuzz loops (shared by the two-thread and the fork tests), and a child
// process guard for the [multiprocess] tests.
//
// The fuzz: the producer writes pseudo-random features derived from the leaf's
// sequence number; the consumer "evaluates" a leaf by hashing its features and
// writing outputs derived from the hash; the producer recomputes the hash and
// checks every result. Both sides add the hashes into a checksum.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "zerofarm/core/rng.h"
#include "zerofarm/shm/layout.h"

namespace zerofarm::shm::testing {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kTsan = true;
#else
inline constexpr bool kTsan = false;
#endif
#else
inline constexpr bool kTsan = false;
#endif

// A segment in ordinary (page-aligned, zeroed) heap memory, for single-process tests.
class LocalSegment {
 public:
  explicit LocalSegment(const LayoutParams& params, uint64_t segment_id = 42)
      : layout_(ComputeLayout(params)), mem_(std::aligned_alloc(kRingAlign, layout_.total_bytes)) {
    std::memset(mem_, 0, layout_.total_bytes);
    InitSegment(mem_, layout_, segment_id);
    map_.emplace(mem_, layout_.total_bytes);
  }
  ~LocalSegment() { std::free(mem_); }
  LocalSegment(const LocalSegment&) = delete;
  LocalSegment& operator=(const LocalSegment&) = delete;
  const SegmentMap& map() const { return *map_; }
  const Layout& layout() const { return layout_; }
  void* base() const { return mem_; }

 private:
  Layout layout_;
  void* mem_;
  std::optional<SegmentMap> map_;
};

// A short busy-wait step (no yield: on a loaded machine sched_yield can hand the
// core to another process for a whole time slice).
// Busy-wait steps before a futex sleep in the fuzz loops.
inline constexpr int kSpins = 1000;
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

inline uint32_t Fnv1a(const uint8_t* p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}

// The features of leaf `seq`.
inline void FillFeatures(uint64_t seed, uint64_t seq, uint8_t* out, uint32_t n) {
  uint64_t s = MixSeed(seed, seq);
  for (uint32_t i = 0; i < n; i += 8) {
    const uint64_t r = SplitMix64(s);
    std::memcpy(out + i, &r, std::min<uint32_t>(8, n - i));
  }
}

// The "network": outputs of one leaf as a function of its features.
inline void EvaluateLeaf(const uint8_t* features, uint32_t feature_bytes, uint32_t actions, float* policy,
                         float* value, uint32_t* model_version) {
  const uint32_t h = Fnv1a(features, feature_bytes);
  for (uint32_t a = 0; a < actions; ++a) policy[a] = static_cast<float>(((h >> (a % 24)) & 0xFF) + a);
  *value = static_cast<float>(h & 0xFFFF);
  *model_version = h;
}

inline bool CheckResult(const LeafResult& r, uint32_t h, uint32_t actions) {
  if (r.model_version != h || r.value != static_cast<float>(h & 0xFFFF)) return false;
  for (uint32_t a = 0; a < actions; ++a) {
    if (r.policy[a] != static_cast<float>(((h >> (a % 24)) & 0xFF) + a)) return false;
  }
  return true;
}

struct FuzzTotals {
  uint64_t checksum = 0;  // sum of the feature hashes seen
  uint64_t errors = 0;    // results that did not match
  uint64_t leaves = 0;    // leaves handled (excluding ghosts)
  uint64_t waits = 0;     // futex sleeps
};

// Worker side: publishes leaves [Head(), total) in random bursts, checks every
// result (ghosts too, since features are a function of seq), returns at done == total.
inline FuzzTotals RunLeafProducer(LeafRingProducer& p, uint64_t total, uint64_t seed, uint32_t max_burst,
                                  const std::atomic<uint32_t>* abort_flag = nullptr) {
  FuzzTotals t;
  Rng rng(seed ^ 0xABCDEF);
  const uint32_t fb = p.FeatureBytes();
  std::vector<uint8_t> expect(fb);
  int idle = 0;
  while (p.Consumed() < total) {
    if (abort_flag && abort_flag->load(std::memory_order_relaxed)) break;
    bool progress = false;
    const uint64_t room = std::min<uint64_t>(p.FreeSlots(), total - p.Head());
    if (room > 0) {
      const uint64_t burst = 1 + rng.Below(std::min<uint64_t>(room, max_burst));
      for (uint64_t i = 0; i < burst; ++i) FillFeatures(seed, p.Head() + i, p.SlotFeatures(p.Head() + i), fb);
      p.Publish(burst);
      progress = true;
    }
    const uint64_t done = p.PollCompleted();
    for (uint64_t seq = p.Consumed(); seq < done; ++seq) {
      FillFeatures(seed, seq, expect.data(), fb);
      const uint32_t h = Fnv1a(expect.data(), fb);
      if (!CheckResult(p.Result(seq), h, p.Actions())) ++t.errors;
      if (!p.IsGhost(seq)) {
        t.checksum += h;
        ++t.leaves;
      }
    }
    if (done > p.Consumed()) {
      p.Consume(done);
      progress = true;
    }
    if (progress) {
      idle = 0;
    } else if (++idle > kSpins) {
      ++t.waits;
      (void)p.WaitForResults(2'000'000);  // 2 ms; a timeout just loops
    } else {
      CpuRelax();
    }
  }
  return t;
}

// Evaluator side: takes random-sized batches, evaluates them in place,
// completes in one or two steps, until done == total.
inline FuzzTotals RunLeafConsumer(LeafRingConsumer& c, Doorbell bell, uint64_t total, uint64_t seed,
                                  uint32_t max_batch, const std::atomic<uint32_t>* abort_flag = nullptr) {
  FuzzTotals t;
  Rng rng(seed ^ 0x123457);
  const uint32_t fb = c.FeatureBytes();
  const uint32_t actions = c.Actions();
  int idle = 0;
  while (c.Done() < total) {
    if (abort_flag && abort_flag->load(std::memory_order_relaxed)) break;
    if (c.Available() == 0) {
      if (++idle > kSpins) {
        ++t.waits;
        bell.SleepUnless([&] { return c.Available() > 0; }, 2'000'000);
      } else {
        CpuRelax();
      }
      continue;
    }
    idle = 0;
    const LeafRuns runs = c.Take(1 + rng.Below(max_batch));
    for (uint32_t r = 0; r < runs.num_runs; ++r) {
      const LeafRun& run = runs.runs[r];
      for (uint32_t k = 0; k < run.count; ++k) {
        const uint8_t* f = run.features + uint64_t{k} * fb;
        EvaluateLeaf(f, fb, actions, run.policy + uint64_t{k} * actions, run.value + k,
                     run.model_version + k);
        t.checksum += Fnv1a(f, fb);
        ++t.leaves;
      }
      if (runs.num_runs == 2 && r == 0) c.Complete(run.start_seq + run.count);  // complete in two steps
    }
    c.CompleteAllTaken();
  }
  return t;
}

// Ping-pong: one leaf at a time; each side spins for at most `spin_ns` (0: no
// spinning at all) and then sleeps on its futex, with a timeout far longer
// than a hand-off takes. A lost wake-up shows up as a timeout (counted in
// `errors`, as are wrong results), not as a hang. A short spin mixes waits
// that end in the spin with waits that sleep.
inline constexpr uint64_t kPingPongTimeoutNs = 10'000'000'000ULL;  // 10 s

inline FuzzTotals RunPingPongProducer(LeafRingProducer& p, uint64_t total, uint64_t seed,
                                      uint64_t spin_ns = 0) {
  FuzzTotals t;
  p.SetSpinBudgetNs(spin_ns);
  std::vector<uint8_t> expect(p.FeatureBytes());
  while (p.Head() < total) {
    const uint64_t seq = p.Head();
    FillFeatures(seed, seq, p.SlotFeatures(seq), p.FeatureBytes());
    p.Publish(1);
    while (p.PollCompleted() == seq) {
      ++t.waits;
      if (p.WaitForResults(kPingPongTimeoutNs) == WaitStatus::kTimeout) {
        ++t.errors;
        return t;
      }
    }
    FillFeatures(seed, seq, expect.data(), p.FeatureBytes());
    const uint32_t h = Fnv1a(expect.data(), p.FeatureBytes());
    if (!CheckResult(p.Result(seq), h, p.Actions())) ++t.errors;
    t.checksum += h;
    ++t.leaves;
    p.Consume(seq + 1);
  }
  return t;
}

inline FuzzTotals RunPingPongConsumer(LeafRingConsumer& c, Doorbell bell, uint64_t total,
                                      uint64_t spin_ns = 0) {
  FuzzTotals t;
  SpinPolicy spin(spin_ns);
  const uint32_t fb = c.FeatureBytes();
  while (c.Done() < total) {
    if (c.Available() == 0) {
      ++t.waits;
      if (!bell.SpinThenSleepUnless([&] { return c.Available() > 0; }, spin, kPingPongTimeoutNs)) {
        ++t.errors;
        return t;
      }
      continue;
    }
    const LeafRuns runs = c.Take(1);
    const LeafRun& run = runs.runs[0];
    EvaluateLeaf(run.features, fb, c.Actions(), run.policy, run.value, run.model_version);
    t.checksum += Fnv1a(run.features, fb);
    ++t.leaves;
    c.CompleteAllTaken();
  }
  return t;
}

// Message `seq`: 8 bytes of seq, then bytes derived from it; length in [8, max].
inline uint32_t MessageLength(uint64_t seed, uint64_t seq, uint32_t max_bytes) {
  return 8 + static_cast<uint32_t>(MixSeed(seed, seq) % (max_bytes - 7));
}
inline void FillMessage(uint64_t seed, uint64_t seq, uint8_t* out, uint32_t len) {
  std::memcpy(out, &seq, 8);
  FillFeatures(seed ^ 0x5555, seq, out + 8, len - 8);
}
inline bool CheckMessage(uint64_t seed, const Message& m, uint32_t max_bytes, std::vector<uint8_t>& scratch) {
  if (m.size != MessageLength(seed, m.seq, max_bytes)) return false;
  scratch.resize(m.size);
  FillMessage(seed, m.seq, scratch.data(), m.size);
  return std::memcmp(scratch.data(), m.data, m.size) == 0;
}

// Pushes messages until `total` are published.
inline FuzzTotals RunMessageProducer(MessageQueueProducer& p, uint64_t total, uint64_t seed) {
  FuzzTotals t;
  std::vector<uint8_t> buf(p.MaxMessageBytes());
  int idle = 0;
  while (p.Head() < total) {
    const uint64_t seq = p.Head();
    const uint32_t len = MessageLength(seed, seq, p.MaxMessageBytes());
    FillMessage(seed, seq, buf.data(), len);
    const PushResult r = p.TryPush(buf.data(), len);
    if (r == PushResult::kOk) {
      t.checksum += Fnv1a(buf.data(), len);
      ++t.leaves;
      idle = 0;
    } else if (r == PushResult::kTooLarge) {
      ++t.errors;
      break;
    } else if (++idle > kSpins) {
      ++t.waits;
      (void)p.WaitForSpace(2'000'000);
    } else {
      CpuRelax();
    }
  }
  return t;
}

// Reads and checks messages, committing in random steps, until `total` are committed.
inline FuzzTotals RunMessageConsumer(MessageQueueConsumer& c, Doorbell bell, uint64_t total, uint64_t seed,
                                     uint32_t max_bytes) {
  FuzzTotals t;
  Rng rng(seed ^ 0x77);
  std::vector<uint8_t> scratch;
  uint64_t expect_seq = c.ReadCursor();
  uint64_t commit_every = 1 + rng.Below(16);
  int idle = 0;
  while (c.Committed() < total) {
    std::optional<Message> m = c.ReadNext();
    if (!m) {
      if (c.ReadCursor() > c.Committed()) c.Commit(c.ReadCursor());
      if (++idle > kSpins) {
        ++t.waits;
        bell.SleepUnless([&] { return c.Unread() > 0; }, 2'000'000);
      } else {
        CpuRelax();
      }
      continue;
    }
    idle = 0;
    if (m->seq != expect_seq++ || !CheckMessage(seed, *m, max_bytes, scratch)) ++t.errors;
    t.checksum += Fnv1a(m->data, m->size);
    ++t.leaves;
    if (c.ReadCursor() - c.Committed() >= commit_every) {
      c.Commit(c.ReadCursor());
      commit_every = 1 + rng.Below(16);
    }
  }
  return t;
}

// ---- child processes --------------------------------------------------------------

// Forks children that run a function and _exit() with its return value; kills
// and reaps whatever is left when destroyed (also when a REQUIRE throws).
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() {
    for (pid_t pid : pids_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

  // The child never returns into the test: no Catch2 assertion may run there.
  template <class Fn>
  pid_t Spawn(Fn&& fn) {
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(97);
      int code = 96;
      try {
        code = fn();
      } catch (...) {
        code = 98;
      }
      ::_exit(code);
    }
    if (pid > 0) pids_.push_back(pid);
    return pid;
  }

  // Waits up to timeout_s for `pid`: its exit code, 128 + signal if killed by
  // one, or -1 on timeout (the child is then killed and reaped).
  int Wait(pid_t pid, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    for (;;) {
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        Forget(pid);
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    Forget(pid);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -2;
  }

  // SIGKILLs and reaps `pid`.
  void Kill(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    Forget(pid);
  }

 private:
  void Forget(pid_t pid) { pids_.erase(std::remove(pids_.begin(), pids_.end(), pid), pids_.end()); }
  std::vector<pid_t> pids_;
};

}  // namespace zerofarm::shm::testing
