// Game records and GTP against a program no one here wrote: GNU Go (Debian
// package gnugo, installed by tools/setup.sh --test). A short 9x9 Go farm's games,
// exported as SGF, are loaded by GNU Go and scored by it; `zerofarm gtp`
// plays full games against `gnugo --mode gtp --level 1` through the referee
// (proc/gtp.h); `zerofarm eval --against-gtp` runs its arena. Without gnugo
// every test skips visibly (ZF_SKIP), and CI does not allow that skip.
#include "zerofarm/learn/gtp.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "farm_check.h"
#include "skip.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/game/go.h"
#include "zerofarm/io/game_records.h"
#include "zerofarm/io/shard.h"

using namespace zerofarm;
using testing::ScratchDir;
using testing::Spawned;

namespace {

std::string Trim(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// gnugo on $PATH or in /usr/games (Debian installs it there, often off $PATH).
std::string GnuGo() {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/games";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/gnugo").c_str(), X_OK) == 0) return dir + "/gnugo";
  return "";
}

// Runs a short 9x9 farm (tiny net, 4 simulations) into dir/run.
std::string GoFarm(const ScratchDir& dir, int games) {
  const std::string out = dir / "run";
  Spawned farm({ZF_BINARY,
                "run",
                "--game",
                "go",
                "--workers",
                "2",
                "--gpus",
                "0",
                "--games-per-worker",
                "2",
                "--simulations",
                "4",
                "--blocks",
                "1",
                "--filters",
                "8",
                "--games",
                std::to_string(games),
                "--out",
                out,
                "--no-status",
                "--shard-positions",
                "1000",
                "--seed",
                "7",
                "--host-id",
                testing::kTestHost},
               dir / "farm");
  const int code = farm.Wait(300);
  INFO("farm stderr:\n" << farm.Stderr());
  REQUIRE(code == 0);
  return out;
}

}  // namespace

TEST_CASE("export writes SGF that GNU Go loads and scores as zerofarm does", "[multiprocess][gtp][slow]") {
  const std::string gnugo = GnuGo();
  if (gnugo.empty()) ZF_SKIP("gnugo is not installed (tools/setup.sh --test installs it)");
  ScratchDir dir("zf-export");
  const std::string run = GoFarm(dir, 6);
  Spawned sgf({ZF_BINARY, "export", run, "--format", "sgf", "--out", dir / "sgf"}, dir / "export");
  REQUIRE(sgf.Wait(60) == 0);
  CHECK_THAT(sgf.Stderr(), Catch::Contains("6 game(s) as sgf"));
  // GNU Go under area rules, as zerofarm's Tromp-Taylor: the farm's games
  // have no resignations, so every one was played to its end.
  learn::GtpProcess referee(gnugo + " --mode gtp --chinese-rules --level 1", dir / "gnugo.err", 120);
  int games = 0, compared = 0;
  for (const auto& shard : io::ListShards(testing::HostDir(run))) {
    io::ShardReader reader(shard);
    const auto go = game::MakeGame(reader.meta().game);
    for (const io::ShardGame& g : reader.ReadGames()) {
      ++games;
      const std::string file = dir / ("sgf/" + io::GameIdHex(g.game_id) + ".sgf");
      INFO(file << ":\n" << testing::Slurp(file));
      REQUIRE(std::filesystem::exists(file));
      // loadsgf answers with the colour to move: the whole game was replayed.
      CHECK(referee.Command("loadsgf " + file) == (g.length % 2 == 0 ? "black" : "white"));
      // GNU Go's board after the game is zerofarm's, stone for stone (every
      // capture agreed), and its Tromp-Taylor area score is the SGF's result.
      const auto final_state = go->Replay(std::vector<int>(g.moves.begin(), g.moves.end()));
      const auto& ours = dynamic_cast<const game::GoState&>(*final_state);
      const auto& rules = dynamic_cast<const game::GoGame&>(*go);
      game::GoState theirs(rules.size(), rules.komi(), 3 * rules.size() * rules.size());
      std::string cells(static_cast<size_t>(rules.size() * rules.size()), '.');
      for (int colour = 0; colour < 2; ++colour) {
        std::istringstream stones(referee.Command(colour == 0 ? "list_stones black" : "list_stones white"));
        for (std::string v; stones >> v;) cells[static_cast<size_t>(rules.ParseAction(v))] = "XO"[colour];
      }
      for (int c = 0; c < rules.size() * rules.size(); ++c)
        CHECK(cells[c] == (ours.At(c) < 0 ? '.' : "XO"[ours.At(c)]));
      const game::GoState board =
          game::GoState::FromCells(cells, rules.size(), rules.komi(), 1000, 0, 0, false);
      const std::string expected = io::SgfResult(*go, g);
      CHECK(expected == (board.Score() == 0
                             ? std::string("0")
                             : (board.Score() > 0 ? "B+" : "W+") + Trim(std::abs(board.Score()))));
      // GNU Go removes the stones it judges dead; Tromp-Taylor removes none.
      // Where GNU Go sees no dead stone its own final_score must agree too.
      if (!referee.Command("final_status_list dead").empty()) continue;
      ++compared;
      CHECK(referee.Command("final_score") == expected);
    }
  }
  CHECK(games == 6);
  // Random-net games end with dead stones on the board, so GNU Go's own score
  // usually differs by its dead-stone judgement; the refereed games below,
  // played out against GNU Go with --capture-all-dead, compare its final_score.
  std::cout << "export: GNU Go loaded " << games << " games, boards and area scores agree; " << compared
            << " had no dead stones and GNU Go's final_score agreed\n";

  // JSON lines: one object per game; an existing file is never overwritten (exit 2).
  Spawned jsonl({ZF_BINARY, "export", run, "--format", "jsonl", "--out", dir / "games.jsonl"}, dir / "jsonl");
  REQUIRE(jsonl.Wait(60) == 0);
  std::istringstream lines(testing::Slurp(dir / "games.jsonl"));
  int objects = 0;
  for (std::string line; std::getline(lines, line); ++objects)
    CHECK(nlohmann::json::parse(line)["moves"].size() == nlohmann::json::parse(line)["length"].get<size_t>());
  CHECK(objects == 6);
  Spawned again({ZF_BINARY, "export", run, "--format", "jsonl", "--out", dir / "games.jsonl"}, dir / "again");
  CHECK(again.Wait(60) == 2);
  CHECK_THAT(again.Stderr(), Catch::Contains("exists; export never overwrites"));
}

namespace {

// `games` full 9x9 games of `zerofarm gtp` (a random 1x8 net) against GNU Go
// level 1 through the referee, colours alternating.
void PlayAgainstGnuGo(const std::string& gnugo, int games, int simulations) {
  ScratchDir dir("zf-gtp");
  learn::GtpProcess engine(std::string(ZF_BINARY) +
                               " gtp --game go --weights random --blocks 1 --filters 8 --simulations " +
                               std::to_string(simulations) + " --seed 3",
                           dir / "engine.err", 120);
  learn::GtpProcess gnu(gnugo + " --mode gtp --level 1 --chinese-rules --capture-all-dead", dir / "gnugo.err",
                        120);
  CHECK(engine.Command("protocol_version") == "2");
  for (int g = 0; g < games; ++g) {
    const bool black = g % 2 == 0;
    const learn::GtpGameResult r = black ? learn::PlayGtpGame(engine, gnu, 9, 7.5, {}, 810)
                                         : learn::PlayGtpGame(gnu, engine, 9, 7.5, {}, 810);
    INFO("engine stderr: " << testing::Slurp(dir / "engine.err"));
    INFO("game " << g << ": " << r.Result() << " (" << r.reason << " " << r.detail << ")");
    CHECK((r.reason == "score" || r.reason == "resign"));
    game::GoState s = learn::NewGtpGoState(9, 7.5);
    for (int m : r.moves) {  // the referee judged each move; judge them again here
      REQUIRE(s.IsLegal(m));
      s.Apply(m);
    }
    // Played to the end (GNU Go captures every dead stone before it passes):
    // GNU Go's own final_score is zerofarm's Tromp-Taylor result.
    if (r.reason == "score") CHECK((black ? r.white_score : r.black_score) == r.Result());
    std::cout << "gtp game " << g << ": zerofarm " << (black ? "B" : "W")
              << " vs gnugo level 1: " << r.Result() << " (" << r.reason << ", " << r.moves.size()
              << " plies; gnugo scores " << (black ? r.white_score : r.black_score) << ")\n";
  }
}

}  // namespace

TEST_CASE("zerofarm gtp plays full 9x9 games against gnugo with every move legal",
          "[multiprocess][gtp][slow]") {
  const std::string gnugo = GnuGo();
  if (gnugo.empty()) ZF_SKIP("gnugo is not installed (tools/setup.sh --test installs it)");
  PlayAgainstGnuGo(gnugo, 2, 8);
}

// The long version (tools/test.sh --long): 10 games at 64 simulations.
TEST_CASE("gtp long: 10 full 9x9 games against gnugo", "[.long][multiprocess][gtp]") {
  const std::string gnugo = GnuGo();
  if (gnugo.empty()) ZF_SKIP("gnugo is not installed (tools/setup.sh --test installs it)");
  PlayAgainstGnuGo(gnugo, 10, 64);
}

TEST_CASE("eval --against-gtp reports a 7x7 arena against gnugo as JSON", "[multiprocess][gtp][slow]") {
  const std::string gnugo = GnuGo();
  if (gnugo.empty()) ZF_SKIP("gnugo is not installed (tools/setup.sh --test installs it)");
  ScratchDir dir("zf-gtp-arena");
  Spawned eval({ZF_BINARY, "eval", "--game", "go7", "--weights", "random", "--blocks", "1", "--filters", "8",
                "--simulations", "4", "--games", "2", "--quiet", "--against-gtp",
                gnugo + " --mode gtp --level 1 --chinese-rules --capture-all-dead"},
               dir / "eval");
  REQUIRE(eval.Wait(300) == 0);
  const std::string out = eval.Stdout();
  INFO(out << eval.Stderr());
  REQUIRE(out.find("{\"kind\"") != std::string::npos);
  const std::string line = out.substr(out.find("{\"kind\""));
  const auto j = nlohmann::json::parse(line.substr(0, line.find('\n')));
  CHECK(j["kind"] == "gtp_arena");
  CHECK(j["games"] == 2);
  CHECK(j["wins"].get<int>() + j["draws"].get<int>() + j["losses"].get<int>() == 2);
  CHECK(j["illegal_endings"] == 0);
  CHECK(j["records"].size() == 2);
  CHECK(j["records"][0]["zerofarm"] == "B");
  CHECK(j["records"][1]["zerofarm"] == "W");
  CHECK(j["low95"].get<double>() <= j["score"].get<double>());
}
