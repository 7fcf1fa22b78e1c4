// The trainer's data window, state file, checkpoints and resume, on real
// shards written by io::ShardWriter from in-process self-play.
#include "zerofarm/learn/train.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/inprocess_selfplay.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/weights_file.h"

using namespace zerofarm;
namespace fs = std::filesystem;

namespace {

// `shards` tic-tac-toe shards of `games` games each in DIR/shards/SUB.
int64_t WriteShards(const std::string& dir, const std::string& sub, int shards, int games, uint64_t seed) {
  const auto game = game::MakeGame("tictactoe");
  const std::string out = dir + "/shards" + (sub.empty() ? "" : "/" + sub);
  fs::create_directories(out);
  io::ShardMeta meta = io::ShardMetaForGame(*game);
  meta.run_id = "test";
  io::ShardWriter writer(out, "shard", meta);
  auto net = eval::MakeRandomEvaluator(eval::NetConfig{"tictactoe", 3, 3, 3, 9, 1, 1, 1}, seed);
  mcts::SearchConfig search;
  search.simulations = 8;
  int64_t positions = 0;
  for (int s = 0; s < shards; ++s) {
    eval::SelfPlayOptions o;
    o.total_games = o.concurrent_games = games;
    o.seed = seed + s;
    eval::RunInProcessSelfPlay(*game, *net, search, o, [&](mcts::GameRecord&& g) { writer.Add(g); });
    positions += static_cast<int64_t>(writer.PendingPositions());
    REQUIRE_FALSE(writer.Flush(io::NextShardIndex(out, "shard"), {}).empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // distinct modification times
  }
  return positions;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Row `row`'s value target in a window of tic-tac-toe shards.
float TargetOf(const learn::ShardWindow& window, int64_t row) {
  std::vector<uint8_t> features(27);
  std::vector<float> policy(9);
  uint8_t full = 0;
  float z = 0;
  window.Row(row, features.data(), policy.data(), &z, &full);
  return z;
}

// A 1-block x 8-filter trainer on `run` that stops instead of waiting for data.
learn::TrainConfig TinyTrainer(const std::string& run) {
  learn::TrainConfig c;
  c.run = run;
  c.blocks = 1;
  c.filters = 8;
  c.batch = 16;
  c.window = 1000;
  c.min_positions = 10;
  c.wait = false;
  c.progress = false;
  return c;
}

}  // namespace

TEST_CASE("trainer state text round-trips and bad text is refused", "[train]") {
  learn::TrainState s;
  s.version = 12;
  s.step = 3400;
  s.samples = 870400;
  const learn::TrainState t = learn::TrainState::FromText(s.ToText());
  CHECK(t.version == 12);
  CHECK(t.step == 3400);
  CHECK(t.samples == 870400);
  CHECK_THROWS_AS(learn::TrainState::FromText("version=1\nstep=x\nsamples=2\n"), ConfigError);
  CHECK_THROWS_AS(learn::TrainState::FromText("version=1\n"), ConfigError);
  CHECK_THROWS_AS(learn::TrainState::FromText("colour=blue\nstep=1\nsamples=2\n"), ConfigError);
  // paced_from is optional, and lies within the samples drawn.
  const auto paced = learn::TrainState::FromText("version=1\nstep=2\nsamples=512\npaced_from=256\n");
  CHECK(paced.paced_from == 256);
  CHECK(learn::TrainState::FromText(paced.ToText()).paced_from == 256);
  CHECK_THROWS_AS(learn::TrainState::FromText("version=1\nstep=2\nsamples=512\npaced_from=600\n"),
                  ConfigError);
  CHECK_THROWS_AS(learn::TrainState::FromText("version=1\nstep=2\npaced_from=0\n"), ConfigError);
}

TEST_CASE("the shard window holds the newest shards of every host directory", "[train]") {
  testing::ScratchDir dir("zf-window");
  const int64_t a = WriteShards(dir.path(), "", 2, 10, 1);
  const int64_t b = WriteShards(dir.path(), "host-1", 2, 10, 50);
  CHECK(learn::RunShards(dir.path()).size() == 4);
  {
    learn::ShardWindow all(dir.path(), 1'000'000);
    CHECK(all.Refresh() == 4);
    CHECK(all.Positions() == a + b);
    CHECK(all.ProducedPositions() == a + b);
    CHECK(all.GameName() == "tictactoe");
    CHECK(all.Refresh() == 0);  // nothing new
  }
  // A window of one position keeps only the newest shard (host-1's second).
  learn::ShardWindow one(dir.path(), 1);
  one.Refresh();
  CHECK(one.Shards() == 1);
  CHECK(one.ProducedPositions() == a + b);
  const auto newest = io::ShardReader(dir / "shards/host-1/shard-000001.h5").ReadAllPositions();
  CHECK(one.Positions() == static_cast<int64_t>(newest.count));
  std::vector<uint8_t> f(27);
  std::vector<float> p(9);
  float z = 0;
  uint8_t full = 0;
  one.Row(0, f.data(), p.data(), &z, &full);
  CHECK(std::equal(f.begin(), f.end(), newest.features.begin()));
  CHECK(z == newest.z[0]);
  CHECK(full == 1);
  CHECK_THROWS(one.Row(one.Positions(), f.data(), p.data(), &z, &full));

  // A new shard enters; a corrupt one is skipped, not fatal.
  std::ofstream(dir / "shards/host-1/shard-000009.h5") << "not hdf5";
  WriteShards(dir.path(), "host-2", 1, 5, 99);
  CHECK(one.Refresh() == 1);
  CHECK(one.Shards() == 1);
}

TEST_CASE("a window filled in one refresh holds what one filled shard by shard holds", "[train]") {
  // One refresh reads only the shards the window keeps and counts the older
  // ones from their metadata (a resumed trainer on a long run).
  testing::ScratchDir dir("zf-window");
  learn::ShardWindow gradual(dir.path(), 25, 0.9, 0.5);
  int64_t produced = 0;
  for (int s = 0; s < 6; ++s) {
    produced += WriteShards(dir.path(), "", 1, 4, 20 + s);
    gradual.Refresh();
  }
  learn::ShardWindow at_once(dir.path(), 25, 0.9, 0.5);
  CHECK(at_once.Refresh() == 6);
  CHECK(at_once.ProducedPositions() == produced);
  CHECK(gradual.ProducedPositions() == produced);
  REQUIRE(at_once.Shards() == gradual.Shards());
  CHECK(at_once.Shards() < 6);  // the window dropped some
  REQUIRE(at_once.Positions() == gradual.Positions());
  CHECK(at_once.Positions() >= 25);
  std::vector<uint8_t> f1(27), f2(27);
  std::vector<float> p1(9), p2(9);
  for (int64_t i = 0; i < at_once.Positions(); ++i) {
    float z1 = 0, z2 = 0;
    uint8_t full1 = 0, full2 = 0;
    at_once.Row(i, f1.data(), p1.data(), &z1, &full1);
    gradual.Row(i, f2.data(), p2.data(), &z2, &full2);
    CHECK(f1 == f2);
    CHECK(p1 == p2);
    CHECK(z1 == z2);
  }
}

TEST_CASE("a value discount shrinks each row's value target by its distance to the game's end", "[train]") {
  testing::ScratchDir dir("zf-window");
  WriteShards(dir.path(), "", 1, 12, 5);
  const std::string path = dir / "shards/shard-000000.h5";
  const io::ShardReader reader(path);
  const auto rows = reader.ReadAllPositions();
  learn::ShardWindow plain(dir.path(), 1'000'000), discounted(dir.path(), 1'000'000, 0.8);
  plain.Refresh();
  discounted.Refresh();
  REQUIRE(discounted.Positions() == static_cast<int64_t>(rows.count));
  int decisive = 0, checked = 0;
  for (const io::ShardGame& g : reader.ReadGames()) {
    decisive += g.result >= 0;
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const float z_plain = TargetOf(plain, row), z_discounted = TargetOf(discounted, row);
      const int ply = rows.ply[static_cast<size_t>(row)];
      INFO("game " << g.game_id << " length " << g.length << " ply " << ply);
      CHECK(z_plain == rows.z[static_cast<size_t>(row)]);
      CHECK(z_discounted == Approx(z_plain * std::pow(0.8, g.length - 1 - ply)));
      if (ply == g.length - 1) CHECK(z_discounted == z_plain);  // the winning move is next: undiscounted
      ++checked;
    }
  }
  CHECK(decisive > 0);  // random tic-tac-toe games are mostly won
  CHECK(checked == static_cast<int>(rows.count));
}

TEST_CASE("a q-weight blends each row's value target with the search's value of its position", "[train]") {
  testing::ScratchDir dir("zf-window");
  WriteShards(dir.path(), "", 1, 12, 7);
  const auto rows = io::ShardReader(dir / "shards/shard-000000.h5").ReadAllPositions();
  learn::ShardWindow half(dir.path(), 1'000'000, 0.8, 0.5), search(dir.path(), 1'000'000, 1.0, 1.0),
      discounted(dir.path(), 1'000'000, 0.8);
  half.Refresh();
  search.Refresh();
  discounted.Refresh();
  REQUIRE(half.Positions() == static_cast<int64_t>(rows.count));
  int differ = 0;
  for (size_t i = 0; i < rows.count; ++i) {
    const auto row = static_cast<int64_t>(i);
    const float z_half = TargetOf(half, row), z_search = TargetOf(search, row),
                z_discounted = TargetOf(discounted, row);
    INFO("row " << i << " z " << rows.z[i] << " root value " << rows.root_value[i]);
    CHECK(z_search == rows.root_value[i]);  // w = 1: the search's value alone
    CHECK(z_half == Approx(0.5 * z_discounted + 0.5 * rows.root_value[i]));
    differ += std::fabs(rows.root_value[i] - rows.z[i]) > 0.01f;
  }
  CHECK(differ > 0);  // the blend is seen: 8-simulation values are not the games' results
}

TEST_CASE("bootstrap-sampled: a row before a sampled move takes that position's search value", "[train]") {
  testing::ScratchDir dir("zf-window");
  WriteShards(dir.path(), "", 1, 16, 11);
  const io::ShardReader reader(dir / "shards/shard-000000.h5");
  const auto rows = reader.ReadAllPositions();
  learn::ShardWindow boot(dir.path(), 1'000'000, 0.8, 0.0, true), plain(dir.path(), 1'000'000, 0.8);
  boot.Refresh();
  plain.Refresh();
  REQUIRE(boot.Positions() == static_cast<int64_t>(rows.count));
  int bootstrapped = 0, kept = 0;
  for (const io::ShardGame& g : reader.ReadGames()) {
    // Written out the slow way: for each row, the first later-or-equal ply of
    // its game whose played move had less than the largest policy share.
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const auto r = static_cast<size_t>(row);
      int64_t sampled = -1;
      for (int64_t e = g.first_position; e < g.first_position + g.position_count; ++e) {
        const auto k = static_cast<size_t>(e);
        if (rows.ply[k] < rows.ply[r] || rows.ply[k] >= g.length) continue;
        const float* pk = rows.policy.data() + k * 9;
        const bool best = pk[g.moves[static_cast<size_t>(rows.ply[k])]] == *std::max_element(pk, pk + 9);
        if (!best && (sampled < 0 || rows.ply[k] < rows.ply[static_cast<size_t>(sampled)])) sampled = e;
      }
      const float z_boot = TargetOf(boot, row), z_plain = TargetOf(plain, row);
      INFO("game " << g.game_id << " ply " << rows.ply[r] << " sampled row " << sampled);
      if (sampled < 0) {
        CHECK(z_boot == z_plain);  // only best moves after it: the discounted result
        ++kept;
      } else {
        const auto e = static_cast<size_t>(sampled);
        const int plies = rows.ply[e] - rows.ply[r];
        CHECK(z_boot == Approx((plies % 2 ? -1 : 1) * rows.root_value[e] * std::pow(0.8, plies)));
        ++bootstrapped;
      }
    }
  }
  CHECK(bootstrapped > 0);  // self-play samples its opening moves
  CHECK(kept > 0);          // and plays the best move at the end
}

TEST_CASE("a shard whose games point past its rows is skipped, whatever the value targets", "[train]") {
  testing::ScratchDir dir("zf-window");
  const int64_t positions = WriteShards(dir.path(), "", 2, 6, 13);
  const std::string bad = dir / "shards/shard-000001.h5";
  const io::ShardReader good_reader(dir / "shards/shard-000000.h5");
  const auto good_rows = static_cast<int64_t>(good_reader.Positions());
  std::vector<int32_t> count;  // the last game claims one row more than the shard holds
  for (const io::ShardGame& g : io::ShardReader(bad).ReadGames()) count.push_back(g.position_count);
  REQUIRE(good_rows + static_cast<int64_t>(io::ShardReader(bad).Positions()) == positions);
  count.back() += 1;
  {
    io::H5File f = io::OpenFile(bad, /*writable=*/true);
    io::DeleteLink(f.id(), "/games/position_count");
    io::WriteDataset(f.id(), "/games/position_count", count);
  }
  CHECK_THROWS_WITH(io::ShardReader(bad).ReadGames(), Catch::Contains("has positions out of range"));
  // Every way of making the value targets reads the games (the reader checks
  // their rows), and each skips the shard rather than index past its rows;
  // the good shard stays.
  for (const auto& [discount, boot] : {std::pair{0.8, false}, {1.0, true}, {0.8, true}}) {
    INFO("discount " << discount << " bootstrap " << boot);
    learn::ShardWindow window(dir.path(), 1'000'000, discount, 0.0, boot);
    CHECK(window.Refresh() == 1);
    CHECK(window.Shards() == 1);
    CHECK(window.Positions() == good_rows);
    CHECK(window.Refresh() == 0);  // skipped once, not retried
  }
  // So does a plain window, which reads them for the score head's targets.
  learn::ShardWindow plain(dir.path(), 1'000'000);
  CHECK(plain.Refresh() == 1);
  CHECK(plain.Positions() == good_rows);
}

TEST_CASE("every row's score target is its game's result for its mover and the plies to the end", "[train]") {
  testing::ScratchDir dir("zf-window");
  WriteShards(dir.path(), "", 1, 40, 21);
  const io::ShardReader reader(dir / "shards/shard-000000.h5");
  const io::PositionRows rows = reader.ReadAllPositions();
  learn::ShardWindow window(dir.path(), 1'000'000, 0.9);  // a discount changes z, not the bins
  REQUIRE(window.Refresh() == 1);
  REQUIRE(window.Positions() == static_cast<int64_t>(rows.count));
  std::vector<uint8_t> features(27);
  std::vector<float> policy(9);
  uint8_t full = 0;
  float z = 0;
  int16_t bin = -1;
  int wins = 0, losses = 0, draws = 0;
  for (const io::ShardGame& g : reader.ReadGames())
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const auto i = static_cast<size_t>(row);
      window.Row(row, features.data(), policy.data(), &z, &full, nullptr, &bin);
      const int outcome = rows.z[i] > 0 ? 1 : rows.z[i] < 0 ? -1 : 0;
      INFO("game " << g.game_id << " row " << row << " ply " << rows.ply[i] << " of " << g.length);
      CHECK(bin == eval::ScoreBin(9, g.length - rows.ply[i], outcome));
      // The last move's row is 1 ply from the end: its mover won, or drew.
      if (rows.ply[i] == g.length - 1) CHECK((bin == 0 || bin == 18));
      wins += outcome > 0;
      losses += outcome < 0;
      draws += outcome == 0;
    }
  CHECK(wins > 0);
  CHECK(losses > 0);
  CHECK(draws > 0);
}

TEST_CASE("train writes checkpoints and resumes where it stopped", "[train]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-train");
  WriteShards(dir.path(), "", 2, 20, 3);
  learn::TrainConfig c = TinyTrainer(dir.path());
  c.replay = 0;
  c.steps = 10;
  c.checkpoint_steps = 4;
  REQUIRE(learn::RunTrainer(c) == 0);
  // Checkpoints at steps 4 and 8, and at the end (10).
  CHECK(fs::exists(dir / "models/model-1.h5"));
  CHECK(fs::exists(dir / "models/model-3.h5"));
  CHECK_FALSE(fs::exists(dir / "models/model-4.h5"));
  const auto state = learn::TrainState::FromText(ReadAll(dir / "train/state.txt"));
  CHECK(state.version == 3);
  CHECK(state.step == 10);
  CHECK(state.samples == 160);
  const eval::WeightSet w3 = io::ReadWeights(dir / "models/model-3.h5");
  CHECK(w3.version == 3);
  CHECK(w3.config.game == "tictactoe");
  CHECK(w3.config.blocks == 1);

  c.steps = 5;
  REQUIRE(learn::RunTrainer(c) == 0);
  const auto resumed = learn::TrainState::FromText(ReadAll(dir / "train/state.txt"));
  CHECK(resumed.step == 15);
  CHECK(resumed.version == 5);  // 4 at step 14, 5 at the end
  CHECK(io::ReadWeights(dir / "models/model-5.h5").version == 5);
  CHECK_FALSE(fs::exists(dir / "models/model-5.h5.tmp"));

  // --weights on a run with models would be ignored (it resumes): refused, and nothing trained (issue 72).
  learn::TrainConfig with_weights = c;
  with_weights.weights = dir / "models/model-1.h5";
  CHECK_THROWS_WITH(learn::RunTrainer(with_weights), Catch::Contains("has models already"));
  CHECK(learn::TrainState::FromText(ReadAll(dir / "train/state.txt")).step == 15);

  // Replay pacing: at most replay x produced samples, then (no wait) it stops.
  c.replay = 1e-9;
  c.steps = 0;
  REQUIRE(learn::RunTrainer(c) == 0);
  CHECK(learn::TrainState::FromText(ReadAll(dir / "train/state.txt")).step == 15);
}

TEST_CASE("a checkpoint cut short before its state never gives its version to another network", "[train]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-train-cut");
  WriteShards(dir.path(), "", 2, 20, 3);
  learn::TrainConfig c = TinyTrainer(dir.path());
  c.replay = 0;
  c.steps = 8;
  c.checkpoint_steps = 4;
  REQUIRE(learn::RunTrainer(c) == 0);
  const std::string state_text = ReadAll(dir / "train/state.txt");
  REQUIRE(learn::TrainState::FromText(state_text).version == 2);
  // Killed after writing model 3 and before its state: the state and the
  // momentum still name version 2 (Checkpoint writes the model first). Model
  // 3 here is another network (model 1's weights), as it may have been served.
  eval::WeightSet other = io::ReadWeights(dir / "models/model-1.h5");
  other.version = 3;
  io::WriteWeights(dir / "models/model-3.h5", other);
  const std::string model3 = ReadAll(dir / "models/model-3.h5");

  c.steps = 4;
  REQUIRE(learn::RunTrainer(c) == 0);
  CHECK(ReadAll(dir / "models/model-3.h5") == model3);  // the served model 3 is untouched
  const auto state = learn::TrainState::FromText(ReadAll(dir / "train/state.txt"));
  CHECK(state.step == 12);    // resumed at the state's step 8
  CHECK(state.version == 4);  // the next number after model 3
  CHECK(io::ReadWeights(dir / "models/model-4.h5").version == 4);
}

TEST_CASE("a run resumed without its shards trains on the new ones at the replay pace", "[train]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-train-kept");
  const int64_t first = WriteShards(dir.path(), "", 3, 20, 5);
  learn::TrainConfig c = TinyTrainer(dir.path());
  c.replay = 1;
  REQUIRE(learn::RunTrainer(c) == 0);  // until the pace stops it: one sample per position
  const auto used = learn::TrainState::FromText(ReadAll(dir / "train/state.txt"));
  CHECK(used.step == first / c.batch);

  // Keep what tools/learn-state.sh keeps (no shards, the newest model only),
  // restore it elsewhere, then new data: fewer positions than were sampled
  // before, yet all of them new.
  fs::create_directories(dir / "eval");
  { std::ofstream(dir / "eval/loop-seconds.txt") << "1234.5\n"; }
  const std::string script = testing::SourceDir() + "/tools/learn-state.sh";
  testing::ScratchDir keep("zf-train-keep");  // beside the run: a kept state inside it is refused
  const auto state = [&](const std::string& args) {
    return std::system(("bash " + script + " " + args + " >/dev/null 2>&1").c_str());
  };
  CHECK(state("save " + dir.path() + " " + (dir / "kept")) != 0);  // into the run itself
  CHECK_FALSE(fs::exists(dir / "kept"));
  { std::ofstream(keep / "precious") << "not a kept state\n"; }
  CHECK(state("save " + dir.path() + " " + keep.path()) != 0);  // over a directory that is not a kept state
  CHECK(fs::exists(keep / "precious"));
  REQUIRE(state("save " + dir.path() + " " + (keep / "kept")) == 0);
  CHECK_FALSE(fs::exists(keep / "kept/shards"));
  CHECK(fs::exists(keep / ("kept/models/model-" + std::to_string(used.version) + ".h5")));
  CHECK_FALSE(fs::exists(keep / ("kept/models/model-" + std::to_string(used.version - 1) + ".h5")));
  CHECK(ReadAll(keep / "kept/eval/loop-seconds.txt") == "1234.5\n");
  REQUIRE(state("restore " + (keep / "kept") + " " + (keep / "next")) == 0);
  // Restoring over a run that has a trainer state is refused.
  CHECK(state("restore " + (keep / "kept") + " " + (keep / "next")) != 0);

  c.run = keep / "next";
  const int64_t fresh = WriteShards(c.run, "", 1, 20, 99);
  REQUIRE(fresh < used.samples);
  REQUIRE(learn::RunTrainer(c) == 0);
  const auto resumed = learn::TrainState::FromText(ReadAll(keep / "next/train/state.txt"));
  CHECK(resumed.step == used.step + fresh / c.batch);
  CHECK(resumed.samples == used.samples + (fresh / c.batch) * c.batch);
  CHECK(resumed.version == used.version + 1);  // one checkpoint at the end
  CHECK(resumed.paced_from == used.samples);   // where the pace started over

  // Run again on the same shards (a loop piece resumed on the same machine):
  // the pace goes on from there, so nothing new means no step. Before
  // paced_from was kept, this invocation started the pace over once more and
  // drew the same positions a second time.
  REQUIRE(learn::RunTrainer(c) == 0);
  CHECK(learn::TrainState::FromText(ReadAll(keep / "next/train/state.txt")).step == resumed.step);
  // One more shard: it trains that shard's worth, and no more.
  const int64_t more = WriteShards(c.run, "b", 1, 20, 7);
  REQUIRE(learn::RunTrainer(c) == 0);
  const auto after = learn::TrainState::FromText(ReadAll(keep / "next/train/state.txt"));
  CHECK(after.step == resumed.step + (fresh + more) / c.batch - fresh / c.batch);
  CHECK(after.paced_from == used.samples);
}

TEST_CASE("train refuses bad settings and a run without data", "[train]") {
  testing::ScratchDir dir("zf-train-bad");
  learn::TrainConfig c;
  c.run = dir / "nope";
  CHECK_THROWS_AS(learn::RunTrainer(c), ConfigError);
  c.run = dir.path();
  c.batch = 0;
  CHECK_THROWS_AS(learn::RunTrainer(c), ConfigError);
  c.batch = 64;
  c.window = 10;
  CHECK_THROWS_AS(learn::RunTrainer(c), ConfigError);
  c.window = 1000;
  c.wait = false;
  CHECK_THROWS_WITH(learn::RunTrainer(c), Catch::Contains("positions"));
}

TEST_CASE("ownership targets: each row sees its game's last board from its own player's side", "[train]") {
  testing::ScratchDir dir("zf-window");
  WriteShards(dir.path(), "", 1, 40, 21);
  const io::ShardReader reader(dir / "shards/shard-000000.h5");
  const auto rows = reader.ReadAllPositions();
  learn::ShardWindow window(dir.path(), 1'000'000, 1.0, 0.0, false, /*ownership=*/true);
  REQUIRE(window.Refresh() == 1);
  std::vector<uint8_t> features(27);
  std::vector<float> policy(9);
  std::vector<int8_t> own(9);
  float z = 0;
  uint8_t full = 0;
  int checked = 0, empty_cells = 0;
  for (const io::ShardGame& g : reader.ReadGames()) {
    // The last board the slow way: in tic-tac-toe the move is the cell and
    // the players alternate, so move j is a stone of player j % 2.
    std::vector<int> owner(9, -1);
    for (size_t j = 0; j < g.moves.size(); ++j)
      owner[static_cast<size_t>(g.moves[j])] = static_cast<int>(j % 2);
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      window.Row(row, features.data(), policy.data(), &z, &full, own.data());
      const int me = rows.ply[static_cast<size_t>(row)] % 2;
      INFO("game " << g.game_id << " ply " << rows.ply[static_cast<size_t>(row)]);
      for (size_t c = 0; c < 9; ++c) {
        CHECK(own[c] == (owner[c] < 0 ? 0 : owner[c] == me ? 1 : -1));
        empty_cells += owner[c] < 0;
      }
      ++checked;
    }
  }
  CHECK(checked == static_cast<int>(rows.count));
  CHECK(empty_cells > 0);  // won games end with empty cells: all three values were checked
  // A window made without ownership targets refuses to give them.
  learn::ShardWindow plain(dir.path(), 1'000'000);
  plain.Refresh();
  CHECK_THROWS(plain.Row(0, features.data(), policy.data(), &z, &full, own.data()));
}

TEST_CASE("a shard whose moves do not replay is skipped when ownership targets are wanted", "[train]") {
  testing::ScratchDir dir("zf-window");
  const int64_t positions = WriteShards(dir.path(), "", 2, 6, 17);
  const std::string bad = dir / "shards/shard-000001.h5";
  const auto good_rows = static_cast<int64_t>(io::ShardReader(dir / "shards/shard-000000.h5").Positions());
  // The first game plays its first cell twice.
  std::vector<int16_t> moves;
  {
    io::H5File f = io::OpenFile(bad, /*writable=*/false);
    moves = io::ReadDataset<int16_t>(f.id(), "/games/moves");
  }
  REQUIRE(moves.size() > 2);
  moves[1] = moves[0];
  {
    io::H5File f = io::OpenFile(bad, /*writable=*/true);
    io::DeleteLink(f.id(), "/games/moves");
    io::WriteDataset(f.id(), "/games/moves", moves);
  }
  learn::ShardWindow window(dir.path(), 1'000'000, 1.0, 0.0, false, /*ownership=*/true);
  CHECK(window.Refresh() == 1);
  CHECK(window.Positions() == good_rows);
  learn::ShardWindow plain(dir.path(), 1'000'000);  // the rows themselves are sound
  CHECK(plain.Refresh() == 2);
  CHECK(plain.Positions() == positions);
}

TEST_CASE("train with an ownership head keeps it beside its checkpoints and resumes with it", "[train]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  testing::ScratchDir dir("zf-train-own");
  WriteShards(dir.path(), "", 2, 20, 9);
  learn::TrainConfig c = TinyTrainer(dir.path());
  c.replay = 0;
  c.steps = 6;
  c.checkpoint_steps = 3;
  c.optim.ownership_weight = 1.0;
  REQUIRE(learn::RunTrainer(c) == 0);
  const eval::WeightSet heads = io::ReadWeights(dir / "train/heads.h5");
  CHECK(heads.version == 2);
  CHECK(heads.Find("ownership_head.conv.weight") != nullptr);
  // The checkpoint is the plain net, which the farm's evaluators load.
  CHECK(io::ReadWeights(dir / "models/model-2.h5").Find("ownership_head.conv.weight") == nullptr);
  // Resumed, it takes the head up (and writes it on), with or without it
  // the momentum loads, and a run goes on without the head.
  c.steps = 3;
  REQUIRE(learn::RunTrainer(c) == 0);
  const eval::WeightSet later = io::ReadWeights(dir / "train/heads.h5");
  CHECK(later.version == 3);
  CHECK(later.Find("ownership_head.conv.weight")->data != heads.Find("ownership_head.conv.weight")->data);
  c.optim.ownership_weight = 0;
  REQUIRE(learn::RunTrainer(c) == 0);
  CHECK(learn::TrainState::FromText(ReadAll(dir / "train/state.txt")).step == 12);
  c.optim.ownership_weight = 1;
  REQUIRE(learn::RunTrainer(c) == 0);  // heads.h5 is of version 3, the state of 4: a new head
  CHECK(io::ReadWeights(dir / "train/heads.h5").version == 5);
  // tools/learn-state.sh keeps it with the state.
  const std::string script = testing::SourceDir() + "/tools/learn-state.sh";
  testing::ScratchDir keep("zf-train-keep");
  REQUIRE(std::system(
              ("bash " + script + " save " + dir.path() + " " + (keep / "kept") + " >/dev/null").c_str()) ==
          0);
  CHECK(io::ReadWeights(keep / "kept/train/heads.h5").version == 5);
}
