// zerofarm check-game NAME: the game conformance suite (game/conformance.h
// and the shard round trip of io/game_conformance.h) on a registered game,
// as a test would run it; one line per failure.
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <string>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/game/conformance.h"
#include "zerofarm/io/game_conformance.h"
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

}  // namespace

int CheckGameCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm check-game",
      "Check that a game keeps the promises of the game interface "
      "(docs/adding-a-game.md): random games, symmetries, hashing, text, a shard round trip.");
  options.positional_help("NAME");
  AddCommandOptions(options, proc::kCheckGame);
  options.parse_positional({"game"});
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  if (!r.count("game")) throw ConfigError("give the game's NAME");
  const CommandConfig own = ReadCommandOptions(r, proc::kCheckGame);  // each in its range
  const game::ConformanceOptions opt = own.check;
  const auto game = game::MakeGame(own.check_game);
  game::ConformanceFailures failures = game::CheckConformance(*game, opt);
  for (auto& f : ShardRoundTrip(*game, opt)) failures.push_back(f);
  for (const auto& f : failures) std::cout << game->Name() << ": " << f.check << ": " << f.message << "\n";
  std::cout << game->Name() << ": " << (failures.empty() ? "all checks passed" : "FAILED") << " ("
            << game::ConformanceChecks().size() + 1 << " checks, " << opt.playouts << " random games each)\n";
  return failures.empty() ? kExitOk : kExitFailure;
}

}  // namespace zerofarm::cli
