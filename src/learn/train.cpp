// `zerofarm train` (proc/train.h): the shard window, checkpoints, resume, and
// the training loop around eval::Trainer.
#include "zerofarm/proc/train.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model_watcher.h"
#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/game/symmetry.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::proc {
namespace fs = std::filesystem;

// ---- state ------------------------------------------------------------------

std::string TrainState::ToText() const {
  std::ostringstream os;
  os << "version=" << version << "\nstep=" << step << "\nsamples=" << samples << "\n";
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
      if (key == "version") s.version = static_cast<uint32_t>(std::stoul(value));
      else if (key == "step") s.step = std::stoll(value);
      else if (key == "samples") s.samples = std::stoll(value);
      else throw ConfigError("unknown trainer state key '" + key + "'");
    } catch (const std::logic_error&) {
      throw ConfigError("bad trainer state value '" + line + "'");
    }
    ++seen;
  }
  if (seen != 3) throw ConfigError("trainer state needs version, step and samples");
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
  const fs::path dir = fs::path(run_dir) / "shards";
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

ShardWindow::ShardWindow(std::string run_dir, int64_t window, double value_discount)
    : run_dir_(std::move(run_dir)), window_(window), value_discount_(value_discount) {}

namespace {

// z x discount^(plies from the row's position to its game's last move). A
// resigned game's resigning position (ply = length) counts as 0 plies away.
void DiscountValueTargets(const io::ShardReader& reader, double discount, io::PositionRows* rows) {
  for (const io::ShardGame& g : reader.ReadGames())
    for (int64_t row = g.first_position; row < g.first_position + g.position_count; ++row) {
      const auto i = static_cast<size_t>(row);
      if (i >= rows->z.size()) throw Error(reader.path() + ": game " + std::to_string(g.game_id) + " has rows past the end");
      const int plies_left = std::max(0, g.length - 1 - rows->ply[i]);
      rows->z[i] = static_cast<float>(rows->z[i] * std::pow(discount, plies_left));
    }
}

}  // namespace

int ShardWindow::Refresh() {
  std::vector<std::string> fresh;
  for (const auto& path : RunShards(run_dir_))
    if (!std::binary_search(seen_.begin(), seen_.end(), path) &&
        !std::binary_search(bad_.begin(), bad_.end(), path))
      fresh.push_back(path);
  // Oldest first, so the newest end up at the front.
  std::vector<std::pair<int64_t, std::string>> by_time;
  for (const auto& p : fresh) by_time.emplace_back(MtimeNs(p), p);
  std::sort(by_time.begin(), by_time.end());
  int loaded = 0;
  for (const auto& [mtime, path] : by_time) {
    Shard s;
    s.path = path;
    s.mtime_ns = mtime;
    try {
      io::ShardReader reader(path);
      const io::ShardMeta& m = reader.meta();
      if (game_.empty()) {
        game_ = m.game;
        feature_bytes_ = m.FeatureBytes();
        actions_ = m.actions;
      } else if (m.game != game_ || m.FeatureBytes() != feature_bytes_ || m.actions != actions_) {
        throw Error(path + " holds " + m.game + " positions; this run's shards are " + game_);
      }
      io::PositionRows rows = reader.ReadAllPositions();
      if (value_discount_ < 1.0) DiscountValueTargets(reader, value_discount_, &rows);
      s.positions = static_cast<int64_t>(rows.count);
      s.model_version_max = m.model_version_max;
      s.features = std::move(rows.features);
      s.policy = std::move(rows.policy);
      s.z = std::move(rows.z);
      s.full = std::move(rows.full_search);
    } catch (const std::exception& e) {
      ZF_LOG(WARN) << "skipping shard: " << e.what();
      bad_.insert(std::upper_bound(bad_.begin(), bad_.end(), path), path);
      continue;
    }
    seen_.insert(std::upper_bound(seen_.begin(), seen_.end(), path), path);
    produced_ += s.positions;
    positions_ += s.positions;
    shards_.insert(shards_.begin(), std::move(s));
    ++loaded;
  }
  // Whole shards leave the window from the old end, keeping at least one.
  while (shards_.size() > 1 && positions_ - shards_.back().positions >= window_) {
    positions_ -= shards_.back().positions;
    shards_.pop_back();
  }
  return loaded;
}

uint32_t ShardWindow::NewestModelVersion() const {
  uint32_t v = 0;
  for (const auto& s : shards_) v = std::max(v, s.model_version_max);
  return v;
}

void ShardWindow::Row(int64_t index, uint8_t* features, float* policy, float* z, uint8_t* full) const {
  for (const auto& s : shards_) {
    if (index >= s.positions) {
      index -= s.positions;
      continue;
    }
    std::copy_n(&s.features[static_cast<size_t>(index) * feature_bytes_], feature_bytes_, features);
    std::copy_n(&s.policy[static_cast<size_t>(index) * actions_], actions_, policy);
    *z = s.z[static_cast<size_t>(index)];
    *full = s.full.empty() ? 1 : s.full[static_cast<size_t>(index)];
    return;
  }
  throw Error("ShardWindow::Row: index out of range");
}

std::pair<int64_t, std::string> NewestModel(const std::string& dir) {
  std::pair<int64_t, std::string> best{-1, ""};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const int64_t n = ModelNumber(e.path().filename().string());
    if (n > best.first) best = {n, e.path().string()};
  }
  return best;
}

// ---- the loop --------------------------------------------------------------------

namespace {

std::atomic<int> g_stop_signal{0};

void OnStopSignal(int sig) {
  // relaxed: a flag polled by the same thread between steps; it publishes nothing.
  g_stop_signal.store(sig, std::memory_order_relaxed);
}

struct Paths {
  std::string models, train, state, momentum;
  explicit Paths(const std::string& run)
      : models(run + "/models"),
        train(run + "/train"),
        state(run + "/train/state.txt"),
        momentum(run + "/train/momentum.h5") {}
  std::string Model(uint32_t version) const { return models + "/model-" + std::to_string(version) + ".h5"; }
};

eval::NetConfig RandomNetFor(const game::Game& game, const TrainConfig& config) {
  FarmConfig shape;
  shape.blocks = config.blocks;
  shape.filters = config.filters;
  return NetConfigFor(game, shape);
}

std::string Thousands(int64_t v) {
  if (v >= 10'000'000) return std::to_string(v / 1'000'000) + "M";
  if (v >= 10'000) return std::to_string(v / 1'000) + "k";
  return std::to_string(v);
}

}  // namespace

int RunTrainer(const TrainConfig& config) {
  if (config.run.empty()) throw ConfigError("--run is required");
  if (config.batch < 1 || config.batch > 65536) throw ConfigError("--batch must be in [1, 65536]");
  if (config.window < config.batch) throw ConfigError("--window must be >= --batch");
  if (config.min_positions < 1) throw ConfigError("--min-positions must be >= 1");
  if (config.replay < 0) throw ConfigError("--replay must be >= 0");
  if (config.checkpoint_steps < 1) throw ConfigError("--checkpoint-steps must be >= 1");
  if (config.steps < 0 || config.duration < 0) throw ConfigError("--steps and --duration must be >= 0");
  std::error_code ec;
  if (!fs::is_directory(config.run, ec)) throw ConfigError(config.run + " is not a run directory");
  const Paths paths(config.run);
  fs::create_directories(paths.models, ec);
  if (ec) throw Error("cannot create " + paths.models + ": " + ec.message());
  fs::create_directories(paths.train, ec);
  if (ec) throw Error("cannot create " + paths.train + ": " + ec.message());

  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // relaxed: see OnStopSignal.
  auto stopping = [] { return g_stop_signal.load(std::memory_order_relaxed) != 0; };

  const double t_start = MonotonicSeconds();
  auto out_of_time = [&] { return config.duration > 0 && MonotonicSeconds() - t_start >= config.duration; };

  // Data first: the game comes from the shards.
  ShardWindow window(config.run, config.window, config.value_discount);
  window.Refresh();
  bool announced_wait = false;
  while (window.Positions() < config.min_positions) {
    if (!config.wait)
      throw Error(config.run + " has " + std::to_string(window.Positions()) + " positions; --min-positions is " +
                  std::to_string(config.min_positions));
    if (!announced_wait) {
      ZF_LOG(INFO) << "waiting for " << config.min_positions << " positions in " << config.run << "/shards (have "
                   << window.Positions() << ")";
      announced_wait = true;
    }
    if (stopping() || out_of_time()) return kExitOk;
    ::usleep(500'000);
    window.Refresh();
  }
  const auto game = game::MakeGame(window.GameName());

  // Where to start: the saved state, the newest model, --weights, or random.
  TrainState state;
  eval::WeightSet start;
  std::string started_from;
  bool resumed = false;
  if (fs::exists(paths.state)) {
    state = TrainState::FromText(io::ReadTextFile(paths.state));
    start = LoadWeightsFor(*game, paths.Model(state.version));
    started_from = "resumed at step " + std::to_string(state.step) + " from " + paths.Model(state.version);
    resumed = true;
  } else if (auto [n, path] = NewestModel(paths.models); n >= 0) {
    start = LoadWeightsFor(*game, path);
    state.version = static_cast<uint32_t>(std::max<int64_t>(n, start.version));
    started_from = "starting from " + path;
  } else if (!config.weights.empty()) {
    start = LoadWeightsFor(*game, config.weights);
    state.version = start.version;
    started_from = "starting from " + config.weights;
  } else {
    start = eval::RandomWeights(RandomNetFor(*game, config), config.seed);
    started_from = "starting from a random " + start.config.Describe();
  }
  eval::TrainerOptions optim = config.optim;
  optim.seed = config.seed + static_cast<uint64_t>(state.step);
  eval::Trainer trainer(start, optim);
  if (resumed && fs::exists(paths.momentum)) {
    const eval::WeightSet momentum = io::ReadWeights(paths.momentum);
    if (momentum.version == state.version) trainer.ImportMomentum(momentum);
    else ZF_LOG(WARN) << "momentum of version " << momentum.version << " does not match; starting it at zero";
  }
  ZF_LOG(INFO) << "training " << trainer.Config().Describe() << ": " << started_from << "; window "
               << window.Positions() << " positions in " << window.Shards() << " shards";

  auto checkpoint = [&] {
    ++state.version;
    eval::WeightSet w = trainer.Export(state.version);
    eval::WeightSet m = trainer.ExportMomentum();
    m.version = state.version;
    io::WriteWeights(paths.momentum, m);
    io::WriteWeights(paths.Model(state.version), w);
    io::WriteTextFileAtomically(paths.state, state.ToText());
  };

  // One batch of samples, reused every step.
  const int fb = game->Shape().FeatureBytes();
  const int na = game->ActionCount();
  const int nsym = config.augment ? game->SymmetryCount() : 1;
  std::vector<uint8_t> features(static_cast<size_t>(config.batch) * fb), row_features(fb);
  std::vector<float> policy(static_cast<size_t>(config.batch) * na), row_policy(na);
  std::vector<float> z(config.batch);
  std::vector<uint8_t> full(config.batch);
  Rng rng(config.seed ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(state.step + 1)));

  const bool tty = config.progress && ::isatty(STDERR_FILENO);
  double last_print = -1e9, ewma_policy = -1, ewma_value = -1;
  int64_t steps_here = 0;
  double waiting_s = 0;
  double last_refresh = MonotonicSeconds();
  const double t_train = MonotonicSeconds();
  int since_checkpoint = 0;
  // Pace: at most `replay` samples per position of the run's shards. Where
  // the shards seen hold fewer positions than the samples drawn so far allow
  // (earlier shards are gone: a run resumed from its kept models and state
  // alone), pacing starts again here, against the positions present now and
  // to come; otherwise the trainer would wait for data it already used.
  const bool shards_gone = config.replay * static_cast<double>(window.ProducedPositions()) < static_cast<double>(state.samples);
  if (shards_gone && config.replay > 0)
    ZF_LOG(INFO) << "the run's shards hold fewer positions than " << state.samples
                 << " samples drawn before: pacing on the positions present now and to come";
  const int64_t samples_before = shards_gone ? 0 : state.samples;
  auto ahead_of_data = [&](int64_t samples_here) {
    return static_cast<double>(samples_before + samples_here + config.batch) >
           config.replay * static_cast<double>(window.ProducedPositions());
  };
  while (!stopping() && !out_of_time() && (config.steps == 0 || steps_here < config.steps)) {
    if (MonotonicSeconds() - last_refresh > 5.0) {
      window.Refresh();
      last_refresh = MonotonicSeconds();
    }
    if (config.replay > 0 && ahead_of_data(steps_here * config.batch)) {
      if (!config.wait) break;
      const double t0 = MonotonicSeconds();
      ::usleep(250'000);
      waiting_s += MonotonicSeconds() - t0;
      last_refresh = 0;  // look for new shards at once
      continue;
    }
    for (int i = 0; i < config.batch; ++i) {
      const int64_t index = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(window.Positions())));
      const int sym = nsym > 1 ? static_cast<int>(rng.Below(static_cast<uint64_t>(nsym))) : 0;
      uint8_t* f = &features[static_cast<size_t>(i) * fb];
      float* p = &policy[static_cast<size_t>(i) * na];
      if (sym == 0) {
        window.Row(index, f, p, &z[i], &full[i]);
      } else {
        window.Row(index, row_features.data(), row_policy.data(), &z[i], &full[i]);
        game::TransformFeatures(*game, sym, row_features.data(), f);
        game::TransformPolicy(*game, sym, row_policy.data(), p);
      }
    }
    eval::TrainBatch batch;
    batch.features = features.data();
    batch.policy = policy.data();
    batch.z = z.data();
    batch.policy_mask = full.data();
    batch.count = config.batch;
    const eval::TrainStepLoss loss = trainer.Step(batch);
    ++state.step;
    ++steps_here;
    state.samples += config.batch;
    ewma_policy = ewma_policy < 0 ? loss.policy : 0.98 * ewma_policy + 0.02 * loss.policy;
    ewma_value = ewma_value < 0 ? loss.value : 0.98 * ewma_value + 0.02 * loss.value;
    if (++since_checkpoint >= config.checkpoint_steps) {
      checkpoint();
      since_checkpoint = 0;
      if (!tty && config.progress)
        ZF_LOG(INFO) << "wrote " << paths.Model(state.version) << " at step " << state.step;
    }
    const double now = MonotonicSeconds();
    if (config.progress && now - last_print > (tty ? 0.5 : 30.0)) {
      const double busy = now - t_train - waiting_s;
      char line[256];
      std::snprintf(line, sizeof line,
                    "step %lld | policy %.3f value %.3f | %.0f pos/s | window %s positions, data model v%u | "
                    "checkpoint v%u",
                    static_cast<long long>(state.step), ewma_policy, ewma_value,
                    busy > 0 ? steps_here * config.batch / busy : 0.0, Thousands(window.Positions()).c_str(),
                    window.NewestModelVersion(), state.version);
      if (tty) std::fprintf(stderr, "\r\033[K%s", line);
      else std::fprintf(stderr, "zerofarm train: %s\n", line);
      last_print = now;
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  if (since_checkpoint > 0) checkpoint();
  const double busy = MonotonicSeconds() - t_train - waiting_s;
  char losses[96] = "no step taken";
  if (steps_here > 0) std::snprintf(losses, sizeof losses, "losses policy %.4f value %.4f", ewma_policy, ewma_value);
  std::printf(
      "zerofarm train: %lld steps (%lld in all) of %d positions in %.1f s (%.0f positions/s while training, %.1f s "
      "waiting for data); last checkpoint %s; %s\n",
      static_cast<long long>(steps_here), static_cast<long long>(state.step), config.batch,
      MonotonicSeconds() - t_start, busy > 0 ? steps_here * config.batch / busy : 0.0, waiting_s,
      state.version > 0 ? paths.Model(state.version).c_str() : "none", losses);
  return kExitOk;
}

}  // namespace zerofarm::proc
