// The commands' own options (train, eval, loop, bench, tune): one row each,
// bound to a field of CommandConfig (commands.h), whose default the help
// prints. The farm's options are the option table's (proc/options.h).
//
// HOW TO ADD AN OPTION of one command: give the field its default in the
// command's config struct, append ONE row below (ZF_NUM with its range,
// ZF_STR, ZF_FLAG, ZF_CHOICE, ZF_LIST, ZF_INTS, ZF_WORDS) and read the field
// in the command. Do not write the default into the help.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"
#include "zerofarm/learn/recipe.h"

namespace zerofarm::cli {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

CommandOption Row(const char* name, const char* group, std::string help, CommandOptionKind kind,
                  proc::OptionCommand command) {
  CommandOption o;
  o.name = name;
  o.group = group;
  o.help = std::move(help);
  o.kind = kind;
  o.command = command;
  return o;
}

// "1,8,64" as integers; ConfigError "bad value ..." otherwise.
std::vector<int> ParseInts(const std::string& s) {
  std::vector<int> out;
  for (const std::string& item : io::SplitFields(s))
    if (!item.empty()) out.push_back(proc::ParseOptionValue<int>(item));
  return out;
}

std::string JoinInts(const std::vector<int>& v) {
  std::string s;
  for (int i : v) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& w : v) s += (s.empty() ? "" : sep) + w;
  return s;
}

// A range bound as the user would write it: 1000000, not 1e+06.
std::string Bound(double v) {
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
  return proc::ShowOptionValue(v);
}

#define ZF_NUM(name, group, help, lo_, hi_, cmd, field)                                \
  [] {                                                                                 \
    CommandOption o = Row(name, group, help, CommandOptionKind::kNumber, cmd);         \
    o.lo = lo_;                                                                        \
    o.hi = hi_;                                                                        \
    o.get = [](const CommandConfig& c) { return proc::ShowOptionValue(c.field); };     \
    o.set = [](CommandConfig& c, const std::string& v) {                               \
      c.field = proc::ParseOptionValue<std::remove_reference_t<decltype(c.field)>>(v); \
    };                                                                                 \
    return o;                                                                          \
  }()
#define ZF_STR(name, group, help, cmd, field)                                \
  [] {                                                                       \
    CommandOption o = Row(name, group, help, CommandOptionKind::kText, cmd); \
    o.get = [](const CommandConfig& c) { return std::string(c.field); };     \
    o.set = [](CommandConfig& c, const std::string& v) { c.field = v; };     \
    return o;                                                                \
  }()
#define ZF_FLAG(name, group, help, value, cmd, field)                                                  \
  [] {                                                                                                 \
    CommandOption o = Row(name, group, help, CommandOptionKind::kFlag, cmd);                           \
    o.flag_value = value;                                                                              \
    o.get = [](const CommandConfig& c) { return proc::ShowOptionValue(c.field); };                     \
    o.set = [](CommandConfig& c, const std::string& v) { c.field = proc::ParseOptionValue<bool>(v); }; \
    return o;                                                                                          \
  }()
#define ZF_CHOICE(name, group, help, implicit_, cmd, field, ...)               \
  [] {                                                                         \
    CommandOption o = Row(name, group, help, CommandOptionKind::kChoice, cmd); \
    o.choices = {__VA_ARGS__};                                                 \
    o.implicit = implicit_;                                                    \
    o.get = [](const CommandConfig& c) { return std::string(c.field); };       \
    o.set = [](CommandConfig& c, const std::string& v) { c.field = v; };       \
    return o;                                                                  \
  }()
// Repeatable: each value appended.
#define ZF_LIST(name, group, help, cmd, field)                                    \
  [] {                                                                            \
    CommandOption o = Row(name, group, help, CommandOptionKind::kList, cmd);      \
    o.get = [](const CommandConfig& c) { return Join(c.field, ","); };            \
    o.set = [](CommandConfig& c, const std::string& v) { c.field.push_back(v); }; \
    return o;                                                                     \
  }()
// Comma-separated integers.
#define ZF_INTS(name, group, help, cmd, field)                                      \
  [] {                                                                              \
    CommandOption o = Row(name, group, help, CommandOptionKind::kText, cmd);        \
    o.get = [](const CommandConfig& c) { return JoinInts(c.field); };               \
    o.set = [](CommandConfig& c, const std::string& v) { c.field = ParseInts(v); }; \
    return o;                                                                       \
  }()
// Words of one string (more options for a child command).
#define ZF_WORDS(name, group, help, cmd, field)                                             \
  [] {                                                                                      \
    CommandOption o = Row(name, group, help, CommandOptionKind::kText, cmd);                \
    o.get = [](const CommandConfig& c) { return Join(c.field, " "); };                      \
    o.set = [](CommandConfig& c, const std::string& v) { c.field = learn::SplitWords(v); }; \
    return o;                                                                               \
  }()

using proc::kBench, proc::kEval, proc::kLoop, proc::kTrain, proc::kTune;

std::vector<CommandOption> TrainRows() {
  return {
      ZF_STR("run", "data", "Run directory (reads RUN/shards, writes RUN/models and RUN/train)", kTrain,
             train.run),
      ZF_NUM("window", "data", "Train on the newest this-many positions", 1, kInf, kTrain, train.window),
      ZF_NUM("min-positions", "data", "Wait until the window holds this many positions", 1, kInf, kTrain,
             train.min_positions),
      ZF_NUM("replay", "data",
             "Samples per position the farm produced, at most (0 = no limit); when ahead, wait for data", 0,
             kInf, kTrain, train.replay),
      ZF_NUM("q-weight", "data",
             "Value target: (1 - W) x the game's result (discounted) + W x the search's value of the "
             "position, W in [0, 1]",
             0, 1, kTrain, train.q_weight),
      ZF_FLAG("bootstrap-sampled", "data",
              "Value target before a move that was not the search's best (a sampled one): the search's "
              "value of that move's position, not the game's result",
              "1", kTrain, train.bootstrap_sampled),
      ZF_NUM("ownership", "data",
             "Train an ownership head (who holds each cell when the game ends) beside the policy and value, "
             "its loss at weight W (0 = none); a training aid the checkpoints leave out",
             -kInf, kInf, kTrain, train.optim.ownership_weight),
      ZF_FLAG("no-augment", "data", "Do not apply random symmetries of the game", "0", kTrain, train.augment),
      ZF_FLAG("no-wait", "data", "Stop instead of waiting for new shards", "0", kTrain, train.wait),
      ZF_NUM("batch", "optimiser", "Positions per step", 1, 65536, kTrain, train.batch),
      ZF_NUM("lr", "optimiser", "SGD learning rate", -kInf, kInf, kTrain, train.optim.learning_rate),
      ZF_NUM("momentum", "optimiser", "SGD momentum", -kInf, kInf, kTrain, train.optim.momentum),
      ZF_NUM("l2", "optimiser", "L2 weight decay", -kInf, kInf, kTrain, train.optim.l2),
      ZF_NUM("value-weight", "optimiser",
             "The value loss's weight beside the policy loss's 1 (the scalar head's squared error or the "
             "score head's cross-entropy)",
             -kInf, kInf, kTrain, train.optim.value_weight),
      ZF_CHOICE("device", "optimiser",
                "Where the step runs: auto (a GPU when this LibTorch sees one), cpu, cuda", "", kTrain,
                train_device, "auto", "cpu", "cuda"),
      ZF_CHOICE("cuda-graph", "optimiser",
                "Replay each step as one captured CUDA graph after 3 eager steps (the same step): auto (on a "
                "GPU in fp32), on, off (--cuda-graph=off); --cuda-graph alone is on",
                "on", kTrain, train_cuda_graph, "auto", "on", "off"),
      ZF_NUM("steps", "duration and output", "Stop after this many steps (0 = no limit)", 0, kInf, kTrain,
             train.steps),
      ZF_NUM("checkpoint-steps", "duration and output", "Write a checkpoint every this many steps", 1, kInf,
             kTrain, train.checkpoint_steps),
  };
}

std::vector<CommandOption> EvalRows() {
  return {
      ZF_STR("run", "what", "Evaluate the newest model of this run directory", kEval, eval.run),
      ZF_LIST("pons", "what", "Pons-format file of Connect Four positions ('moves score' lines); repeatable",
              kEval, eval.pons),
      ZF_LIST("sets", "what",
              "Every Pons test file (Test_L*_R*, or Made_L*_R* of --make-set) of this directory, e.g. "
              "data/reference/connect4 or data/connect4/made; repeatable",
              kEval, eval.sets),
      ZF_NUM("limit", "what", "Use the first N positions of each file (0 = all)", 0, kInf, kEval, eval.limit),
      ZF_STR("against", "what", "Arena: the opponent's weights file", kEval, eval.against),
      ZF_STR("against-gtp", "what",
             "Arena against a GTP Go program: its command line, e.g. \"gnugo --mode gtp --level 10\" "
             "(docs/gtp.md)",
             kEval, eval.against_gtp),
      ZF_NUM("games", "what", "Arena games", 1, 1'000'000, kEval, eval.games),
      ZF_NUM("opening-plies", "what",
             "Arena: random opening plies, each opening played twice with colours swapped", 0, 100, kEval,
             eval.opening_plies),
      ZF_STR("cache-dir", "what",
             "Where the solver's verdicts are cached (default RUN/eval or ~/.cache/zerofarm)", kEval,
             eval.cache_dir),
      ZF_STR("positions-csv", "what",
             "Move error: write every position's moves (the network's and the search's, their solver "
             "verdicts and values) to this CSV file, one row a position of every file",
             kEval, eval.positions_csv),
      ZF_NUM("rate-threads", "what",
             "Solver threads for the positions with no cached verdict (0 = one per CPU granted; 64 MiB each)",
             0, 1024, kEval, eval.rate_threads),
      ZF_STR(
          "make-set", "make a set",
          "Write --count positions of Pons's kind KIND (L1_R3: 1-14 stones, 29 or more plies left with "
          "perfect play; L<1-3>_R<1-3>, docs/training.md \"Sets made here\") to --out, from random games of "
          "--seed that block a threatened four and give none, solved and rated here; the positions of "
          "--pons and --sets files and their mirrors are left out. A stopped run resumes from OUT.solving",
          kEval, eval.make_set),
      ZF_NUM("count", "make a set", "--make-set: positions", 1, 100'000, kEval, eval.count),
      ZF_STR("out", "make a set", "--make-set: the Pons-format file to write (it must not exist)", kEval,
             eval.out),
  };
}

std::vector<CommandOption> LoopRows() {
  return {
      ZF_STR("recipe", "loop",
             "The whole schedule from a recipe: NAME (data/recipes/NAME.recipe, e.g. connect4) or FILE; "
             "options given here override its own (docs/learning.md)",
             kLoop, loop_recipe),
      ZF_FLAG("recipe-changed", "loop",
              "Resume a run with a recipe whose options or stages differ from the one it was begun with "
              "(RUN/eval/recipe.txt), recording the change in RUN/eval/stages.csv; without it the loop "
              "refuses, so that no schedule changes by hand",
              "1", kLoop, loop_recipe_changed),
      ZF_NUM("hours", "loop", "Stop after this many hours of this invocation (0 = until interrupted)", 0,
             kInf, kLoop, loop.hours),
      ZF_NUM("cpu-hours", "loop",
             "Stop once the run (all its pieces) has used this many CPU hours of its process tree (0 = no "
             "bound)",
             0, kInf, kLoop, loop.cpu_hours),
      ZF_NUM("eval-every", "loop", "Seconds between evaluations", 10, kInf, kLoop, loop.eval_every),
      ZF_LIST("pons", "loop",
              "Pons-format files to measure move error on (repeatable; default Test_L2_R1 and Test_L1_R1 of "
              "DATA/reference/connect4; Connect Four only: other games' loops train without this measure)",
              kLoop, loop.pons),
      ZF_NUM("eval-positions", "loop", "Use the first N positions of each file (0 = all)", 0, kInf, kLoop,
             loop.eval_positions),
      ZF_NUM("eval-simulations", "loop",
             "MCTS simulations of the evaluation (plain PUCT: the solver off, so the curve measures the net)",
             0, kInf, kLoop, loop.eval_simulations),
      ZF_NUM("eval-solver-simulations", "loop",
             "Also measure PUCT with the MCTS-solver, the farm's search, at this many simulations "
             "(curve.csv rows with solver = 1; 0 = off)",
             0, kInf, kLoop, loop.eval_solver_simulations),
      ZF_NUM("final-mean", "loop",
             "When a piece ends by --hours or --cpu-hours, write the mean of the run's newest N checkpoints "
             "to RUN/eval/checkpoint-mean.h5 and measure it into RUN/eval/mean.csv (0 = none)",
             0, learn::kMaxFinalMean, kLoop, loop.final_mean),
      ZF_WORDS("run-args", "loop",
               "More options for `zerofarm run`, as one string (given here, it goes after a recipe's)", kLoop,
               loop.run_args),
      ZF_WORDS("train-args", "trainer",
               "More options for `zerofarm train`, as one string (e.g. \"--lr 0.01 --window 100000\"; given "
               "here, it goes after a recipe's, whose stages then add theirs)",
               kLoop, loop.train_args),
      ZF_WORDS(
          "trainer-command", "trainer",
          "Your own trainer in place of `zerofarm train`, as one string of words (no shell), given the "
          "run directory as its last argument, e.g. \"python3 examples/train_torch.py --steps 100\"; how "
          "a TorchScript --weights closes the loop (docs/models.md)",
          kLoop, loop.trainer_command),
  };
}

std::vector<CommandOption> BenchRows() {
  return {
      ZF_NUM("runs", "bench", "Repeat every measurement this many times (interleaved)", 1, 100, kBench,
             bench.runs),
      ZF_FLAG("quick", "bench", "Small sizes and short runs (a few seconds; for tests)", "1", kBench,
              bench_quick),
      ZF_FLAG(
          "manifest-load", "bench",
          "Another benchmark in place of the parts: simulated hosts write shards while a trainer's window "
          "follows them (docs/scale-out.md); its own options: zerofarm bench --manifest-load --help",
          "1", kBench, bench_manifest_load),
      ZF_STR("parts", "bench",
             "Comma-separated parts: bound, machine, search, farm, wait, scaling, handoff, writer, sweep, "
             "waits (the last two not by default)",
             kBench, bench.parts),
      ZF_NUM("bound-seconds", "bench", "Seconds per batch size of the bound", -kInf, kInf, kBench,
             bench.bound_seconds),
      ZF_NUM("start-at", "bench",
             "Start the bound at this wall-clock second (for the machine bound's children)", -kInf, kInf,
             kBench, bench.start_at),
      ZF_NUM("farm-seconds", "bench", "Length of each farm run", 1, kInf, kBench, bench.farm_seconds),
      ZF_INTS("fixed-waits", "bench", "Fixed --max-wait-us settings shown beside the adaptive wait", kBench,
              bench.fixed_waits),
      ZF_INTS("bound-batches", "bench", "Batch sizes of the evaluator-alone bound", kBench,
              bench.bound_batches),
      ZF_INTS("sweep-batches", "bench", "Batch sizes of the part sweep (the evaluator alone by precision)",
              kBench, bench.sweep_batches),
      ZF_INTS("handoff-batches", "bench", "Batch sizes of the hand-off benchmark", kBench,
              bench.handoff_batches),
      ZF_INTS("scaling-workers", "bench",
              "Worker counts of the part scaling (default 1, 2, 4, .. and the cores granted)", kBench,
              bench.scaling_workers),
      ZF_INTS("handoff-spins-us", "bench",
              "Extra leaf-ring columns of the hand-off benchmark, one per spin budget (us)", kBench,
              bench.handoff_spins_us),
      ZF_NUM("writer-positions", "bench", "Positions written per compression setting", 0, kInf, kBench,
             bench.writer_positions),
  };
}

std::vector<CommandOption> TuneRows() {
  return {
      ZF_NUM("seconds", "tune", "Length of each farm run", 1, kInf, kTune, tune.seconds),
      ZF_STR("out", "tune", "Directory for tune.csv and tune.png", kTune, tune.out),
      ZF_FLAG("quick", "tune", "Two or three short runs (for tests)", "1", kTune, tune.quick),
      ZF_FLAG("no-plot", "tune", "Do not draw tune.png", "0", kTune, tune.plot),
  };
}
std::vector<CommandOption> MatchRows() {
  using proc::kMatch;
  return {
      ZF_STR("engine", "match",
             "The GTP engine's command line, split into words (no shell), e.g. \"gnugo --mode gtp --level 1 "
             "--chinese-rules\" or \"gtp-rhino --level 1\"",
             kMatch, match.engine),
      ZF_STR("out", "match",
             "Directory for each game's SGF, games.jsonl and match.json (made; must be empty)", kMatch,
             match.out),
      ZF_NUM("games", "match", "Games to play, colours alternating (zerofarm is Black in even games)", 1,
             1'000'000, kMatch, match.games),
      ZF_NUM("opening-plies", "match",
             "Random opening plies (never a pass), each opening played twice with colours swapped", 0, 100,
             kMatch, match.opening_plies),
      ZF_STR("openings", "match",
             "A file of fixed openings, one a line (moves separated by spaces, e.g. \"d3 c5\"), in place of "
             "random ones: games 2k and 2k+1 play line k (wrapping)",
             kMatch, match.openings),
      ZF_NUM("move-seconds", "match",
             "Deadline of each engine answer; an engine past it is killed and that game is not scored", 0.01,
             86400, kMatch, match.move_seconds),
      ZF_STR("komi", "match", "Go: the komi (given to the engine too; empty = the game's own)", kMatch,
             match.komi),
      ZF_STR("engine-stderr", "match", "Append the engine's stderr to this file (empty = OUT/engine.err)",
             kMatch, match.engine_stderr),
      ZF_NUM("max-plies", "match",
             "Score a game as it stands after this many plies (0 = the game's own limit)", 0, 1'000'000,
             kMatch, match.max_plies),
  };
}
std::vector<CommandOption> OtherRows() {
  using proc::kCheckGame, proc::kExport, proc::kInspect, proc::kSelfplay;
  return {
      ZF_NUM("games", "self-play", "Games to play", 1, kInf, kSelfplay, selfplay.games),
      ZF_NUM("concurrent", "self-play", "Games in flight (K)", 1, 100'000, kSelfplay, selfplay.concurrent),
      ZF_STR("out", "self-play", "Write the games as one HDF5 shard into this directory", kSelfplay,
             selfplay.out),
      ZF_STR("path", "", "A run directory (its shards/), a directory of shards or one shard", kExport,
             exporting.path),
      ZF_CHOICE("format", "", "sgf or jsonl", "", kExport, exporting.format, "sgf", "jsonl"),
      ZF_STR("out", "", "sgf: a directory (made if missing); jsonl: a file; empty: stdout", kExport,
             exporting.out),
      ZF_NUM("limit", "", "At most N games (0 = all)", 0, kInf, kExport, exporting.limit),
      ZF_STR("path", "",
             "A shard file, a directory of shards (searched recursively) or a run directory (its shards/)",
             kInspect, inspect.path),
      ZF_STR("game-id", "", "Draw a position of this game", kInspect, inspect.game_id),
      ZF_NUM("ply", "", "Which position of --game-id to draw (plies played)", -kInf, kInf, kInspect,
             inspect.ply),
      ZF_NUM("games", "", "List at most this many games per shard, each with its moves and final board", 0,
             kInf, kInspect, inspect.games),
      ZF_STR("game", "check", "A registered game (zerofarm run --help lists them) or a game plugin file",
             kCheckGame, check_game),
      ZF_NUM("playouts", "check", "Random games per check", 1, 100'000, kCheckGame, check.playouts),
      ZF_NUM("seed", "check", "Seed of the random games", 0, kInf, kCheckGame, check.seed),
      ZF_STR("symmetry-samples", "check",
             "Instead of checking: write DIR/GAME/ with a shard of random games and its positions under "
             "each symmetry, as the C++ helpers transform them (for readers' tests); no NAME: every game",
             kCheckGame, symmetry_samples),
  };
}
#undef ZF_NUM
#undef ZF_STR
#undef ZF_FLAG
#undef ZF_CHOICE
#undef ZF_LIST
#undef ZF_INTS
#undef ZF_WORDS

std::vector<CommandOption> BuildTable() {
  std::vector<CommandOption> t;
  for (auto rows : {TrainRows(), EvalRows(), LoopRows(), BenchRows(), TuneRows(), MatchRows(), OtherRows()})
    t.insert(t.end(), rows.begin(), rows.end());
  return t;
}

// Sets the row's field from `value`: a choice must be one of its choices,
// a number within its range. ConfigError naming the option otherwise.
void SetCommandOption(const CommandOption& o, CommandConfig* c, const std::string& value) {
  const std::string who = "--" + o.name;
  if (o.kind == CommandOptionKind::kChoice &&
      std::find(o.choices.begin(), o.choices.end(), value) == o.choices.end()) {
    std::string list;
    for (size_t i = 0; i < o.choices.size(); ++i)
      list += (i == 0 ? "" : i + 1 == o.choices.size() ? " or " : ", ") + o.choices[i];
    throw ConfigError(who + " must be " + list + ", not '" + PrintableText(value) + "'");
  }
  try {
    o.set(*c, value);
  } catch (const ConfigError& e) {
    throw ConfigError(who + ": " + e.what());
  }
  if (o.kind != CommandOptionKind::kNumber) return;
  const double v = std::stod(o.get(*c));
  if (v >= o.lo && v <= o.hi) return;
  std::string range = std::isinf(o.hi)   ? " must be >= " + Bound(o.lo)
                      : std::isinf(o.lo) ? " must be <= " + Bound(o.hi)
                                         : " must be in [" + Bound(o.lo) + ", " + Bound(o.hi) + "]";
  throw ConfigError(who + range + ", got " + PrintableText(value));
}

}  // namespace

std::string CommandOption::Default() const {
  static const CommandConfig defaults;
  return get(defaults);
}

const std::vector<CommandOption>& CommandOptionTable() {
  static const std::vector<CommandOption> table = BuildTable();
  return table;
}

void AddCommandOptions(cxxopts::Options& options, proc::OptionCommand command) {
  for (const auto& o : CommandOptionTable()) {
    if (o.command != command) continue;
    const std::string d = o.kind == CommandOptionKind::kFlag ? "" : o.Default();
    const std::string help = o.help + (d.empty() ? "" : " (default: " + d + ")");
    auto add = options.add_options(o.group);
    if (o.kind == CommandOptionKind::kFlag)
      add(o.name, help);
    else if (o.kind == CommandOptionKind::kList)
      add(o.name, help, cxxopts::value<std::vector<std::string>>());
    else if (!o.implicit.empty())
      add(o.name, help, cxxopts::value<std::string>()->implicit_value(o.implicit));
    else
      add(o.name, help, cxxopts::value<std::string>());
  }
}

CommandConfig ReadCommandOptions(const cxxopts::ParseResult& r, proc::OptionCommand command) {
  CommandConfig c;
  for (const auto& o : CommandOptionTable()) {
    if (o.command != command || !r.count(o.name)) continue;
    if (o.kind == CommandOptionKind::kFlag) {
      SetCommandOption(o, &c, o.flag_value);
    } else if (o.kind == CommandOptionKind::kList) {
      for (const auto& v : r[o.name].as<std::vector<std::string>>()) SetCommandOption(o, &c, v);
    } else {
      SetCommandOption(o, &c, r[o.name].as<std::string>());
    }
  }
  return c;
}

void RefuseGiven(const cxxopts::ParseResult& r, const std::vector<std::string>& names,
                 const std::string& why) {
  for (const auto& n : names)
    if (r.count(n)) throw ConfigError("--" + n + " " + why);
}

}  // namespace zerofarm::cli
