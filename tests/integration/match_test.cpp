// `zerofarm match` against engines no one here wrote: GNU Go (9x9 Go) and
// GRhino's gtp-rhino (Othello), a few short games each with a random tiny
// net; and against a fake engine (tests/support/fake_gtp_engine.py) for each
// way an engine can fail: hang, crash, an illegal move, no GTP. Without gnugo
// or gtp-rhino those tests skip visibly (ZF_SKIP); CI does not allow that.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "skip.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/game/game.h"
#include "zerofarm/learn/gtp.h"

using namespace zerofarm;
using testing::ScratchDir;
using testing::Spawned;

namespace {

// PROGRAM on $PATH or in /usr/games (Debian installs games there, often off $PATH).
std::string FindProgram(const std::string& program) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/games";
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
  return "";
}

struct MatchRun {
  int code = 0;
  std::string err;
  nlohmann::json summary;             // the last line of stdout
  std::vector<nlohmann::json> games;  // OUT/games.jsonl
};

// `zerofarm match` with a random 1x8 net at 4 simulations and `args`, into dir/out.
MatchRun Match(const ScratchDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ZF_BINARY, "match",     "--weights", "random",        "--blocks",
                                   "1",       "--filters", "8",         "--simulations", "4",
                                   "--seed",  "5",         "--out",     dir / "out"};
  argv.insert(argv.end(), args.begin(), args.end());
  Spawned m(argv, dir / "match");
  MatchRun r;
  r.code = m.Wait(300);
  r.err = m.Stderr();
  const std::string out = m.Stdout();
  INFO("match stdout:\n" << out << "\nstderr:\n" << r.err);
  if (r.code != 0) return r;
  REQUIRE(!out.empty());
  const size_t start = out.rfind('\n', out.size() - 2);
  r.summary = nlohmann::json::parse(out.substr(start == std::string::npos ? 0 : start + 1));
  std::istringstream lines(testing::Slurp(dir / "out/games.jsonl"));
  for (std::string line; std::getline(lines, line);) r.games.push_back(nlohmann::json::parse(line));
  return r;
}

// The counts add up, colours alternated, one game line and one SGF a game.
void CheckCounts(const ScratchDir& dir, const MatchRun& r, int games) {
  const auto& s = r.summary;
  CHECK(s["kind"] == "match");
  CHECK(s["games"] == games);
  CHECK(s["wins"].get<int>() + s["losses"].get<int>() + s["draws"].get<int>() == s["scored"].get<int>());
  CHECK(s["scored"].get<int>() + s["engine_failures"].get<int>() == games);
  CHECK(s["hang"].get<int>() + s["crash"].get<int>() + s["no_gtp"].get<int>() + s["illegal"].get<int>() +
            s["refused"].get<int>() ==
        s["engine_failures"].get<int>());
  CHECK(s["zerofarm_black"] == (games + 1) / 2);
  CHECK(s["zerofarm_white"] == games / 2);
  REQUIRE(r.games.size() == static_cast<size_t>(games));
  for (int i = 0; i < games; ++i) {
    CHECK(r.games[i]["zerofarm"] == (i % 2 == 0 ? "B" : "W"));
    char name[32];
    std::snprintf(name, sizeof name, "out/game-%04d.sgf", i);
    CHECK(std::filesystem::exists(dir / name));
  }
}

// The moves of an SGF game (B[xy]/W[xy]; "" = a pass) and the PB / PW values.
struct Sgf {
  std::vector<std::string> moves;
  std::string black, white;
};
Sgf ParseSgf(const std::string& text) {
  Sgf s;
  const std::regex move(";([BW])\\[([a-z]{0,2})\\]"), pb("PB\\[([^\\]]*)\\]"), pw("PW\\[([^\\]]*)\\]");
  char colour = 'W';
  for (auto it = std::sregex_iterator(text.begin(), text.end(), move); it != std::sregex_iterator(); ++it) {
    const char c = (*it)[1].str()[0];
    CHECK(c != colour);  // Black and White alternate, Black first
    colour = c;
    s.moves.push_back((*it)[2].str());
  }
  std::smatch m;
  if (std::regex_search(text, m, pb)) s.black = m[1];
  if (std::regex_search(text, m, pw)) s.white = m[1];
  return s;
}

// SGF point "ca" -> the game's action (column c, row a from the top); "" = pass.
int SgfAction(const game::Game& game, const std::string& point, int pass) {
  if (point.empty()) return pass;
  return (point[1] - 'a') * game.Shape().width + (point[0] - 'a');
}

}  // namespace

TEST_CASE("match plays 9x9 Go against gnugo: counts, SGFs GNU Go loads, colours alternating",
          "[multiprocess][match][slow]") {
  const std::string gnugo = FindProgram("gnugo");
  if (gnugo.empty()) ZF_SKIP("gnugo is not installed (tools/setup.sh --test installs it)");
  ScratchDir dir("zf-match-go");
  const MatchRun r =
      Match(dir, {"--game", "go", "--komi", "7", "--games", "2", "--opening-plies", "2", "--engine",
                  gnugo + " --mode gtp --level 0 --chinese-rules --capture-all-dead"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CheckCounts(dir, r, 2);
  CHECK(r.summary["engine_failures"] == 0);
  CHECK(r.summary["komi"] == 7);
  CHECK_THAT(r.summary["engine_name"].get<std::string>(), Catch::Contains("GNU Go"));
  learn::GtpProcess referee(gnugo + " --mode gtp --chinese-rules --level 0", dir / "gnugo.err", 120);
  for (int i = 0; i < 2; ++i) {
    const std::string file = dir / (i == 0 ? "out/game-0000.sgf" : "out/game-0001.sgf");
    const std::string text = testing::Slurp(file);
    INFO(file << ":\n" << text);
    CHECK_THAT(text, Catch::Contains("KM[7]"));
    const Sgf sgf = ParseSgf(text);
    CHECK(sgf.moves.size() == r.games[i]["plies"].get<size_t>());
    CHECK_THAT(i == 0 ? sgf.black : sgf.white, Catch::StartsWith("zerofarm"));
    // loadsgf answers with the colour to move: GNU Go replayed the whole game.
    CHECK(referee.Command("loadsgf " + file) == (sgf.moves.size() % 2 == 0 ? "black" : "white"));
  }
  std::cout << "match vs gnugo: " << r.summary.dump() << "\n";
}

TEST_CASE("match plays Othello against gtp-rhino from a fixed opening set", "[multiprocess][match][slow]") {
  const std::string rhino = FindProgram("gtp-rhino");
  if (rhino.empty()) ZF_SKIP("gtp-rhino is not installed (tools/setup.sh --test installs grhino)");
  ScratchDir dir("zf-match-othello");
  {
    std::ofstream openings(dir / "openings.txt");
    openings << "# two openings\nd3 c5\nf5 d6 c3\n";
  }
  const MatchRun r = Match(dir, {"--game", "othello", "--games", "4", "--openings", dir / "openings.txt",
                                 "--engine", rhino + " --level 1"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CheckCounts(dir, r, 4);
  CHECK(r.summary["engine_failures"] == 0);
  const auto othello = game::MakeGame("othello");
  const std::vector<std::string> expected = {"d3 c5", "d3 c5", "f5 d6 c3", "f5 d6 c3"};
  for (int i = 0; i < 4; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "out/game-%04d.sgf", i);
    const std::string text = testing::Slurp(dir / name);
    INFO(name << ":\n" << text);
    // Games 2k and 2k+1 play opening k, colours swapped.
    CHECK_THAT(r.games[i]["moves"].get<std::string>(), Catch::StartsWith(expected[i]));
    const Sgf sgf = ParseSgf(text);
    CHECK_THAT(i % 2 == 0 ? sgf.black : sgf.white, Catch::StartsWith("zerofarm"));
    auto state = othello->NewInitialState();
    for (const std::string& p : sgf.moves) {  // every move legal by zerofarm's rules, to the end
      const int a = SgfAction(*othello, p, othello->ActionCount() - 1);
      REQUIRE(state->IsLegal(a));
      state->Apply(a);
    }
    CHECK(state->IsTerminal());
  }
  std::cout << "match vs gtp-rhino: " << r.summary.dump() << "\n";
}

TEST_CASE("match ends a game in one line for each engine failure and finishes", "[multiprocess][match]") {
  const std::string fake = testing::SourceDir() + "/tests/support/fake_gtp_engine.py";
  for (const std::string mode : {"hang", "crash", "illegal", "nogtp"}) {
    DYNAMIC_SECTION(mode) {
      ScratchDir dir("zf-match-fake");
      const MatchRun r = Match(
          dir, {"--game", mode == "illegal" ? "othello" : "go", "--games", "2", "--opening-plies", "2",
                "--move-seconds", "0.5", "--engine", "python3 " + fake + " " + mode + " " + (dir / "pids")});
      INFO(r.err);
      REQUIRE(r.code == 0);
      CheckCounts(dir, r, 2);
      const std::string kind = mode == "nogtp" ? "no_gtp" : mode;
      CHECK(r.summary[kind] == 2);  // each game ended by the failure, the engine restarted for the next
      CHECK(r.summary["scored"] == 0);
      CHECK(r.summary["win_rate"].is_null());
      for (int i = 0; i < 2; ++i) CHECK(r.games[i]["end"] == kind);
      std::istringstream err(r.err);
      int lines = 0;
      for (std::string line; std::getline(err, line);)
        lines += line.find("not scored, engine failure (" + kind + ")") != std::string::npos;
      CHECK(lines == 2);
      if (mode == "hang") {  // the hung engine's whole process group was killed: its child too
        std::istringstream pids(testing::Slurp(dir / "pids"));
        int children = 0;
        for (int pid; pids >> pid; ++children) {
          const std::string stat = testing::Slurp("/proc/" + std::to_string(pid) + "/stat");
          CHECK((stat.empty() || stat.find(") Z") != std::string::npos));  // gone, or a zombie left to init
        }
        CHECK(children == 2);
      }
    }
  }
}

TEST_CASE("match refuses an engine it cannot run, in one line (exit 2)", "[multiprocess][match]") {
  ScratchDir dir("zf-match-bad");
  const MatchRun r = Match(dir, {"--game", "go", "--engine", "/nonexistent/engine --mode gtp"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("/nonexistent/engine: cannot run: No such file or directory"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}
