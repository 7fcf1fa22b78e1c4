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
  options.add_options("check")("game",
                               "A registered game (zerofarm run --help lists them) or a game plugin file",
                               cxxopts::value<std::string>())("playouts", "Random games per check",
                                                              cxxopts::value<int>()->default_value("12"))(
      "seed", "Seed of the random games", cxxopts::value<uint64_t>()->default_value("1"))(
      "symmetry-samples",
      "Instead of checking: write DIR/GAME/ with a shard of random games and its positions under "
      "each symmetry, as the C++ helpers transform them (for readers' tests); no NAME: every game",
      cxxopts::value<std::string>());
  options.parse_positional({"game"});
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  game::ConformanceOptions opt;
  opt.playouts = r["playouts"].as<int>();
  opt.seed = r["seed"].as<uint64_t>();
  if (opt.playouts < 1 || opt.playouts > 100000) throw ConfigError("--playouts must be in 1..100000");
  std::vector<std::string> names;
  if (r.count("game")) {
    std::string name = r["game"].as<std::string>();
    if (io::IsGamePluginPath(name)) name = io::LoadGamePlugin(name);
    names.push_back(name);
  }
  if (r.count("symmetry-samples"))
    return SymmetrySamples(r["symmetry-samples"].as<std::string>(), names.empty() ? game::GameNames() : names,
                           opt);
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
