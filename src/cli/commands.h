#pragma once
// One function per subcommand (one file each), and the option helpers they
// share. Private to src/cli: the only place cxxopts appears.
#include <cxxopts.hpp>
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/eval/evaluator.h"
#include "zerofarm/game/game.h"
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

// The Go game, net and search of `zerofarm gtp` and of `eval --against-gtp`
// (gtp.cpp), from the option table's game, blocks, filters, eval-threads,
// seed, simulations and c-puct; `weights` a file or "random"; the game is
// `c.game` when `game_given`, else the weights' own (go for "random").
// ConfigError when the game is not Go.
struct GtpEngineParts {
  std::unique_ptr<game::Game> game;
  std::unique_ptr<eval::Evaluator> net;
  mcts::SearchConfig search;
  int size = 9;
  double komi = 7.5;
};
GtpEngineParts MakeGtpEngineParts(const proc::FarmConfig& c, bool game_given, const std::string& weights);
// `zerofarm eval --against-gtp CMD`: the arena against a GTP program (gtp.cpp).
int GtpArenaCommand(const cxxopts::ParseResult& r, const proc::FarmConfig& c, const std::string& weights);
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

// Parses argv; on --help prints the help and returns false with *exit_code 0.
// Bad options and stray arguments throw ConfigError.
bool ParseArgs(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult* result,
               int* exit_code);

}  // namespace zerofarm::cli
