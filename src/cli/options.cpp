// The option table as cxxopts options, and the argument parsing every
// subcommand shares.
#include "zerofarm/proc/options.h"

#include <iostream>
#include <memory>
#include <sstream>
#include <utility>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/conformance.h"
#include "zerofarm/io/game_plugin.h"

namespace zerofarm::cli {

namespace {
// cxxopts reports a bad number as "Argument 'abc' failed to parse", without
// the option: find the option in argv that was given that value (issue 21).
std::string BadNumberMessage(int argc, char** argv, const std::string& what) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) continue;
    const size_t eq = a.find('=');
    if (eq == std::string::npos && i + 1 >= argc) continue;
    const std::string name = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? argv[i + 1] : a.substr(eq + 1);
    if (what.find("\u2018" + value + "\u2019") != std::string::npos ||
        what.find("'" + value + "'") != std::string::npos)
      return name + ": '" + PrintableText(value) + "' is not a valid number";
  }
  return PrintableText(what, 200);
}

// Old spellings kept as aliases of one option each (issue 24).
constexpr std::pair<const char*, const char*> kAliases[] = {
    {"--threads", "--eval-threads"},  // train, eval
    {"--quiet", "--no-status"},       // train, eval
};

// argv with the aliases replaced by their options' names, noting each once.
std::vector<std::string> Unalias(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i)
    for (const auto& [old_name, name] : kAliases) {
      const std::string a = args[i], o = old_name;
      if (a == o || a.rfind(o + "=", 0) == 0) {
        args[i] = name + a.substr(o.size());
        std::cerr << "zerofarm: " << o << " is an old name of " << name << "\n";
      }
    }
  return args;
}

// Every long option name of `options`.
std::vector<std::string> LongNames(cxxopts::Options& options) {
  std::vector<std::string> names;
  for (const auto& group : options.groups())
    for (const auto& o : options.group_help(group).options)
      for (const auto& n : o.l) names.push_back(n);
  return names;
}

// cxxopts's "Option 'worker' does not exist" (its quotes are typographic or
// plain), as one line that names the nearest option.
std::string UnknownOptionMessage(const std::string& what, const std::vector<std::string>& names) {
  std::string name = what;
  for (const char* open : {"\u2018", "'"}) {
    const size_t b = what.find(open);
    if (b == std::string::npos) continue;
    const size_t start = b + std::string(open).size();
    const size_t e = what.find(std::string(open) == "'" ? "'" : "\u2019", start);
    if (e != std::string::npos) name = what.substr(start, e - start);
    break;
  }
  return "unknown option --" + PrintableText(name) + proc::DidYouMean(name, names, "--");
}

std::string DefaultSuffix(const proc::OptionSpec& o) {
  if (o.kind == proc::OptionKind::kFlag) return "";
  const std::string d = o.Default();
  return d.empty() ? "" : " (default: " + d + ")";
}
}  // namespace

bool ParseArgs(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult* result,
               int* exit_code) {
  options.add_options("help")("h,help", "Print this help");
  std::vector<std::string> args = Unalias(argc, argv);
  std::vector<char*> ptrs;
  for (auto& a : args) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  try {
    *result = options.parse(argc, ptrs.data());
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    throw ConfigError(BadNumberMessage(argc, ptrs.data(), e.what()));
  } catch (const cxxopts::exceptions::no_such_option& e) {
    throw ConfigError(UnknownOptionMessage(e.what(), LongNames(options)));
  }
  if (result->count("help")) {
    std::cout << options.help() << std::endl;
    *exit_code = 0;
    return false;
  }
  if (!result->unmatched().empty()) {  // a word without "--": perhaps an option's name
    const std::string word = result->unmatched().front();
    throw ConfigError("unexpected argument '" + PrintableText(word) + "'" +
                      proc::DidYouMean(word.substr(word.find_first_not_of('-') == std::string::npos
                                                       ? word.size()
                                                       : word.find_first_not_of('-')),
                                       LongNames(options), "--"));
  }
  return true;
}

void AddTableOptions(cxxopts::Options& options, proc::OptionCommand command) {
  for (const auto& o : proc::OptionTable()) {
    if (!(o.commands & command) || o.name.empty()) continue;
    const std::string help = o.help + DefaultSuffix(o);
    if (o.kind == proc::OptionKind::kFlag)
      options.add_options(o.group)(o.name, help);
    else
      options.add_options(o.group)(o.name, help, cxxopts::value<std::string>());
  }
  options.add_options("config")(
      "config",
      "Read settings from FILE (key = value lines; `zerofarm config --example` lists every key); options "
      "given on the command line override it. A run's own OUT/shards/HOST/config.txt reproduces the run",
      cxxopts::value<std::string>());
}

namespace {

// Loads the game plugin FILE and returns its game's name; a refusal names
// the option, in one line (exit 2).
std::string LoadPluginOption(const std::string& file) {
  try {
    return io::LoadGamePlugin(file);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("--game-plugin ") + e.what());
  }
}

// A model file brings its own shape, so a random net's shape options beside
// it would be ignored: refused in one line (issue 72). Given means on the
// command line, or a config file's value other than the default (a run's
// config.txt lists every key). gtp's "--weights random" is a random net;
// eval refuses its own (RefuseOtherModes): its --against random is one too.
void RefuseShapeBesideModel(const cxxopts::ParseResult& r, const proc::FarmConfig& c,
                            proc::OptionCommand command) {
  if (c.weights.empty() || c.weights == "random" || command == proc::kEval) return;
  const proc::FarmConfig defaults;
  for (const proc::OptionSpec& o : proc::OptionTable()) {
    const std::string& name = o.name;
    if (!proc::ShapesRandomNet(name) || !(o.commands & command) ||
        (!r.count(name) && o.get(c) == o.get(defaults)))
      continue;
    throw ConfigError("--" + name + " shapes a random net, and --weights " + PrintableText(c.weights) +
                      " brings its own shape: leave --" + name + " out");
  }
}

// The game a plugin's command plays: the plugin's own. A --game naming
// another (on the command line, or a config file's value other than the
// default) is refused in one line (exit 2).
std::string PluginGame(const cxxopts::ParseResult& r, const proc::FarmConfig& c, const std::string& plugin) {
  const bool given = r.count("game") > 0 || c.game != proc::FarmConfig().game;
  if (given && c.game != plugin)
    throw ConfigError("--game " + PrintableText(c.game) + " beside --game-plugin " + c.game_plugin +
                      ", whose game is '" + plugin + "': leave --game out (the plugin names its game)");
  return plugin;
}

// The commands that play a game (a plugin's is checked before they start).
constexpr uint32_t kPlayingCommands = proc::kRun | proc::kSelfplay | proc::kTune | proc::kLoop |
                                      proc::kBench | proc::kEval | proc::kGtp | proc::kMatch;

// A quick conformance pass on a plugin's game before anything starts (issue
// 82): a few random games of every check of game/conformance.h. A failure is
// refused with the first failing check's line (exit 2); `zerofarm check-game
// FILE` lists them all.
void QuickCheckPlugin(const std::string& file, const std::string& name) {
  game::ConformanceOptions options;
  options.playouts = 4;
  options.max_failures = 1;
  const std::unique_ptr<game::Game> game = game::MakeGame(name);
  for (const game::ConformanceCheck& check : game::ConformanceChecks()) {
    const game::ConformanceFailures failures = check.run(*game, options);
    if (failures.empty()) continue;
    const std::string& message = failures[0].message;
    throw ConfigError("--game-plugin " + file + ": its game '" + name + "' fails the conformance check " +
                      failures[0].check + ": " + PrintableText(message.substr(0, message.find('\n')), 300) +
                      " (zerofarm check-game " + file + " lists every failure)");
  }
}

}  // namespace

proc::FarmConfig ReadTableOptions(const cxxopts::ParseResult& r, proc::OptionCommand command) {
  proc::FarmConfig c;
  if (r.count("config")) c = proc::FarmConfig::FromFile(r["config"].as<std::string>());
  for (const auto& o : proc::OptionTable()) {
    if (!(o.commands & command) || o.name.empty() || !r.count(o.name)) continue;
    const std::string value = o.kind == proc::OptionKind::kFlag ? o.flag_value : r[o.name].as<std::string>();
    proc::SetOption(o, &c, value, "--" + o.name);
  }
  RefuseShapeBesideModel(r, c, command);
  // The plugin first: it names the game (issue 82), and --game (checked now,
  // not when set) may name that game too.
  if (!c.game_plugin.empty()) {
    c.game = PluginGame(r, c, LoadPluginOption(c.game_plugin));
    if (command & kPlayingCommands) QuickCheckPlugin(c.game_plugin, c.game);
  }
  const proc::OptionSpec* game = proc::FindOptionByName("game");
  if (game->commands & command) proc::CheckOption(*game, c);
  return c;
}

void AddGamePluginOption(cxxopts::Options& options) {
  options.add_options()("game-plugin", proc::FindOptionByName("game-plugin")->help,
                        cxxopts::value<std::string>());
}

void LoadGamePluginOption(const cxxopts::ParseResult& r) {
  if (r.count("game-plugin")) LoadPluginOption(r["game-plugin"].as<std::string>());
}

bool GameGiven(const cxxopts::ParseResult& r, const proc::FarmConfig& c) {
  return r.count("game") > 0 || !c.game_plugin.empty();
}

void CheckTableOptions(const proc::FarmConfig& c, proc::OptionCommand command) {
  for (const auto& o : proc::OptionTable())
    if (o.commands & command) proc::CheckOption(o, c);
}

}  // namespace zerofarm::cli
