// zerofarm loop: parses the options of the whole AlphaZero loop on one
// machine and runs it (learn/loop.h says what it does).
#include "zerofarm/learn/loop.h"

#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/connect4.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/learn/recipe.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::cli {
namespace {

// The value of --recipe (or --recipe=V) in argv, or "" when it has none.
std::string RecipeOption(int argc, char** argv) {
  std::string value;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--recipe" && i + 1 < argc) value = argv[++i];
    if (a.rfind("--recipe=", 0) == 0) value = a.substr(9);
  }
  return value;
}

// argv with the recipe's options put before the command line's own (which
// therefore win, being parsed later; --run-args and --train-args are joined:
// learn::WithRecipeArgs). `storage` owns the strings.
std::vector<char*> WithRecipe(int argc, char** argv, const learn::Recipe& recipe,
                              std::vector<std::string>* storage) {
  *storage = learn::WithRecipeArgs(recipe, std::vector<std::string>(argv, argv + argc));
  std::vector<char*> out;
  for (auto& w : *storage) out.push_back(&w[0]);
  out.push_back(nullptr);
  return out;
}

}  // namespace

// `zerofarm loop`'s options: the farm's (the option table) and its own.
void AddLoopOptions(cxxopts::Options& options) {
  // The farm's options are `run`'s (the option table); the loop hands them to
  // its farm as RUN/eval/farm-config.txt, and the net's shape, seed, weights and
  // value discount to its trainer too.
  AddTableOptions(options, proc::kLoop);
  AddCommandOptions(options, proc::kLoop);
}

// --trainer-command against what only zerofarm's trainer does: one line each (exit 2).
void CheckTrainerCommand(const learn::LoopConfig& loop, bool recipe) {
  if (loop.trainer_command.empty()) return;
  if (recipe)
    throw ConfigError("--trainer-command: a recipe schedules zerofarm's own trainer; give one or the other");
  if (!loop.train_args.empty())
    throw ConfigError("--train-args go to zerofarm train; put your trainer's options in --trainer-command");
  if (loop.final_mean > 0)
    throw ConfigError(
        "--final-mean averages zerofarm's own checkpoints; it does not go with --trainer-command");
}

// The loop's settings from its parsed options; ConfigError for a bad value.
learn::LoopConfig LoopConfigFrom(const cxxopts::ParseResult& r) {
  learn::LoopConfig loop = ReadCommandOptions(r, proc::kLoop).loop;  // each in its range
  loop.farm = ReadTableOptions(r, proc::kLoop);
  if (loop.farm.out.empty()) throw ConfigError("--out is required");
  loop.farm.Validate();
  // The loop measures move error on Pons's Connect Four sets; for any other
  // game it trains without that measure (an arena, `eval --against`, rates it).
  const bool connect4 = game::IsConnect4(*game::MakeGame(loop.farm.game));
  if (!connect4 && !loop.pons.empty())
    throw ConfigError(
        "--pons needs --game connect4 (or connect4-threats): the sets are Connect Four positions");
  if (loop.pons.empty() && connect4) {
    const std::string ref = DataDir() + "/reference/connect4/";
    loop.pons = {ref + "Test_L2_R1", ref + "Test_L1_R1"};
  }
  loop.shipped_ratings = ShippedRatings();
  return loop;
}

namespace {

// The recipe a run keeps (RUN/eval/recipe.txt, rewritten at each start of a run begun with
// --recipe); nullopt when it keeps none. ConfigError for a kept copy that is a link.
std::optional<learn::Recipe> KeptRecipe(const std::string& run) {
  const std::string kept = io::RunDir(run).LoopRecipeCopy();
  struct stat st {};
  if (::lstat(kept.c_str(), &st) != 0) return std::nullopt;
  if (S_ISLNK(st.st_mode))
    throw ConfigError(kept + " is a symbolic link, which zerofarm never writes: not read");
  return learn::ReadRecipe(kept);
}

}  // namespace

int LoopCommand(int argc_in, char** argv_in) {
  // A recipe's options go in front of the command line's, which win.
  learn::Recipe recipe;
  std::vector<std::string> storage;
  std::vector<char*> with_recipe(argv_in, argv_in + argc_in);
  if (const std::string name = RecipeOption(argc_in, argv_in); !name.empty()) {
    recipe = learn::ReadRecipe(learn::RecipePath(name, DataDir()));
    with_recipe = WithRecipe(argc_in, argv_in, recipe, &storage);
  }
  const int argc = static_cast<int>(storage.empty() ? argc_in : storage.size());
  cxxopts::Options options(
      "zerofarm loop",
      "The AlphaZero loop on one machine: a farm and a trainer on one run directory, with a periodic\n"
      "evaluation of the newest model against the exact Connect Four solver. Run it again to resume.\n"
      "`zerofarm loop --recipe connect4 --out DIR` runs the whole shipped schedule (docs/learning.md).");
  AddLoopOptions(options);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, with_recipe.data(), &r, &code)) return code;
  learn::LoopConfig loop = LoopConfigFrom(r);
  CheckTrainerCommand(loop, !recipe.text.empty());
  // A run goes on with the recipe it was begun with: another is refused (exit 2) unless
  // --recipe-changed, and then recorded in RUN/eval/stages.csv.
  const std::optional<learn::Recipe> kept = KeptRecipe(loop.farm.out);
  if (recipe.text.empty()) {
    RefuseGiven(r, {"recipe-changed"}, "goes with --recipe: it lets a run go on with a changed recipe");
    // A run begun with a recipe, resumed without one, would drop its stages, budget and
    // mean without a word: refused (exit 2).
    if (kept)
      throw ConfigError("the run " + loop.farm.out + " was begun with a recipe (" +
                        io::RunDir(loop.farm.out).LoopRecipeCopy() + "): resume it with the same --recipe");
  } else {
    const std::string difference = kept ? learn::RecipeDifference(*kept, recipe) : "";
    if (!difference.empty() && !r.count("recipe-changed"))
      throw ConfigError("the run " + loop.farm.out + " was begun with another recipe (" + difference +
                        "): give --recipe-changed to go on with this one");
    if (r.count("recipe-changed")) loop.recipe_change = difference;
  }
  loop.stages = recipe.stages;
  loop.recipe_text = recipe.text;
  return learn::RunLoop(loop);
}

}  // namespace zerofarm::cli
