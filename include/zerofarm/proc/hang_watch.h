#pragma once
// How long a child has been silent, as the supervisor could watch it. Pure
// logic on times passed in (no clock, no shm), so it is unit-tested with exact
// inputs; src/proc/supervisor.cpp feeds it MonotonicNs() and the heartbeats.
//
// The supervisor says a child stopped beating only over time it was itself
// running to watch. A gap between two of its passes longer than a threshold
// (a quarter of --hang-timeout, at least 1 s: a VM paused or starved by its
// host, the whole farm SIGSTOPped, an I/O stall or a long back-off of the
// supervisor's own) is a pause, and only a quarter of --hang-timeout of it
// counts in a child's silence: its children were most likely frozen with it.
// For a heartbeat written inside a pause (after the supervisor's last pass
// before it) only the part of the pause after the heartbeat is a pause. So a
// farm frozen whole wakes with its children's silence at a quarter of the
// timeout: they must run again within three quarters of it. And since every
// pause still counts a quarter, a supervisor whose every pass is slow still
// finds a hung child, at its fifth slow pass. Seen on a 2-core VM whose
// kernel stalled every process for 3.5 minutes: the supervisor woke and
// killed its writer and both workers as hung, and a minute later both
// evaluators.
//
// Single-threaded: one HangWatch per supervisor, its main thread only.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace zerofarm::proc {

class HangWatch {
 public:
  // Pauses remembered; a silence older than the oldest of them counts the
  // forgotten ones as watched (it can only make a hang found sooner).
  static constexpr std::size_t kPausesKept = 64;

  // hang_timeout_s <= 0: hangs are not watched, and no pause is counted.
  explicit HangWatch(double hang_timeout_s)
      : threshold_ns_(static_cast<uint64_t>(std::max(1.0, hang_timeout_s / 4) * 1e9)),
        counted_ns_(static_cast<uint64_t>(std::max(0.0, hang_timeout_s / 4) * 1e9)),
        enabled_(hang_timeout_s > 0) {}

  // One supervision pass at now_ns (monotonic, never decreasing). Returns the
  // gap since the previous pass when it was a pause (over the threshold),
  // else 0. The first pass measures no gap.
  uint64_t Pass(uint64_t now_ns) {
    uint64_t pause = 0;
    if (enabled_ && last_ns_ != 0 && now_ns - last_ns_ > threshold_ns_) {
      pause = now_ns - last_ns_;
      pauses_.push_back({last_ns_, now_ns});
      if (pauses_.size() > kPausesKept) pauses_.pop_front();
    }
    last_ns_ = now_ns;
    return pause;
  }

  // The part of the supervisor's pauses after t_ns that does not count as
  // silence: for each pause [start, end] ending after t_ns whose part
  // end - max(t_ns, start) is over the threshold, all of that part but a
  // quarter of the hang timeout (ns).
  uint64_t UnwatchedSince(uint64_t t_ns) const {
    uint64_t sum = 0;
    for (const Pause& p : pauses_) {
      if (p.end_ns <= t_ns) continue;
      const uint64_t span = p.end_ns - std::max(t_ns, p.start_ns);
      if (span > threshold_ns_) sum += span - counted_ns_;
    }
    return sum;
  }

  // Seconds of a silence since last_ns (a heartbeat or a start) that the
  // supervisor watched, at now_ns, the time of its latest Pass(). 0 for a
  // time in the future (a heartbeat promising to be busy until then).
  double WatchedSeconds(uint64_t last_ns, uint64_t now_ns) const {
    if (last_ns >= now_ns) return 0.0;
    const uint64_t silence = now_ns - last_ns, unwatched = UnwatchedSince(last_ns);
    return silence > unwatched ? static_cast<double>(silence - unwatched) * 1e-9 : 0.0;
  }

  uint64_t ThresholdNs() const { return threshold_ns_; }  // a longer gap is a pause
  uint64_t CountedNs() const { return counted_ns_; }      // of a pause, what counts as silence

 private:
  struct Pause {
    uint64_t start_ns;  // the supervisor's last pass before it
    uint64_t end_ns;    // its first pass after
  };
  const uint64_t threshold_ns_;
  const uint64_t counted_ns_;  // <= threshold_ns_
  const bool enabled_;
  uint64_t last_ns_ = 0;  // the last pass; 0: none yet
  std::deque<Pause> pauses_;
};

}  // namespace zerofarm::proc
