// The first hour (issue 72). The farm's defaults make varied data: with the
// shipped network and no exploration option, its games are distinct move
// sequences; the summary says how many were, the farm warns once when too few
// are, and the summary is also in the host directory (summary.txt,
// summary.json). Messages name the fix: a GTP program the shell cannot find.
// Nothing given is ignored: --weights on a run with a newer model is refused.
// Progress into a file holds no terminal control codes. Only this (parent)
// process asserts.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "farm_check.h"
#include "skip.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/roles.h"

using namespace zerofarm;
using namespace zerofarm::testing;

namespace {

struct Sequences {
  uint64_t games = 0;
  std::set<std::vector<int16_t>> distinct;
};

// Every game's whole move sequence (random opening included), from the shards.
Sequences CountSequences(const std::string& host_dir) {
  Sequences s;
  for (const auto& path : io::ListShards(host_dir))
    for (const io::ShardGame& g : io::ShardReader(path).ReadGames()) {
      ++s.games;
      s.distinct.insert(g.moves);
    }
  return s;
}

// The lines of `text` that start with "zerofarm run: ", each ended by '\n'.
std::string SummaryLines(const std::string& text) {
  std::istringstream is(text);
  std::string line, out;
  while (std::getline(is, line))
    if (line.rfind("zerofarm run: ", 0) == 0) out += line + "\n";
  return out;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a farm that repeats its games warns once, and its summary stays in the host directory",
          "[multiprocess][farm][defaults]") {
  ScratchDir dir("zf-repeats");
  const std::string out = dir / "run";
  // Tic-tac-toe with every source of variety off: the same few games again and again.
  Spawned farm(
      FarmArgs(out, {"--game", "tictactoe", "--games", "150", "--simulations", "8", "--random-opening-plies",
                     "0", "--temperature-plies", "0", "--final-temperature", "0", "--dirichlet-fraction", "0",
                     "--shard-positions", "200"}),
      dir / "farm");
  const int code = farm.Wait(300);
  INFO(farm.Stderr());
  REQUIRE(code == 0);
  const Sequences seen = CountSequences(HostDir(out));
  REQUIRE(seen.games == 150);
  REQUIRE(seen.distinct.size() * 10 < seen.games * 9);  // under 90 %
  CHECK(Occurrences(farm.Stderr(), "the farm repeats its games") == 1);
  // The summary's count is the shards' own.
  const std::string counted =
      "(" + std::to_string(seen.distinct.size()) + " distinct move sequences of 150 games)";
  CHECK_THAT(farm.Stdout(), Catch::Contains("zerofarm run: distinct games ") && Catch::Contains(counted));
  // summary.txt holds exactly the summary lines of stdout; summary.json the same lines and figures.
  const std::string lines = SummaryLines(farm.Stdout());
  REQUIRE(!lines.empty());
  CHECK(io::ReadTextFile(HostDir(out) + "/summary.txt") == lines);
  const std::string json = io::ReadTextFile(HostDir(out) + "/summary.json");
  CHECK_THAT(json, Catch::StartsWith("{\"stop_reason\": \"game budget reached\""));
  CHECK_THAT(json, Catch::Contains("\"games_written\": 150,"));
  CHECK_THAT(json, Catch::Contains("\"sampled_distinct\": " + std::to_string(seen.distinct.size()) + ","));
  CHECK_THAT(json, Catch::Contains("\"lines\": [\"zerofarm run: game budget reached after "));
  CHECK_FALSE(std::filesystem::exists(HostDir(out) + "/summary.txt.tmp"));
}

TEST_CASE("with the shipped network and no exploration option, a farm's 150 games are 99 % distinct",
          "[multiprocess][farm][defaults][slow]") {
  ScratchDir dir("zf-distinct");
  const std::string out = dir / "run";
  // The farm's own search defaults: only what to play with, where, how many
  // (a game budget, not a duration: a loaded machine plays fewer in a minute).
  Spawned farm(
      {ZF_BINARY, "run", "--weights", SourceDir() + "/data/connect4-4x32.h5", "--workers", "2", "--gpus", "0",
       "--games-per-worker", "32", "--games", "150", "--out", out, "--no-status", "--host-id", kTestHost},
      dir / "farm");
  const int code = farm.Wait(600);
  INFO(farm.Stderr());
  REQUIRE(code == 0);
  const Sequences seen = CountSequences(HostDir(out));
  INFO(seen.games << " games, " << seen.distinct.size() << " distinct");
  REQUIRE(seen.games >= 100);  // enough to judge
  CHECK(seen.distinct.size() * 100 >= seen.games * 99);
  CHECK_THAT(farm.Stdout(), Catch::Contains("zerofarm run: distinct games "));
  CHECK(Occurrences(farm.Stderr(), "the farm repeats its games") == 0);
}

TEST_CASE("eval --against-gtp with a program not on PATH says so, with the command, exit 2",
          "[multiprocess][gtp][messages]") {
  ScratchDir dir("zf-gtp-missing");
  const std::string command = "zf-no-such-gtp-program --mode gtp";
  Spawned eval({ZF_BINARY, "eval", "--game", "go7", "--weights", "random", "--blocks", "1", "--filters", "8",
                "--simulations", "2", "--games", "2", "--no-status", "--against-gtp", command},
               dir / "eval");
  CHECK(eval.Wait(120) == 2);
  INFO(eval.Stderr());
  CHECK_THAT(eval.Stderr(), Catch::Contains(command + ": 'zf-no-such-gtp-program' not found on PATH"));
}

TEST_CASE("a farm given --weights on a run with a newer model refuses it in one line with exit 2",
          "[multiprocess][farm][messages]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-weights-resumed");
  const std::string out = dir / "run";
  std::filesystem::create_directories(out + "/models");
  proc::FarmConfig shape;
  shape.blocks = 1;
  shape.filters = 8;
  eval::WeightSet net = eval::RandomWeights(proc::NetConfigFor(*game::MakeGame("connect4"), shape), 1);
  net.version = 3;  // the run's newest model, as its trainer numbers them
  io::WriteWeights(out + "/models/model-3.h5", net);
  net.version = 2;
  io::WriteWeights(dir / "older.h5", net);
  Spawned older(FarmArgs(out, {"--weights", dir / "older.h5", "--games", "2"}), dir / "older");
  CHECK(older.Wait(120) == 2);
  INFO(older.Stderr());
  CHECK_THAT(older.Stderr(),
             Catch::Contains("older.h5: " + out + "/models/model-3.h5 (model version 3) is newer"));
  CHECK(Occurrences(older.Stderr(), "\n") == 1);
  CHECK_FALSE(std::filesystem::exists(out + "/shards"));
  // Newer weights than the run's models are what the evaluators serve: taken.
  net.version = 4;
  io::WriteWeights(dir / "newer.h5", net);
  Spawned newer(FarmArgs(out, {"--weights", dir / "newer.h5", "--games", "2"}), dir / "newer");
  CHECK(newer.Wait(300) == 0);
}

// Issue 72: progress lines into a file are whole lines, never a terminal's
// carriage returns or escape sequences. Positions in no rated file (mirrors
// of Pons's Test_L3_R1, solved in milliseconds) make eval draw the solver's
// progress; stderr is a file here (Spawned), not a terminal.
TEST_CASE("eval's and run's progress into a redirected stderr hold no control codes",
          "[multiprocess][eval][messages]") {
  ScratchDir dir("zf-eval-no-tty");
  const std::string pons = dir / "mirrored_L3";
  std::ofstream(pons) << "6636312635426644777325523545217537447 -1\n"
                         "1466547153241147722755315415646322 1\n"
                         "65725472764121665734421417616472133255 0\n";
  Spawned eval({ZF_BINARY, "eval", "--weights", SourceDir() + "/data/connect4-4x32.h5", "--pons", pons,
                "--cache-dir", dir / "cache", "--simulations", "8"},
               dir / "eval");
  REQUIRE(eval.Wait(300) == 0);
  const std::string err = eval.Stderr();
  INFO(err);
  CHECK_THAT(err, Catch::Contains("rating " + pons + " with the solver: 0/3\n"));  // the progress was drawn
  CHECK(err.find('\x1b') == std::string::npos);
  CHECK(err.find('\r') == std::string::npos);
  CHECK_THAT(eval.Stdout(), Catch::Contains("mirrored_L3"));

  // run's status line is for terminals only (status_line_test.cpp checks one).
  Spawned farm({ZF_BINARY,
                "run",
                "--workers",
                "1",
                "--gpus",
                "0",
                "--blocks",
                "1",
                "--filters",
                "8",
                "--simulations",
                "8",
                "--games-per-worker",
                "2",
                "--games",
                "4",
                "--out",
                dir / "run",
                "--host-id",
                kTestHost},
               dir / "farm");
  REQUIRE(farm.Wait(300) == 0);
  INFO(farm.Stderr());
  CHECK(farm.Stderr().find('\x1b') == std::string::npos);
  CHECK(farm.Stderr().find('\r') == std::string::npos);
}
