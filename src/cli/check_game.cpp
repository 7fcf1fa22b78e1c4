// zerofarm check-game NAME|FILE.so: the game conformance suite
// (game/conformance.h and the shard round trip of io/game_conformance.h) on a
// registered game or a game plugin's, as a test would run it; one line per failure.
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/game/conformance.h"
#include "zerofarm/io/game_conformance.h"
#include "zerofarm/io/game_plugin.h"
#include "zerofarm/io/safe_files.h"

namespace zerofarm::cli {
namespace {

// The shard round trip in a fresh directory under $TMPDIR (or /tmp), removed after.
game::ConformanceFailures ShardRoundTrip(const game::Game& game, const game::ConformanceOptions& opt) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/zf-check-game-XXXXXX";
  if (!::mkdtemp(dir.data())) throw Error(ErrnoMessage("cannot make a directory like " + dir, errno));
  game::ConformanceFailures failures = io::CheckShardRoundTrip(game, dir, opt);
  io::RemoveTree(dir);
  return failures;
}

// --symmetry-samples DIR: DIR/GAME/ (made here, or empty) for each game.
int SymmetrySamples(const std::string& dir, const std::vector<std::string>& games,
                    const game::ConformanceOptions& opt) {
  for (const std::string& name : games) {
    const auto game = game::MakeGame(name);  // an unknown name: ConfigError before anything is written
    const std::string out = dir + "/" + name;
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec || !std::filesystem::is_empty(out, ec))
      throw ConfigError("--symmetry-samples: " + out + " is not a new or empty directory");
    io::WriteSymmetrySamples(*game, out, opt);
    std::cout << name << ": " << out << "/symmetry-000000.h5, " << out << "/symmetry-samples.h5\n";
  }
  return kExitOk;
}

}  // namespace

int CheckGameCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm check-game",
      "Check that a game keeps the promises of the game interface "
      "(docs/adding-a-game.md): random games, symmetries, hashing, text, a shard round trip.");
  options.positional_help("NAME|FILE.so");
  AddCommandOptions(options, proc::kCheckGame);
  options.parse_positional({"game"});
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  const CommandConfig own = ReadCommandOptions(r, proc::kCheckGame);  // each in its range
  const game::ConformanceOptions opt = own.check;
  std::vector<std::string> names;
  if (!own.check_game.empty())
    names.push_back(io::IsGamePluginPath(own.check_game) ? io::LoadGamePlugin(own.check_game)
                                                         : own.check_game);
  if (!own.symmetry_samples.empty())
    return SymmetrySamples(own.symmetry_samples, names.empty() ? game::GameNames() : names, opt);
  if (names.empty()) throw ConfigError("give the game's NAME or its plugin FILE.so");
  const auto game = game::MakeGame(names[0]);
  game::ConformanceFailures failures = game::CheckConformance(*game, opt);
  for (auto& f : ShardRoundTrip(*game, opt)) failures.push_back(f);
  for (const auto& f : failures) std::cout << game->Name() << ": " << f.check << ": " << f.message << "\n";
  std::cout << game->Name() << ": " << (failures.empty() ? "all checks passed" : "FAILED") << " ("
            << game::ConformanceChecks().size() + 1 << " checks, " << opt.playouts << " random games each)\n";
  return failures.empty() ? kExitOk : kExitFailure;
}

}  // namespace zerofarm::cli
