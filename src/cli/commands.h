#pragma once
// One function per subcommand (one file each), and the option helpers they
// share. Private to src/cli: the only place cxxopts appears.
#include <cxxopts.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/bench/bench.h"
#include "zerofarm/bench/tune.h"
#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/conformance.h"
#include "zerofarm/game/game.h"
#include "zerofarm/learn/loop.h"
#include "zerofarm/learn/train.h"
#include "zerofarm/mcts/search_config.h"
#include "zerofarm/proc/farm_config.h"
#include "zerofarm/proc/options.h"

namespace zerofarm::cli {

int RunCommand(int argc, char** argv);       // run.cpp
int SelfplayCommand(int argc, char** argv);  // selfplay.cpp
int InspectCommand(int argc, char** argv);   // inspect.cpp
int TrainCommand(int argc, char** argv);     // train.cpp
int EvalCommand(int argc, char** argv);      // eval.cpp
int LoopCommand(int argc, char** argv);      // loop.cpp
int EvaluatorRole(int argc, char** argv);    // evaluator_role.cpp (internal)
int BenchCommand(int argc, char** argv);     // bench.cpp
int TuneCommand(int argc, char** argv);      // tune.cpp
// ---- issue 24 points 5, 6: game records and GTP ----
int ExportCommand(int argc, char** argv);  // export.cpp
int GtpCommand(int argc, char** argv);     // gtp.cpp
int MatchCommand(int argc, char** argv);   // match.cpp (issue 83)

// `zerofarm eval`'s own settings (the game, net and search are the option table's).
struct EvalConfig {
  std::string run;                // evaluate RUN's newest model; append to RUN/eval/eval.csv
  std::vector<std::string> pons;  // Pons-format files (move error)
  std::vector<std::string> sets;  // directories of Pons test files (move error)
  int limit = 0;                  // the first N positions of each file; 0 = all
  std::string against;            // arena: the opponent's weights
  std::string against_gtp;        // GTP arena: the opponent's command line
  int games = 100;                // arena games
  int opening_plies = 4;          // arena: random opening plies
  std::string cache_dir;          // solver verdicts; "" = RUN/eval or ~/.cache/zerofarm
  std::string positions_csv;      // move error: every position's moves
  int rate_threads = 0;           // solver threads; 0 = the CPUs granted
  std::string make_set;           // a Pons kind (L1_R3): make a set of it
  int count = 1000;               // --make-set: positions
  std::string out;                // --make-set: the file to write
};

// `zerofarm match`'s own settings (the game, net and search are gtp's rows).
struct MatchOptions {
  std::string engine;         // the engine's command line, split into words (no shell)
  std::string out;            // the directory of SGFs, games.jsonl and match.json (made; must be empty)
  int games = 10;             // games to play
  int opening_plies = 4;      // random opening plies (without --openings)
  std::string openings;       // a file of fixed openings, one a line ("" = random ones)
  double move_seconds = 60;   // the deadline of each engine answer
  std::string komi;           // Go: the komi ("" = the game's own)
  std::string engine_stderr;  // where the engine's stderr goes ("" = OUT/engine.err)
  int max_plies = 0;          // 0 = the game's own limit
};

// `zerofarm selfplay`'s own settings (the farm's are the option table's).
struct SelfplayConfig {
  int games = 20;       // games to play (run's --games is a limit, 0 = none)
  int concurrent = 16;  // games in flight (K)
  std::string out;      // write the games as one shard here; "" = none
};

// `zerofarm export`'s settings.
struct ExportConfig {
  std::string path;            // a run directory, a directory of shards or one shard
  std::string format = "sgf";  // sgf or jsonl
  std::string out;             // sgf: a directory; jsonl: a file; "" = stdout
  int limit = 0;               // at most this many games; 0 = all
};

// `zerofarm inspect`'s settings.
struct InspectConfig {
  std::string path;     // a shard, a directory of shards or a run directory
  std::string game_id;  // draw a position of this game ("" = list the shards)
  int ply = 0;          // --game-id's position (plies played)
  int games = 10;       // games listed per shard
};

// Each command's own settings, every default in one default-constructed
// instance: the rows of CommandOptionTable() read and write these fields.
struct CommandConfig {
  learn::TrainConfig train;
  std::string train_device = "auto";      // auto (a GPU when LibTorch sees one), cpu, cuda
  std::string train_cuda_graph = "auto";  // auto (on a GPU in fp32), on, off
  EvalConfig eval;
  MatchOptions match;
  learn::LoopConfig loop;
  std::string loop_recipe;  // NAME or FILE; read before the other options (loop.cpp)
  bool loop_recipe_changed = false;
  bench::BenchOptions bench;
  bool bench_quick = false;          // smaller sizes where an option is not given
  bool bench_manifest_load = false;  // listed in bench's help; BenchCommand hands it on first
  bench::TuneOptions tune;
  SelfplayConfig selfplay;
  ExportConfig exporting;
  InspectConfig inspect;
  std::string check_game;        // the registered game (or plugin file) to check
  std::string symmetry_samples;  // check-game --symmetry-samples DIR ("" = check instead)
  game::ConformanceOptions check;
};

enum class CommandOptionKind {
  kNumber,  // a number, checked against [lo, hi]
  kText,    // any text (a path, a list)
  kChoice,  // one of `choices`; `implicit` is the value of the option given alone ("" = needs one)
  kFlag,    // a switch (no value) that stores `flag_value`
  kList,    // repeatable text; each value is set (appended) in turn
};

// One option of one command's own (proc/options.h's OptionSpec, for the
// fields of CommandConfig): its name, help, range or choices, and the field.
struct CommandOption {
  std::string name;   // without "--"
  std::string group;  // help section
  std::string help;   // one sentence; no default (help adds it)
  CommandOptionKind kind = CommandOptionKind::kText;
  double lo = 0, hi = 0;  // kNumber: the valid range (either may be infinite)
  std::vector<std::string> choices;
  std::string implicit;                        // kChoice: the value when given without one
  std::string flag_value;                      // kFlag
  proc::OptionCommand command = proc::kTrain;  // the one command that takes it
  std::function<std::string(const CommandConfig&)> get;
  std::function<void(CommandConfig&, const std::string&)> set;  // ConfigError "bad value ..."
  // The default: the field of a default-constructed CommandConfig.
  std::string Default() const;
};

// Every command's own options, in help order. Built once; never changes.
const std::vector<CommandOption>& CommandOptionTable();
// `command`'s own options as cxxopts options (each default shown in its help).
void AddCommandOptions(cxxopts::Options& options, proc::OptionCommand command);
// The defaults, then `command`'s own options given on the command line;
// each checked against its range or choices. ConfigError naming the option.
CommandConfig ReadCommandOptions(const cxxopts::ParseResult& r, proc::OptionCommand command);
// ConfigError "--NAME WHY" for the first of `names` that the command line
// gives: an option that would not take effect is refused, never ignored.
void RefuseGiven(const cxxopts::ParseResult& r, const std::vector<std::string>& names,
                 const std::string& why);

// Each command's options (the option table's and its own) and the settings
// it hands to its module, read from a parsed command line; ConfigError for a
// bad or refused option (the unit tests parse through these).
void AddTrainOptions(cxxopts::Options& options);                      // train.cpp
learn::TrainConfig TrainConfigFrom(const cxxopts::ParseResult& r);    // train.cpp
void AddEvalOptions(cxxopts::Options& options);                       // eval.cpp
void AddLoopOptions(cxxopts::Options& options);                       // loop.cpp
learn::LoopConfig LoopConfigFrom(const cxxopts::ParseResult& r);      // loop.cpp
void AddBenchOptions(cxxopts::Options& options);                      // bench.cpp
bench::BenchOptions ReadBenchOptions(const cxxopts::ParseResult& r);  // bench.cpp
void AddTuneOptions(cxxopts::Options& options);                       // tune.cpp
void AddMatchOptions(cxxopts::Options& options);                      // match.cpp
bench::TuneOptions TuneOptionsFrom(const cxxopts::ParseResult& r);    // tune.cpp

// The Go game, net and search of `zerofarm gtp` and of `eval --against-gtp`
// (gtp.cpp), from the option table's game, blocks, filters, eval-threads,
// seed, simulations and c-puct; `weights` a file or "random"; the game is
// `c.game` when `game_given`, else the weights' own (go for "random").
// ConfigError when the game is not Go (nor Othello, when `othello_too`).
struct GtpEngineParts {
  std::unique_ptr<game::Game> game;
  std::unique_ptr<eval::Evaluator> net;
  mcts::SearchConfig search;
  int size = 9;
  double komi = 7.5;  // Go only
};
GtpEngineParts MakeGtpEngineParts(const proc::FarmConfig& c, bool game_given, const std::string& weights,
                                  bool othello_too = false);
// `zerofarm eval --against-gtp CMD`: the arena against a GTP program (gtp.cpp).
// game_given: --game was given.
int GtpArenaCommand(const EvalConfig& e, const proc::FarmConfig& c, bool game_given,
                    const std::string& weights);
int ConfigCommand(int argc, char** argv);     // config_command.cpp
int CheckGameCommand(int argc, char** argv);  // check_game.cpp

// The data folder shipped with zerofarm: $ZF_DATA_DIR when set, else data/
// beside the binary's folder (the source tree's, for build/zerofarm) (eval.cpp).
std::string DataDir();
// The solver verdicts shipped in DATA/connect4/*.rated (eval.cpp).
std::vector<std::string> ShippedRatings();

// The option table's options of `command` (proc/options.h), and --config FILE.
void AddTableOptions(cxxopts::Options& options, proc::OptionCommand command);
// The config file given by --config (else the defaults), then the table's
// options given on the command line over it. A bad value throws ConfigError
// naming the option.
proc::FarmConfig ReadTableOptions(const cxxopts::ParseResult& r, proc::OptionCommand command);
// The range of every table option of `command` (for commands that do not run
// FarmConfig::Validate, which checks them all).
void CheckTableOptions(const proc::FarmConfig& c, proc::OptionCommand command);

// --game-plugin FILE for a command outside the option table (inspect,
// export), and its loading (io/game_plugin.h) once argv is parsed.
void AddGamePluginOption(cxxopts::Options& options);
void LoadGamePluginOption(const cxxopts::ParseResult& r);
// Whether the command was told its game: --game, or --game-plugin (whose
// game ReadTableOptions made c.game). eval and gtp otherwise take the weights'.
bool GameGiven(const cxxopts::ParseResult& r, const proc::FarmConfig& c);

// Parses argv; on --help prints the help and returns false with *exit_code 0.
// Bad options and stray arguments throw ConfigError.
bool ParseArgs(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult* result,
               int* exit_code);

}  // namespace zerofarm::cli
