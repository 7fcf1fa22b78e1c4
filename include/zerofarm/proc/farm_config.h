#pragma once
// Everything `zerofarm run` needs, as plain data. The CLI fills it (cxxopts
// lives only in src/cli), Validate() checks it once, and the library never
// sees argv. The supervisor passes it to exec'd evaluators as text, logs it
// at start and stores it in every shard.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "zerofarm/mcts/search_config.h"
#include "zerofarm/proc/game_id.h"    // game ids and host indices (declared here before)
#include "zerofarm/proc/slurm_env.h"  // CPUs granted and host ids (declared here before)

namespace zerofarm::proc {

// The search a self-play farm starts from: mcts::SearchConfig's, with the
// exploration of the shipped recipe (data/recipes/connect4.recipe), which made
// the shipped network: each game opens with 0 to 8 uniformly random moves, its
// first 20 plies are sampled from the visits (temperature 1), later moves at
// temperature 0.3. With less (8 sampled plies, then the most visited move) a
// strong network plays the same games again (issue 72; docs/search.md,
// "Exploration: the farm's defaults"; tests/integration/first_hour_test.cpp).
inline mcts::SearchConfig SelfPlaySearch() {
  mcts::SearchConfig s;
  s.random_opening_plies = 8;
  s.temperature_plies = 20;
  s.final_temperature = 0.3f;
  return s;
}

struct FarmConfig {
  // ---- what to play --------------------------------------------------------
  std::string game = "connect4";
  std::string game_plugin;                       // a game plugin file, absolute (io/game_plugin.h); "" = none
  mcts::SearchConfig search = SelfPlaySearch();  // simulations, c_puct, noise, temperature, L
  uint64_t seed = 1;                             // run seed: games, random net, noise derive from it

  // ---- processes -------------------------------------------------------------
  int workers = 0;                  // P worker processes; 0 = the CPUs granted (ResolveResources)
  int gpus = -1;                    // G evaluators on GPUs; 0 = one CPU evaluator; -1 = the GPUs granted
  int games_per_worker = 256;       // K concurrent games per worker (docs/benchmarks.md, "Every core works")
  int ring_slots = 0;               // leaf slots per worker; 0 = K x L
  int max_batch = 256;              // most leaves per network call
  int max_wait_us = 2000;           // longest wait for more leaves after the first
  int eval_threads = 0;             // LibTorch intra-op threads per evaluator; 0 = auto (ResolveCpuFarm)
  bool bf16 = false;                // run the network in bfloat16
  bool fp16 = false;                // run the network in float16 (GPU only)
  bool average_symmetries = false;  // eval: the same as orientation "mean"
  std::string orientation = "as-is";  // eval: how the net is shown each position (eval::ParseOrientation)

  // ---- the network -------------------------------------------------------------
  std::string weights;  // HDF5 weights file; empty = random net from seed
  std::string models;   // directory watched for new weights; empty = OUT/models
  // --stage-dir: where this host's evaluators load host-local copies of the
  // models from (ModelStageDir, ModelStager); empty = the models directory.
  std::string stage_dir;

  int blocks = 6;
  int filters = 64;
  bool score_head = false;  // a random net's value head: the score head (eval/weights.h), not a scalar
  int value_channels = 1;   // a random net's value head: its conv1x1's channels (eval/weights.h)

  // ---- output and duration -----------------------------------------------------
  std::string out;  // run directory (shards go to OUT/shards/HOST_ID)
  // This host's name in the run: its directory OUT/shards/<host_id>. Empty =
  // DefaultHostId() (Slurm's task, else the hostname), resolved by the CLI.
  std::string host_id;
  int shard_positions = 16384;   // positions per HDF5 shard
  double shard_seconds = 60.0;   // a shard also closes once its first game is this old (0 = no bound)
  int compression = 1;           // deflate level 0..9 of the shards
  int64_t games = 0;             // stop after this many finished games (0 = no limit)
  double duration = 0.0;         // stop after this many seconds (0 = no limit)
  bool status_line = true;       // live status on a terminal (train, eval: progress lines)
  double progress_every = 30.0;  // without a status line: a progress log line every S seconds (0 = none)

  // Set by the supervisor, not by users (written to config.txt; a user's --config file may
  // hold them, as a run's own config.txt does, and they are ignored there):
  //   epoch       how many runs of this host wrote into its host directory before this one;
  //   host_index  this host's number in the run (< 2^16): the host id itself when it is a
  //               number below 65536, else a 16-bit hash of it; claimed in OUT/host-index/,
  //               so two hosts of one run never share one (see docs/schema.md);
  //   run_id      the run directory's id (OUT/run_id, made by the first host), in every shard.
  // Game ids are MakeGameId(host_index, epoch, worker, sequence): unique across the hosts and
  // the restarts of a run without any coordination but the host index claim.
  uint32_t epoch = 0;
  uint32_t host_index = 0;
  std::string run_id;

  // Entries of the evaluation cache shared by this host's workers (rounded
  // up to a power of two; 0 = no cache; kEvalCacheAuto = sized from the
  // host's memory, or its cgroup's room where less, by ResolveResources,
  // AutoEvalCacheEntries). docs/search.md.
  static constexpr uint64_t kEvalCacheAuto = ~uint64_t{0};
  uint64_t eval_cache = kEvalCacheAuto;
  // ---- performance (issue #6); appended here to keep merges small ------------------
  // Network precision: fp32, bf16, fp16 (GPU only) or auto = bf16 on a CPU
  // where it pays (eval::AutoPrefersBf16: AMX, or AVX512-BF16 on AMD), fp32
  // otherwise and on GPUs. --bf16 and --fp16 (the fields above) override it.
  std::string precision = "auto";
  // The evaluator sets its wait for more leaves from the measured arrival
  // rate (proc/batch_policy.h), never past max_wait_us; false: always wait up
  // to max_wait_us (the old fixed policy).
  bool adaptive_wait = true;
  // ---- GPU placement (issue #22; proc/gpu_plan.h) ----------------------------------
  // More GPU evaluators than visible GPUs: evaluator e goes to device e % n
  // (several per GPU; `--gpus 2 --share-gpus` on one GPU simulates two).
  bool share_gpus = false;
  // The farm is laid out as for --gpus G (G evaluators, each exec'd with its own
  // CUDA_VISIBLE_DEVICES, workers w % G to evaluator w % G) but the networks run
  // on the CPU: tests the multi-GPU layout on machines without GPUs or CUDA.
  bool simulate_gpus = false;
  // GPU evaluators run the network as CUDA graphs, one per batch size rounded
  // up to a power of two (eval::TorchOptions::cuda_graph). Off until measured
  // on a GPU; ignored by CPU evaluators.
  bool gpu_graphs = false;
  // Batches each evaluator keeps in flight (eval::TorchOptions::depth;
  // proc/batch_pipeline.h): 1 waits for each batch before gathering the next;
  // 2 gathers and starts the next while a GPU runs this one. Unmeasured.
  int eval_depth = 1;
  // The evaluators answer every leaf at once without a network: the random
  // evaluator (eval::MakeRandomEvaluator, outputs hashed from the features),
  // no model loaded, no GPU touched. The search's own bound (`zerofarm bench`
  // part `search`, issue 77); its games are not for training.
  bool random_evaluator = false;
  // ---- hung children (issue #21) ------------------------------------------------
  // A worker, evaluator or writer whose heartbeat is older than this many
  // seconds is killed (SIGKILL) and restarted like a dead one (0 = never).
  // Long legitimate steps (loading a model, writing a shard) announce
  // themselves with a heartbeat in the future (shm::ProcessSlot::Beat), and a
  // child has at least kStartupGraceSeconds to write its first one.
  double hang_timeout = 30.0;
  static constexpr double kStartupGraceSeconds =
      120.0;  // LibTorch loads slowly on a busy machine, slower under ASan
  // The allowance a child announces before a long step: 4 x hang_timeout.
  uint64_t BusyAllowanceNs() const { return static_cast<uint64_t>(hang_timeout * 4e9); }
  // ---- hostile input (issue #21) ------------
  // Write into a run directory (or models directory) owned by another user or
  // writable by group or others (io/safe_files.h). Command line only
  // (--allow-foreign-dir): not in the config text, so a config file cannot set it.
  bool allow_foreign_dir = false;

  int EffectiveRingSlots() const {
    return ring_slots > 0 ? ring_slots : games_per_worker * search.leaves_per_round;
  }
  // ---- the CPU farm (issue #23; docs/benchmarks.md "Every core works") -----------
  // CPU evaluator processes when gpus == 0 (worker w is served by evaluator
  // w % E); 0 = auto: ResolveCpuFarm picks E and eval_threads from the cores.
  int cpu_evaluators = 0;
  int Evaluators() const { return gpus > 0 ? gpus : std::max(1, cpu_evaluators); }
  // The evaluators run their networks on CUDA (not with --simulate-gpus).
  bool OnGpu() const { return gpus > 0 && !simulate_gpus; }
  // gpus = -1 resolved: the GPUs this machine has (CUDA builds only), else 0.
  // Reads /proc/driver/nvidia, CUDA_VISIBLE_DEVICES and SLURM_GPUS_ON_NODE (so
  // a Slurm job uses the GPUs it was granted); never initialises CUDA.
  void ResolveGpus();
  // ResolveGpus(), then workers = 0 resolved to CpusGranted(), host_id "" to
  // DefaultHostId(), then ResolveEvalCache() and ResolveCpuFarm().
  void ResolveResources();
  // eval_cache auto resolved to AutoEvalCacheEntries() of the memory this
  // process may take (proc/host_memory.h); a size given is checked against
  // that memory: ConfigError when its table (rounded up to a power of two)
  // is larger.
  void ResolveEvalCache();
  // The CPU farm's auto rule (gpus == 0; measured, docs/benchmarks.md):
  // cpu_evaluators = 0 becomes one evaluator per granted core (at most the
  // workers), eval_threads = 0 becomes 1 (GPU farms: 1). ConfigError when
  // cpu_evaluators exceeds the workers (an evaluator with no worker).
  void ResolveCpuFarm(int cpus);

  // Throws ConfigError naming the first invalid value.
  void Validate() const;
  // "key=value" lines, one per key of the option table (proc/options.h);
  // FromText reads them back (unknown keys are a ConfigError).
  std::string ToText() const;
  static FarmConfig FromText(const std::string& text);
  // FromText of a file: `key = value` lines ('#' comments, blank lines, '-'
  // or '_' in keys, spaces around '=' allowed). ConfigError names the file
  // and the line of a bad or unknown key. The supervisor's keys (epoch,
  // host_index, run_id) are ignored: a run's config.txt reproduces the run.
  static FarmConfig FromFile(const std::string& path);
};

// The shared evaluation cache's auto size: the largest power of two of entries
// whose table fits in 1/16 of `mem_available_bytes` and in 1 GiB, at most 2^20
// entries (docs/search.md), at least 4096; `entry_bytes` per entry.
uint64_t AutoEvalCacheEntries(uint64_t mem_available_bytes, size_t entry_bytes);
// ResolveResources passes it MemAvailable, or the room the process's memory
// cgroups leave where that is less (proc/host_memory.h).
// Throws ConfigError (naming --eval-cache) when a cache of `entries`, rounded
// up to a power of two as it is mapped, needs more than `memory` bytes; a
// `memory` of 0 (unknown) passes.
void CheckEvalCacheFits(uint64_t entries, size_t entry_bytes, uint64_t memory);

}  // namespace zerofarm::proc
