#pragma once
// A loop recipe (`zerofarm loop --recipe NAME|FILE`, issue 25): the whole
// schedule of a learning run in one text file, so that one command makes a
// network from random weights with no hand changes. NAME is looked up as
// DATA/recipes/NAME.recipe (data/ of the source tree, or $ZF_DATA_DIR).
//
//   # a comment (also after a value: " #" starts one)
//   blocks = 4                   options of `zerofarm loop`, as on its command
//   run-args = --eval-cache 0    line: `key = value` is --key value; a bare
//   bf16                         `key` is the flag --key
//   [stage from 210000 steps]    a stage: from this many trainer steps of the run
//   train-args = --lr 0.01       on (or [stage from 4.2 cpu-hours]: CPU hours of
//   run-args = --simulations 200 the loop's process tree), these words go after
//                                the base ones to the trainer and to the farm
//   [stage from 255000 steps or 7.25 cpu-hours]   whichever comes first
//
// Only run-args and train-args may appear in a stage (everything a stage can
// change is an option of `zerofarm run` or `zerofarm train`; the later of a
// repeated option wins). Every stage of a recipe names the same clocks (steps,
// CPU hours, or both) and starts later than the one before on each; before the
// first, the base options alone apply. The command line's own options come
// after the recipe's, so they win. Steps are the portable clock (a GPU farm
// makes CPU hours mean something else); the trainer's step count is read from
// RUN/train/state.txt, written at each checkpoint. Both clocks fit a schedule
// to the budget on a CPU whose trainer makes fewer steps a CPU hour (the CPU
// hours come first there) and leave it on steps where the trainer is fast.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zerofarm::learn {

// Where a run is on the clocks stages are keyed on.
struct RunProgress {
  double cpu_hours = 0;  // the loop's process tree, all pieces (loop-cpu-seconds.txt)
  int64_t steps = 0;     // the trainer's optimiser steps, all pieces (train/state.txt)
};

struct RecipeStage {
  static constexpr double kNever = -1;  // a clock the stage's header does not name
  // Where it starts, whichever comes first: at `from_steps` trainer steps or at
  // `from_cpu_hours` CPU hours of the loop's process tree. At least one is >= 0.
  double from_steps = kNever;
  double from_cpu_hours = kNever;
  std::vector<std::string> run_args;    // after the loop's run-args, to `zerofarm run`
  std::vector<std::string> train_args;  // after the loop's train-args, to `zerofarm train`
  // "from 210000 steps or 6 CPU hours: run-args ...; train-args ..."
  std::string Describe() const;
  // The header's words, normalised: "from 210000 steps or 6 cpu-hours".
  std::string When() const;
  bool StartedAt(const RunProgress& at) const;
};

struct Recipe {
  std::string source;                  // the file it was read from
  std::string text;                    // its text, kept with the run (RUN/eval/recipe.txt)
  std::vector<std::string> loop_args;  // "--key", "value" words for `zerofarm loop`'s parser
  std::vector<RecipeStage> stages;     // on the same clocks, each later on each; may be empty
  // Its lines without comments or layout ("key = value", "key"), a stage's
  // prefixed with its header: what RecipeDifference compares.
  std::vector<std::string> settings;
};

// Reads and parses a recipe file of at most 64 KiB. ConfigError naming the
// file (and line) when it cannot be read or is not a recipe.
Recipe ReadRecipe(const std::string& path);
Recipe ParseRecipe(const std::string& text, const std::string& source);

// How `now` differs from `kept` in what the loop runs (options and stages;
// comments and layout do not count): "" when it does not, else a short
// description of what was dropped and what was added. A run keeps the recipe it
// was begun with (RUN/eval/recipe.txt) so that a resumed run's schedule cannot
// change between pieces unnoticed (issue 25 point 1).
std::string RecipeDifference(const Recipe& kept, const Recipe& now);

// `zerofarm loop`'s arguments with a recipe: its loop_args first, then the
// command line's (argv[1..]), whose options override the recipe's. Only
// --run-args and --train-args are joined, not replaced: the command line's
// words go after the recipe's in one value, so that the farm's and the
// trainer's own options override one by one (`--train-args "--batch 512"`
// keeps the recipe's window and learning rate). Both "--key V" and "--key=V".
std::vector<std::string> WithRecipeArgs(const Recipe& recipe, const std::vector<std::string>& argv);

// The blank-separated words of `s`: how a recipe's and the loop's run-args and
// train-args become arguments.
std::vector<std::string> SplitWords(const std::string& s);

// The path of recipe NAME|FILE: FILE when it names one (has a '/' or ends in
// .recipe), else DATA/recipes/NAME.recipe with DATA the shipped data folder.
std::string RecipePath(const std::string& name_or_file, const std::string& data_dir);

// How many stages have started at `at`: 0 before the first, else the one in
// force is stages[StagesStarted(...) - 1].
size_t StagesStarted(const std::vector<RecipeStage>& stages, const RunProgress& at);

}  // namespace zerofarm::learn
