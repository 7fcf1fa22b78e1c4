#pragma once
// `zerofarm loop`: the whole AlphaZero loop on one machine. Starts a farm
// (`zerofarm run`) and a trainer (`zerofarm train`) as child processes on one
// run directory, and every `eval_every` seconds measures the newest model
// (move error against the exact Connect Four solver) in this process,
// appending to RUN/eval/curve.csv and printing the curve so far on stdout.
// A run started from --weights has that model as its curve's first point,
// measured once the children are started.
//
// Resuming: run the same command again. The farm continues the directory
// (new epoch), the trainer resumes from RUN/train/state.txt, and the curve's
// hours continue from RUN/eval/loop-seconds.txt (farm time of earlier pieces)
// and its CPU hours (the whole process tree's) from RUN/eval/loop-cpu-seconds.txt.
// The loop writes both every 10 s (from a thread of their own, evaluations
// included), at every evaluation and when it ends, so a loop killed by SIGKILL
// or with its machine loses at most 10 s of each.
//
// A recipe's stages (learn/recipe.h) change the children's options at given
// trainer steps or CPU hours of the run: the loop stops farm and trainer (the trainer writes a
// checkpoint, the farm its finished games) and starts them again with the
// stage's arguments; RUN/eval/stages.csv records each start. A resumed run
// starts in the stage it had reached.
//
// The checkpoint mean (final_mean > 0): when a piece ends by its hours or the
// run's CPU-hour bound (not by a signal or a failed child), the loop writes
// the mean of the run's newest final_mean checkpoints (io::MeanOfWeightsFiles;
// stochastic weight averaging after the fact) to RUN/eval/checkpoint-mean.h5
// and measures it as it measures the checkpoints, into RUN/eval/mean.csv. The
// farm never loads it (it is not in the models directory); it is the run's
// result, what `zerofarm eval --weights` and `play` take.
//
// A trainer of the user's (trainer_command, docs/models.md): the loop starts
// that command in place of `zerofarm train`, the run directory appended as its
// last argument and ZF_START_MODEL in its environment (the run's newest model,
// else --weights; empty for random weights: the model to continue), and stops
// it with SIGTERM as it stops its own. It is how a TorchScript model
// (--weights X.pt) closes the loop: zerofarm's trainer trains only its own
// net. The command ending with exit 0 ends the loop (exit 0); any
// other end is a failed child's. Stages, the checkpoint mean and --train-args
// belong to zerofarm's trainer and are refused beside it (cli/loop.cpp).
#include <string>
#include <vector>

#include "zerofarm/learn/recipe.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::learn {

// Checked by the caller (`zerofarm loop`'s parser): farm validated, its game
// connect4 and its out the run directory; hours, cpu_hours >= 0;
// eval_every >= 10; simulations and positions >= 0; stages as ParseRecipe
// leaves them (one clock, increasing `from`).
struct LoopConfig {
  proc::FarmConfig farm;                // the farm's settings; farm.out is the run directory
  double hours = 0.0;                   // stop after this many hours of this invocation; 0 = until stopped
  double eval_every = 600.0;            // seconds between evaluations
  std::vector<std::string> pons;        // Pons-format files the move error is measured on
  int eval_positions = 0;               // the first N positions of each file; 0 = all
  int eval_simulations = 100;           // plain PUCT (the solver off)
  int eval_solver_simulations = 100;    // PUCT with the MCTS-solver too; 0 = off
  std::vector<std::string> run_args;    // more arguments for `zerofarm run`
  std::vector<std::string> train_args;  // more arguments for `zerofarm train`
  // The user's trainer (see above): program and arguments; empty: `zerofarm train`.
  // A program without a slash is looked up on PATH at start.
  std::vector<std::string> trainer_command;
  std::vector<std::string> shipped_ratings;  // solver verdicts shipped with zerofarm (RatePositions' `known`)
  std::vector<RecipeStage> stages;           // a recipe's stages; empty: the options above throughout
  double cpu_hours = 0;     // stop once the run's CPU hours (all pieces) reach this; 0 = no bound
  std::string recipe_text;  // kept as RUN/eval/recipe.txt when not empty
  // Set by `zerofarm loop --recipe-changed` when RUN/eval/recipe.txt held another recipe: what
  // was dropped and added (RecipeDifference); recorded as a row of RUN/eval/stages.csv. Empty: none.
  std::string recipe_change;
  // Checkpoints averaged into RUN/eval/checkpoint-mean.h5 when a piece ends (see above); 0 = none.
  // Set by --final-mean (0..kMaxFinalMean).
  int final_mean = 0;
};
inline constexpr int kMaxFinalMean = 1000;

// Runs the loop until `hours`, SIGINT/SIGTERM, or a child's failure; returns
// the exit code: 0, else the failed child's own when it says bad input (2) or
// a full disk (4), else 1. ConfigError for a bad Pons file, before any child starts.
int RunLoop(const LoopConfig& config);

}  // namespace zerofarm::learn
