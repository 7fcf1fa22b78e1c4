// `zerofarm eval`'s measures with known answers: an evaluator that knows the
// exact solution makes no move error and wins the arena; one that prefers
// the worst moves errs on most positions.
#include "zerofarm/learn/strength.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <map>

#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/game/connect4_solver.h"
#include "zerofarm/io/files.h"

using namespace zerofarm;

namespace {

// Logits = (sign) x the solver's score of each move, value = (sign) x the
// exact result: the position is rebuilt from its feature planes.
class OracleEvaluator final : public eval::Evaluator {
 public:
  explicit OracleEvaluator(float sign) : sign_(sign) {}
  void Evaluate(const eval::LeafChunk* chunks, int num_chunks) override {
    for (int c = 0; c < num_chunks; ++c)
      for (int i = 0; i < chunks[c].count; ++i) {
        const uint8_t* f = chunks[c].features + i * 126;
        const bool x_to_move = f[84] == 1;
        std::string text;
        for (int r = 0; r < 6; ++r) {
          for (int col = 0; col < 7; ++col) {
            const int cell = r * 7 + col;
            text += f[cell] ? (x_to_move ? 'X' : 'O') : f[42 + cell] ? (x_to_move ? 'O' : 'X') : '.';
          }
          text += '\n';
        }
        const auto state = game_.ParseBoard(text);
        const auto& s = static_cast<const game::Connect4State&>(*state);
        const auto scores = solver_.ScoreMoves(s);
        for (int a = 0; a < 7; ++a)
          chunks[c].policy[i * 7 + a] =
              scores[a] == game::Connect4Solver::kIllegal ? -50.0f : sign_ * scores[a];
        const int v = solver_.SolveWeak(s);
        chunks[c].value[i] = sign_ * static_cast<float>(v);
      }
  }
  uint32_t ModelVersion() const override { return 1; }
  const eval::NetConfig& Config() const override { return config_; }
  std::string Describe() const override { return "oracle"; }

 private:
  float sign_;
  game::Connect4Game game_;
  game::Connect4Solver solver_{20};
  eval::NetConfig config_{"connect4", 3, 6, 7, 7, 1, 1, 1};
};

// Exact tic-tac-toe by negamax on the feature planes (own stones, the
// opponent's): logits = 5 x the exact result of each move, value = the
// position's result for the side to move.
class TicTacToeOracle final : public eval::Evaluator {
 public:
  void Evaluate(const eval::LeafChunk* chunks, int num_chunks) override {
    for (int c = 0; c < num_chunks; ++c)
      for (int i = 0; i < chunks[c].count; ++i) {
        const uint8_t* f = chunks[c].features + i * 27;
        int own = 0, opp = 0;
        for (int k = 0; k < 9; ++k) {
          own |= f[k] << k;
          opp |= f[9 + k] << k;
        }
        for (int a = 0; a < 9; ++a)
          chunks[c].policy[i * 9 + a] = ((own | opp) >> a & 1) ? -50.0f : 5.0f * MoveValue(own, opp, a);
        chunks[c].value[i] = static_cast<float>(Value(own, opp));
      }
  }
  uint32_t ModelVersion() const override { return 1; }
  const eval::NetConfig& Config() const override { return config_; }
  std::string Describe() const override { return "tic-tac-toe oracle"; }

 private:
  static bool Three(int m) {
    static const int lines[8] = {7, 56, 448, 73, 146, 292, 273, 84};
    for (int l : lines)
      if ((m & l) == l) return true;
    return false;
  }
  // Result for the side to move (own) with both sides perfect.
  static int Value(int own, int opp) {
    if (Three(opp)) return -1;
    if ((own | opp) == 511) return 0;
    int best = -1;
    for (int a = 0; a < 9; ++a)
      if (!((own | opp) >> a & 1)) best = std::max(best, MoveValue(own, opp, a));
    return best;
  }
  static int MoveValue(int own, int opp, int a) { return -Value(opp, own | 1 << a); }
  eval::NetConfig config_{"tictactoe", 3, 3, 3, 9, 1, 1, 1};
};

std::vector<learn::PonsPosition> Rated(const std::string& file, int limit) {
  auto positions = learn::ReadPonsFile(testing::ReferenceFile("connect4/" + file), limit);
  learn::RatePositions(&positions, "");
  return positions;
}

}  // namespace

TEST_CASE("move error: an exact evaluator errs nowhere, a perverse one almost everywhere", "[strength]") {
  const auto positions = Rated("Test_L3_R1", 60);
  REQUIRE(positions.size() == 60);
  game::Connect4Game game;
  mcts::SearchConfig search;
  search.simulations = 0;
  OracleEvaluator oracle(1.0f);
  const learn::MoveErrorResult good = learn::MoveError(game, oracle, positions, search);
  CHECK(good.positions == 60);
  CHECK(good.net_errors == 0);
  CHECK(good.net_outcome_errors == 0);
  // Its value head reads every exact outcome; the perverse one (value negated) only the draws.
  int outcomes[3] = {0, 0, 0};
  for (const auto& p : positions) ++outcomes[p.score > 0 ? 2 : p.score == 0 ? 1 : 0];
  REQUIRE(outcomes[0] > 0);
  REQUIRE(outcomes[2] > 0);
  CHECK(good.value_agree == 60);
  CHECK(good.value_count[0] == outcomes[0]);
  CHECK(good.value_count[2] == outcomes[2]);
  CHECK(good.value_mean[0] == Approx(-1.0));
  CHECK(good.value_mean[2] == Approx(1.0));
  CHECK(learn::MoveErrorCsvFields(good) == "60,0,0,0,0,0,1");
  OracleEvaluator perverse(-1.0f);
  const learn::MoveErrorResult bad = learn::MoveError(game, perverse, positions, search);
  CHECK(bad.net_errors > 30);
  CHECK(bad.net_outcome_errors <= bad.net_errors);
  CHECK(bad.value_agree == outcomes[1]);
  CHECK(bad.value_mean[2] == Approx(-1.0));
  // MCTS on top of the exact evaluator also finds optimal moves.
  search.simulations = 50;
  const learn::MoveErrorResult mcts = learn::MoveError(game, oracle, positions, search);
  CHECK(mcts.mcts_errors <= 3);
  CHECK(mcts.mcts_outcome_errors == 0);

  // Each position's moves, in order: the rates are counted from them.
  REQUIRE(bad.moves.size() == positions.size());
  REQUIRE(mcts.moves.size() == positions.size());
  int bad_errors = 0, mcts_errors = 0;
  for (size_t i = 0; i < positions.size(); ++i) {
    const std::string& rating = positions[i].rating;
    INFO("position " << positions[i].moves << " rating " << rating);
    CHECK(rating[static_cast<size_t>(good.moves[i].net_move)] == '2');
    CHECK(good.moves[i].net_value == Approx(positions[i].score > 0 ? 1 : positions[i].score < 0 ? -1 : 0));
    CHECK(bad.moves[i].net_value == Approx(-good.moves[i].net_value));
    CHECK(bad.moves[i].mcts_move == -1);  // no search at 0 simulations
    bad_errors += rating[static_cast<size_t>(bad.moves[i].net_move)] != '2';
    REQUIRE(mcts.moves[i].mcts_move >= 0);
    mcts_errors += rating[static_cast<size_t>(mcts.moves[i].mcts_move)] != '2';
  }
  CHECK(bad_errors == bad.net_errors);
  CHECK(mcts_errors == mcts.mcts_errors);
  // Its CSV row: columns 1-based, as Pons writes them; a file name cannot break the row.
  learn::PonsPosition p{"4455", -2, "2210--0"};
  CHECK(learn::PositionCsvRow("Test,X", p, {1, 0.5f, 3, -0.25f}) ==
        "Test_X,4455,-2,2210--0,2,2,0.5,4,0,-0.25");
  CHECK(learn::PositionCsvRow("T", p, {6, 1.0f, -1, 0.0f}) == "T,4455,-2,2210--0,7,0,1,,,");
  CHECK(std::string(learn::kPositionCsvColumns).find(",net_move,net_verdict,net_value,mcts_move,") !=
        std::string::npos);
}

TEST_CASE("move error: verdicts are cached, and a wrong score in the file is caught", "[strength]") {
  testing::ScratchDir dir("zf-strength");
  const std::string cache = dir / "cache.rated";
  auto a = learn::ReadPonsFile(testing::ReferenceFile("connect4/Test_L3_R1"), 20);
  learn::RatePositions(&a, cache);
  std::ifstream in(cache);
  int lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  CHECK(lines == 20);
  // A second rating reads the cache: identical verdicts.
  auto b = learn::ReadPonsFile(testing::ReferenceFile("connect4/Test_L3_R1"), 20);
  learn::RatePositions(&b, cache);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].rating == b[i].rating);

  // A line whose score is off by one: no move scores it.
  std::ofstream(dir / "wrong") << a[0].moves << " " << a[0].score + 1 << "\n";
  auto wrong = learn::ReadPonsFile(dir / "wrong");
  CHECK_THROWS_WITH(learn::RatePositions(&wrong, ""), Catch::Contains("the file's score is wrong"));
  std::ofstream(dir / "garbage") << "44x5 3\n";
  CHECK_THROWS_AS(learn::ReadPonsFile(dir / "garbage"), ConfigError);
  CHECK_THROWS_AS(learn::ReadPonsFile(dir / "missing"), ConfigError);
}

TEST_CASE("rating on several threads gives one thread's verdicts, and a wrong line stops it", "[strength]") {
  testing::ScratchDir dir("zf-strength");
  const std::string file = testing::ReferenceFile("connect4/Test_L2_R1");
  auto one = learn::ReadPonsFile(file, 40);
  learn::RatePositions(&one, dir / "one.rated");
  auto four = learn::ReadPonsFile(file, 40);
  int calls = 0, last_done = -1;
  learn::RatePositions(
      &four, dir / "four.rated", {},
      [&](int done, int total) {
        if (calls++ == 0) CHECK(done == 0);  // once before the solver starts: `zerofarm eval` says so
        CHECK(total == 40);
        CHECK(done > last_done);
        last_done = done;
      },
      4);
  for (size_t i = 0; i < one.size(); ++i) CHECK(four[i].rating == one[i].rating);
  CHECK(io::ReadTextFile(dir / "four.rated") ==
        io::ReadTextFile(dir / "one.rated"));  // the same cache, in the same order
  CHECK(calls >= 3);                           // at 0, 25 and 40
  CHECK(last_done == 40);
  // Every verdict cached: nothing to rate, nothing to announce; one call, at the end.
  auto again = learn::ReadPonsFile(file, 40);
  std::vector<int> seen;
  learn::RatePositions(
      &again, dir / "four.rated", {}, [&](int done, int) { seen.push_back(done); }, 2);
  CHECK(seen == std::vector<int>{40});

  // A line whose score is wrong, among good ones: an error, and the good verdicts made are kept.
  {
    std::ofstream out(dir / "mixed");
    for (size_t i = 0; i < 12; ++i) out << one[i].moves << ' ' << one[i].score + (i == 6 ? 1 : 0) << '\n';
  }
  auto mixed = learn::ReadPonsFile(dir / "mixed");
  CHECK_THROWS_WITH(learn::RatePositions(&mixed, dir / "mixed.rated", {}, {}, 3),
                    Catch::Contains("the file's score is wrong"));
  CHECK_FALSE(io::ReadTextFile(dir / "mixed.rated").empty());
}

TEST_CASE("arena: perfect tic-tac-toe never loses, and draws against itself", "[strength]") {
  auto game = game::MakeGame("tictactoe");
  TicTacToeOracle oracle;
  auto random = eval::MakeRandomEvaluator(eval::NetConfig{"tictactoe", 3, 3, 3, 9, 1, 1, 1}, 5);
  mcts::SearchConfig search;
  search.simulations = 16;
  // One random opening ply: every first move of tic-tac-toe is a draw with perfect play.
  const learn::ArenaResult r = learn::Arena(*game, oracle, *random, 20, search, 1, 9);
  CHECK(r.games == 20);
  CHECK(r.wins + r.draws + r.losses == 20);
  CHECK(r.losses == 0);
  CHECK(r.wins >= 5);
  CHECK(r.Score() > 0.6);
  CHECK(r.Elo() > 0);
  const auto [low, high] = r.Interval95();
  CHECK(low < r.Score());
  CHECK(high > r.Score());
  CHECK(low > 0.4);
  CHECK(high <= 1.0);
  const learn::ArenaResult back = learn::Arena(*game, *random, oracle, 20, search, 1, 9);
  CHECK(back.wins == 0);
  CHECK(back.Score() < 0.4);
  // Perfect play against itself, no random openings: every game a draw.
  TicTacToeOracle twin;
  const learn::ArenaResult same = learn::Arena(*game, oracle, twin, 6, search, 0, 9);
  CHECK(same.draws == 6);
  CHECK(same.Score() == 0.5);
  CHECK(same.Elo() == Approx(0.0));
  // Wilson's interval stays inside [0, 1] and is not empty at a perfect score.
  learn::ArenaResult perfect;
  perfect.games = perfect.wins = 40;
  CHECK(perfect.Interval95().first == Approx(0.912).margin(0.002));
  CHECK(perfect.Interval95().second == 1.0);
}

namespace {
// The verdicts shipped in data/connect4 against a fresh solver, every
// `step`-th line, and complete: every line of the Pons file has one.
void CheckShipped(const std::string& file, int step) {
  const std::string shipped = testing::SourceDir() + "/data/connect4/" + file + ".rated";
  std::ifstream in(shipped);
  REQUIRE(in.good());
  std::map<std::string, std::pair<int, std::string>> verdicts;
  std::string moves, rating;
  int score = 0;
  while (in >> moves >> score >> rating) verdicts[moves] = {score, rating};
  const auto positions = learn::ReadPonsFile(testing::ReferenceFile("connect4/" + file));
  game::Connect4Game game;
  game::Connect4Solver solver;
  int checked = 0;
  for (size_t i = 0; i < positions.size(); ++i) {
    const auto& p = positions[i];
    INFO(file << " line " << i + 1 << ": " << p.moves);
    const auto it = verdicts.find(p.moves);
    REQUIRE(it != verdicts.end());
    CHECK(it->second.first == p.score);
    if (i % step != 0) continue;
    const auto state = game.Replay(game.ParseMoves(p.moves));
    const auto fresh = solver.RateMoves(static_cast<const game::Connect4State&>(*state), p.score);
    CHECK(it->second.second == std::string(fresh.begin(), fresh.end()));
    ++checked;
  }
  CHECK(checked > 0);
}
}  // namespace

TEST_CASE("the solver verdicts shipped for Test_L2_R1 are complete and right", "[strength]") {
  CheckShipped("Test_L2_R1", 10);
}

TEST_CASE("the solver verdicts shipped for Test_L1_R1 are complete and right", "[strength][slow]") {
  CheckShipped("Test_L1_R1", 100);
}

TEST_CASE("the solver verdicts shipped for Test_L3_R1 are complete and right", "[strength]") {
  CheckShipped("Test_L3_R1", 10);
}

// Test_L1_R3 (opening, hard) costs the solver about 14 s of one core a
// position, so a fresh solver checks one line of its thousand; all of them
// must be Pons's positions with Pons's scores.
TEST_CASE("the solver verdicts shipped for Test_L1_R3 are complete and right", "[strength][slow]") {
  CheckShipped("Test_L1_R3", 1000);
}
