// zerofarm run: parses the options into a FarmConfig and starts the farm.
#include <ctime>
#include <thread>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {
namespace {
template <typename T>
std::string Str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string DefaultRunDir() {
  char name[64];
  const std::time_t now = std::time(nullptr);
  std::tm tm;
  localtime_r(&now, &tm);
  std::strftime(name, sizeof name, "runs/run-%Y%m%d-%H%M%S", &tm);
  return name;
}
}  // namespace

int RunCommand(int argc, char** argv) {
  proc::FarmConfig d;
  cxxopts::Options options("zerofarm run",
                           "Self-play farm: P worker processes, G evaluators (GPUs, or E CPU evaluator processes) and a "
                           "writer of HDF5 shards, over shared memory.");
  AddGameAndSearchOptions(options, d);
  options.add_options("farm")
      ("workers", "Worker processes P (0 = the CPUs granted: SLURM_CPUS_PER_TASK, else the CPU affinity)",
       cxxopts::value<int>()->default_value(Str(d.workers)))
      ("gpus", "Evaluators on GPUs; 0 = one CPU evaluator; -1 = one per GPU granted (CUDA_VISIBLE_DEVICES, "
       "SLURM_GPUS_ON_NODE; CUDA builds)",
       cxxopts::value<int>()->default_value(Str(d.gpus)))
      ("cpu-evaluators", "CPU evaluator processes of a CPU farm (--gpus 0); 0 = auto: one per core granted",
       cxxopts::value<int>()->default_value(Str(d.cpu_evaluators)))
      ("share-gpus", "Allow more --gpus evaluators than visible GPUs: evaluator e runs on GPU e % n "
       "(several per GPU; on one GPU, --gpus 2 --share-gpus simulates two)")
      ("simulate-gpus", "Lay the farm out as for --gpus G (G evaluators, each with its own "
       "CUDA_VISIBLE_DEVICES, workers split w % G) but run the networks on the CPU: tests the multi-GPU "
       "layout without GPUs")
      ("games-per-worker", "Concurrent games K per worker",
       cxxopts::value<int>()->default_value(Str(d.games_per_worker)))
      ("ring-slots", "Leaf slots per worker ring (0 = games-per-worker x leaves-per-round)",
       cxxopts::value<int>()->default_value(Str(d.ring_slots)))
      ("max-batch", "Most leaves per network call", cxxopts::value<int>()->default_value(Str(d.max_batch)))
      ("max-wait-us", "Longest wait for more leaves after the first, in microseconds: the cap of the "
       "adaptive wait, or with --fixed-wait the wait itself",
       cxxopts::value<int>()->default_value(Str(d.max_wait_us)))
      ("fixed-wait", "Always wait --max-wait-us for more leaves (default: adaptive, from the measured "
       "leaf arrival rate and batch cost)");
  options.add_options("config")
      ("config", "Read settings from FILE (key=value lines, the option names without '--'); "
       "options given on the command line override it", cxxopts::value<std::string>());
  options.add_options("output")
      ("models", "Directory watched for new weights (model-N.h5), loaded between batches (default OUT/models)",
       cxxopts::value<std::string>())
      ("out", "Run directory (default runs/run-DATE-TIME); several hosts may share one (a shared filesystem)",
       cxxopts::value<std::string>()->default_value(""))
      ("host-id", "This host's name in the run: shards go to OUT/shards/HOST-ID (default: Slurm's task number "
       "from SLURM_ARRAY_TASK_ID / SLURM_PROCID, else the hostname)", cxxopts::value<std::string>())
      ("shard-positions", "Positions per HDF5 shard (whole games; a shard may hold a few more)",
       cxxopts::value<int>()->default_value(Str(d.shard_positions)))
      ("compression", "Deflate level of the shards, 0..9", cxxopts::value<int>()->default_value(Str(d.compression)))
      ("games", "Stop after this many finished games (0 = no limit)",
       cxxopts::value<int64_t>()->default_value("0"))
      ("duration", "Stop after this many seconds (0 = no limit)", cxxopts::value<double>()->default_value("0"))
      ("hang-timeout", "Kill and restart a worker, evaluator or writer whose heartbeat is older than this many "
       "seconds (0 = never)", cxxopts::value<double>()->default_value(Str(d.hang_timeout)))
      ("no-status", "No live status line (the summary is always printed)");
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;

  proc::FarmConfig c;
  if (r.count("config")) c = proc::FarmConfig::FromFile(r["config"].as<std::string>());
  ReadGameAndSearchOptions(r, &c);
  Override(r, "workers", &c.workers);
  Override(r, "gpus", &c.gpus);
  Override(r, "cpu-evaluators", &c.cpu_evaluators);
  if (r.count("share-gpus")) c.share_gpus = true;
  if (r.count("simulate-gpus")) c.simulate_gpus = true;
  Override(r, "games-per-worker", &c.games_per_worker);
  Override(r, "ring-slots", &c.ring_slots);
  Override(r, "max-batch", &c.max_batch);
  Override(r, "max-wait-us", &c.max_wait_us);
  if (r.count("fixed-wait")) c.adaptive_wait = false;
  if (r.count("out") && r["out"].as<std::string>().empty())  // not the default run directory by accident
    throw ConfigError("--out \"\" names no directory; give a run directory or leave --out out");
  Override(r, "out", &c.out);
  Override(r, "models", &c.models);
  Override(r, "host-id", &c.host_id);
  if (c.out.empty()) c.out = DefaultRunDir();
  Override(r, "shard-positions", &c.shard_positions);
  Override(r, "compression", &c.compression);
  Override(r, "games", &c.games);
  Override(r, "duration", &c.duration);
  Override(r, "hang-timeout", &c.hang_timeout);
  if (r.count("no-status")) c.status_line = false;
  c.Validate();
  c.ResolveResources();
  return proc::RunFarm(c);
}

}  // namespace zerofarm::cli
