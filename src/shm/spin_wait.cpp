#include "zerofarm/shm/spin_wait.h"

#include <sched.h>

namespace zerofarm::shm {
namespace {
uint64_t ComputeDefaultBudget() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  // On failure assume several CPUs: the back-off still stops useless spins.
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return kDefaultSpinBudgetNs;
  return CPU_COUNT(&set) >= 2 ? kDefaultSpinBudgetNs : 0;
}
}  // namespace

uint64_t DefaultSpinBudgetNs() noexcept {
  // Once per process (a thread-safe static): the affinity of a farm process
  // does not change while it runs.
  static const uint64_t budget = ComputeDefaultBudget();
  return budget;
}

}  // namespace zerofarm::shm
