#include "zerofarm/proc/slurm_env.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <optional>

#include "zerofarm/core/error.h"

namespace zerofarm::proc {

namespace {
// A non-negative decimal integer from the environment, if `name` holds one.
std::optional<long> EnvNumber(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0) return std::nullopt;
  return n;
}
}  // namespace

int CpusGranted() {
  if (const auto n = EnvNumber("SLURM_CPUS_PER_TASK"); n && *n > 0)
    return static_cast<int>(std::min(*n, 4096L));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

std::string DefaultHostId() {
  const auto task = EnvNumber("SLURM_ARRAY_TASK_ID");
  const auto procid = EnvNumber("SLURM_PROCID");
  const auto ntasks = EnvNumber("SLURM_NTASKS");
  if (task) {
    if (ntasks && *ntasks > 1 && procid) return std::to_string(*task * *ntasks + *procid);
    return std::to_string(*task);
  }
  if (EnvNumber("SLURM_JOB_ID") && procid) return std::to_string(*procid);
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !name[0]) return "localhost";
  std::string id = name;
  for (char& ch : id)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-')) ch = '_';
  return id.substr(0, 64);
}

void CheckHostId(const std::string& id) {
  bool ok = !id.empty() && id.size() <= 64 && id != "." && id != "..";
  for (char ch : id)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-')) ok = false;
  if (!ok)
    throw ConfigError("--host-id must be 1..64 characters of letters, digits, '.', '_' or '-', got '" +
                      PrintableText(id) + "'");
}

}  // namespace zerofarm::proc
