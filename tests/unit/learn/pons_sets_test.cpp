// Sets of Pons's kinds made here (pons_sets.h): the kinds read off Pons's own
// files, the cheap kind test against the exact score, a made set that is the
// same for any threads and resumes, and the sets shipped in data/connect4/made.
#include "zerofarm/learn/pons_sets.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/io/files.h"

using namespace zerofarm;

namespace {

const char* const kPonsFiles[] = {"Test_L1_R1", "Test_L1_R3", "Test_L2_R1", "Test_L3_R1"};
const char* const kKinds[] = {"L1_R1", "L1_R2", "L1_R3", "L2_R1", "L2_R2", "L3_R1"};

game::Connect4State StateOf(const std::string& moves) {
  const game::Connect4Game game;
  return static_cast<const game::Connect4State&>(*game.Replay(game.ParseMoves(moves)));
}

// Whether the side to move can complete a four at once.
bool WinsAtOnce(const game::Connect4State& s) {
  std::vector<int> legal;
  s.LegalActions(&legal);
  for (const int a : legal) {
    game::Connect4State next = s;
    next.Apply(a);
    if (next.Winner() >= 0) return true;
  }
  return false;
}

bool KindHolds(const learn::PonsSetKind& kind, const learn::PonsPosition& p) {
  const int stones = static_cast<int>(p.moves.size()), left = learn::PliesLeft(stones, p.score);
  return stones >= kind.min_stones && stones <= kind.max_stones && left >= kind.min_left &&
         left <= kind.max_left;
}

// The keys of Pons's four files: what the shipped made sets leave out.
std::unordered_set<uint64_t> PonsKeys() {
  std::unordered_set<uint64_t> keys;
  for (const char* f : kPonsFiles)
    for (const auto& p : learn::ReadPonsFile(testing::ReferenceFile(std::string("connect4/") + f)))
      keys.insert(learn::MirrorFreeKey(p.moves));
  return keys;
}

}  // namespace

TEST_CASE("Pons's own files are of the kinds their names say", "[strength][pons-sets]") {
  for (const char* f : kPonsFiles) {
    const learn::PonsSetKind kind = learn::ParsePonsSetKind(f);
    for (const auto& p : learn::ReadPonsFile(testing::ReferenceFile(std::string("connect4/") + f))) {
      INFO(f << ": " << p.moves << ' ' << p.score << ", " << learn::PliesLeft(p.moves.size(), p.score)
             << " plies left");
      REQUIRE(KindHolds(kind, p));
    }
  }
  // The solver's file comment: "4455" scores 18, a win with the side to move's 4th stone, ply 7.
  CHECK(learn::PliesLeft(4, 18) == 3);
  CHECK(learn::PliesLeft(11, -15) == 2);  // "44455554221": the first player wins with its 7th stone, ply 13
  CHECK(learn::PliesLeft(20, 0) == 22);
}

TEST_CASE("a kind of Pons set is parsed, and an impossible or unknown one refused", "[strength][pons-sets]") {
  const learn::PonsSetKind k = learn::ParsePonsSetKind("Test_L1_R2");
  CHECK(k.name == "L1_R2");
  CHECK(k.min_stones == 1);
  CHECK(k.max_stones == 14);
  CHECK(k.min_left == 15);
  CHECK(k.max_left == 28);
  CHECK(learn::ParsePonsSetKind("L3_R1").max_stones == 41);
  for (const char* bad : {"L3_R2", "L3_R3", "L2_R3"})
    CHECK_THROWS_WITH(learn::ParsePonsSetKind(bad), Catch::Contains("no position is of kind"));
  for (const char* bad : {"L4_R1", "L1R1", "", "l1_r1", "Test_L1_R1x"})
    CHECK_THROWS_AS(learn::ParsePonsSetKind(bad), ConfigError);
}

TEST_CASE("the kind test agrees with the exact score", "[strength][pons-sets]") {
  game::Connect4Solver solver;
  for (const char* f : {"Test_L2_R1", "Test_L3_R1"}) {
    const auto positions = learn::ReadPonsFile(testing::ReferenceFile(std::string("connect4/") + f), 40);
    for (const auto& p : positions)
      for (const char* k : kKinds) {
        INFO(f << ": " << p.moves << ' ' << p.score << " against " << k);
        const learn::PonsSetKind kind = learn::ParsePonsSetKind(k);
        CHECK(learn::IsOfKind(kind, solver, StateOf(p.moves)) == KindHolds(kind, p));
      }
  }
}

TEST_CASE("a made set is the same for any threads, resumes from its work file and leaves out what it is told",
          "[strength][pons-sets]") {
  testing::ScratchDir dir("zf-pons-sets");
  learn::PonsSetRequest r;
  r.kind = learn::ParsePonsSetKind("L3_R1");
  r.count = 40;
  r.seed = 5;
  const auto one = learn::MakePonsSet(r);
  REQUIRE(one.size() == 40);
  r.threads = 3;
  r.work_file = dir / "work";
  const auto three = learn::MakePonsSet(r);
  REQUIRE(three.size() == one.size());
  game::Connect4Solver solver;
  std::set<uint64_t> keys;
  for (size_t i = 0; i < one.size(); ++i) {
    INFO(one[i].moves);
    CHECK(three[i].moves == one[i].moves);
    CHECK(three[i].score == one[i].score);
    CHECK(three[i].rating == one[i].rating);
    const auto s = StateOf(one[i].moves);
    CHECK(solver.Solve(s) == one[i].score);  // solved right, and of the kind
    CHECK(KindHolds(r.kind, one[i]));
    const auto fresh = solver.RateMoves(s, one[i].score);
    CHECK(one[i].rating == std::string(fresh.begin(), fresh.end()));
    CHECK_FALSE(WinsAtOnce(s));  // nothing to measure where a four is one move away
    CHECK(keys.insert(learn::MirrorFreeKey(one[i].moves)).second);  // no position twice, nor its mirror
  }
  // Resumed: the work file answers every candidate, so a garbled line and a
  // planted wrong score among the rest change nothing that is checked later.
  const std::string work = io::ReadTextFile(r.work_file);
  CHECK(work.find(one[0].moves + ' ' + std::to_string(one[0].score) + ' ' + one[0].rating) !=
        std::string::npos);
  io::WriteTextFileAtomically(r.work_file, "not a line\n" + work);
  r.threads = 1;
  const auto resumed = learn::MakePonsSet(r);
  REQUIRE(resumed.size() == one.size());
  for (size_t i = 0; i < one.size(); ++i) CHECK(resumed[i].moves == one[i].moves);
  // A work file that is a link is refused, not followed (a planted file could give wrong verdicts).
  std::filesystem::create_symlink(r.work_file, dir / "link");
  r.work_file = dir / "link";
  CHECK_THROWS_AS(learn::MakePonsSet(r), ConfigError);
  // Left out: the first five and their mirrors.
  for (int i = 0; i < 5; ++i) r.exclude.insert(learn::MirrorFreeKey(one[i].moves));
  r.work_file.clear();
  const auto without = learn::MakePonsSet(r);
  for (const auto& p : without) CHECK(r.exclude.count(learn::MirrorFreeKey(p.moves)) == 0);
  CHECK(without[0].moves == one[5].moves);
}

namespace {
// A made set shipped in data/connect4/made: the first `regenerate` lines are
// what MakePonsSet makes from seed 1 without Pons's positions, and the
// verdicts in data/connect4/NAME.rated cover every line, every `step`-th
// checked against a fresh solver.
void CheckMade(const std::string& kind, int regenerate, int step) {
  const std::string name = "Made_" + kind;
  const auto shipped = learn::ReadPonsFile(testing::SourceDir() + "/data/connect4/made/" + name);
  REQUIRE(shipped.size() == 1000);
  if (regenerate > 0) {
    learn::PonsSetRequest r;
    r.kind = learn::ParsePonsSetKind(kind);
    r.count = regenerate;
    r.seed = 1;
    r.exclude = PonsKeys();
    r.threads = 2;
    const auto made = learn::MakePonsSet(r);
    for (int i = 0; i < regenerate; ++i) {
      INFO(name << " line " << i + 1);
      CHECK(made[i].moves == shipped[i].moves);
      CHECK(made[i].score == shipped[i].score);
    }
  }
  std::ifstream in(testing::SourceDir() + "/data/connect4/" + name + ".rated");
  REQUIRE(in.good());
  std::map<std::string, std::pair<int, std::string>> verdicts;
  std::string moves, rating;
  int score = 0;
  while (in >> moves >> score >> rating) verdicts[moves] = {score, rating};
  CHECK(verdicts.size() == shipped.size());
  const learn::PonsSetKind k = learn::ParsePonsSetKind(kind);
  const std::unordered_set<uint64_t> pons = PonsKeys();
  game::Connect4Solver solver;
  for (size_t i = 0; i < shipped.size(); ++i) {
    const auto& p = shipped[i];
    INFO(name << " line " << i + 1 << ": " << p.moves);
    CHECK(KindHolds(k, p));
    CHECK(pons.count(learn::MirrorFreeKey(p.moves)) == 0);
    const auto it = verdicts.find(p.moves);
    REQUIRE(it != verdicts.end());
    CHECK(it->second.first == p.score);
    if (i % step != 0) continue;
    const auto fresh = solver.RateMoves(StateOf(p.moves), p.score);
    CHECK(it->second.second == std::string(fresh.begin(), fresh.end()));
  }
}
}  // namespace

TEST_CASE("the made sets of the middle and the end are what --make-set makes, their verdicts right",
          "[strength][pons-sets]") {
  for (const char* kind : {"L2_R1", "L2_R2", "L3_R1"}) CheckMade(kind, 60, 10);
}

TEST_CASE("the made sets of the opening are what --make-set makes, their verdicts right",
          "[strength][pons-sets][slow]") {
  CheckMade("L1_R1", 20, 50);
  CheckMade("L1_R2", 10, 100);
}
