// Host identity of a farm in a run of several hosts: game ids, host indices,
// host ids from Slurm's environment, the CPUs granted (farm_config.h).
#include <sched.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "zerofarm/core/error.h"
#include "zerofarm/proc/farm_config.h"

using namespace zerofarm;
using namespace zerofarm::proc;

namespace {
// Sets (or, with nullopt, unsets) environment variables for one scope and
// restores what was there before.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::optional<std::string>>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

const std::map<std::string, std::optional<std::string>> kNoSlurm = {{"SLURM_ARRAY_TASK_ID", std::nullopt},
                                                                    {"SLURM_PROCID", std::nullopt},
                                                                    {"SLURM_NTASKS", std::nullopt},
                                                                    {"SLURM_JOB_ID", std::nullopt},
                                                                    {"SLURM_CPUS_PER_TASK", std::nullopt}};
}  // namespace

TEST_CASE("game ids put host, epoch, worker and sequence in separate bits", "[proc][hosts]") {
  CHECK(MakeGameId(0, 0, 0, 0) == 0);
  CHECK(MakeGameId(3, 0, 0, 0) == 3ull << 48);
  CHECK(MakeGameId(0, 1, 0, 0) == 1ull << 36);
  CHECK(MakeGameId(0, 0, 1, 0) == 1ull << 26);
  CHECK(MakeGameId(0, 0, 0, 5) == 5);
  CHECK(MakeGameId(65535, kMaxEpochs - 1, 1023, kMaxGameSequence - 1) == ~0ull);
  // Every combination of a few values of each field gives a distinct id.
  std::set<uint64_t> ids;
  int n = 0;
  for (uint32_t h : {0u, 1u, 2u, 65535u})
    for (uint32_t e : {0u, 1u, kMaxEpochs - 1})
      for (uint32_t w : {0u, 1u, 1023u})
        for (uint64_t s : {uint64_t{0}, uint64_t{1}, kMaxGameSequence - 1}) {
          ids.insert(MakeGameId(h, e, w, s));
          ++n;
        }
  CHECK(ids.size() == static_cast<size_t>(n));
  CHECK_THROWS_AS(MakeGameId(65536, 0, 0, 0), Error);
  CHECK_THROWS_AS(MakeGameId(0, kMaxEpochs, 0, 0), Error);
  CHECK_THROWS_AS(MakeGameId(0, 0, 1024, 0), Error);
  CHECK_THROWS_AS(MakeGameId(0, 0, 0, kMaxGameSequence), Error);
}

TEST_CASE("a numeric host id is its own host index, any other is hashed to 16 bits", "[proc][hosts]") {
  CHECK(HostIndexOf("0") == 0);
  CHECK(HostIndexOf("17") == 17);
  CHECK(HostIndexOf("65535") == 65535);
  // Not a plain number below 65536: hashed, deterministically.
  for (const char* id : {"65536", "017", "node7", "gpu-a100-003", "-1"}) {
    INFO(id);
    CHECK(HostIndexOf(id) < 65536u);
    CHECK(HostIndexOf(id) == HostIndexOf(id));
  }
  CHECK(HostIndexOf("node7") != HostIndexOf("node8"));
}

TEST_CASE("host ids are short names safe as a directory", "[proc][hosts]") {
  for (const char* ok : {"0", "node7", "gpu-a100_003.cluster"}) CHECK_NOTHROW(CheckHostId(ok));
  for (const char* bad : {"", ".", "..", "a/b", "a b", "x\n"}) {
    INFO(bad);
    CHECK_THROWS_AS(CheckHostId(bad), ConfigError);
  }
  CHECK_THROWS_AS(CheckHostId(std::string(65, 'a')), ConfigError);
}

TEST_CASE("the default host id comes from Slurm's task, else the hostname", "[proc][hosts]") {
  {
    ScopedEnv env(kNoSlurm);
    char name[256] = {};
    REQUIRE(gethostname(name, sizeof name - 1) == 0);
    CHECK(DefaultHostId() == std::string(name).substr(0, 64));
  }
  {
    ScopedEnv env(kNoSlurm);
    ScopedEnv slurm({{"SLURM_JOB_ID", "88"}, {"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_PROCID", "0"}});
    CHECK(DefaultHostId() == "5");
  }
  {
    ScopedEnv env(kNoSlurm);  // an array task running 4 tasks (srun -n 4): task * 4 + procid
    ScopedEnv slurm(
        {{"SLURM_JOB_ID", "88"}, {"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "3"}});
    CHECK(DefaultHostId() == "23");
  }
  {
    ScopedEnv env(kNoSlurm);  // a job that is not an array: its task's rank
    ScopedEnv slurm({{"SLURM_JOB_ID", "88"}, {"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "4"}});
    CHECK(DefaultHostId() == "2");
  }
}

TEST_CASE("workers default to the CPUs granted, not every core of the node", "[proc][hosts]") {
  {
    ScopedEnv env(kNoSlurm);
    cpu_set_t set;
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    CHECK(CpusGranted() == CPU_COUNT(&set));
  }
  {
    ScopedEnv env(kNoSlurm);
    ScopedEnv slurm({{"SLURM_CPUS_PER_TASK", "3"}, {"SLURM_JOB_ID", "1"}});
    CHECK(CpusGranted() == 3);
    FarmConfig c;
    c.out = "/tmp/unused";
    c.gpus = 0;
    c.host_id = "h";
    REQUIRE(c.workers == 0);
    c.ResolveResources();
    CHECK(c.workers == 3);
    CHECK(c.host_id == "h");
  }
  {
    ScopedEnv env(kNoSlurm);
    ScopedEnv slurm({{"SLURM_CPUS_PER_TASK", "junk"}, {"SLURM_JOB_ID", "1"}});
    CHECK(CpusGranted() >= 1);  // not a number: ignored
  }
}

TEST_CASE("host_id travels in the config text, host_index and run_id in a config file are ignored",
          "[proc][hosts]") {
  FarmConfig c;
  c.out = "/tmp/run";
  c.host_id = "node7";
  c.host_index = 12;
  c.run_id = "00ff";
  const FarmConfig back = FarmConfig::FromText(c.ToText());
  CHECK(back.host_id == "node7");
  CHECK(back.host_index == 12);
  CHECK(back.run_id == "00ff");
  const std::string path = "/tmp/zf-host-id-test-" + std::to_string(getpid()) + ".conf";
  // A run's own config.txt has them: a config file may, and they stay the supervisor's.
  for (const char* line : {"host_index = 3", "run_id = abc", "epoch = 5"}) {
    std::ofstream(path) << "game = connect4\n" << line << "\n";
    INFO(line);
    const FarmConfig read = FarmConfig::FromFile(path);
    CHECK(read.host_index == 0);
    CHECK(read.run_id.empty());
    CHECK(read.epoch == 0);
  }
  std::ofstream(path) << "host-id = node9\n";
  CHECK(FarmConfig::FromFile(path).host_id == "node9");
  std::remove(path.c_str());
}

// Issue #23: the CPU farm's defaults (docs/benchmarks.md, docs/search.md).
TEST_CASE("a CPU farm resolves one single-threaded evaluator per core and an explicit count",
          "[proc][cpu_farm]") {
  FarmConfig c;
  c.out = "/tmp/unused";
  c.gpus = 0;
  c.workers = 16;
  c.ResolveCpuFarm(16);
  CHECK(c.cpu_evaluators == 16);
  CHECK(c.eval_threads == 1);
  CHECK(c.Evaluators() == 16);
  FarmConfig few = c;
  few.cpu_evaluators = 0;
  few.workers = 3;  // never more evaluators than workers
  few.ResolveCpuFarm(16);
  CHECK(few.cpu_evaluators == 3);
  FarmConfig threads = c;
  threads.cpu_evaluators = 0;
  threads.eval_threads = 4;  // the cores are shared out among E x T
  threads.ResolveCpuFarm(16);
  CHECK(threads.cpu_evaluators == 4);
  FarmConfig bad = c;
  bad.cpu_evaluators = 17;
  CHECK_THROWS_AS(bad.ResolveCpuFarm(16), ConfigError);
  FarmConfig gpu = c;
  gpu.gpus = 2;
  gpu.cpu_evaluators = 0;
  gpu.ResolveCpuFarm(16);
  CHECK(gpu.Evaluators() == 2);
}

TEST_CASE("the evaluation cache is on by default and sized from the host's memory", "[proc][cpu_farm]") {
  CHECK(FarmConfig{}.eval_cache == FarmConfig::kEvalCacheAuto);
  CHECK(FarmConfig::FromText(FarmConfig{}.ToText()).eval_cache == FarmConfig::kEvalCacheAuto);
  CHECK(AutoEvalCacheEntries(uint64_t{24} << 30, 64) == (uint64_t{1} << 20));   // capped at 2^20 entries
  CHECK(AutoEvalCacheEntries(uint64_t{256} << 20, 64) == (uint64_t{1} << 18));  // 16 MiB: 1/16 of the memory
  CHECK(AutoEvalCacheEntries(0, 64) == 4096);
}

TEST_CASE("an evaluation cache size given is refused in one line when its table does not fit in memory",
          "[proc][cpu_farm]") {
  CHECK_NOTHROW(CheckEvalCacheFits(uint64_t{1} << 20, 64, uint64_t{64} << 20));  // exactly 64 MiB
  CHECK_NOTHROW(CheckEvalCacheFits(uint64_t{1} << 28, 384, 0));                  // memory unknown
  // 2^20 + 1 entries round up to 2^21: 128 MiB.
  CHECK_THROWS_WITH(
      CheckEvalCacheFits((uint64_t{1} << 20) + 1, 64, uint64_t{100} << 20),
      "--eval-cache 1048577 needs 128 MiB, more than the 100 MiB this host or its memory cgroup "
      "has available");
  // The option's largest size for Go 9x9: 96 GiB.
  CHECK_THROWS_AS(CheckEvalCacheFits(uint64_t{1} << 28, 384, uint64_t{64} << 30), ConfigError);
}
