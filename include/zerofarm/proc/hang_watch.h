#pragma once
// How long a child has been silent, as the supervisor could watch it. Pure
// logic on times passed in (no clock, no shm), so it is unit-tested with exact
// inputs; src/proc/supervisor.cpp feeds it MonotonicNs() and the heartbeats.
//
// The supervisor says a child stopped beating only over time it was itself
// running to watch. A gap between two of its passes longer than a threshold
// (a quarter of --hang-timeout, at least 1 s: a VM paused or starved by its
// host, the whole farm SIGSTOPped, an I/O stall that blocked the supervisor)
// is a pause of its own, and the part beyond the threshold does not count in
// any child's silence: its children were most likely frozen with it. Only the
// excess is left out, so a supervisor whose every pass is slow still finds a
// hung child, after about hang_timeout / threshold such passes. Seen on a
// 2-core VM whose kernel stalled every process for 3.5 minutes: the
// supervisor woke and killed its writer and both workers as hung, and a
// minute later both evaluators.
//
// Single-threaded: one HangWatch per supervisor, its main thread only.
#include <algorithm>
#include <cstdint>

namespace zerofarm::proc {

class HangWatch {
 public:
  // hang_timeout_s <= 0: hangs are not watched, and no pause is counted.
  explicit HangWatch(double hang_timeout_s)
      : threshold_ns_(static_cast<uint64_t>(std::max(1.0, hang_timeout_s / 4) * 1e9)),
        enabled_(hang_timeout_s > 0) {}

  // One supervision pass at now_ns (monotonic). Returns the gap since the
  // previous pass when it was a pause (over the threshold), else 0. The first
  // pass measures no gap.
  uint64_t Pass(uint64_t now_ns) {
    uint64_t pause = 0;
    if (enabled_ && last_ns_ != 0 && now_ns - last_ns_ > threshold_ns_) {
      pause = now_ns - last_ns_;
      paused_ns_ += pause - threshold_ns_;
    }
    last_ns_ = now_ns;
    return pause;
  }
  // The supervisor's own pauses so far, the part beyond the threshold (ns).
  uint64_t PausedNs() const { return paused_ns_; }
  uint64_t ThresholdNs() const { return threshold_ns_; }

 private:
  const uint64_t threshold_ns_;
  const bool enabled_;
  uint64_t last_ns_ = 0;  // the last pass; 0: none yet
  uint64_t paused_ns_ = 0;
};

// One child's silence: its last heartbeat (or start) as the supervisor last
// saw it, and the supervisor's pauses (HangWatch::PausedNs()) at that moment.
class Silence {
 public:
  // Seconds since `last_ns` (a heartbeat or a start) that the supervisor
  // watched, at now_ns with its pauses so far at paused_ns: the time since,
  // less the pauses since it first saw that `last_ns`. 0 for a time in the
  // future (a heartbeat promising to be busy until then).
  double WatchedSeconds(uint64_t last_ns, uint64_t now_ns, uint64_t paused_ns) {
    if (last_ns != seen_last_ns_) {  // a new heartbeat: the pauses before it do not count
      seen_last_ns_ = last_ns;
      paused_at_seen_ns_ = paused_ns;
    }
    if (last_ns >= now_ns) return 0.0;
    const uint64_t silence = now_ns - last_ns, unwatched = paused_ns - paused_at_seen_ns_;
    return silence > unwatched ? static_cast<double>(silence - unwatched) * 1e-9 : 0.0;
  }

 private:
  uint64_t seen_last_ns_ = 0;
  uint64_t paused_at_seen_ns_ = 0;
};

}  // namespace zerofarm::proc
