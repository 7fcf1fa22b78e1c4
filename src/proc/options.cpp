// The option table: one row per setting (include/zerofarm/proc/options.h says
// how to add one).
#include "zerofarm/proc/options.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <type_traits>

#include "zerofarm/core/error.h"
#include "zerofarm/core/hash.h"
#include "zerofarm/game/game.h"

namespace zerofarm::proc {
namespace {

template <typename T>
T ParseValue(const std::string& text) {
  return ParseOptionValue<T>(text);
}
template <typename T>
std::string ShowValue(const T& v) {
  return ShowOptionValue(v);
}

// Every game the registry knows, for the help of --game.
std::string GameList() {
  std::string s;
  for (const auto& g : game::GameNames()) s += (s.empty() ? "" : ", ") + g;
  return s;
}

OptionSpec Row(const char* name, const char* key, const char* group, std::string help, OptionKind kind,
               uint32_t commands) {
  OptionSpec o;
  o.name = name;
  o.key = key;
  o.group = group;
  o.help = std::move(help);
  o.kind = kind;
  o.commands = commands;
  return o;
}

// The commands that play games with the farm's search and network.
constexpr uint32_t kPlay = kRun | kSelfplay | kTune | kLoop | kBench;
constexpr uint32_t kNet = kPlay | kEval | kTrain;

// A number field: ZF_NUM(name, key, group, help, lo, hi, commands, field).
#define ZF_NUM(name, key, group, help, lo_, hi_, cmds, field)                                        \
  [] {                                                                                               \
    OptionSpec o = Row(name, key, group, help, OptionKind::kNumber, cmds);                           \
    o.lo = lo_;                                                                                      \
    o.hi = hi_;                                                                                      \
    o.get = [](const FarmConfig& c) { return ShowValue(c.field); };                                  \
    o.set = [](FarmConfig& c, const std::string& v) { c.field = ParseValue<decltype(c.field)>(v); }; \
    return o;                                                                                        \
  }()
// A text field (a path, a name).
#define ZF_STR(name, key, group, help, cmds, field)                      \
  [] {                                                                   \
    OptionSpec o = Row(name, key, group, help, OptionKind::kText, cmds); \
    o.get = [](const FarmConfig& c) { return std::string(c.field); };    \
    o.set = [](FarmConfig& c, const std::string& v) { c.field = v; };    \
    return o;                                                            \
  }()
// A bool key set to `value` by the switch --name (a bool field; 0 or 1 in a file).
#define ZF_FLAG(name, key, group, help, value, cmds, field)                             \
  [] {                                                                                  \
    OptionSpec o = Row(name, key, group, help, OptionKind::kFlag, cmds);                \
    o.flag_value = value;                                                               \
    o.get = [](const FarmConfig& c) { return ShowValue(c.field); };                     \
    o.set = [](FarmConfig& c, const std::string& v) { c.field = ParseValue<bool>(v); }; \
    return o;                                                                           \
  }()

constexpr const char* kGame = "game and search";
constexpr const char* kNetwork = "network";
constexpr const char* kFarm = "farm";
constexpr const char* kOutput = "output";
constexpr const char* kSup = "set by the supervisor (ignored in a config file)";

// The option table itself: one row per option, in the order --help lists
// them. Long because it is a table (a row is data, not a step); splitting it
// by group would only scatter the rows.
std::vector<OptionSpec> BuildTable() {
  std::vector<OptionSpec> t = {
      // ---- game and search --------------------------------------------------------------
      [] {
        OptionSpec o = Row("game", "game", "game and search",
                           "Game to play: " + GameList() +
                               " (eval and gtp: the weights' own unless given; gtp without weights: go)",
                           OptionKind::kChoice, kPlay | kEval | kGtp | kMatch);
        o.choices = game::GameNames();
        o.choices_now = game::GameNames;  // --game-plugin adds its game
        o.get = [](const FarmConfig& c) { return c.game; };
        o.set = [](FarmConfig& c, const std::string& v) { c.game = v; };
        return o;
      }(),
      [] {
        OptionSpec o =
            Row("game-plugin", "game_plugin", kGame,
                "A game built as a shared library (docs/adding-a-game.md): every command plays its game (a "
                "--game naming another is refused); run and the commands that play check it first",
                OptionKind::kText, kNet | kGtp | kMatch);
        o.get = [](const FarmConfig& c) { return c.game_plugin; };
        o.set = [](FarmConfig& c, const std::string& v) {  // absolute: children may start elsewhere
          c.game_plugin = v.empty() ? v : std::filesystem::absolute(v).string();
        };
        return o;
      }(),
      ZF_NUM("seed", "seed", kGame, "Run seed: games, noise and a random net derive from it", 0, 1.9e19,
             kNet | kGtp | kMatch, seed),
      ZF_NUM("simulations", "simulations", kGame, "Root visits per move (eval: 0 = the network alone)", 0,
             1000000, kPlay | kEval | kGtp | kMatch, search.simulations),
      ZF_NUM("c-puct", "c_puct", kGame, "PUCT exploration constant", 0, 100, kPlay | kEval | kGtp | kMatch,
             search.c_puct),
      ZF_NUM("value-discount", "value_discount", kGame,
             "Backed-up values (and the trainer's value targets) shrink by this factor a ply: < 1 prefers "
             "quicker "
             "wins (1 = off)",
             mcts::kMinValueDiscount, 1, kNet, search.value_discount),
      ZF_NUM("fpu-reduction", "fpu_reduction", kGame,
             "First-play urgency: unvisited child Q = parent Q minus this", -2, 2, kPlay,
             search.fpu_reduction),
      ZF_NUM("dirichlet-alpha", "dirichlet_alpha", kGame, "Root Dirichlet noise concentration", 1e-4, 100,
             kPlay, search.dirichlet_alpha),
      ZF_NUM("dirichlet-fraction", "dirichlet_fraction", kGame,
             "Share of the root prior replaced by noise (0 = off)", 0, 1, kPlay, search.dirichlet_fraction),
      ZF_NUM("temperature-plies", "temperature_plies", kGame,
             "Opening plies whose move is sampled from the visits", 0, 100000, kPlay,
             search.temperature_plies),
      ZF_NUM("final-temperature", "final_temperature", kGame,
             "Temperature of the moves after the opening plies (0 = most visited)", 0, 10, kPlay,
             search.final_temperature),
      ZF_FLAG("temperature-falls", "temperature_falls", kGame,
              "The opening plies' temperature falls linearly from 1 to --final-temperature (not a step)", "1",
              kPlay, search.temperature_falls),
      ZF_NUM("random-opening-plies", "random_opening_plies", kGame,
             "Self-play games start with 0 to this many uniformly random moves (not searched, not recorded)",
             0, 1000, kPlay, search.random_opening_plies),
      ZF_NUM("leaves-per-round", "leaves_per_round", kGame,
             "Leaves per tree in flight (virtual loss when > 1)", 1, 256, kPlay, search.leaves_per_round),
      ZF_FLAG("no-tree-reuse", "reuse_tree", kGame, "Discard the tree after every move", "0", kPlay,
              search.reuse_tree),
      ZF_FLAG("no-solver", "solver", kGame,
              "PUCT: do not prove wins and losses up the tree (MCTS-solver off)", "0", kPlay | kEval,
              search.solver),
      ZF_FLAG("no-proof-targets", "proof_targets", kGame,
              "Solver: record the raw visits as the policy target, not the proof-shaped one", "0", kPlay,
              search.proof_targets),
      [] {
        OptionSpec o =
            Row("search", "search", "game and search",
                "Root search: puct, or gumbel (Gumbel MuZero: sequential halving, improved-policy targets)",
                OptionKind::kChoice, kPlay);
        o.choices = {"puct", "gumbel"};
        o.get = [](const FarmConfig& c) { return std::string(c.search.gumbel ? "gumbel" : "puct"); };
        o.set = [](FarmConfig& c, const std::string& v) { c.search.gumbel = v == "gumbel"; };
        return o;
      }(),
      ZF_NUM("gumbel-m", "gumbel_m", kGame, "Gumbel: root actions sampled without replacement", 1, 4096,
             kPlay, search.gumbel_m),
      ZF_NUM("gumbel-scale", "gumbel_scale", kGame, "Gumbel: scale of the root noise (0 = deterministic)", 0,
             100, kPlay, search.gumbel_scale),
      ZF_NUM("gumbel-c-visit", "gumbel_c_visit", kGame, "Gumbel: c_visit of sigma(q)", 0, 1e6, kPlay,
             search.gumbel_c_visit),
      ZF_NUM("gumbel-c-scale", "gumbel_c_scale", kGame, "Gumbel: c_scale of sigma(q)", 0, 1e6, kPlay,
             search.gumbel_c_scale),
      ZF_NUM("playout-cap-fraction", "playout_cap_fraction", kGame,
             "Share of moves searched with --fast-simulations, not recorded as policy targets", 0, 1, kPlay,
             search.playout_cap_fraction),
      ZF_NUM("fast-simulations", "fast_simulations", kGame, "Simulations of a playout-capped move", 1,
             1000000, kPlay, search.fast_simulations),
      ZF_NUM("resign-threshold", "resign_threshold", kGame, "Resign below this root value (-1 = never)", -1,
             1, kPlay, search.resign_threshold),
      ZF_NUM("resign-moves", "resign_moves", kGame,
             "Consecutive own moves below the threshold before resigning", 1, 10000, kPlay,
             search.resign_moves),
      ZF_NUM("resign-playthrough", "resign_playthrough", kGame,
             "Share of games that never resign (they measure false resignations)", 0, 1, kPlay,
             search.resign_playthrough),
      ZF_NUM("resign-target", "resign_target", kGame,
             "Move the threshold toward this false-resignation rate (0 = fixed threshold)", 0, 1, kPlay,
             search.resign_target),
      [] {  // a number, or "auto" (kEvalCacheAuto): sized from the host's memory by ResolveResources
        OptionSpec o =
            ZF_NUM("eval-cache", "eval_cache", kGame,
                   "Entries of the evaluation cache shared by a host's workers (rounded up to a power of "
                   "two; 0 = none; auto = from the host's memory: 1/16 of MemAvailable or of the memory "
                   "cgroup's room where less, at most 1 GiB and 2^20 entries, docs/search.md)",
                   0, 1 << 28, kPlay, eval_cache);
        o.get = [](const FarmConfig& c) {
          return c.eval_cache == FarmConfig::kEvalCacheAuto ? std::string("auto") : ShowValue(c.eval_cache);
        };
        o.set = [](FarmConfig& c, const std::string& v) {
          c.eval_cache = v == "auto" ? FarmConfig::kEvalCacheAuto : ParseValue<uint64_t>(v);
        };
        return o;
      }(),
      // ---- network ----------------------------------------------------------------------
      ZF_STR("weights", "weights", kNetwork,
             "Model file: weights (.h5) or TorchScript (.pt, docs/models.md); empty = a random net of "
             "--blocks x --filters from --seed (eval: 'random')",
             kNet | kGtp | kMatch, weights),
      ZF_NUM("blocks", "blocks", kNetwork, "Residual blocks of a random net", 1, 80, kNet | kGtp | kMatch,
             blocks),
      ZF_NUM("filters", "filters", kNetwork, "Filters of a random net", 1, 1024, kNet | kGtp | kMatch,
             filters),
      ZF_FLAG(
          "score-head", "score_head", kNetwork,
          "A random net's value head predicts how the game ends (who wins, and how many plies later, or a "
          "draw) in place of one scalar (docs/training.md, \"The score head\")",
          "1", kNet | kGtp | kMatch, score_head),
      ZF_NUM("value-channels", "value_channels", kNetwork,
             "Channels of a random net's value head (its 1x1 convolution, before the fully connected layers; "
             "AlphaZero's 1, AlphaZero.jl's Connect Four 32)",
             1, 1024, kNet | kGtp | kMatch, value_channels),
      ZF_NUM("eval-threads", "eval_threads", kNetwork,
             "LibTorch intra-op threads of each process that runs a network (evaluator, trainer, eval; 0 = "
             "auto: 1, measured best: docs/benchmarks.md; in zerofarm eval every CPU granted)",
             0, 256, kNet | kGtp | kMatch, eval_threads),
      [] {
        OptionSpec o = Row(
            "precision", "precision", "network",
            "Network precision: fp32, bf16, fp16 (GPU only) or auto (bf16 on CPUs with AMX and on AMD CPUs "
            "with AVX512-BF16, where it was measured to pay; else fp32)",
            OptionKind::kChoice, kPlay | kEval | kTrain);
        o.choices = {"auto", "fp32", "bf16", "fp16"};
        o.get = [](const FarmConfig& c) { return c.precision; };
        o.set = [](FarmConfig& c, const std::string& v) { c.precision = v; };
        return o;
      }(),
      ZF_FLAG("bf16", "bf16", kNetwork, "Same as --precision bf16", "1", kPlay | kEval | kTrain, bf16),
      ZF_FLAG("fp16", "fp16", kNetwork, "Same as --precision fp16 (GPU evaluators only)", "1", kPlay, fp16),
      ZF_STR(
          "orientation", "orientation", kNetwork,
          "Eval: how the network is shown each position: as-is; K, turned by the game's symmetry K (Connect "
          "Four: 1, its mirror image); canonical, in the orientation of it and its images whose features "
          "hash lowest (one evaluation, images answered alike); mean, the mean over every orientation (one "
          "evaluation per symmetry)",
          kEval, orientation),
      ZF_FLAG("average-symmetries", "average_symmetries", kNetwork, "Eval: same as --orientation mean", "1",
              kEval, average_symmetries),
      // ---- farm -------------------------------------------------------------------------
      ZF_NUM("workers", "workers", kFarm,
             "Worker processes P (0 = the CPUs granted: SLURM_CPUS_PER_TASK, else the CPU affinity)", 0, 1024,
             kRun | kTune | kLoop | kBench, workers),
      ZF_NUM("gpus", "gpus", kFarm,
             "Evaluators on GPUs; 0 = the CPU (--cpu-evaluators processes); -1 = one per GPU granted "
             "(CUDA_VISIBLE_DEVICES, "
             "SLURM_GPUS_ON_NODE; CUDA builds)",
             -1, 64, kRun | kLoop | kBench, gpus),
      ZF_FLAG("share-gpus", "share_gpus", kFarm,
              "Allow more --gpus evaluators than visible GPUs: evaluator e runs on GPU e % n (on one GPU, "
              "--gpus 2 "
              "--share-gpus simulates two)",
              "1", kRun | kLoop, share_gpus),
      ZF_FLAG("gpu-graphs", "gpu_graphs", kFarm,
              "GPU evaluators run the network as CUDA graphs captured per batch size (a power of two, 16 to "
              "4096; larger batches eagerly); CPU evaluators ignore it",
              "1", kRun | kLoop | kBench, gpu_graphs),
      ZF_NUM("eval-depth", "eval_depth", kFarm,
             "Batches each evaluator keeps in flight: 1 waits for each; 2 starts the next while a GPU runs "
             "this one (a stream each; on the CPU no overlap)",
             1, 4, kRun | kLoop | kBench, eval_depth),
      ZF_FLAG("random-evaluator", "random_evaluator", kFarm,
              "Evaluators answer every leaf at once without a network (outputs hashed from the position; "
              "no model, no GPU): the search's own speed (zerofarm bench part search); not for training",
              "1", kRun, random_evaluator),
      ZF_FLAG("simulate-gpus", "simulate_gpus", kFarm,
              "Lay the farm out as for --gpus G (G evaluators, each with its own CUDA_VISIBLE_DEVICES) but "
              "run the "
              "networks on the CPU: tests the multi-GPU layout without GPUs",
              "1", kRun | kLoop, simulate_gpus),
      ZF_NUM("cpu-evaluators", "cpu_evaluators", kFarm,
             "CPU evaluator processes of a CPU farm (--gpus 0; worker w is served by evaluator w % E); 0 = "
             "auto: one "
             "per core granted, at most the workers (docs/benchmarks.md, \"Every core works\")",
             0, 256, kRun | kTune | kLoop | kBench, cpu_evaluators),
      ZF_NUM("games-per-worker", "games_per_worker", kFarm,
             "Concurrent games K per worker (256: a CPU evaluator's best batch, docs/benchmarks.md); left "
             "at 256, a worker starts 16 and adds games while its evaluator's measured speed ends a game "
             "within a minute (docs/running.md)",
             1, 100000, kRun | kTune | kLoop | kBench, games_per_worker),
      ZF_NUM("ring-slots", "ring_slots", kFarm,
             "Leaf slots per worker ring (0 = games-per-worker x leaves-per-round)", 0, 1 << 20, kRun | kLoop,
             ring_slots),
      ZF_NUM("max-batch", "max_batch", kFarm, "Most leaves per network call", 1, 65536,
             kRun | kSelfplay | kLoop, max_batch),
      ZF_NUM("max-wait-us", "max_wait_us", kFarm,
             "Longest wait for more leaves after the first, in microseconds: the cap of the adaptive wait, "
             "or with "
             "--fixed-wait the wait itself",
             0, 10000000, kRun | kLoop, max_wait_us),
      ZF_FLAG("fixed-wait", "adaptive_wait", kFarm,
              "Always wait --max-wait-us for more leaves, instead of adapting the wait to the measured leaf "
              "arrival "
              "rate and batch cost",
              "0", kRun | kLoop, adaptive_wait),
      ZF_NUM("hang-timeout", "hang_timeout", kFarm,
             "Kill and restart a worker, evaluator or writer whose heartbeat is older than this many seconds "
             "(0 = never)",
             0, 1e6, kRun | kLoop, hang_timeout),
      // ---- output and duration ----------------------------------------------------------
      ZF_STR("out", "out", kOutput,
             "Run directory (default runs/run-DATE-TIME); several hosts may share one (a shared filesystem)",
             kRun | kLoop, out),
      ZF_STR("models", "models", kOutput,
             "Directory watched for new models (model-N.h5 or model-N.pt), loaded between batches (default "
             "OUT/models)",
             kRun | kLoop, models),
      ZF_STR("stage-dir", "stage_dir", kOutput,
             "Host-local directory (a node's own disk) where the supervisor copies each new model once, into "
             "DIR/RUN_ID-HOST_ID, for this host's evaluators to load: one read per host on a shared "
             "filesystem, not one per evaluator (empty = off)",
             kRun | kLoop, stage_dir),
      ZF_STR("host-id", "host_id", kOutput,
             "This host's name in the run: shards go to OUT/shards/HOST-ID (default Slurm's task number from "
             "SLURM_ARRAY_TASK_ID / SLURM_PROCID, else the hostname)",
             kRun | kLoop, host_id),
      ZF_NUM("shard-positions", "shard_positions", kOutput,
             "Positions per HDF5 shard (whole games; a shard may hold a few more)", 1, 1 << 26, kRun | kLoop,
             shard_positions),
      ZF_NUM("shard-seconds", "shard_seconds", kOutput,
             "A shard also closes once its first game is this many seconds old, so a slow farm's trainer "
             "sees data soon (0 = no time bound: --shard-positions alone)",
             0, 1e9, kRun | kLoop, shard_seconds),
      ZF_NUM("compression", "compression", kOutput, "Deflate level of the shards", 0, 9, kRun | kLoop,
             compression),
      ZF_NUM("games", "games", kOutput, "Stop after this many finished games (0 = no limit)", 0, 1e15, kRun,
             games),
      ZF_NUM("duration", "duration", kOutput, "Stop after this many seconds (0 = no limit)", 0, 1e9,
             kRun | kTrain, duration),
      ZF_FLAG("no-status", "status_line", kOutput,
              "No live status line (the summary is always printed; --quiet is an old name): zerofarm run "
              "logs a progress line every --progress-every seconds instead; train and eval print none",
              "0", kRun | kTrain | kEval, status_line),
      ZF_NUM(
          "progress-every", "progress_every", kOutput,
          "Without a status line (no terminal, or --no-status): log a progress line every this many seconds "
          "(0 = never)",
          0, 1e6, kRun | kLoop, progress_every),
      // ---- safety (command line only: a config file cannot set it) ---------------------------
      [] {
        OptionSpec o =
            Row("allow-foreign-dir", "", "safety",
                "Write into a run or models directory that another user owns or that group or others can "
                "write (refused by default: such a directory lets them plant links)",
                OptionKind::kFlag, kRun | kSelfplay | kTune | kLoop);
        o.flag_value = "1";
        o.get = [](const FarmConfig& c) { return ShowValue(c.allow_foreign_dir); };
        o.set = [](FarmConfig& c, const std::string& v) { c.allow_foreign_dir = ParseValue<bool>(v); };
        return o;
      }(),
  };
  // ---- set by the supervisor: in config.txt, ignored in a user's config file ----------------
  for (auto row : {ZF_NUM("", "epoch", kSup, "Runs of this host in its host directory before this one", 0,
                          kMaxEpochs - 1, 0, epoch),
                   ZF_NUM("", "host_index", kSup, "This host's number in the run (docs/schema.md)", 0, 65535,
                          0, host_index),
                   ZF_STR("", "run_id", kSup, "The run directory's id (OUT/run_id)", 0, run_id)}) {
    row.kind = OptionKind::kSupervisor;
    t.push_back(row);
  }
  return t;
}
#undef ZF_NUM
#undef ZF_STR
#undef ZF_FLAG

std::string NormalKey(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

}  // namespace

const std::vector<OptionSpec>& OptionTable() {
  static const std::vector<OptionSpec> table = BuildTable();
  return table;
}

const OptionSpec* FindOptionByKey(const std::string& key) {
  const std::string k = NormalKey(key);
  for (const auto& o : OptionTable())
    if (!o.key.empty() && o.key == k) return &o;
  return nullptr;
}

const OptionSpec* FindOptionByName(const std::string& name) {
  for (const auto& o : OptionTable())
    if (!o.name.empty() && o.name == name) return &o;
  return nullptr;
}

bool ShapesRandomNet(const std::string& name) {
  return name == "blocks" || name == "filters" || name == "score-head" || name == "value-channels";
}

namespace {
// ConfigError "WHO: bad value 'v' (one of a, b)" unless `value` is a choice.
void CheckChoice(const std::vector<std::string>& choices, const std::string& value, const std::string& who) {
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return;
  std::string list;
  for (const auto& ch : choices) list += (list.empty() ? "" : ", ") + ch;
  throw ConfigError(who + ": bad value '" + PrintableText(value) + "' (one of " + list + ")");
}
}  // namespace

void SetOption(const OptionSpec& o, FarmConfig* c, const std::string& value, const std::string& who) {
  if (o.kind == OptionKind::kChoice && !o.choices_now) CheckChoice(o.choices, value, who);
  try {
    o.set(*c, value);
  } catch (const ConfigError& e) {
    throw ConfigError(who + ": " + e.what());
  }
}

void CheckOption(const OptionSpec& o, const FarmConfig& c) {
  if (o.kind == OptionKind::kChoice)
    return CheckChoice(o.choices_now ? o.choices_now() : o.choices, o.get(c), o.Display());
  if (o.kind != OptionKind::kNumber || o.get(c) == "auto") return;  // "auto": resolved later (eval-cache)
  const double v = std::stod(o.get(c));
  if (v >= o.lo && v <= o.hi) return;
  std::ostringstream os;
  os << o.Display() << " must be in [" << o.lo << ", " << o.hi << "], got " << o.get(c);
  throw ConfigError(os.str());
}

std::string OptionTableFingerprint(const std::vector<OptionSpec>& table) {
  std::ostringstream text;
  text.precision(17);
  for (const auto& o : table) {
    text << o.name << '\x1f' << o.key << '\x1f' << static_cast<int>(o.kind) << '\x1f' << o.lo << '\x1f'
         << o.hi << '\x1f' << o.flag_value << '\x1f' << o.commands << '\x1f' << o.Default();
    for (const auto& c : o.choices) text << '\x1f' << c;
    text << '\x1e';
  }
  const std::string bytes = text.str();
  const uint64_t hash = HashBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

namespace {
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string NearestName(const std::string& given, const std::vector<std::string>& candidates) {
  const std::string g = NormalKey(given);
  if (g.empty()) return "";
  std::string best, only_prefix;
  size_t best_distance = std::max<size_t>(2, g.size() / 3) + 1, prefixes = 0;
  for (const auto& c : candidates) {
    const std::string n = NormalKey(c);
    if (n.rfind(g, 0) == 0) ++prefixes, only_prefix = c;
    const size_t d = EditDistance(g, n);
    if (d < best_distance) best_distance = d, best = c;
  }
  if (best.empty() && prefixes == 1 && g.size() >= 3) return only_prefix;
  return best;
}

std::string DidYouMean(const std::string& given, const std::vector<std::string>& candidates,
                       const std::string& prefix) {
  const std::string nearest = NearestName(given, candidates);
  return nearest.empty() ? "" : " (did you mean " + prefix + nearest + "?)";
}

std::string ExampleConfig() {
  std::ostringstream os;
  os << "# zerofarm config file: every key, its help and its default (commented out).\n"
     << "# Generated by `zerofarm config --example`; give it with `--config FILE` to any command.\n"
     << "# Lines are `key = value`; '-' and '_' in keys are alike; options on the command line win.\n"
     << "# A run writes its effective config to OUT/shards/HOST/config.txt: feed it back with --config.\n";
  std::string group;
  for (const auto& o : OptionTable()) {
    if (o.key.empty()) continue;
    if (o.group != group) os << "\n# ---- " << (group = o.group) << " ----\n";
    os << "\n# " << o.help;
    if (!o.name.empty()) os << " [--" << o.name << "]";
    if (o.kind == OptionKind::kNumber) os << " (" << o.lo << " .. " << o.hi << ")";
    os << "\n# " << o.key << " = " << o.Default() << "\n";
  }
  return os.str();
}

}  // namespace zerofarm::proc
