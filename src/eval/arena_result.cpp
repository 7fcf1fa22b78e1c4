#include "zerofarm/eval/arena_result.h"

#include <algorithm>
#include <cmath>

namespace zerofarm::eval {

std::pair<double, double> ArenaResult::Interval95() const {
  if (games < 1) return {0.0, 1.0};
  constexpr double z = 1.96;
  const double n = games, p = Score();
  const double denom = 1 + z * z / n;
  const double center = (p + z * z / (2 * n)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom;
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

double ArenaResult::EloOf(double s) {
  if (s <= 0.0) return -800.0;
  if (s >= 1.0) return 800.0;
  return std::clamp(-400.0 * std::log10(1.0 / s - 1.0), -800.0, 800.0);
}

}  // namespace zerofarm::eval
