// The option table as cxxopts options (src/cli/options.cpp): each default
// shown once, every game listed, bad values named, aliases, --config.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"

using namespace zerofarm;

namespace {
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Parses args (after a program name) with the table's options of `command`.
proc::FarmConfig Parse(proc::OptionCommand command, std::vector<std::string> args) {
  args.insert(args.begin(), "zerofarm-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cxxopts::Options options("test");
  cli::AddTableOptions(options, command);
  cxxopts::ParseResult r;
  int code = -1;
  REQUIRE(cli::ParseArgs(options, static_cast<int>(argv.size()), argv.data(), &r, &code));
  return cli::ReadTableOptions(r, command);
}
// The message of the ConfigError that parsing args throws ("" when none).
std::string ParseError(proc::OptionCommand command, std::vector<std::string> args) {
  args.insert(args.begin(), "zerofarm-test");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cxxopts::Options options("test");
  cli::AddTableOptions(options, command);
  cxxopts::ParseResult r;
  int code = -1;
  try {
    cli::ParseArgs(options, static_cast<int>(argv.size()), argv.data(), &r, &code);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("cli options: help shows each default once and every game", "[cli][options]") {
  for (const auto command :
       {proc::kRun, proc::kSelfplay, proc::kTune, proc::kLoop, proc::kBench, proc::kEval, proc::kTrain}) {
    cxxopts::Options options("test");
    cli::AddTableOptions(options, command);
    const std::string help = options.help();
    INFO(help);
    size_t with_default = 0;
    for (const auto& o : proc::OptionTable())
      if ((o.commands & command) && !o.name.empty() && o.kind != proc::OptionKind::kFlag &&
          !o.Default().empty())
        ++with_default;
    CHECK(Count(help, "(default: ") == with_default);
    CHECK(Count(help, "(default: \"\")") == 0);
    CHECK(Count(help, "--config") == 1);
    if (proc::FindOptionByName("game")->commands & command) {
      for (const auto& g : game::GameNames()) CHECK_THAT(help, Catch::Contains(g));
      CHECK_THAT(help, Catch::Contains("--game-plugin"));  // a game outside the tree (issue 73)
    }
  }
}

TEST_CASE("cli options: the same option reads the same way in every command", "[cli][options]") {
  CHECK(Parse(proc::kRun, {"--blocks", "70"}).blocks == 70);
  CHECK(Parse(proc::kTrain, {"--blocks", "70"}).blocks == 70);  // 1..80 in both
  CHECK(Parse(proc::kRun, {}).workers == Parse(proc::kLoop, {}).workers);
  CHECK(Parse(proc::kBench, {}).workers == Parse(proc::kTune, {}).workers);
  CHECK(Parse(proc::kRun, {"--no-solver"}).search.solver == false);
  CHECK(Parse(proc::kEval, {"--no-solver"}).search.solver == false);
}

TEST_CASE("cli options: a bad value names its option", "[cli][options]") {
  CHECK_THROWS_WITH(Parse(proc::kRun, {"--workers", "abc"}), "--workers: bad value 'abc' (an integer)");
  CHECK_THROWS_WITH(Parse(proc::kRun, {"--c-puct=x"}), "--c-puct: bad value 'x' (a number)");
  CHECK_THROWS_WITH(Parse(proc::kRun, {"--game", "chess"}),
                    Catch::StartsWith("--game: bad value 'chess' (one of "));
}

TEST_CASE("cli options: an unknown option or config key names the nearest one", "[cli][options]") {
  CHECK(ParseError(proc::kRun, {"--worker", "2"}) == "unknown option --worker (did you mean --workers?)");
  CHECK(ParseError(proc::kRun, {"--simulation=8"}) ==
        "unknown option --simulation (did you mean --simulations?)");
  CHECK(ParseError(proc::kRun, {"--random-opening", "4"}) ==
        "unknown option --random-opening (did you mean --random-opening-plies?)");
  CHECK(ParseError(proc::kRun, {"--zzzzzz"}) == "unknown option --zzzzzz");  // nothing near
  // Without "--": cxxopts leaves the word unmatched.
  CHECK(ParseError(proc::kRun, {"workers", "2"}) ==
        "unexpected argument 'workers' (did you mean --workers?)");
  CHECK_THROWS_WITH(proc::FarmConfig::FromText("worker = 2\n"),
                    "config:1: unknown key 'worker' (did you mean workers?)");
  CHECK_THROWS_WITH(proc::FarmConfig::FromText("games-per-workers = 2\n"),
                    "config:1: unknown key 'games-per-workers' (did you mean games_per_worker?)");
  CHECK(proc::NearestName("gpu", {"gpus", "games", "go"}) == "gpus");
  CHECK(proc::NearestName("x", {"gpus", "out"}).empty());
}

TEST_CASE("cli options: old spellings are aliases of one option", "[cli][options]") {
  CHECK(Parse(proc::kTrain, {"--threads", "3"}).eval_threads == 3);
  CHECK(Parse(proc::kEval, {"--threads=4"}).eval_threads == 4);
  CHECK_FALSE(Parse(proc::kTrain, {"--quiet"}).status_line);
  CHECK_FALSE(Parse(proc::kRun, {"--no-status"}).status_line);
}

TEST_CASE("cli options: --config is read first and the command line wins", "[cli][options]") {
  const std::string path = "/tmp/zf-cli-options-test-" + std::to_string(getpid()) + ".conf";
  std::ofstream(path) << "simulations = 33\nc-puct = 2.5\nrun_id = ignored\n";
  const proc::FarmConfig c = Parse(proc::kTune, {"--config", path, "--simulations", "44"});
  std::remove(path.c_str());
  CHECK(c.search.simulations == 44);
  CHECK(c.search.c_puct == 2.5f);
  CHECK(c.run_id.empty());
}
