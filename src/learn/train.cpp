// `zerofarm train` (learn/train.h): the shard window, checkpoints, resume, and
// the training loop around eval::Trainer.
#include "zerofarm/learn/train.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/symmetry.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/torchscript_file.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::learn {
namespace fs = std::filesystem;

// ---- state ------------------------------------------------------------------

std::string TrainState::ToText() const {
  std::ostringstream os;
  os << "version=" << version << "\nstep=" << step << "\nsamples=" << samples << "\n";
  if (paced_from > 0) os << "paced_from=" << paced_from << "\n";
  return os.str();
}

TrainState TrainState::FromText(const std::string& text) {
  TrainState s;
  std::istringstream in(text);
  std::string line;
  int seen = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) throw ConfigError("bad trainer state line '" + line + "'");
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    try {
      if (key == "version")
        s.version = static_cast<uint32_t>(std::stoul(value));
      else if (key == "step")
        s.step = std::stoll(value);
      else if (key == "samples")
        s.samples = std::stoll(value);
      else if (key == "paced_from") {  // optional: states before 2026-11-27 lack it
        s.paced_from = std::stoll(value);
        continue;
      } else
        throw ConfigError("unknown trainer state key '" + key + "'");
    } catch (const std::logic_error&) {
      throw ConfigError("bad trainer state value '" + line + "'");
    }
    ++seen;
  }
  if (seen != 3) throw ConfigError("trainer state needs version, step and samples");
  if (s.paced_from < 0 || s.paced_from > s.samples)
    throw ConfigError("trainer state: paced_from must lie between 0 and samples");
  return s;
}

namespace {

int64_t MtimeNs(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

bool IsShardName(const fs::path& p) { return p.extension() == ".h5" && p.filename().string()[0] != '.'; }

}  // namespace

std::vector<std::string> RunShards(const std::string& run_dir) {
  std::vector<std::string> out;
  const fs::path dir = io::RunDir(run_dir).ShardsDir();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && IsShardName(e.path())) {
      out.push_back(e.path().string());
    } else if (e.is_directory()) {
      std::error_code sub_ec;
      for (const auto& f : fs::directory_iterator(e.path(), sub_ec))
        if (f.is_regular_file() && IsShardName(f.path())) out.push_back(f.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- the window ---------------------------------------------------------------

ShardWindow::ShardWindow(std::string run_dir, int64_t window, double value_discount, double q_weight,
                         bool bootstrap_sampled, bool ownership)
    : run_dir_(std::move(run_dir)),
      follower_(io::RunDir(run_dir_).ShardsDir()),
      window_(window),
      value_discount_(value_discount),
      q_weight_(q_weight),
      bootstrap_sampled_(bootstrap_sampled),
      ownership_(ownership) {}

namespace {

// z x discount^(plies from the row's position to its game's last move). A
// resigned game's resigning position (ply = length) counts as 0 plies away.
void DiscountValueTargets(const std::vector<io::ShardGame>& games, double discount, io::PositionRows* rows) {
  for (const io::ShardGame& g : games)
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const auto i = static_cast<size_t>(row);
      const int plies_left = std::max(0, g.length - 1 - rows->ply[i]);
      rows->z[i] = static_cast<float>(rows->z[i] * std::pow(discount, plies_left));
    }
}

// Whether the move played from row i was not the search's best: its share of
// the policy target is below the largest (ties count as best).
bool SampledMove(const io::PositionRows& rows, int actions, size_t i, int move) {
  const float* p = rows.policy.data() + i * static_cast<size_t>(actions);
  if (move < 0 || move >= actions) return false;
  return p[move] < *std::max_element(p, p + actions);
}

// A row followed, in its game, by a move that was not the search's best gets
// that move's position's root_value as its target, signed for its own mover
// and discounted by the plies between; the row of that move gets its own
// root_value. Rows with only best moves after them keep z. The game's result
// says what the play after a sampled move led to, not what the position was.
void BootstrapSampledMoves(const std::vector<io::ShardGame>& games, int actions, double discount,
                           io::PositionRows* rows) {
  for (const io::ShardGame& g : games) {
    std::vector<size_t> order;  // the game's rows, last ply first
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row)
      order.push_back(static_cast<size_t>(row));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows->ply[a] > rows->ply[b]; });
    bool have = false;  // a sampled move at or after this row
    float value = 0;    // its position's root_value (its mover's view)
    int at = 0;         // its ply
    for (size_t i : order) {
      const int ply = rows->ply[i];
      if (ply >= 0 && static_cast<size_t>(ply) < g.moves.size() &&
          SampledMove(*rows, actions, i, g.moves[static_cast<size_t>(ply)])) {
        have = true;
        value = rows->root_value[i];
        at = ply;
      }
      if (!have) continue;
      const int plies = at - ply;
      rows->z[i] = static_cast<float>((plies % 2 ? -value : value) * std::pow(discount, plies));
    }
  }
}

// The board at the end of game g (its moves replayed, each checked legal):
// the stones of each player, cell by cell (0 or 1, -1 empty), and the player
// to move at each ply 0..length. Error on moves that do not replay.
struct FinalBoard {
  std::vector<int8_t> owner;
  std::vector<int8_t> mover;
};
FinalBoard ReplayToEnd(const game::Game& game, const io::ShardGame& g) {
  const game::BoardShape shape = game.Shape();
  const int cells = shape.Cells();
  FinalBoard b;
  auto state = game.NewInitialState();
  for (const int16_t move : g.moves) {
    if (state->IsTerminal() || !state->IsLegal(move))
      throw Error("game " + std::to_string(g.game_id) + " does not replay: move " + std::to_string(move) +
                  " at ply " + std::to_string(b.mover.size()));
    b.mover.push_back(static_cast<int8_t>(state->CurrentPlayer()));
    state->Apply(move);
  }
  const int last = state->CurrentPlayer();
  b.mover.push_back(static_cast<int8_t>(last));
  std::vector<uint8_t> planes(static_cast<size_t>(shape.FeatureBytes()));
  state->EncodeFeatures(planes.data());  // planes 0 and 1: own and opponent (OwnershipTargets checks)
  b.owner.assign(static_cast<size_t>(cells), -1);
  for (int c = 0; c < cells; ++c) {
    if (planes[static_cast<size_t>(c)]) b.owner[static_cast<size_t>(c)] = static_cast<int8_t>(last);
    if (planes[static_cast<size_t>(cells + c)])
      b.owner[static_cast<size_t>(c)] = static_cast<int8_t>(1 - last);
  }
  return b;
}

// Every row's ownership target (ShardWindow): positions x cells.
std::vector<int8_t> OwnershipTargets(const game::Game& game, const std::vector<io::ShardGame>& games,
                                     const io::PositionRows& rows) {
  const std::vector<std::string> names = game.PlaneNames();
  if (names.size() < 2 || names[0] != "own" || names[1] != "opponent")
    throw ConfigError("--ownership: " + game.Name() +
                      "'s features do not start with own and opponent stones");
  const size_t cells = static_cast<size_t>(game.Shape().Cells());
  std::vector<int8_t> out(rows.count * cells, 0);
  for (const io::ShardGame& g : games) {
    const FinalBoard b = ReplayToEnd(game, g);
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const auto i = static_cast<size_t>(row);
      const int ply = rows.ply[i];
      if (ply < 0 || static_cast<size_t>(ply) >= b.mover.size())
        throw Error("game " + std::to_string(g.game_id) + " has a row at ply " + std::to_string(ply));
      const int8_t me = b.mover[static_cast<size_t>(ply)];
      for (size_t c = 0; c < cells; ++c)
        if (b.owner[c] >= 0) out[i * cells + c] = b.owner[c] == me ? 1 : -1;
    }
  }
  return out;
}

// Every row's score head target (ScoreBin over the game's MaxGameLength()):
// the sign of its z (the game's result for the row's mover, before any
// discount or blend) and the plies from the row to its game's end, counting
// its own move (a resigned game's resigning position counts as 1).
std::vector<int16_t> ScoreTargets(const game::Game& game, const std::vector<io::ShardGame>& games,
                                  const io::PositionRows& rows) {
  std::vector<int16_t> out(rows.count, 0);
  const int plies_max = game.MaxGameLength();
  for (const io::ShardGame& g : games)
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const auto i = static_cast<size_t>(row);
      const int plies = std::max(1, g.length - rows.ply[i]);
      const int outcome = rows.z[i] > 0 ? 1 : rows.z[i] < 0 ? -1 : 0;
      const int bin = eval::ScoreBin(plies_max, plies, outcome);
      if (bin < 0)
        throw Error("game " + std::to_string(g.game_id) + " has a row " + std::to_string(plies) +
                    " plies from its end; a game of " + game.Name() + " lasts at most " +
                    std::to_string(plies_max));
      out[i] = static_cast<int16_t>(bin);
    }
  return out;
}

// z <- (1 - w) x z + w x root_value, row by row (both the mover's view).
void BlendSearchValue(double w, io::PositionRows* rows) {
  for (size_t i = 0; i < rows->z.size(); ++i)
    rows->z[i] = static_cast<float>((1.0 - w) * rows->z[i] + w * rows->root_value[i]);
}

}  // namespace

void ShardWindow::CheckGame(const io::ShardMeta& m, const std::string& path) {
  if (game_.empty()) {
    game_ = m.game;
    feature_bytes_ = m.FeatureBytes();
    actions_ = m.actions;
  } else if (m.game != game_ || m.FeatureBytes() != feature_bytes_ || m.actions != actions_) {
    throw Error(path + " holds " + m.game + " positions; this run's shards are " + game_);
  }
}

ShardWindow::Shard ShardWindow::Load(const io::ShardReader& reader, int64_t mtime_ns) const {
  io::PositionRows rows = reader.ReadAllPositions();
  Shard s;
  // Read once for all; the reader refuses a game whose rows are not the shard's.
  const std::vector<io::ShardGame> games = reader.ReadGames();
  const auto game = game::MakeGame(reader.meta().game);
  s.score_bin = ScoreTargets(*game, games, rows);  // from z as the games ended
  if (ownership_) s.ownership = OwnershipTargets(*game, games, rows);
  if (value_discount_ < 1.0) DiscountValueTargets(games, value_discount_, &rows);
  if (bootstrap_sampled_) BootstrapSampledMoves(games, reader.meta().actions, value_discount_, &rows);
  if (q_weight_ > 0.0) BlendSearchValue(q_weight_, &rows);
  s.path = reader.path();
  s.mtime_ns = mtime_ns;
  s.positions = static_cast<int64_t>(rows.count);
  s.model_version_max = reader.meta().model_version_max;
  s.features = std::move(rows.features);
  s.policy = std::move(rows.policy);
  s.z = std::move(rows.z);
  s.full = std::move(rows.full_search);
  return s;
}

void ShardWindow::Skip(const std::string& path, const std::string& why) {
  ZF_LOG(WARN) << "skipping shard: " << why;
  bad_.insert(path);
}

std::vector<ShardWindow::NewShard> ShardWindow::ReadNewMetadata() {
  // The new shards, newest first (by modification time, then name).
  std::vector<std::pair<int64_t, std::string>> by_time;
  for (const auto& path : follower_.NewShards())
    if (seen_.count(path) == 0 && bad_.count(path) == 0) by_time.emplace_back(MtimeNs(path), path);
  std::sort(by_time.rbegin(), by_time.rend());
  std::vector<std::string> paths;
  for (const auto& entry : by_time) paths.push_back(entry.second);
  // libhdf5 crashes on some damaged files: a checker process reads them first (io/h5_check.h).
  const std::vector<std::string> verdicts = io::CheckH5Files(io::H5CheckKind::kShardMeta, paths);
  std::vector<NewShard> out;
  for (size_t i = 0; i < by_time.size(); ++i) {
    const std::string& path = paths[i];
    try {
      if (!verdicts[i].empty()) throw Error(verdicts[i]);
      const io::ShardReader reader(path);
      CheckGame(reader.meta(), path);
      out.push_back({path, by_time[i].first, static_cast<int64_t>(reader.Positions())});
    } catch (const std::exception& e) {
      Skip(path, e.what());
    }
  }
  return out;
}

int ShardWindow::Refresh() {
  // Only the shards the window keeps are read whole; older ones are counted
  // from their metadata. (A trainer resumed on a long run would otherwise
  // read every shard the run wrote, minutes of CPU, to drop all but the last.)
  // The checker reads those the window will keep, all in one process; one
  // that a refused shard brings into the window is checked on its own.
  std::vector<NewShard> fresh;
  std::vector<std::string> whole, verdicts;
  try {
    fresh = ReadNewMetadata();
    int64_t planned = 0;
    for (const NewShard& f : fresh)
      if (whole.empty() || planned < window_) whole.push_back(f.path), planned += f.positions;
    verdicts = io::CheckH5Files(io::H5CheckKind::kShard, whole);
  } catch (const Error& e) {  // the checker could not run: no shard's fault
    ZF_LOG(WARN) << "cannot read the new shards now (" << e.what() << "); trying again at the next refresh";
    return 0;
  }
  std::vector<Shard> kept;  // newest first
  int64_t newer = 0;        // positions in the kept shards newer than this one
  int added = 0;
  for (const NewShard& f : fresh) {
    if (kept.empty() || newer < window_) {
      try {
        const auto at = std::find(whole.begin(), whole.end(), f.path) - whole.begin();
        const std::string verdict = static_cast<size_t>(at) < whole.size()
                                        ? verdicts[static_cast<size_t>(at)]
                                        : io::CheckH5Files(io::H5CheckKind::kShard, {f.path})[0];
        if (!verdict.empty()) throw Error(verdict);
        kept.push_back(Load(io::ShardReader(f.path), f.mtime_ns));
        newer += kept.back().positions;
      } catch (const std::exception& e) {
        Skip(f.path, e.what());
        continue;
      }
    }
    seen_.insert(f.path);
    produced_ += f.positions;
    ++added;
  }
  positions_ += newer;
  shards_.insert(shards_.begin(), std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
  // Whole shards leave the window from the old end, keeping at least one.
  while (shards_.size() > 1 && positions_ - shards_.back().positions >= window_) {
    positions_ -= shards_.back().positions;
    shards_.pop_back();
  }
  return added;
}

uint32_t ShardWindow::NewestModelVersion() const {
  uint32_t v = 0;
  for (const auto& s : shards_) v = std::max(v, s.model_version_max);
  return v;
}

void ShardWindow::Row(int64_t index, uint8_t* features, float* policy, float* z, uint8_t* full,
                      int8_t* ownership, int16_t* score_bin) const {
  for (const auto& s : shards_) {
    if (index >= s.positions) {
      index -= s.positions;
      continue;
    }
    std::copy_n(&s.features[static_cast<size_t>(index) * feature_bytes_], feature_bytes_, features);
    std::copy_n(&s.policy[static_cast<size_t>(index) * actions_], actions_, policy);
    *z = s.z[static_cast<size_t>(index)];
    *full = s.full.empty() ? 1 : s.full[static_cast<size_t>(index)];
    if (score_bin) *score_bin = s.score_bin[static_cast<size_t>(index)];
    if (ownership) {
      if (s.ownership.empty()) throw Error("ShardWindow::Row: a window without ownership targets");
      const size_t cells = s.ownership.size() / static_cast<size_t>(s.positions);
      std::copy_n(&s.ownership[static_cast<size_t>(index) * cells], cells, ownership);
    }
    return;
  }
  throw Error("ShardWindow::Row: index out of range");
}

// ---- the loop --------------------------------------------------------------------

namespace {

std::atomic<int> g_stop_signal{0};

void OnStopSignal(int sig) {
  // relaxed: a flag polled by the same thread between steps; it publishes nothing.
  g_stop_signal.store(sig, std::memory_order_relaxed);
}

// The trainer's files in the run directory (io/run_dir.h).
struct Paths {
  io::RunDir dir;
  std::string models, train, state, momentum, heads;
  explicit Paths(const std::string& run)
      : dir(run),
        models(dir.ModelsDir()),
        train(dir.TrainDir()),
        state(dir.TrainStateFile()),
        momentum(dir.TrainMomentumFile()),
        heads(dir.TrainHeadsFile()) {}
  std::string Model(uint32_t version) const { return dir.ModelPath(version); }
};

eval::NetConfig RandomNetFor(const game::Game& game, const TrainConfig& config) {
  proc::FarmConfig shape;
  shape.blocks = config.blocks;
  shape.filters = config.filters;
  shape.score_head = config.score_head;
  shape.value_channels = config.value_channels;
  return proc::NetConfigFor(game, shape);
}

std::string Thousands(int64_t v) {
  if (v >= 10'000'000) return std::to_string(v / 1'000'000) + "M";
  if (v >= 10'000) return std::to_string(v / 1'000) + "k";
  return std::to_string(v);
}

}  // namespace

namespace {

void CheckTrainConfig(const TrainConfig& config) {
  if (config.run.empty()) throw ConfigError("--run is required");
  if (config.batch < 1 || config.batch > 65536) throw ConfigError("--batch must be in [1, 65536]");
  if (config.window < config.batch) throw ConfigError("--window must be >= --batch");
  if (config.min_positions < 1) throw ConfigError("--min-positions must be >= 1");
  if (config.replay < 0) throw ConfigError("--replay must be >= 0");
  if (config.checkpoint_steps < 1) throw ConfigError("--checkpoint-steps must be >= 1");
  if (config.steps < 0 || config.duration < 0) throw ConfigError("--steps and --duration must be >= 0");
  if (io::IsTorchScriptPath(config.weights))  // before any wait for positions
    throw ConfigError("--weights " + config.weights +
                      ": zerofarm train trains zerofarm's own net; train a TorchScript model in PyTorch "
                      "(examples/train_torch.py, docs/models.md)");
}

void MakeTrainDirs(const TrainConfig& config, const Paths& paths) {
  std::error_code ec;
  if (!fs::is_directory(config.run, ec)) throw ConfigError(config.run + " is not a run directory");
  fs::create_directories(paths.models, ec);
  if (ec) throw Error("cannot create " + paths.models + ": " + ec.message());
  fs::create_directories(paths.train, ec);
  if (ec) throw Error("cannot create " + paths.train + ": " + ec.message());
}

void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool Stopping() {
  // relaxed: see OnStopSignal.
  return g_stop_signal.load(std::memory_order_relaxed) != 0;
}

// Waits until the window holds --min-positions; false when stopped or out of
// time first (Error without --wait).
bool WaitForPositions(const TrainConfig& config, ShardWindow& window,
                      const std::function<bool()>& out_of_time) {
  window.Refresh();
  bool announced_wait = false;
  while (window.Positions() < config.min_positions) {
    if (!config.wait)
      throw Error(config.run + " has " + std::to_string(window.Positions()) +
                  " positions; --min-positions is " + std::to_string(config.min_positions));
    if (!announced_wait) {
      ZF_LOG(INFO) << "waiting for " << config.min_positions << " positions in "
                   << io::RunDir(config.run).ShardsDir() << " (have " << window.Positions() << ")";
      announced_wait = true;
    }
    if (Stopping() || out_of_time()) return false;
    ::usleep(500'000);
    window.Refresh();
  }
  return true;
}

// Where a trainer starts: the saved state, the newest model, --weights, or random.
struct StartPoint {
  TrainState state;
  eval::WeightSet weights;
  std::string described;
  bool resumed = false;
  // The highest version a model file in RUN/models has already; new
  // checkpoints number after it, so that no version ever names two networks.
  uint32_t taken = 0;
};

StartPoint ChooseStart(const TrainConfig& config, const Paths& paths, const game::Game& game) {
  StartPoint s;
  if (fs::exists(paths.state)) {
    s.state = TrainState::FromText(io::ReadTextFile(paths.state));
    s.weights = proc::LoadWeightsFor(game, paths.Model(s.state.version));
    s.described = "resumed at step " + std::to_string(s.state.step) + " from " + paths.Model(s.state.version);
    s.resumed = true;
    if (auto [n, path] = paths.dir.NewestModel(); n > s.state.version) {
      // A checkpoint cut short between its model and its state: that model
      // may already have been served, so its number is never used again.
      s.taken = static_cast<uint32_t>(n);
      ZF_LOG(WARN) << path << " is newer than the trainer's state (version " << s.state.version
                   << "): a checkpoint was cut short; resuming from version " << s.state.version
                   << ", the next checkpoint is version " << n + 1;
    }
  } else if (auto [n, path] = paths.dir.NewestModel(); n >= 0) {
    s.weights = proc::LoadWeightsFor(game, path);
    s.state.version = static_cast<uint32_t>(std::max<int64_t>(n, s.weights.version));
    s.described = "starting from " + path;
  } else if (!config.weights.empty()) {
    s.weights = proc::LoadWeightsFor(game, config.weights);
    s.state.version = s.weights.version;
    s.described = "starting from " + config.weights;
  } else {
    s.weights = eval::RandomWeights(RandomNetFor(game, config), config.seed);
    s.described = "starting from a random " + s.weights.config.Describe();
  }
  return s;
}

// One invocation's training: the optimiser, its batch buffers, and the
// figures its progress lines and summary report.
class TrainSession {
 public:
  TrainSession(const TrainConfig& config, const Paths& paths, const game::Game& game, ShardWindow& window,
               StartPoint start);
  // Steps until stopped, out of time, out of steps or (without --wait) ahead of the data.
  void Run(const std::function<bool()>& out_of_time);
  // The last checkpoint (when steps were taken since the one before) and the summary line.
  void Finish(double t_start);

 private:
  static eval::TrainerOptions OptionsFor(const TrainConfig& config, const StartPoint& start);
  void LoadMomentum(const StartPoint& start);
  void LoadHeads(const StartPoint& start);
  void ChoosePace();
  bool AheadOfData() const;
  void FillBatch();
  void Step();
  void Checkpoint();
  void PrintProgress();

  const TrainConfig& config_;
  const Paths& paths_;
  const game::Game& game_;
  ShardWindow& window_;
  TrainState state_;
  const uint32_t taken_;  // StartPoint::taken
  eval::Trainer trainer_;
  // One batch of samples, reused every step.
  int fb_, na_, nsym_;
  std::vector<uint8_t> features_, row_features_;
  std::vector<float> policy_, row_policy_;
  std::vector<float> z_;
  std::vector<uint8_t> full_;
  std::vector<int8_t> ownership_, row_ownership_;  // with the ownership head: batch x cells, cells
  std::vector<int16_t> score_bin_;                 // with a score head: batch
  Rng rng_;
  bool tty_;
  double last_print_ = -1e9, ewma_policy_ = -1, ewma_value_ = -1, ewma_ownership_ = -1;
  int64_t steps_here_ = 0;
  double waiting_s_ = 0;
  double last_refresh_;
  double t_train_;
  int since_checkpoint_ = 0;
  double last_checkpoint_ = -1;   // MonotonicSeconds() of the last periodic checkpoint
  bool warned_frequent_ = false;  // WarnIfFrequent said it once
  void WarnIfFrequent();
};

TrainSession::TrainSession(const TrainConfig& config, const Paths& paths, const game::Game& game,
                           ShardWindow& window, StartPoint start)
    : config_(config),
      paths_(paths),
      game_(game),
      window_(window),
      state_(start.state),
      taken_(start.taken),
      trainer_(start.weights, OptionsFor(config, start)),
      fb_(game.Shape().FeatureBytes()),
      na_(game.ActionCount()),
      nsym_(config.augment ? game.SymmetryCount() : 1),
      features_(static_cast<size_t>(config.batch) * fb_),
      row_features_(fb_),
      policy_(static_cast<size_t>(config.batch) * na_),
      row_policy_(na_),
      z_(config.batch),
      full_(config.batch),
      ownership_(trainer_.HasOwnershipHead() ? static_cast<size_t>(config.batch) * game.Shape().Cells() : 0),
      row_ownership_(trainer_.HasOwnershipHead() ? game.Shape().Cells() : 0),
      score_bin_(trainer_.Config().score_plies > 0 ? config.batch : 0),
      rng_(config.seed ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(start.state.step + 1))),
      tty_(config.progress && ::isatty(STDERR_FILENO)),
      last_refresh_(MonotonicSeconds()),
      t_train_(MonotonicSeconds()) {
  LoadMomentum(start);
  LoadHeads(start);
  ChoosePace();
}

eval::TrainerOptions TrainSession::OptionsFor(const TrainConfig& config, const StartPoint& start) {
  eval::TrainerOptions optim = config.optim;
  optim.seed = config.seed + static_cast<uint64_t>(start.state.step);
  return optim;
}

void TrainSession::LoadMomentum(const StartPoint& start) {
  if (start.resumed && fs::exists(paths_.momentum)) {
    const eval::WeightSet momentum = io::ReadWeights(paths_.momentum);
    if (momentum.version == start.state.version)
      trainer_.ImportMomentum(momentum);
    else
      ZF_LOG(WARN) << "momentum of version " << momentum.version << " does not match; starting it at zero";
  }
  std::ostringstream weights;  // the losses' weights the options set, as given ("0.25")
  if (trainer_.HasOwnershipHead())
    weights << " with an ownership head (weight " << config_.optim.ownership_weight << ")";
  if (config_.optim.value_weight != 1.0)
    weights << " with the value loss at weight " << config_.optim.value_weight;
  ZF_LOG(INFO) << "training " << trainer_.Config().Describe() << weights.str()
               << (config_.optim.cuda ? " on the GPU" : " on the CPU")
               << (config_.optim.bf16 ? " in bf16" : " in fp32") << ": " << start.described << "; lr "
               << config_.optim.learning_rate << "; window " << window_.Positions() << " positions in "
               << window_.Shards() << " shards";
}

// Pace: at most `replay` samples per position of the run's shards, counting
// the samples drawn since the pace last started over (state_.paced_from).
// Where the shards hold fewer positions than those samples allow (earlier
// shards are gone: a run resumed from its kept models and state alone), the
// pace starts over here, against the positions present now and to come, and
// the state keeps where, so that a later invocation on the same shards goes
// on with this pace instead of starting it over again.
void TrainSession::ChoosePace() {
  const int64_t paced = state_.samples - state_.paced_from;
  const bool shards_gone =
      config_.replay * static_cast<double>(window_.ProducedPositions()) < static_cast<double>(paced);
  if (!shards_gone || config_.replay <= 0) return;
  ZF_LOG(INFO) << "the run's shards hold fewer positions than " << paced
               << " samples drawn before: pacing on the positions present now and to come";
  state_.paced_from = state_.samples;
}

// The ownership head of the checkpoint resumed from, when it was trained with
// one (RUN/train/heads.h5 of the same version); else it starts afresh.
void TrainSession::LoadHeads(const StartPoint& start) {
  if (!trainer_.HasOwnershipHead()) return;
  if (start.resumed && fs::exists(paths_.heads)) {
    const eval::WeightSet heads = io::ReadWeights(paths_.heads);
    if (heads.version == start.state.version) {
      trainer_.ImportHeads(heads);
      return;
    }
    ZF_LOG(WARN) << "ownership head of version " << heads.version << " does not match; starting a new one";
  } else {
    ZF_LOG(INFO) << "starting a new ownership head";
  }
}

bool TrainSession::AheadOfData() const {
  return static_cast<double>(state_.samples - state_.paced_from + config_.batch) >
         config_.replay * static_cast<double>(window_.ProducedPositions());
}

void TrainSession::Run(const std::function<bool()>& out_of_time) {
  while (!Stopping() && !out_of_time() && (config_.steps == 0 || steps_here_ < config_.steps)) {
    if (MonotonicSeconds() - last_refresh_ > 5.0) {
      window_.Refresh();
      last_refresh_ = MonotonicSeconds();
    }
    if (config_.replay > 0 && AheadOfData()) {
      if (!config_.wait) break;
      const double t0 = MonotonicSeconds();
      ::usleep(250'000);
      waiting_s_ += MonotonicSeconds() - t0;
      last_refresh_ = 0;  // look for new shards at once
      continue;
    }
    FillBatch();
    Step();
    PrintProgress();
  }
}

// Random rows of the window, each in a random symmetry of the game (--no-augment: as stored).
void TrainSession::FillBatch() {
  for (int i = 0; i < config_.batch; ++i) {
    const int64_t index = static_cast<int64_t>(rng_.Below(static_cast<uint64_t>(window_.Positions())));
    const int sym = nsym_ > 1 ? static_cast<int>(rng_.Below(static_cast<uint64_t>(nsym_))) : 0;
    uint8_t* f = &features_[static_cast<size_t>(i) * fb_];
    float* p = &policy_[static_cast<size_t>(i) * na_];
    const size_t cells = row_ownership_.size();
    int8_t* o = cells ? &ownership_[static_cast<size_t>(i) * cells] : nullptr;
    int16_t* bin =
        score_bin_.empty() ? nullptr : &score_bin_[static_cast<size_t>(i)];  // symmetric: as stored
    if (sym == 0) {
      window_.Row(index, f, p, &z_[i], &full_[i], o, bin);
    } else {
      window_.Row(index, row_features_.data(), row_policy_.data(), &z_[i], &full_[i],
                  cells ? row_ownership_.data() : nullptr, bin);
      game::TransformFeatures(game_, sym, row_features_.data(), f);
      game::TransformPolicy(game_, sym, row_policy_.data(), p);
      if (cells) game::TransformCells(game_, sym, row_ownership_.data(), o);
    }
  }
}

// One optimiser step on the batch, and a checkpoint every --checkpoint-steps.
void TrainSession::Step() {
  eval::TrainBatch batch;
  batch.features = features_.data();
  batch.policy = policy_.data();
  batch.z = z_.data();
  batch.policy_mask = full_.data();
  batch.ownership = ownership_.empty() ? nullptr : ownership_.data();
  batch.score_bin = score_bin_.empty() ? nullptr : score_bin_.data();
  batch.count = config_.batch;
  const eval::TrainStepLoss loss = trainer_.Step(batch);
  ++state_.step;
  ++steps_here_;
  state_.samples += config_.batch;
  ewma_policy_ = ewma_policy_ < 0 ? loss.policy : 0.98 * ewma_policy_ + 0.02 * loss.policy;
  ewma_value_ = ewma_value_ < 0 ? loss.value : 0.98 * ewma_value_ + 0.02 * loss.value;
  ewma_ownership_ = ewma_ownership_ < 0 ? loss.ownership : 0.98 * ewma_ownership_ + 0.02 * loss.ownership;
  if (++since_checkpoint_ >= config_.checkpoint_steps) {
    Checkpoint();
    since_checkpoint_ = 0;
    WarnIfFrequent();
    if (!tty_ && config_.progress)
      ZF_LOG(INFO) << "wrote " << paths_.Model(state_.version) << " at step " << state_.step;
  }
}

// Each checkpoint writes and fsyncs three or four files. Many a second stall
// every process on a VM's disk that writes (the farm's writer and supervisor
// too: stop 47 saw minute-long page-writeback waits), so say once when two
// periodic ones came under a second apart.
void TrainSession::WarnIfFrequent() {
  const double now = MonotonicSeconds(), apart = now - last_checkpoint_;
  const bool first = last_checkpoint_ < 0;
  last_checkpoint_ = now;
  if (first || warned_frequent_ || apart >= 1.0) return;
  warned_frequent_ = true;
  ZF_LOG(WARN) << "checkpoints " << std::lround(apart * 1000) << " ms apart (--checkpoint-steps "
               << config_.checkpoint_steps << "): each one fsyncs its files, and many a second can stall "
               << "every process that writes to this disk; a higher --checkpoint-steps avoids it";
}

// The model first, then what resuming from it needs, then the state that
// names it: a kill between two writes leaves the state naming the previous
// version with its own momentum and heads (ChooseStart skips the new model's
// number), or, after the momentum, momentum a resume sees does not match.
void TrainSession::Checkpoint() {
  state_.version = std::max(state_.version, taken_) + 1;
  io::WriteWeights(paths_.Model(state_.version), trainer_.Export(state_.version));
  eval::WeightSet m = trainer_.ExportMomentum();
  m.version = state_.version;
  io::WriteWeights(paths_.momentum, m);
  if (trainer_.HasOwnershipHead()) io::WriteWeights(paths_.heads, trainer_.ExportHeads(state_.version));
  io::WriteTextFileAtomically(paths_.state, state_.ToText());
}

void TrainSession::PrintProgress() {
  const double now = MonotonicSeconds();
  if (!config_.progress || now - last_print_ <= (tty_ ? 0.5 : 30.0)) return;
  const double busy = now - t_train_ - waiting_s_;
  char own[32] = "";
  if (trainer_.HasOwnershipHead()) std::snprintf(own, sizeof own, " ownership %.3f", ewma_ownership_);
  char line[288];
  std::snprintf(line, sizeof line,
                "step %lld | policy %.3f value %.3f%s | %.0f pos/s | window %s positions, data model v%u | "
                "checkpoint v%u",
                static_cast<long long>(state_.step), ewma_policy_, ewma_value_, own,
                busy > 0 ? steps_here_ * config_.batch / busy : 0.0, Thousands(window_.Positions()).c_str(),
                window_.NewestModelVersion(), state_.version);
  if (tty_)
    std::fprintf(stderr, "\r\033[K%s", line);
  else
    std::fprintf(stderr, "zerofarm train: %s\n", line);
  last_print_ = now;
}

void TrainSession::Finish(double t_start) {
  if (tty_) std::fprintf(stderr, "\n");
  if (since_checkpoint_ > 0) Checkpoint();
  const double busy = MonotonicSeconds() - t_train_ - waiting_s_;
  char losses[128] = "no step taken";
  if (steps_here_ > 0)
    std::snprintf(
        losses, sizeof losses, "losses policy %.4f value %.4f%s", ewma_policy_, ewma_value_,
        trainer_.HasOwnershipHead() ? (" ownership " + std::to_string(ewma_ownership_)).c_str() : "");
  std::printf(
      "zerofarm train: %lld steps (%lld in all) of %d positions in %.1f s (%.0f positions/s while training, "
      "%.1f s "
      "waiting for data); last checkpoint %s; %s\n",
      static_cast<long long>(steps_here_), static_cast<long long>(state_.step), config_.batch,
      MonotonicSeconds() - t_start, busy > 0 ? steps_here_ * config_.batch / busy : 0.0, waiting_s_,
      state_.version > 0 ? paths_.Model(state_.version).c_str() : "none", losses);
}

}  // namespace

namespace {
// A trainer on a run with models resumes with their net: a shape given for a
// random start that is not that net's would be ignored, so it is refused (issue 72).
void CheckResumedNet(const TrainConfig& config, const Paths& paths) {
  const auto [n, path] = paths.dir.NewestModel();
  if (n < 0) return;
  const eval::NetConfig kept = io::ReadWeights(path).config;
  std::string given;  // the options given that are not the models' net
  if (config.blocks_given && config.blocks != kept.blocks)
    given += " --blocks " + std::to_string(config.blocks);
  if (config.filters_given && config.filters != kept.filters)
    given += " --filters " + std::to_string(config.filters);
  if (config.value_channels_given && config.value_channels != kept.value_channels)
    given += " --value-channels " + std::to_string(config.value_channels);
  if (config.score_head_given && config.score_head != (kept.score_plies > 0)) given += " --score-head";
  if (given.empty()) return;
  throw ConfigError(
      given.substr(1) + ": " + config.run + " trains " + kept.Describe() + " (" + path +
      "), and a trainer resumes with its models' net; leave the shape out, or give a new --run");
}
}  // namespace

int RunTrainer(const TrainConfig& config) {
  CheckTrainConfig(config);
  const Paths paths(config.run);
  // A resumed trainer starts from the run's newest model: --weights would be ignored (issue 72).
  if (!config.weights.empty() && (fs::exists(paths.state) || paths.dir.NewestModel().first >= 0))
    throw ConfigError(
        "--weights " + config.weights + ": " + config.run +
        " has models already, and a trainer resumes from its newest one; --weights only starts a "
        "run without models (leave it out, or give a new --run)");
  CheckResumedNet(config, paths);
  MakeTrainDirs(config, paths);
  InstallStopHandlers();
  const double t_start = MonotonicSeconds();
  const std::function<bool()> out_of_time = [&] {
    return config.duration > 0 && MonotonicSeconds() - t_start >= config.duration;
  };
  // Data first: the game comes from the shards.
  ShardWindow window(config.run, config.window, config.value_discount, config.q_weight,
                     config.bootstrap_sampled, config.optim.ownership_weight > 0);
  if (!WaitForPositions(config, window, out_of_time)) return kExitOk;
  const auto game = game::MakeGame(window.GameName());
  TrainSession session(config, paths, *game, window, ChooseStart(config, paths, *game));
  session.Run(out_of_time);
  session.Finish(t_start);
  return kExitOk;
}

}  // namespace zerofarm::learn
