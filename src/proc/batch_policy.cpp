#include "zerofarm/proc/batch_policy.h"

#include <algorithm>
#include <cmath>

namespace zerofarm::proc {

void AdaptiveBatchPolicy::ObserveArrival(uint64_t leaves, uint64_t gap_ns) {
  if (leaves == 0) return;
  const double sample = static_cast<double>(gap_ns) / static_cast<double>(leaves);
  interarrival_ns_ = interarrival_ns_ <= 0 ? sample : interarrival_ns_ + alpha_ * (sample - interarrival_ns_);
}

void AdaptiveBatchPolicy::ObserveBatch(uint64_t batch, uint64_t ns) {
  if (batch == 0) return;
  const double b = static_cast<double>(batch), t = static_cast<double>(ns);
  const double keep = batches_ == 0 ? 0.0 : 1.0 - alpha_;
  s1_ = keep * s1_ + 1;
  sb_ = keep * sb_ + b;
  sbb_ = keep * sbb_ + b * b;
  st_ = keep * st_ + t;
  sbt_ = keep * sbt_ + b * t;
  ++batches_;
}

double AdaptiveBatchPolicy::PerLeafNs() const {
  if (s1_ <= 0) return 0;
  const double det = s1_ * sbb_ - sb_ * sb_;
  const double mean_b = sb_ / s1_, mean_t = st_ / s1_;
  // Batches of (nearly) one size cannot separate the two costs: assume half
  // of a batch's time is fixed, which errs towards waiting a little.
  if (det <= 1e-9 * s1_ * sbb_) return mean_t / 2 / mean_b;
  const double slope = (s1_ * sbt_ - sb_ * st_) / det;
  return std::clamp(slope, 0.0, mean_t / mean_b);
}

double AdaptiveBatchPolicy::FixedNs() const {
  if (s1_ <= 0) return 0;
  const double mean_b = sb_ / s1_, mean_t = st_ / s1_;
  return std::max(0.0, mean_t - PerLeafNs() * mean_b);
}

bool AdaptiveBatchPolicy::WorthWaiting(uint64_t batch) const {
  if (!Calibrated()) return true;
  return interarrival_ns_ * static_cast<double>(std::max<uint64_t>(batch, 1)) < FixedNs();
}

uint64_t AdaptiveBatchPolicy::ArrivalTimeoutNs(uint64_t min_gap_ns) const {
  const double t = 4 * interarrival_ns_;
  return std::max<uint64_t>(min_gap_ns, static_cast<uint64_t>(std::min(t, 1e12)));
}

}  // namespace zerofarm::proc
