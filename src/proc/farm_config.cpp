#include "zerofarm/proc/farm_config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/proc/gpu_plan.h"
#include "zerofarm/proc/host_memory.h"
#include "zerofarm/proc/options.h"
#include "zerofarm/shm/eval_cache.h"

namespace zerofarm::proc {

void FarmConfig::ResolveGpus() {
  if (gpus >= 0) return;
  gpus = 0;
  if (!eval::CudaBuilt()) return;
  // Slurm sets CUDA_VISIBLE_DEVICES for a job with --gres=gpu:N where GRES is
  // configured; SLURM_GPUS_ON_NODE also bounds it where it is not (gpu_plan.h).
  // Only GPUs the driver shows (/proc/driver/nvidia/gpus) count: none there, none used.
  const GpuEnvironment env = ReadGpuEnvironment();
  const auto visible = VisibleGpus(env);
  gpus = std::min(visible ? static_cast<int>(visible->size()) : 0, env.devices_found);
}

void FarmConfig::ResolveResources() {
  ResolveGpus();
  const int cpus = CpusGranted();
  if (workers == 0) workers = std::clamp(cpus, 1, 1024);
  if (host_id.empty()) host_id = DefaultHostId();
  CheckHostId(host_id);
  ResolveEvalCache();
  ResolveCpuFarm(cpus);
}

void FarmConfig::ResolveEvalCache() {
  if (eval_cache == 0) return;
  // The cache is an anonymous shared mapping, charged to the memory cgroup
  // (not to /dev/shm's size): MemAvailable, or a container's or job's
  // limit where that leaves less. Read once, before the evaluators load
  // LibTorch: auto's 1/16 leaves the rest of the room to them and the workers.
  uint64_t memory = MemAvailableBytes();
  if (const auto room = CgroupMemoryRoomBytes()) memory = std::min(memory, *room);
  const size_t entry_bytes = shm::EvalCache::EntryBytes(game::MakeGame(game)->ActionCount());
  if (eval_cache == kEvalCacheAuto) {
    eval_cache = AutoEvalCacheEntries(memory, entry_bytes);
    return;
  }
  // A size given: the supervisor writes the whole table at start, so one that
  // does not fit would end in the OOM killer, not in an error. Refuse it now.
  CheckEvalCacheFits(eval_cache, entry_bytes, memory);
}

void CheckEvalCacheFits(uint64_t entries, size_t entry_bytes, uint64_t memory) {
  uint64_t rounded = 4;  // as EvalCacheMemory rounds: a power of two, at least 4
  while (rounded < entries && rounded < (uint64_t{1} << 40)) rounded *= 2;
  const uint64_t bytes = rounded * entry_bytes;  // <= 2^40 x a few KiB: no overflow
  if (memory > 0 && (rounded < entries || bytes > memory))
    throw ConfigError("--eval-cache " + std::to_string(entries) + " needs " + std::to_string(bytes >> 20) +
                      " MiB, more than the " + std::to_string(memory >> 20) +
                      " MiB this host or its memory cgroup has available");
}

void FarmConfig::ResolveCpuFarm(int cpus) {
  if (eval_threads == 0) eval_threads = 1;
  if (gpus != 0) return;
  // One single-threaded evaluator process per core measured best (docs/benchmarks.md):
  // a 6x64 net at batch 32..64 gains little from a second intra-op thread.
  if (cpu_evaluators == 0) cpu_evaluators = std::clamp(cpus / eval_threads, 1, std::max(1, workers));
  if (cpu_evaluators > workers)
    throw ConfigError("--cpu-evaluators " + std::to_string(cpu_evaluators) +
                      " needs at least as many --workers (got " + std::to_string(workers) +
                      "): worker w is served by evaluator w % E");
}

uint64_t AutoEvalCacheEntries(uint64_t mem_available_bytes, size_t entry_bytes) {
  const uint64_t budget = std::min<uint64_t>(mem_available_bytes / 16, uint64_t{1} << 30);
  uint64_t entries = 4096;
  while (entries < (uint64_t{1} << 20) && (entries * 2) * entry_bytes <= budget) entries *= 2;
  return entries;
}

void FarmConfig::Validate() const {
  // Every value against its row of the option table (proc/options.h), then
  // the checks between options.
  for (const auto& o : OptionTable()) CheckOption(o, *this);
  game::MakeGame(game);  // throws ConfigError for an unknown game
  if (!host_id.empty()) CheckHostId(host_id);
  if (search.simulations < 1)
    throw ConfigError("--simulations must be at least 1 (0, the network alone, is for eval)");
  if (fp16 && bf16) throw ConfigError("--fp16 and --bf16 exclude each other");
  if (fp16 && gpus == 0)
    throw ConfigError("--fp16 needs a GPU evaluator (--gpus >= 1); use --bf16 on the CPU");
  if ((bf16 || fp16) && precision != "auto" && precision != (bf16 ? "bf16" : "fp16"))
    throw ConfigError(std::string(bf16 ? "--bf16" : "--fp16") + " contradicts --precision " + precision);
  if (precision == "fp16" && gpus == 0)
    throw ConfigError("--precision fp16 needs a GPU evaluator (--gpus >= 1); use bf16 on the CPU");
  if (simulate_gpus && gpus == 0) throw ConfigError("--simulate-gpus needs --gpus >= 1");
  if (simulate_gpus && (fp16 || precision == "fp16"))
    throw ConfigError("--simulate-gpus runs the networks on the CPU: fp16 is for GPUs");
  if (hang_timeout > 0 && hang_timeout < 1)
    throw ConfigError("--hang-timeout must be 0 (never) or at least 1 s");
  if (search.playout_cap_fraction > 0.0f && search.fast_simulations >= search.simulations)
    throw ConfigError("--fast-simulations must be below --simulations when --playout-cap-fraction > 0");
  if (search.resign_target > 0.0f && !search.ResignEnabled())
    throw ConfigError("--resign-target needs a starting --resign-threshold above -1");
  if (search.resign_target > 0.0f && search.resign_playthrough <= 0.0f)
    throw ConfigError("--resign-target needs --resign-playthrough > 0 to measure the false-resignation rate");
  if (ring_slots > 0 && ring_slots < search.leaves_per_round)
    throw ConfigError("--ring-slots must be at least --leaves-per-round");
  if (out.empty()) throw ConfigError("--out must name a run directory");
}

std::string FarmConfig::ToText() const {
  std::ostringstream os;
  for (const auto& o : OptionTable())
    if (!o.key.empty()) os << o.key << "=" << o.get(*this) << "\n";
  return os.str();
}

namespace {
std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Every config-file key a user may write.
std::vector<std::string> ConfigKeys() {
  std::vector<std::string> keys;
  for (const auto& o : OptionTable())
    if (!o.key.empty() && o.kind != OptionKind::kSupervisor) keys.push_back(o.key);
  return keys;
}

// user_file: a user's --config FILE, where the supervisor's keys (a run's own
// config.txt has them) are accepted and ignored.
FarmConfig ParseConfig(const std::string& text, const std::string& source, bool user_file) {
  FarmConfig c;
  std::istringstream is(text);
  std::string line;
  for (int n = 1; std::getline(is, line); ++n) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = source + ":" + std::to_string(n) + ": ";
    const auto eq = line.find('=');
    if (eq == std::string::npos)
      throw ConfigError(where + "expected key = value, got '" + PrintableText(line) + "'");
    const std::string key = Trim(line.substr(0, eq));
    const std::string value = Trim(line.substr(eq + 1));
    const OptionSpec* o = FindOptionByKey(key);
    if (!o)
      throw ConfigError(where + "unknown key '" + PrintableText(key) + "'" +
                        DidYouMean(key, ConfigKeys(), ""));
    if (user_file && o->kind == OptionKind::kSupervisor) continue;
    SetOption(*o, &c, value, where + o->key);
  }
  return c;
}
}  // namespace

FarmConfig FarmConfig::FromText(const std::string& text) { return ParseConfig(text, "config", false); }

FarmConfig FarmConfig::FromFile(const std::string& path) {
  // A directory opens (and reads as nothing) on Linux, a FIFO blocks: only a
  // regular file of sane size is a config file (issue 21).
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::is_directory(status))
    throw ConfigError("--config " + path + ": is a directory, not a config file");
  if (!ec && !std::filesystem::is_regular_file(status))
    throw ConfigError("--config " + path + ": not a regular file");
  if (!ec && std::filesystem::file_size(path, ec) > (1u << 20))
    throw ConfigError("--config " + path + ": larger than 1 MiB; not a config file");
  std::ifstream in(path);
  if (!in) throw ConfigError("--config " + path + ": cannot read it");
  std::ostringstream os;
  os << in.rdbuf();
  return ParseConfig(os.str(), path, true);
}

}  // namespace zerofarm::proc
