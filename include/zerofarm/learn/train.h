#pragma once
// `zerofarm train`: the trainer side of the loop. Reads a sliding window of
// the newest shards of a run directory, trains the network on random
// symmetric views of their positions, and writes checkpoints that the running
// farm's evaluators hot-reload.
//
// Files (all written atomically: NAME.tmp, fsync, rename, fsync of the dir):
//   RUN/models/model-N.h5   checkpoint N (weights format, model version N)
//   RUN/train/momentum.h5   the optimiser's momentum buffers of the newest checkpoint
//   RUN/train/state.txt     "key=value" lines: version, step, samples, paced_from (see TrainState)
//   RUN/train/heads.h5      with --ownership: the ownership head of the newest checkpoint
//                           (a training aid the checkpoints leave out; eval/trainer.h)
// A trainer started on a run that has a state resumes: it loads model-V.h5 of
// the state's version V and its momentum, and continues the step count and
// the version numbers. Without a state it starts from the newest model-N.h5 of
// the run, else from --weights, else from a random net of --blocks x --filters.
//
// Pace: a trainer faster than the farm would overfit the few positions it
// has, so by default it takes at most `replay` samples per position the run
// has produced, and waits for new shards when it is ahead. Where the shards
// hold fewer positions than the samples drawn before allow (earlier shards are
// gone: a run resumed from its kept models and state alone), the pace starts
// again at the trainer's start, on the shards present then and to come, and
// the state records the samples drawn before that point (paced_from).
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "zerofarm/eval/trainer.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/shard_manifest.h"

namespace zerofarm::io {
struct ShardMeta;
class ShardReader;
}  // namespace zerofarm::io

namespace zerofarm::learn {

struct TrainConfig {
  std::string run;      // run directory: reads RUN/shards (and its host subdirectories)
  std::string weights;  // start here when the run has no model yet; empty = random
  int blocks = 6;       // tower of a random start
  int filters = 64;
  bool score_head = false;  // a random start's value head: the score head (eval/weights.h)
  int value_channels = 1;   // a random start's value head: its conv1x1's channels
  // Which of the shape above the command line gave: on a run with models, where the trainer
  // resumes with their net, one given that is not theirs is refused (issue 72).
  bool blocks_given = false, filters_given = false, score_head_given = false, value_channels_given = false;
  int batch = 256;                 // positions per step
  int64_t window = 250'000;        // train on the newest this-many positions
  int64_t min_positions = 2'048;   // wait until the window holds this many
  double replay = 4.0;             // samples per produced position at most; 0 = unlimited
  double value_discount = 1.0;     // value target z x this^(plies left); the farm's search.value_discount
  double q_weight = 0.0;           // value target (1 - w) x that + w x the root's search value; in [0, 1]
  bool bootstrap_sampled = false;  // value target before a sampled move: the search's value there
  // optim.ownership_weight > 0 trains an ownership head on the final board of
  // each row's game (ShardWindow's ownership targets).
  int64_t steps = 0;           // stop after this many steps in this invocation; 0 = no limit
  double duration = 0.0;       // stop after this many seconds; 0 = no limit
  int checkpoint_steps = 500;  // write model-N.h5 every this many steps (and at the end)
  bool augment = true;         // a random symmetry of the game per sample
  bool wait = true;            // wait for new shards when ahead (false: stop instead)
  bool progress = true;        // progress line on stderr
  eval::TrainerOptions optim;
  uint64_t seed = 1;
};

// The trainer's persistent state (RUN/train/state.txt).
struct TrainState {
  uint32_t version = 0;  // newest checkpoint written
  int64_t step = 0;      // optimiser steps over all invocations
  int64_t samples = 0;   // positions sampled over all invocations (batch x steps)
  // Samples drawn before the replay pace last started over (0: it never did),
  // so the pace counts samples - paced_from against the shards present.
  // Written by the trainer when it finds earlier shards gone; optional in the
  // file (absent means 0).
  int64_t paced_from = 0;
  std::string ToText() const;
  static TrainState FromText(const std::string& text);  // ConfigError on bad text
};

// The newest shards of a run, held in memory, at most `window` positions
// (whole shards, newest first, by modification time then name). Refresh()
// picks up new shards and drops the ones that left the window; a new shard
// that would leave at once is only counted (its metadata), never read whole.
// With value_discount d < 1 a row's value target is z x d^(L - 1 - ply), L
// the game's length (the position before the last move keeps z): what a
// search with the same SearchConfig::value_discount backs up for that win.
// With q_weight w > 0 the target is then (1 - w) x that + w x the row's
// root_value (the self-play search's value of the position, mover's view): a
// game's result says little about its opening positions when later moves were
// sampled, and the search's value at the position is what it saw from there.
// With bootstrap_sampled, before that blend, a row whose game later played a
// move that was not its search's best (a move sampled for exploration: its
// policy-target share below the largest) gets, instead of z, the root_value of
// the first such move's position e, signed for the row's mover and times
// value_discount^(e - ply); the row at e gets its own root_value. Rows with
// only best moves after them keep z: the result is what best play led to.
// With ownership, each row also gets an ownership target: its game replayed
// to its last move, every cell of the board as it was then, +1 a stone of the
// row's player to move, -1 of the opponent, 0 empty (int8, height x width; a
// shard whose moves do not replay is skipped). Every row also gets its score
// head target (eval/weights.h's ScoreBin): its game's outcome for the row's
// player to move and how many plies later the game ended, from the shard's
// result before any of the changes above.
class ShardWindow {
 public:
  ShardWindow(std::string run_dir, int64_t window, double value_discount = 1.0, double q_weight = 0.0,
              bool bootstrap_sampled = false, bool ownership = false);
  // Rescans the shard directories; returns the number of new shards loaded.
  // A shard that cannot be read is skipped with a warning (once).
  int Refresh();
  int64_t Positions() const { return positions_; }
  // Positions in every shard of the run seen so far (in the window or not).
  int64_t ProducedPositions() const { return produced_; }
  size_t Shards() const { return shards_.size(); }
  const std::string& GameName() const { return game_; }  // "" until a shard is seen
  uint32_t NewestModelVersion() const;                   // max model_version_max in the window

  // Copies row `index` (0 <= index < Positions()) into the out arrays.
  // `ownership` (height x width values; nullptr: not wanted) needs a window made with ownership;
  // `score_bin` (nullptr: not wanted) is the row's score head target.
  void Row(int64_t index, uint8_t* features, float* policy, float* z, uint8_t* full,
           int8_t* ownership = nullptr, int16_t* score_bin = nullptr) const;

 private:
  struct Shard {
    std::string path;
    int64_t mtime_ns = 0;
    int64_t positions = 0;
    uint32_t model_version_max = 0;
    std::vector<uint8_t> features;
    std::vector<float> policy;
    std::vector<float> z;
    std::vector<uint8_t> full;       // /positions/full_search; empty: every row a full search
    std::vector<int8_t> ownership;   // with ownership: positions x cells
    std::vector<int16_t> score_bin;  // positions: the score head's targets
  };
  // A new shard whose metadata was read (and checked: io/h5_check.h).
  struct NewShard {
    std::string path;
    int64_t mtime_ns = 0;
    int64_t positions = 0;
  };
  // The new shards that are of this run's game, newest first; the others
  // skipped. Throws Error only when the HDF5 checker cannot run.
  std::vector<NewShard> ReadNewMetadata();
  // Logs `why` (one line) and never reads `path` again.
  void Skip(const std::string& path, const std::string& why);
  // Sets the run's game from the first shard; throws if a later one differs.
  void CheckGame(const io::ShardMeta& meta, const std::string& path);
  // The shard's rows, value targets made.
  Shard Load(const io::ShardReader& reader, int64_t mtime_ns) const;
  std::string run_dir_;
  io::RunShardFollower follower_;  // new shards: hosts' manifests, else listings
  int64_t window_;
  double value_discount_;
  double q_weight_;
  bool bootstrap_sampled_;
  bool ownership_;
  std::string game_;
  int feature_bytes_ = 0;
  int actions_ = 0;
  std::vector<Shard> shards_;  // newest first
  // Hashed, not a sorted vector: an insert into a vector of a million paths
  // moves them all (issue 76's load test: O(run size) per new shard).
  std::unordered_set<std::string> seen_;  // every shard path counted in produced_
  std::unordered_set<std::string> bad_;   // shards that could not be read
  int64_t positions_ = 0;
  int64_t produced_ = 0;
};

// The shard files of a run: RUN/shards/*.h5 and RUN/shards/*/*.h5.
std::vector<std::string> RunShards(const std::string& run_dir);

// Runs the trainer until steps/duration are reached or SIGINT/SIGTERM;
// writes a checkpoint at the end. Returns an exit code.
int RunTrainer(const TrainConfig& config);

}  // namespace zerofarm::learn
