// `zerofarm bench` part (c): the cross-process leaf hand-off, three ways.
// Processes: this one (the worker side) and one fork()ed child (the
// evaluator side) per measurement; both single-threaded.
#include "zerofarm/bench/handoff_bench.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <boost/lockfree/spsc_queue.hpp>
#include <cerrno>
#include <cstring>
#include <new>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/shm/layout.h"
#include "zerofarm/shm/segment.h"

namespace zerofarm::bench {
namespace {

constexpr uint32_t kFeatureBytes = 126;  // Connect Four: 3 planes x 6 x 7
constexpr uint32_t kActions = 7;
constexpr uint32_t kMaxBatch = 1024;
constexpr uint64_t kWarmupRounds = 20;     // round trips before the clock starts
constexpr uint64_t kSleepNs = 50'000'000;  // a sleeper's timeout before it re-checks

// The result the "evaluator" writes for a leaf: a function of its features,
// so the worker side checks the bytes really went there and back.
float ValueOf(const uint8_t* features) {
  return static_cast<float>(features[0]) + features[kFeatureBytes - 1];
}
void FillLeaf(uint8_t* features, uint64_t seq) {
  std::memset(features, static_cast<int>(seq & 0x7f), kFeatureBytes);
  features[kFeatureBytes - 1] = static_cast<uint8_t>(seq >> 7);
}
float ExpectedValue(uint64_t seq) { return static_cast<float>(seq & 0x7f) + static_cast<uint8_t>(seq >> 7); }

// True once the child has exited (it is then reaped; Finish reports it).
bool Exited(proc::ChildProcess& child) {
  int status = 0;
  return child.TryReap(&status);
}

HandoffResult Finish(HandoffTransport t, uint32_t batch, uint64_t leaves, uint64_t t0, bool ok,
                     proc::ChildProcess& child) {
  HandoffResult r;
  r.transport = t;
  r.batch = batch;
  r.leaves = leaves;
  r.seconds = static_cast<double>(MonotonicNs() - t0) * 1e-9;
  int status = 0;
  if (!child.WaitFor(10'000, &status)) {
    child.Stop(100);
    throw Error(std::string("hand-off bench: the ") + TransportName(t) + " child did not stop");
  }
  if (!ok) throw Error(std::string("hand-off bench: wrong results over ") + TransportName(t));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(std::string("hand-off bench: the ") + TransportName(t) +
                " child failed: " + proc::DescribeWaitStatus(status));
  return r;
}

HandoffResult LeafRingHandoff(uint32_t batch, double seconds, uint64_t spin_ns) {
  shm::LayoutParams params;
  params.num_workers = 1;
  params.num_evaluators = 1;
  params.ring_slots = batch;
  params.feature_bytes = kFeatureBytes;
  params.actions = kActions;
  const shm::Layout layout = shm::ComputeLayout(params);
  shm::ShmSegment segment = shm::ShmSegment::Create("handoff", layout.total_bytes);
  shm::InitSegment(segment, layout, 1);
  const shm::SegmentMap map(segment.data(), segment.size());
  proc::ChildProcess child = proc::ChildProcess::Fork("zf-bench-eval", [&]() {
    shm::LeafRingConsumer ring = map.MakeLeafConsumer(0);
    shm::Doorbell bell = map.EvaluatorDoorbell(0);
    shm::SpinPolicy spin(spin_ns);  // as the farm's evaluator waits (evaluator.cpp)
    auto ready = [&]() { return ring.Available() > 0 || map.StopRequested() != 0; };
    while (map.StopRequested() == 0) {
      const shm::LeafRuns runs = ring.Take(kMaxBatch);
      if (runs.total == 0) {
        bell.SpinThenSleepUnless(ready, spin, kSleepNs);
        continue;
      }
      for (uint32_t r = 0; r < runs.num_runs; ++r) {
        const shm::LeafRun& run = runs.runs[r];
        for (uint32_t i = 0; i < run.count; ++i) {
          const uint8_t* f = run.features + static_cast<size_t>(i) * kFeatureBytes;
          for (uint32_t a = 0; a < kActions; ++a) run.policy[i * kActions + a] = f[a];
          run.value[i] = ValueOf(f);
          run.model_version[i] = 1;
        }
      }
      ring.CompleteAllTaken();
    }
    return kExitOk;
  });
  shm::LeafRingProducer ring = map.MakeLeafProducer(0);
  ring.SetSpinBudgetNs(spin_ns);
  bool ok = true;
  uint64_t leaves = 0;
  uint64_t t0 = MonotonicNs(), end = t0 + static_cast<uint64_t>(seconds * 1e9), rounds = 0;
  while (MonotonicNs() < end && ok) {
    const uint64_t head = ring.Head();
    for (uint32_t i = 0; i < batch; ++i) FillLeaf(ring.SlotFeatures(head + i), head + i);
    ring.Publish(batch);
    while (ring.PollCompleted() < ring.Head()) {
      if (ring.WaitForResults(kSleepNs) == shm::WaitStatus::kTimeout && Exited(child)) {
        ok = false;
        break;
      }
    }
    for (uint64_t s = head; s < ring.Head() && ok; ++s) ok = ring.Result(s).value == ExpectedValue(s);
    ring.Consume(ring.Head());
    leaves += batch;
    if (++rounds == kWarmupRounds) {  // the child has started and touched its pages: time from here
      leaves = 0;
      t0 = MonotonicNs();
      end = t0 + static_cast<uint64_t>(seconds * 1e9);
    }
  }
  HandoffResult r;
  r.seconds = static_cast<double>(MonotonicNs() - t0) * 1e-9;
  map.RequestStop(1);
  map.EvaluatorDoorbell(0).Ring();
  HandoffResult out = Finish(HandoffTransport::kLeafRing, batch, leaves, t0, ok, child);
  out.seconds = r.seconds;  // the stop and the reap are not hand-offs
  out.spin_ns = spin_ns;
  out.spins_won = ring.Spin().Won();
  out.spins_lost = ring.Spin().Lost();
  return out;
}

// Reads or writes exactly n bytes (pipes split large transfers).
bool ReadAll(int fd, void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}
bool WriteAll(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const uint8_t*>(buf);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

// One pipe's two ends, closed by the destructor (move-only by being local).
struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe(fd) != 0) throw Error(std::string("pipe failed: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void Close(int end) {
    if (fd[end] >= 0) ::close(fd[end]);
    fd[end] = -1;
  }
};

constexpr size_t kResultBytes = (kActions + 1) * sizeof(float);

HandoffResult PipeHandoff(uint32_t batch, double seconds) {
  Pipe down, up;  // features to the child, results back
  proc::ChildProcess child = proc::ChildProcess::Fork("zf-bench-eval", [&]() {
    down.Close(1);
    up.Close(0);
    std::vector<uint8_t> in(static_cast<size_t>(batch) * kFeatureBytes);
    std::vector<float> out(static_cast<size_t>(batch) * (kActions + 1));
    while (ReadAll(down.fd[0], in.data(), in.size())) {
      for (uint32_t i = 0; i < batch; ++i) {
        const uint8_t* f = in.data() + static_cast<size_t>(i) * kFeatureBytes;
        for (uint32_t a = 0; a < kActions; ++a) out[i * (kActions + 1) + a] = f[a];
        out[i * (kActions + 1) + kActions] = ValueOf(f);
      }
      if (!WriteAll(up.fd[1], out.data(), out.size() * sizeof(float))) return kExitFailure;
    }
    return kExitOk;  // the worker side closed its end
  });
  down.Close(0);
  up.Close(1);
  std::vector<uint8_t> out(static_cast<size_t>(batch) * kFeatureBytes);
  std::vector<float> in(static_cast<size_t>(batch) * (kActions + 1));
  bool ok = true;
  uint64_t leaves = 0, seq = 0;
  uint64_t t0 = MonotonicNs(), end = t0 + static_cast<uint64_t>(seconds * 1e9), rounds = 0;
  while (MonotonicNs() < end && ok) {
    for (uint32_t i = 0; i < batch; ++i)
      FillLeaf(out.data() + static_cast<size_t>(i) * kFeatureBytes, seq + i);
    ok = WriteAll(down.fd[1], out.data(), out.size()) && ReadAll(up.fd[0], in.data(), batch * kResultBytes);
    for (uint32_t i = 0; i < batch && ok; ++i)
      ok = in[i * (kActions + 1) + kActions] == ExpectedValue(seq + i);
    seq += batch;
    leaves += batch;
    if (++rounds == kWarmupRounds) {  // the child has started and touched its pages: time from here
      leaves = 0;
      t0 = MonotonicNs();
      end = t0 + static_cast<uint64_t>(seconds * 1e9);
    }
  }
  const double secs = static_cast<double>(MonotonicNs() - t0) * 1e-9;
  down.Close(1);  // the child's read returns 0: it exits
  HandoffResult r = Finish(HandoffTransport::kPipe, batch, leaves, t0, ok, child);
  r.seconds = secs;
  return r;
}

struct LeafMsg {
  uint8_t features[kFeatureBytes];
};
struct ResultMsg {
  float policy[kActions];
  float value;
};
// In shared memory, placement-constructed before the fork; both queues are
// fixed-capacity (their storage is inline: no pointers, so they work at the
// same address in both processes).
struct SpscShared {
  boost::lockfree::spsc_queue<LeafMsg, boost::lockfree::capacity<kMaxBatch>> to_evaluator;
  boost::lockfree::spsc_queue<ResultMsg, boost::lockfree::capacity<kMaxBatch>> to_worker;
  // Set by the worker side to end the child. relaxed would do (it orders no
  // data); seq_cst keeps it obviously right at no cost that matters.
  std::atomic<uint32_t> stop{0};
};

// The waiting side of the baseline: spin a little, then yield the core.
void Backoff(uint32_t& spins) {
  if (++spins < 64) return;
  sched_yield();
}

HandoffResult SpscHandoff(uint32_t batch, double seconds) {
  shm::ShmSegment segment = shm::ShmSegment::Create("spsc", sizeof(SpscShared));
  auto* q = new (segment.data()) SpscShared();
  proc::ChildProcess child = proc::ChildProcess::Fork("zf-bench-eval", [&]() {
    LeafMsg in[kMaxBatch];
    ResultMsg out[kMaxBatch];
    uint32_t spins = 0;
    while (q->stop.load() == 0) {
      const size_t n = q->to_evaluator.pop(in, kMaxBatch);
      if (n == 0) {
        Backoff(spins);
        continue;
      }
      spins = 0;
      for (size_t i = 0; i < n; ++i) {
        for (uint32_t a = 0; a < kActions; ++a) out[i].policy[a] = in[i].features[a];
        out[i].value = ValueOf(in[i].features);
      }
      size_t pushed = 0;
      while (pushed < n && q->stop.load() == 0) pushed += q->to_worker.push(out + pushed, n - pushed);
    }
    return kExitOk;
  });
  std::vector<LeafMsg> out(batch);
  std::vector<ResultMsg> in(batch);
  bool ok = true;
  uint64_t leaves = 0, seq = 0;
  uint64_t t0 = MonotonicNs(), end = t0 + static_cast<uint64_t>(seconds * 1e9), rounds = 0;
  while (MonotonicNs() < end && ok) {
    for (uint32_t i = 0; i < batch; ++i) FillLeaf(out[i].features, seq + i);
    size_t pushed = 0;
    while (pushed < batch) pushed += q->to_evaluator.push(out.data() + pushed, batch - pushed);
    size_t got = 0;
    uint32_t spins = 0;
    while (got < batch) {
      const size_t n = q->to_worker.pop(in.data() + got, batch - got);
      if (n == 0) {
        Backoff(spins);
        if (spins % 100000 == 0 && Exited(child)) break;
      }
      got += n;
    }
    for (uint32_t i = 0; i < batch && ok; ++i) ok = got == batch && in[i].value == ExpectedValue(seq + i);
    seq += batch;
    leaves += batch;
    if (++rounds == kWarmupRounds) {  // the child has started and touched its pages: time from here
      leaves = 0;
      t0 = MonotonicNs();
      end = t0 + static_cast<uint64_t>(seconds * 1e9);
    }
  }
  const double secs = static_cast<double>(MonotonicNs() - t0) * 1e-9;
  q->stop.store(1);
  HandoffResult r = Finish(HandoffTransport::kBoostSpsc, batch, leaves, t0, ok, child);
  r.seconds = secs;
  q->~SpscShared();
  return r;
}

}  // namespace

const char* TransportName(HandoffTransport t) {
  switch (t) {
    case HandoffTransport::kLeafRing:
      return "leaf_ring";
    case HandoffTransport::kPipe:
      return "pipe";
    case HandoffTransport::kBoostSpsc:
      return "boost_spsc";
  }
  return "?";
}

HandoffResult MeasureHandoff(HandoffTransport transport, uint32_t batch, double seconds, uint64_t spin_ns) {
  if (batch < 1 || batch > kMaxBatch) throw ConfigError("hand-off batch must be 1..1024");
  switch (transport) {
    case HandoffTransport::kLeafRing:
      return LeafRingHandoff(batch, seconds, spin_ns);
    case HandoffTransport::kPipe:
      return PipeHandoff(batch, seconds);
    case HandoffTransport::kBoostSpsc:
      return SpscHandoff(batch, seconds);
  }
  return {};
}

}  // namespace zerofarm::bench
