#pragma once
// Everything `zerofarm run` needs, as plain data. The CLI fills it (cxxopts
// lives only in src/cli), Validate() checks it once, and the library never
// sees argv. The supervisor passes it to exec'd evaluators as text, logs it
// at start and stores it in every shard.
#include <cstdint>
#include <string>

#include "zerofarm/mcts/search_config.h"

namespace zerofarm::proc {

struct FarmConfig {
  // ---- what to play --------------------------------------------------------
  std::string game = "connect4";
  mcts::SearchConfig search;        // simulations, c_puct, noise, temperature, L
  uint64_t seed = 1;                // run seed: games, random net, noise derive from it

  // ---- processes -------------------------------------------------------------
  int workers = 2;                  // P worker processes
  int gpus = -1;                    // G evaluators on GPUs; 0 = one CPU evaluator; -1 = the GPUs found
  int games_per_worker = 32;        // K concurrent games per worker
  int ring_slots = 0;               // leaf slots per worker; 0 = K x L
  int max_batch = 256;              // most leaves per network call
  int max_wait_us = 2000;           // longest wait for more leaves after the first
  int eval_threads = 1;             // LibTorch intra-op threads per evaluator
  bool bf16 = false;                // run the network in bfloat16
  bool fp16 = false;                // run the network in float16 (GPU only)

  // ---- the network -------------------------------------------------------------
  std::string weights;              // HDF5 weights file; empty = random net from seed
  std::string models;               // directory watched for new weights; empty = OUT/models
  int blocks = 6;
  int filters = 64;

  // ---- output and duration -----------------------------------------------------
  std::string out;                  // run directory (shards go to OUT/shards)
  int shard_positions = 16384;      // positions per HDF5 shard
  int compression = 1;              // deflate level 0..9 of the shards
  int64_t games = 0;                // stop after this many finished games (0 = no limit)
  double duration = 0.0;            // stop after this many seconds (0 = no limit)
  bool status_line = true;          // live status on a terminal

  // Set by the supervisor, not by users (a config file may not set it): how many runs wrote into `out`
  // before this one. Game ids are (epoch << 48) | (worker << 32) | sequence,
  // so a run that continues a directory never repeats an id.
  uint32_t epoch = 0;

  // Entries of the evaluation cache shared by this host's workers (rounded
  // up to a power of two; 0 = no cache). docs/search.md.
  uint64_t eval_cache = 0;
  // ---- performance (issue #6); appended here to keep merges small ------------------
  // Network precision: fp32, bf16, fp16 (GPU only) or auto = bf16 on a CPU
  // with AVX512-BF16/AMX (CpuHasBf16), fp32 otherwise and on GPUs. --bf16 and
  // --fp16 (the fields above) override it.
  std::string precision = "auto";
  // The evaluator sets its wait for more leaves from the measured arrival
  // rate (proc/batch_policy.h), never past max_wait_us; false: always wait up
  // to max_wait_us (the old fixed policy).
  bool adaptive_wait = true;

  int EffectiveRingSlots() const {
    return ring_slots > 0 ? ring_slots : games_per_worker * search.leaves_per_round;
  }
  int Evaluators() const { return gpus > 0 ? gpus : 1; }
  // gpus = -1 resolved: the GPUs this machine has (CUDA builds only), else 0.
  // Reads /proc/driver/nvidia and CUDA_VISIBLE_DEVICES; never initialises CUDA.
  void ResolveGpus();

  // Throws ConfigError naming the first invalid value.
  void Validate() const;
  // "key=value" lines, one per setting; FromText reads them back (unknown
  // keys are a ConfigError).
  std::string ToText() const;
  static FarmConfig FromText(const std::string& text);
  // FromText of a file: `key = value` lines ('#' comments, blank lines, '-'
  // or '_' in keys, spaces around '=' allowed). ConfigError names the file
  // and the line of a bad or unknown key.
  static FarmConfig FromFile(const std::string& path);
};

}  // namespace zerofarm::proc
