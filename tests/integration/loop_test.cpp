// Closing the loop with real processes: a farm's shards feed `zerofarm
// train`, which resumes; `zerofarm eval` measures checkpoints; `zerofarm
// loop` runs farm + trainer + evaluation and records a curve. Only the
// parent asserts.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "farm_check.h"
#include "skip.h"
#include "test_paths.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/eval/cpu_features.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/learn/strength.h"
#include "zerofarm/proc/binaries.h"

using namespace zerofarm;
using namespace zerofarm::testing;
namespace fs = std::filesystem;

namespace {
int Run(const std::vector<std::string>& args, const std::string& log, std::string* out, std::string* err,
        double timeout = 300) {
  Spawned p(args, log);
  const int code = p.Wait(timeout);
  *out = p.Stdout();
  *err = p.Stderr();
  return code;
}
// `zerofarm train` of a tiny net (1 x 8) on RUN's shards, batch 32, no pacing, no waiting.
std::vector<std::string> TinyTrain(const std::string& run, int steps, int checkpoint_steps,
                                   const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {ZF_BINARY,
                                   "train",
                                   "--run",
                                   run,
                                   "--steps",
                                   std::to_string(steps),
                                   "--batch",
                                   "32",
                                   "--checkpoint-steps",
                                   std::to_string(checkpoint_steps),
                                   "--replay",
                                   "0",
                                   "--blocks",
                                   "1",
                                   "--filters",
                                   "8",
                                   "--min-positions",
                                   "100",
                                   "--no-wait"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}
int CountLines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  return n;
}
// A recipe of the loop tests: a tiny net and farm, lr 0.02, and a stage from 20 trainer steps on with lr
// 0.003 (seen at the first checkpoint past it: the loop reads the steps from the trainer's state file).
// A checkpoint every 100 steps, not 10: the tiny trainer takes about 300 steps a second, and 30 fsynced
// checkpoints a second on the 2-core VM's disk put every process of the run in page writeback waits
// (folio_wait_bit) for up to a minute, so the trainer missed the loop's 60 s stop and lost its summary.
std::string TinyRecipe() {
  return "# a recipe of the loop test\n"
         "blocks = 1\nfilters = 8\nsimulations = 12\ngames-per-worker = 8\n"
         "eval-every = 600\neval-positions = 20\neval-simulations = 4\n"
         "eval-solver-simulations = 0\npons = " +
         ReferenceFile("connect4/Test_L3_R1") +
         "\n"
         "run-args = --shard-positions 300 --host-id " +
         std::string(kTestHost) +
         "\n"
         "train-args = --min-positions 150 --checkpoint-steps 100 --batch 32 --lr 0.02\n"
         "[stage from 20 steps]\n"
         "train-args = --lr 0.003\n";
}
}  // namespace

TEST_CASE("train on a farm's shards, resume, and evaluate the checkpoints", "[multiprocess][loop][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-train-cli");
  const std::string run = dir / "run";
  std::string out, err;
  REQUIRE(Run(FarmArgs(run, {"--games", "24", "--shard-positions", "500"}), dir / "farm", &out, &err) == 0);
  REQUIRE(!io::ListShards(HostDir(run)).empty());

  const std::vector<std::string> train = TinyTrain(run, 12, 5);
  REQUIRE(Run(train, dir / "train1", &out, &err) == 0);
  INFO(err);
  CHECK_THAT(out, Catch::Contains("12 steps (12 in all)"));
  // --precision auto (the default), as for the farm's networks: bf16 only where AutoPrefersBf16 says it pays.
  CHECK_THAT(err, Catch::Contains(eval::AutoPrefersBf16() ? "on the CPU in bf16: " : "on the CPU in fp32: "));
  CHECK(fs::exists(run + "/models/model-3.h5"));
  // A tiny net's checkpoints every 5 steps come milliseconds apart: said once.
  CHECK_THAT(err, Catch::Contains("ms apart (--checkpoint-steps 5)"));
  CHECK(err.find("ms apart") == err.rfind("ms apart"));
  REQUIRE(Run(train, dir / "train2", &out, &err) == 0);
  CHECK_THAT(err, Catch::Contains("resumed at step 12"));
  CHECK_THAT(out, Catch::Contains("12 steps (24 in all)"));
  CHECK(io::ReadWeights(run + "/models/model-6.h5").version == 6);

  // Move error of the newest checkpoint on 30 endgame positions.
  const std::string pons = ReferenceFile("connect4/Test_L3_R1");
  REQUIRE(Run({ZF_BINARY, "eval", "--run", run, "--pons", pons, "--limit", "30", "--simulations", "16",
               "--no-status", "--positions-csv", dir / "positions.csv"},
              dir / "eval", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("\"kind\":\"move_error\""));
  CHECK_THAT(out, Catch::Contains("\"model_version\":6"));
  CHECK_THAT(out, Catch::Contains("\"positions\":30"));
  CHECK_THAT(out, Catch::Contains("\"symmetries_averaged\":1"));
  CHECK(CountLines(run + "/eval/eval.csv") == 2);
  CHECK(CountLines(dir / "positions.csv") == 31);  // a header and a row a position
  CHECK_THAT(io::ReadTextFile(dir / "positions.csv"),
             Catch::StartsWith(std::string(learn::kPositionCsvColumns) + "\nTest_L3_R1,"));
  // The network averaged over the mirror: said in the text and the JSON.
  REQUIRE(Run({ZF_BINARY, "eval", "--weights", run + "/models/model-6.h5", "--pons", pons, "--limit", "30",
               "--simulations", "16", "--no-status", "--average-symmetries"},
              dir / "eval-sym", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("network (mean over 2 symmetries) alone"));
  CHECK_THAT(out, Catch::Contains("\"symmetries_averaged\":2"));
  // ... and kept out of the run's curve, which has no column for it; so is any orientation but as-is.
  REQUIRE(Run({ZF_BINARY, "eval", "--run", run, "--pons", pons, "--limit", "5", "--simulations", "0",
               "--no-status", "--average-symmetries"},
              dir / "eval-sym-run", &out, &err) == 0);
  CHECK_THAT(err, Catch::Contains("not appended to"));
  REQUIRE(Run({ZF_BINARY, "eval", "--run", run, "--pons", pons, "--limit", "5", "--simulations", "0",
               "--no-status", "--orientation", "canonical"},
              dir / "eval-canonical-run", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("network (canonical orientation) alone"));
  CHECK_THAT(out, Catch::Contains("\"orientation\":\"canonical\""));
  CHECK_THAT(err, Catch::Contains("--orientation canonical: Test_L3_R1 not appended to"));
  CHECK(CountLines(run + "/eval/eval.csv") == 2);
  // A symmetry the game lacks, or two orientations at once: one line, exit 2.
  CHECK(Run({ZF_BINARY, "eval", "--weights", run + "/models/model-6.h5", "--pons", pons, "--limit", "5",
             "--orientation", "2"},
            dir / "eval-orientation-bad", &out, &err) == 2);
  CHECK_THAT(err,
             Catch::Contains("--orientation 2: expected as-is, canonical, mean or a symmetry of connect4"));
  CHECK(Run({ZF_BINARY, "eval", "--weights", run + "/models/model-6.h5", "--pons", pons, "--limit", "5",
             "--orientation", "1", "--average-symmetries"},
            dir / "eval-orientation-two", &out, &err) == 2);
  CHECK_THAT(err, Catch::Contains("--average-symmetries contradicts --orientation 1"));
  // An explicit precision wins over the CPU's.
  for (const std::string& precision : std::vector<std::string>{"bf16", "fp32"}) {
    std::vector<std::string> args = train;
    args.insert(args.end(), {"--precision", precision});
    if (precision == "fp32") args.insert(args.end(), {"--value-weight", "0.25"});
    REQUIRE(Run(args, dir / ("train-" + precision), &out, &err) == 0);
    CHECK_THAT(err, Catch::Contains("on the CPU in " + precision + ": "));
  }
  CHECK_THAT(err, Catch::Contains("with the value loss at weight 0.25 on the CPU"));  // as given
  // An arena between two checkpoints adds up.
  REQUIRE(Run({ZF_BINARY, "eval", "--weights", run + "/models/model-6.h5", "--against",
               run + "/models/model-1.h5", "--games", "6", "--simulations", "8"},
              dir / "arena", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("\"games\":6"));
  CHECK(Run({ZF_BINARY, "eval", "--weights", run + "/models/model-6.h5", "--against",
             run + "/models/model-1.h5", "--positions-csv", dir / "no.csv"},
            dir / "arena-csv", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("--positions-csv is for move error"));
  CHECK(Run({ZF_BINARY, "eval", "--run", run, "--pons", pons, "--limit", "5", "--positions-csv",
             dir / "none/p.csv"},
            dir / "csv-dir", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("none is not a directory"));

  // Bad input: one line, exit code 2.
  CHECK(Run({ZF_BINARY, "train"}, dir / "bad1", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("--run is required"));
  CHECK(Run({ZF_BINARY, "train", "--run", run, "--q-weight", "1.5"}, dir / "bad1q", &out, &err) ==
        kExitUsage);
  CHECK_THAT(err, Catch::Contains("--q-weight must be in [0, 1]"));
  CHECK(Run({ZF_BINARY, "train", "--run", run, "--ownership", "-1"}, dir / "bad1o", &out, &err) ==
        kExitUsage);
  CHECK_THAT(err, Catch::Contains("the ownership weight must be >= 0"));
  CHECK(Run({ZF_BINARY, "train", "--run", run, "--value-weight", "0"}, dir / "bad1v", &out, &err) ==
        kExitUsage);
  CHECK_THAT(err, Catch::Contains("the value weight must be > 0"));
  CHECK(Run({ZF_BINARY, "eval", "--weights", "random", "--pons", pons, "--rate-threads", "-1"}, dir / "bad1r",
            &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("--rate-threads must be in [0, 1024]"));
  CHECK(Run({ZF_BINARY, "eval", "--weights", dir / "missing.h5", "--pons", pons}, dir / "bad2", &out, &err) ==
        kExitUsage);
  CHECK_THAT(err, Catch::Contains("missing.h5: No such file"));
  std::ofstream(dir / "bad.pons") << "4455 99\n";
  CHECK(Run({ZF_BINARY, "eval", "--run", run, "--pons", dir / "bad.pons"}, dir / "bad3", &out, &err) ==
        kExitUsage);
  CHECK_THAT(err, Catch::Contains("bad.pons:1"));
  std::ofstream(dir / "corrupt.h5") << "not weights";
  // Weights that are not HDF5 are bad input in every command (issue 21): exit 2.
  CHECK(Run({ZF_BINARY, "eval", "--weights", dir / "corrupt.h5", "--pons", pons}, dir / "bad4", &out, &err) ==
        kExitUsage);
  CHECK_THAT(err, Catch::Contains("corrupt.h5"));
}

TEST_CASE("zerofarm eval --make-set writes a set of Pons's kind that eval then measures from its verdicts",
          "[multiprocess][loop]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-make-set");
  const std::string set = dir / "Made_L3_R1", cache = dir / "cache";
  std::string out, err;
  const std::vector<std::string> make = {ZF_BINARY,        "eval",
                                         "--make-set",     "L3_R1",
                                         "--count",        "30",
                                         "--out",          set,
                                         "--sets",         ReferenceFile("connect4"),
                                         "--cache-dir",    cache,
                                         "--rate-threads", "2",
                                         "--no-status"};
  REQUIRE(Run(make, dir / "make", &out, &err) == 0);
  CHECK_THAT(out,
             Catch::Contains("30 positions of Pons's kind L3_R1 (29-41 stones, 1-14 plies left), seed 1"));
  const auto positions = learn::ReadPonsFile(set);
  CHECK(positions.size() == 30);
  CHECK_FALSE(fs::exists(set + ".solving"));  // the work file goes when the set is done
  // The verdicts are cached where eval looks: it measures without rating again.
  std::vector<fs::path> cached;
  for (const auto& e : fs::directory_iterator(cache)) cached.push_back(e.path());
  REQUIRE(cached.size() == 1);
  const std::string verdicts = io::ReadTextFile(cached[0].string());
  CHECK(CountLines(cached[0].string()) == 30);
  REQUIRE(Run({ZF_BINARY, "eval", "--weights", "random", "--blocks", "1", "--filters", "8", "--pons", set,
               "--cache-dir", cache, "--simulations", "8", "--no-status"},
              dir / "eval", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("on Made_L3_R1 (30 positions)"));
  CHECK(io::ReadTextFile(cached[0].string()) == verdicts);
  // The same command again: the file is there, and is not overwritten.
  CHECK(Run(make, dir / "again", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("exists: remove it or give another file"));
  // Bad input: one line, exit code 2.
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--make-set", "L3_R2", "--out", dir / "x"}, "no position is of kind L3_R2"},
      {{"--make-set", "L9_R1", "--out", dir / "x"}, "is not a kind of Pons set"},
      {{"--make-set", "L2_R1"}, "--make-set needs --out FILE"},
      {{"--make-set", "L2_R1", "--out", dir / "x", "--count", "0"}, "--count must be in [1, 100000]"}};
  for (const auto& [args, message] : bad) {
    std::vector<std::string> command = {ZF_BINARY, "eval"};
    command.insert(command.end(), args.begin(), args.end());
    CHECK(Run(command, dir / "bad", &out, &err) == kExitUsage);
    CHECK_THAT(err, Catch::Contains(message));
    CHECK_FALSE(fs::exists(dir / "x"));
  }
}

// --final-mean 3 at the end of a piece (it ended by --hours): RUN/eval/checkpoint-mean.h5, the mean of
// the newest 3 checkpoints, with the newest's version, measured into RUN/eval/mean.csv (`lines` in all:
// a header and, per piece, a row per search on the one set).
void CheckFinalMean(const std::string& run, const std::string& out, const std::string& err, int lines) {
  const auto newest = io::RunDir::NewestModelsIn(run + "/models", 3);
  REQUIRE(newest.size() == 3);
  CHECK_THAT(err, Catch::Contains("checkpoint-mean.h5, the mean of 3 checkpoints, v" +
                                  std::to_string(newest.front().first) + " to v" +
                                  std::to_string(newest.back().first)));
  const eval::WeightSet mean = io::ReadWeights(run + "/eval/checkpoint-mean.h5");
  CHECK(static_cast<int64_t>(mean.version) == newest.back().first);
  CHECK_FALSE(io::ReadWeights(newest.back().second).tensors[0].data == mean.tensors[0].data);
  CHECK_THAT(out, Catch::Contains("mean  v" + std::to_string(newest.back().first)));
  CHECK(CountLines(run + "/eval/mean.csv") == lines);
  CHECK_THAT(io::ReadTextFile(run + "/eval/mean.csv"),
             Catch::Contains(",cpu_hours,solver,mean_of,first_version\n") &&
                 Catch::EndsWith(",1,3," + std::to_string(newest.front().first) + "\n"));
}

TEST_CASE("zerofarm loop runs farm, trainer and evaluation, and resumes", "[multiprocess][loop][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-loop");
  const std::string run = dir / "run";
  // A checkpoint every 100 steps: TinyRecipe says why not 10.
  const std::vector<std::string> loop = {ZF_BINARY,
                                         "loop",
                                         "--out",
                                         run,
                                         "--hours",
                                         "0.012",
                                         "--eval-every",
                                         "12",
                                         "--pons",
                                         ReferenceFile("connect4/Test_L3_R1"),
                                         "--eval-positions",
                                         "40",
                                         "--eval-simulations",
                                         "8",
                                         "--eval-solver-simulations",
                                         "8",
                                         "--blocks",
                                         "1",
                                         "--filters",
                                         "8",
                                         "--simulations",
                                         "12",
                                         "--games-per-worker",
                                         "8",
                                         "--run-args",
                                         "--shard-positions 400 --host-id " + std::string(kTestHost),
                                         "--train-args",
                                         "--min-positions 200 --checkpoint-steps 100 --batch 32",
                                         "--final-mean",
                                         "3"};
  std::string out, err;
  REQUIRE(Run(loop, dir / "loop1", &out, &err, 400) == 0);
  INFO(err.substr(err.size() > 3000 ? err.size() - 3000 : 0));
  CHECK_THAT(out, Catch::Contains("move error against the exact solver"));
  CHECK_THAT(out, Catch::Contains("Test_L3_R1: net"));
  CHECK_THAT(out, Catch::Contains("zerofarm run:"));    // the farm's summary: it stopped cleanly
  CHECK_THAT(out, Catch::Contains("zerofarm train:"));  // and the trainer's
  const int rows = CountLines(run + "/eval/curve.csv");
  CHECK(rows >= 2);  // header + at least the final evaluation
  CHECK_THAT(io::ReadTextFile(run + "/eval/curve.csv"),
             Catch::StartsWith("hours,model_version,file,positions"));
  const std::string curve = io::ReadTextFile(run + "/eval/curve.csv");
  CHECK_THAT(curve, Catch::Contains("mcts_outcome_error,value_agreement,cpu_hours,solver\n"));
  // Each evaluation measures plain PUCT and PUCT with the solver.
  CHECK_THAT(curve, Catch::Contains(",0\n"));
  CHECK_THAT(curve, Catch::Contains(",1\n"));
  CHECK_THAT(out, Catch::Contains("+solver"));
  const double cpu1 = std::stod(io::ReadTextFile(run + "/eval/loop-cpu-seconds.txt"));
  CHECK(cpu1 > 0);  // farm, trainer and evaluation (how much depends on the machine's load)
  CHECK(fs::exists(run + "/models/model-1.h5"));
  const auto shards = CheckShards(HostDir(run));
  CHECK(shards.games > 0);
  CheckFinalMean(run, out, err, 3);

  // A second piece continues the hours and the trainer's steps.
  const double seconds1 = std::stod(io::ReadTextFile(run + "/eval/loop-seconds.txt"));
  REQUIRE(Run(loop, dir / "loop2", &out, &err, 400) == 0);
  CheckFinalMean(run, out, err, 5);
  CHECK_THAT(err, Catch::Contains("resumed at step"));
  CHECK(CountLines(run + "/eval/curve.csv") > rows);
  std::ifstream in(run + "/eval/loop-seconds.txt");
  double seconds = 0;
  in >> seconds;
  CHECK(seconds > seconds1);  // the second piece added its own
  CHECK(std::stod(io::ReadTextFile(run + "/eval/loop-cpu-seconds.txt")) > cpu1);
}

TEST_CASE("a score head: trained on a farm's shards, then played by a farm and evaluated",
          "[multiprocess][loop][score]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-score-head");
  const std::string run = dir / "run";
  std::string out, err;
  REQUIRE(Run(FarmArgs(run, {"--games", "16", "--shard-positions", "300"}), dir / "farm", &out, &err) == 0);
  REQUIRE(Run(TinyTrain(run, 20, 20, {"--score-head", "--value-discount", "0.98"}), dir / "train", &out,
              &err) == 0);
  INFO(err);
  CHECK_THAT(err, Catch::Contains("1 blocks x 8 filters, score head"));
  const std::string model = run + "/models/model-1.h5";
  CHECK(io::ReadWeights(model).config.score_plies == 42);
  // A farm plays it (its evaluator's value from the head's distribution) and writes games.
  const std::string run2 = dir / "run2";
  // Until 16 games are written (not 4 s: under load a 4 s farm finished none).
  REQUIRE(Run(FarmArgs(run2, {"--games", "16", "--duration", "120", "--shard-positions", "100", "--weights",
                              model, "--value-discount", "0.98"}),
              dir / "farm2", &out, &err) == 0);
  CHECK_THAT(err, Catch::Contains("score head, model version 1"));
  CHECK(CheckShards(HostDir(run2)).games > 0);
  // zerofarm eval measures it.
  const std::string pons = ReferenceFile("connect4/Test_L3_R1");
  REQUIRE(Run({ZF_BINARY, "eval", "--weights", model, "--pons", pons, "--limit", "20", "--simulations", "16",
               "--value-discount", "0.98", "--no-status"},
              dir / "eval", &out, &err) == 0);
  CHECK_THAT(out, Catch::Contains("\"positions\":20"));
  // A score head over another game length than the game's: one line, exit 2.
  eval::NetConfig wrong = io::ReadWeights(model).config;
  wrong.score_plies = 9;
  io::WriteWeights(dir / "wrong.h5", eval::RandomWeights(wrong, 1));
  CHECK(Run({ZF_BINARY, "eval", "--weights", dir / "wrong.h5", "--pons", pons, "--limit", "5", "--no-status"},
            dir / "eval-wrong", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("its score head spans 9 plies, but a game of connect4 lasts at most 42"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("a value head of several channels is trained, resumed, played, and kept by the loop",
          "[multiprocess][loop][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-value-channels");
  const std::string run = dir / "run";
  std::string out, err;
  REQUIRE(Run(FarmArgs(run, {"--games", "16", "--shard-positions", "300"}), dir / "farm", &out, &err) == 0);
  REQUIRE(Run(TinyTrain(run, 10, 10, {"--value-channels", "4"}), dir / "train", &out, &err) == 0);
  INFO(err);
  CHECK_THAT(err, Catch::Contains("1 blocks x 8 filters, value head of 4 channels"));
  CHECK(io::ReadWeights(run + "/models/model-1.h5").config.value_channels == 4);
  // Resumed without the option: the run's model decides the net.
  REQUIRE(Run(TinyTrain(run, 10, 10), dir / "train2", &out, &err) == 0);
  CHECK_THAT(err, Catch::Contains("resumed at step 10"));
  const std::string model = run + "/models/model-2.h5";
  CHECK(io::ReadWeights(model).config.value_channels == 4);
  // A farm plays it and writes games.
  const std::string run2 = dir / "run2";
  REQUIRE(Run(FarmArgs(run2, {"--games", "16", "--duration", "120", "--shard-positions", "100", "--weights",
                              model}),
              dir / "farm2", &out, &err) == 0);
  CHECK_THAT(err, Catch::Contains("value head of 4 channels"));
  CHECK(CheckShards(HostDir(run2)).games > 0);
  // A loop that would go on with one channel (the default): one line, exit 2, naming the option.
  CHECK(Run({ZF_BINARY, "loop", "--out", run, "--blocks", "1", "--filters", "8", "--pons",
             ReferenceFile("connect4/Test_L3_R1")},
            dir / "loop", &out, &err) == kExitUsage);
  CHECK_THAT(err,
             Catch::Contains("trains a net of 1 blocks x 8 filters with a value head of 4 channels, not the "
                             "1 blocks x 8 filters asked for") &&
                 Catch::Contains("--blocks 1 --filters 8 --value-channels 4 without --score-head"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
}

TEST_CASE("zerofarm loop --recipe: base options from the file and a stage restarts the trainer with its own",
          "[multiprocess][loop][recipe]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-recipe-loop");
  const std::string run = dir / "run", recipe = dir / "tiny.recipe";
  io::WriteTextFileAtomically(recipe, TinyRecipe());
  std::string out, err;
  // --hours on the command line, the rest from the recipe.
  REQUIRE(Run({ZF_BINARY, "loop", "--recipe", recipe, "--out", run, "--hours", "0.015"}, dir / "loop", &out,
              &err, 400) == 0);
  INFO(err.substr(err.size() > 4000 ? err.size() - 4000 : 0));
  CHECK_THAT(err, Catch::Contains("loop: stage 0 of 1"));
  CHECK_THAT(err, Catch::Contains("loop: stage 1 of 1"));
  CHECK_THAT(err, Catch::Contains("lr 0.02;"));   // the trainer of the base options
  CHECK_THAT(err, Catch::Contains("lr 0.003;"));  // restarted with the stage's
  CHECK_THAT(err, Catch::Contains("resumed at step"));
  const std::string stages = io::ReadTextFile(run + "/eval/stages.csv");
  CHECK_THAT(stages, Catch::StartsWith("hours,cpu_hours,steps,stage,description\n"));
  CHECK_THAT(stages, Catch::Contains(",1,\"from 20 steps: train-args --lr 0.003\""));
  CHECK(io::ReadTextFile(run + "/eval/recipe.txt") == io::ReadTextFile(recipe));
  CHECK(CountLines(run + "/eval/curve.csv") >= 2);  // the final evaluation

  // Resumed with another recipe (a changed learning rate): one line, exit 2, the run untouched;
  // --recipe-changed lets it go on (here as far as a missing Pons file, read before any child).
  std::string changed = TinyRecipe();
  changed.replace(changed.find("--lr 0.02"), 9, "--lr 0.05");
  io::WriteTextFileAtomically(dir / "changed.recipe", changed);
  CHECK(Run({ZF_BINARY, "loop", "--recipe", dir / "changed.recipe", "--out", run}, dir / "changed", &out,
            &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("was begun with another recipe") && Catch::Contains("--lr 0.05") &&
                      Catch::Contains("--recipe-changed"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(io::ReadTextFile(run + "/eval/recipe.txt") == io::ReadTextFile(recipe));
  // Resumed without --recipe (its stages, budget and mean would be dropped): one line, exit 2.
  CHECK(Run({ZF_BINARY, "loop", "--out", run, "--blocks", "1", "--filters", "8"}, dir / "norecipe", &out,
            &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("was begun with a recipe") && Catch::Contains("--recipe"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(Run({ZF_BINARY, "loop", "--recipe", dir / "changed.recipe", "--recipe-changed", "--out", run,
             "--pons", dir / "no-such-file"},
            dir / "changed2", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("no-such-file") && !Catch::Contains("another recipe"));
  // Gone on with, the change is recorded where the schedule's stages are, and the new recipe kept.
  REQUIRE(Run({ZF_BINARY, "loop", "--recipe", dir / "changed.recipe", "--recipe-changed", "--out", run,
               "--hours", "0.002"},
              dir / "changed3", &out, &err, 400) == 0);
  CHECK_THAT(
      io::ReadTextFile(run + "/eval/stages.csv"),
      Catch::Contains(",1,\"recipe changed with --recipe-changed: it had") && Catch::Contains("--lr 0.05"));
  CHECK(io::ReadTextFile(run + "/eval/recipe.txt") == changed);

  // Resumed with another net (here the command line's, over the recipe's 1 x 8): one line,
  // exit 2, naming the run's net and the options that go on with it; the run untouched.
  const std::string curve = io::ReadTextFile(run + "/eval/curve.csv");
  CHECK(Run({ZF_BINARY, "loop", "--recipe", dir / "changed.recipe", "--out", run, "--blocks", "2"},
            dir / "net", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("trains a net of 1 blocks x 8 filters, not the 2 blocks x 8 filters") &&
                      Catch::Contains("--blocks 1 --filters 8 without --score-head"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  // ... or another value head.
  CHECK(Run({ZF_BINARY, "loop", "--recipe", dir / "changed.recipe", "--out", run, "--score-head"},
            dir / "head", &out, &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("not the 1 blocks x 8 filters with a score head asked for"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK(io::ReadTextFile(run + "/eval/curve.csv") == curve);

  // A bad recipe: one line, exit 2, before any child starts.
  io::WriteTextFileAtomically(dir / "bad.recipe", "blocks = 1\n[stage from soon steps]\n");
  CHECK(Run({ZF_BINARY, "loop", "--recipe", dir / "bad.recipe", "--out", dir / "run2"}, dir / "bad", &out,
            &err) == kExitUsage);
  CHECK_THAT(err, Catch::Contains("bad.recipe line 2"));
  CHECK_FALSE(fs::exists(dir / "run2"));

  // Handed over by a binary of another build (one of the two rebuilt, the other not): one line,
  // exit 2, before anything starts; not a farm that refuses the loop's config keys later.
  {
    ScopedEnv other_build(proc::kHandOverEnv, "0123456789abcdef");
    CHECK(Run({ZF_BINARY, "loop", "--recipe", recipe, "--out", dir / "run3"}, dir / "mixed", &out, &err) ==
          kExitUsage);
  }
  CHECK_THAT(err, Catch::Contains("different builds") && Catch::Contains("rebuild both"));
  CHECK(std::count(err.begin(), err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(dir / "run3"));
}

namespace {
// The hours column of a CSV file's rows (after its header line).
// Column `column` (0-based) of a CSV file with a header row, as numbers.
std::vector<double> NumberColumn(const std::string& path, int column) {
  std::istringstream in(io::ReadTextFile(path));
  std::vector<double> numbers;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const std::vector<std::string> fields = io::SplitFields(line);
    REQUIRE(fields.size() > static_cast<size_t>(column));
    numbers.push_back(std::stod(fields[column]));
  }
  return numbers;
}
std::vector<double> HoursColumn(const std::string& path) { return NumberColumn(path, 0); }
std::vector<double> VersionColumn(const std::string& path) { return NumberColumn(path, 1); }
}  // namespace

TEST_CASE("zerofarm loop killed by SIGKILL between evaluations keeps its clocks to within seconds",
          "[multiprocess][loop][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-loop-killed");
  const std::string run = dir / "run", recipe = dir / "tiny.recipe";
  io::WriteTextFileAtomically(recipe, TinyRecipe());  // eval-every 600: no evaluation before the kill
  const auto started = std::chrono::steady_clock::now();
  Spawned loop({ZF_BINARY, "loop", "--recipe", recipe, "--out", run, "--hours", "0.1"}, dir / "loop");
  const std::string seconds_file = run + "/eval/loop-seconds.txt",
                    cpu_file = run + "/eval/loop-cpu-seconds.txt";
  const auto saved = [&](const std::string& f) {
    return fs::exists(f) ? std::stod(io::ReadTextFile(f)) : 0.0;
  };
  // Two saves, 10 s apart, then SIGKILL: no signal handler runs and nothing is written at the end.
  REQUIRE(WaitFor([&] { return saved(seconds_file) >= 15; }, 120));
  std::vector<pid_t> tree = ChildPids(loop.pid());  // farm and trainer
  for (const pid_t child : std::vector<pid_t>(tree))
    for (const pid_t grandchild : ChildPids(child)) tree.push_back(grandchild);
  loop.Signal(SIGKILL);  // its children get SIGKILL too (PR_SET_PDEATHSIG)
  REQUIRE(loop.Wait(30) == -SIGKILL);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO(loop.Stderr());
  CHECK_FALSE(fs::exists(run + "/eval/curve.csv"));  // the clocks were not an evaluation's
  const double seconds = saved(seconds_file), cpu = saved(cpu_file);
  CHECK(seconds >= 15);
  CHECK(seconds <= wall);
  CHECK(cpu > 0);  // farm and trainer (how much depends on the machine's load)
  // The next piece goes on from them. Its farm removes the killed farm's segment (or a farm of
  // another test running beside this one does: any farm removes a dead run's segments), once it
  // is 2 s old (shm::RemoveIfStale: a creator may not hold its lock yet). A kill that fell on a
  // stage's restart (fresh Debian, 2026-11-30: a 23 s stall, then the kill) killed a farm whose
  // segment was a moment old: wait those 2 s, as a next piece started by hand would.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  std::string out, err;
  REQUIRE(Run({ZF_BINARY, "loop", "--recipe", recipe, "--out", run, "--hours", "0.003"}, dir / "loop2", &out,
              &err, 300) == 0);
  for (const pid_t pid : tree) CHECK(SegmentsOf(pid).empty());
  CHECK(saved(seconds_file) > seconds + 10);
  CHECK(saved(cpu_file) > cpu);
}

TEST_CASE("zerofarm loop killed by SIGKILL during an evaluation keeps its clocks to within seconds",
          "[multiprocess][loop][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-loop-killed-eval");
  const std::string run = dir / "run", recipe = dir / "long-eval.recipe";
  // A model of the recipe's net before the loop starts: the evaluation due 10 s
  // in has one to measure, and at MCTS-20000 on 1000 openings it lasts minutes (4000 lasted over 30 s
  // on the 2-core VM).
  fs::create_directories(run + "/models");
  eval::WeightSet model1 = eval::RandomWeights(eval::GameNetConfig(*game::MakeGame("connect4"), 1, 8), 1);
  model1.version = 1;  // a model-N records version N (docs/models.md, Hot reload)
  io::WriteWeights(run + "/models/model-1.h5", model1);
  std::string text = TinyRecipe();
  text.replace(text.find("eval-every = 600"), 16, "eval-every = 10");
  text.replace(text.find("eval-positions = 20"), 19, "eval-positions = 1000");
  text.replace(text.find("eval-simulations = 4"), 20, "eval-simulations = 20000");
  // Openings (their verdicts shipped in data/connect4): an end game's tree runs out of moves.
  const std::string endgames = ReferenceFile("connect4/Test_L3_R1");
  text.replace(text.find(endgames), endgames.size(), ReferenceFile("connect4/Test_L1_R1"));
  io::WriteTextFileAtomically(recipe, text);
  Spawned loop({ZF_BINARY, "loop", "--recipe", recipe, "--out", run, "--hours", "0.1"}, dir / "loop");
  const std::string seconds_file = run + "/eval/loop-seconds.txt", curve = run + "/eval/curve.csv";
  const auto saved = [&] {
    return fs::exists(seconds_file) ? std::stod(io::ReadTextFile(seconds_file)) : 0.0;
  };
  // The evaluation begins at 10 s and saves the clocks; saves at 40 s and on
  // come from the clock's own thread while the loop's thread measures.
  const std::string cpu_file = run + "/eval/loop-cpu-seconds.txt";
  REQUIRE(WaitFor([&] { return saved() >= 10 && fs::exists(cpu_file); }, 150));
  const double cpu_at_start = std::stod(io::ReadTextFile(cpu_file));  // saved beside the seconds
  REQUIRE(WaitFor([&] { return saved() >= 40; }, 150));
  // Still in the first evaluation: no row, no curve printed (an evaluation
  // that found the set unrated would have printed one at once).
  const bool evaluating =
      !fs::exists(curve) && loop.Stdout().find("zerofarm loop: move error") == std::string::npos;
  loop.Signal(SIGKILL);
  REQUIRE(loop.Wait(30) == -SIGKILL);
  INFO(loop.Stderr());
  CHECK(evaluating);
  CHECK(std::stod(io::ReadTextFile(cpu_file)) > cpu_at_start);  // the evaluation's CPU time counted
}

TEST_CASE("zerofarm loop evaluates every --eval-every seconds across its stages' pieces",
          "[multiprocess][loop][recipe][slow]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-eval-cadence");
  const std::string run = dir / "run", recipe = dir / "stages.recipe";
  std::string out, err;
  // A model before the loop starts, so its first evaluation has one to measure when it is due
  // (10 s in). Without it the test measured how soon the loop's trainer wrote one: under
  // AddressSanitizer that was after the last stage had begun (CI, 2026-11-29).
  REQUIRE(Run(FarmArgs(run, {"--games", "16", "--duration", "120", "--shard-positions", "300"}), dir / "farm",
              &out, &err) == 0);
  REQUIRE(Run(TinyTrain(run, 5, 5), dir / "train", &out, &err) == 0);
  REQUIRE(fs::exists(run + "/models/model-1.h5"));
  // A stage every 0.001 CPU hours (3.6 CPU seconds): the loop reads the clock every 5 s, so
  // each piece is about 5 s long, under --eval-every 10. Before 2026-11-29 each piece restarted
  // the cadence, and no evaluation ran until a piece had lasted 10 s. Each stage also names
  // steps the tiny trainer never reaches ("whichever comes first", as the shipped recipe's
  // stages do): the CPU hours start them.
  std::string text = TinyRecipe();
  text = text.substr(0, text.find("[stage"));
  text.replace(text.find("eval-every = 600"), 16, "eval-every = 10");
  for (int i = 1; i <= 20; ++i)
    text += "[stage from " + std::to_string(1'000'000'000 + i) + " steps or " + std::to_string(i / 1000.0) +
            " cpu-hours]\ntrain-args = --lr 0.0" + std::to_string(i % 10 + 1) + "\n";
  io::WriteTextFileAtomically(recipe, text);
  const int code = Run({ZF_BINARY, "loop", "--recipe", recipe, "--out", run, "--hours", "0.012"},
                       dir / "loop", &out, &err, 400);
  INFO(err.substr(err.size() > 4000 ? err.size() - 4000 : 0));
  REQUIRE(code == 0);
  const std::vector<double> stages = HoursColumn(run + "/eval/stages.csv");
  const std::vector<double> evaluations = HoursColumn(run + "/eval/curve.csv");
  REQUIRE(stages.size() >= 4);  // pieces of about 5 s, not one long one
  // Started by their CPU hours: the steps of every row stay far below 1,000,000,001.
  CHECK_THAT(io::ReadTextFile(run + "/eval/stages.csv"),
             Catch::Contains("steps or 0.0") && Catch::Contains(" CPU hours: train-args --lr 0.0"));
  REQUIRE(!evaluations.empty());
  // A cadence restarted by each piece cannot measure before a piece's 10th second; one that runs
  // on across the pieces does, in some piece, however long a loaded machine makes the pieces (the
  // pieces end by CPU seconds: beside a busy loop a piece took over 10 s of wall time, and the
  // check of before 2026-12-01, the first evaluation inside a piece shorter than 10 s, failed).
  // The loop's own evaluation at its end, of the newest model, falls anywhere: left out.
  const std::vector<double> versions = VersionColumn(run + "/eval/curve.csv");
  const double newest = *std::max_element(versions.begin(), versions.end());
  double earliest = 1e9;  // seconds from its piece's start to an evaluation, the least
  for (size_t i = 0; i < evaluations.size(); ++i) {
    const auto next = std::upper_bound(stages.begin(), stages.end(), evaluations[i]);
    if (versions[i] < newest && next != stages.begin())
      earliest = std::min(earliest, (evaluations[i] - *(next - 1)) * 3600);
  }
  INFO("the earliest evaluation came " << earliest << " s into its piece");
  CHECK(earliest < 9.5);
}

TEST_CASE("zerofarm loop rebuilt while it runs: its next stage starts the new binaries",
          "[multiprocess][loop][recipe]") {
  if (!eval::TorchAvailable()) ZF_SKIP("built without LibTorch");
  ScratchDir dir("zf-rebuilt-loop");
  const std::string recipe = dir / "tiny.recipe", bin = dir / "bin";
  const std::string farm = fs::path(ZF_BINARY).filename().string();
  io::WriteTextFileAtomically(recipe, TinyRecipe());
  fs::create_directories(bin);
  // The build's two binaries, copied into bin/ as a linker writes them: a new file under the old name.
  const auto install = [&] {
    for (const std::string& name : {farm, std::string(eval::kTorchBinary)}) {
      fs::copy_file(fs::path(ZF_BINARY).parent_path() / name, bin + "/" + name + ".new");
      fs::rename(bin + "/" + name + ".new", bin + "/" + name);
    }
  };
  install();
  Spawned loop({bin + "/" + farm, "loop", "--recipe", recipe, "--out", dir / "run", "--hours", "0.015"},
               dir / "loop");
  REQUIRE(WaitForLog(loop, "loop: stage 0 of 1", 60));
  install();  // the rebuild, seconds before the trainer reaches the stage's 20 steps
  const int code = loop.Wait(400);
  const std::string err = loop.Stderr();
  INFO(err.substr(err.size() > 4000 ? err.size() - 4000 : 0));
  REQUIRE(code == 0);
  // The loop's own binary is gone; the stage's trainer runs the new file at its path.
  CHECK_THAT(err, Catch::Contains("was replaced while this process ran"));
  CHECK_THAT(err, Catch::Contains("loop: stage 1 of 1"));
  CHECK_THAT(err, Catch::Contains("lr 0.003;"));
  CHECK_THAT(err, Catch::Contains("resumed at step"));
}

// Issue 82: a trainer command that fails for a missing module names the
// interpreter it ran, through a script's #!/usr/bin/env and every link.
TEST_CASE("zerofarm loop names the interpreter a failing trainer command ran", "[multiprocess][loop]") {
  if (!fs::exists("/usr/bin/python3")) ZF_SKIP("no /usr/bin/python3");
  ScratchDir dir("zf-loop");
  const std::string trainer = dir / "trainer.py";
  std::ofstream(trainer) << "#!/usr/bin/env python3\nimport zf_no_such_module\n";
  fs::permissions(trainer, fs::perms::owner_all);
  std::string python;  // the python3 that env finds: the first on PATH, every link resolved
  std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string d; python.empty() && std::getline(path, d, ':');)
    if (::access((d + "/python3").c_str(), X_OK) == 0) python = fs::canonical(d + "/python3").string();
  REQUIRE(!python.empty());
  std::string out, err;
  const int code =
      Run({ZF_BINARY, "loop", "--out", dir / "run", "--hours", "0.05", "--game", "tictactoe", "--blocks", "1",
           "--filters", "8", "--workers", "1", "--simulations", "4", "--trainer-command", trainer},
          dir / "loop", &out, &err, 240);
  INFO(out << err);
  CHECK(code == kExitFailure);
  CHECK_THAT(err, Catch::Contains("ModuleNotFoundError"));  // the trainer's own stderr
  CHECK_THAT(err,
             Catch::Contains("loop: the trainer command ran " + trainer +
                             " (#!/usr/bin/env python3: python3 -> " + python + "); a ModuleNotFoundError"));
}
