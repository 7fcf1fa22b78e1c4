// The farm end to end for the bigger games (gomoku, othello, go): the real
// binary on the CPU evaluator, then every recorded game replayed legally to
// its recorded result, and `inspect` drawing a position. Only this (parent)
// process asserts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "farm_check.h"
#include "spawn.h"
#include "test_paths.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard.h"

using namespace zerofarm;
using testing::HostDir;
using testing::kTestHost;
using testing::ScratchDir;
using testing::Spawned;

namespace {

// Runs `games` games of `name` with 2 workers and checks the shards; then
// draws ply 5 of the first game with `inspect`.
void RunAndCheck(const std::string& name, int simulations, int games) {
  ScratchDir dir("zf-games-farm");
  const std::string out = dir / "run";
  // --shard-positions keeps the game queues (and so the shared memory) small:
  // a queue slot holds a whole game of MaxGameLength() positions.
  Spawned farm({ZF_BINARY,
                "run",
                "--game",
                name,
                "--workers",
                "2",
                "--gpus",
                "0",
                "--games-per-worker",
                "4",
                "--simulations",
                std::to_string(simulations),
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
                "5",
                "--host-id",
                kTestHost},
               dir / "farm");
  const int code = farm.Wait(600);
  INFO(name << " farm stderr:\n" << farm.Stderr());
  REQUIRE(code == 0);
  CHECK_THAT(farm.Stdout(), Catch::Contains(std::to_string(games) + " written"));

  const auto g = game::MakeGame(name);
  const size_t fb = static_cast<size_t>(g->Shape().FeatureBytes());
  const int actions = g->ActionCount();
  std::vector<uint8_t> features(fb);
  std::vector<int> legal;
  const std::vector<std::string> shards = io::ListShards(HostDir(out));
  REQUIRE(!shards.empty());
  uint64_t total = 0;
  for (const std::string& path : shards) {
    io::ShardReader shard(path);
    const io::ShardMeta& meta = shard.meta();
    REQUIRE(meta.game == name);
    REQUIRE(meta.planes == g->Shape().planes);
    REQUIRE(meta.height == g->Shape().height);
    REQUIRE(meta.width == g->Shape().width);
    REQUIRE(meta.actions == actions);
    const auto rows = shard.ReadAllPositions();
    for (const io::ShardGame& game : shard.ReadGames()) {
      INFO("game " << game.game_id << " in " << path);
      ++total;
      REQUIRE(game.length == static_cast<int>(game.moves.size()));
      // The farm's default random opening: moves without rows, replayed first.
      const int opening = game.length - game.position_count;
      REQUIRE(opening >= 0);
      REQUIRE(opening <= proc::SelfPlaySearch().random_opening_plies);
      REQUIRE(game.length <= g->MaxGameLength());
      auto state = g->NewInitialState();
      for (int i = 0; i < opening; ++i) state->Apply(game.moves[i]);
      for (int i = opening; i < game.length; ++i) {
        INFO("ply " << i);
        const size_t row = static_cast<size_t>(game.first_position + i - opening);
        REQUIRE(rows.game_id[row] == game.game_id);
        REQUIRE(rows.ply[row] == i);
        REQUIRE_FALSE(state->IsTerminal());
        state->EncodeFeatures(features.data());
        REQUIRE(std::equal(features.begin(), features.end(), rows.features.begin() + row * fb));
        state->LegalActions(&legal);
        double sum = 0;
        for (int a = 0; a < actions; ++a) {
          const float p = rows.policy[row * actions + a];
          if (!std::binary_search(legal.begin(), legal.end(), a)) REQUIRE(p == 0.0f);
          sum += p;
        }
        REQUIRE(sum == Approx(1.0).epsilon(1e-4));
        const int mover = state->CurrentPlayer();
        REQUIRE(rows.z[row] == (game.result < 0 ? 0.0f : game.result == mover ? 1.0f : -1.0f));
        REQUIRE(state->IsLegal(game.moves[i]));
        state->Apply(game.moves[i]);
      }
      REQUIRE(state->IsTerminal());
      REQUIRE(state->Winner() == game.result);
    }
  }
  CHECK(total == static_cast<uint64_t>(games));

  // inspect draws a searched position of the first game longer than 5 plies: its first searched ply
  // (after the default random opening), at least 5.
  std::string shown_shard;
  io::ShardGame shown;
  for (const std::string& path : shards) {
    for (const io::ShardGame& game : io::ShardReader(path).ReadGames()) {
      if (shown_shard.empty() && game.length > 5) {
        shown_shard = path;
        shown = game;
      }
    }
  }
  REQUIRE(!shown_shard.empty());
  const int ply = std::max(5, shown.length - shown.position_count);
  REQUIRE(ply < shown.length);
  Spawned inspect({ZF_BINARY, "inspect", shown_shard, "--game-id", std::to_string(shown.game_id), "--ply",
                   std::to_string(ply)},
                  dir / "inspect");
  const int inspect_code = inspect.Wait(120);
  INFO("inspect stdout:\n" << inspect.Stdout() << "\ninspect stderr:\n" << inspect.Stderr());
  REQUIRE(inspect_code == 0);
  const std::vector<int> before(shown.moves.begin(), shown.moves.begin() + ply);
  const std::string text = inspect.Stdout();
  CHECK_THAT(text, Catch::Contains("position after " + std::to_string(ply) + " plies"));
  CHECK_THAT(text, Catch::Contains(g->Replay(before)->ToString()));
  CHECK_THAT(text, Catch::Contains("policy target"));
  CHECK_THAT(text, Catch::Contains("played: " + g->ActionToString(shown.moves[ply])));
}

}  // namespace

TEST_CASE("a farm plays gomoku games that replay to their results", "[multiprocess][farm][games][slow]") {
  RunAndCheck("gomoku", 8, 4);
}

TEST_CASE("a farm plays standard-rule gomoku games", "[multiprocess][farm][games][slow]") {
  RunAndCheck("gomoku-standard", 8, 4);
}

TEST_CASE("a farm plays othello games (with passes) that replay to their results",
          "[multiprocess][farm][games]") {
  RunAndCheck("othello", 8, 4);
}

TEST_CASE("a farm plays 9x9 go games that replay to their results", "[multiprocess][farm][games][slow]") {
  RunAndCheck("go", 4, 4);
}

TEST_CASE("a farm plays 7x7 go games (komi 4.5)", "[multiprocess][farm][games]") { RunAndCheck("go7", 4, 4); }

TEST_CASE("a farm plays connect4-threats games, its six planes in the shards",
          "[multiprocess][farm][games]") {
  RunAndCheck("connect4-threats", 16, 8);
}

TEST_CASE("a farm plays breakthrough games (768 actions and one symmetry)", "[multiprocess][farm][games]") {
  RunAndCheck("breakthrough", 8, 4);
}

TEST_CASE(
    "check-game runs the conformance suite on a game and refuses an unknown game in one line with exit 2",
    "[multiprocess][games]") {
  ScratchDir dir("zf-check-game");
  Spawned good({ZF_BINARY, "check-game", "breakthrough", "--playouts", "4"}, dir / "good");
  const int good_code = good.Wait(300);
  INFO("stdout:\n" << good.Stdout() << "\nstderr:\n" << good.Stderr());
  CHECK(good_code == 0);
  CHECK_THAT(good.Stdout(),
             Catch::Contains("breakthrough: all checks passed (12 checks, 4 random games each)"));

  Spawned bad({ZF_BINARY, "check-game", "chess"}, dir / "bad");
  const int bad_code = bad.Wait(60);
  const std::string err = bad.Stderr();
  INFO("stderr:\n" << err);
  CHECK(bad_code == 2);
  CHECK_THAT(err, Catch::Contains("unknown game 'chess'"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}
