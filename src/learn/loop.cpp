// `zerofarm loop` (learn/loop.h). One process, two threads' worth of work:
// the main thread watches the farm and trainer children and measures the
// newest model every eval_every seconds; one thread per Pons file rates its
// positions with the exact solver (std::async), abandoned on the way out.
#include "zerofarm/learn/loop.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "zerofarm/core/clock.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/exit_codes.h"
#include "zerofarm/core/log.h"
#include "zerofarm/core/thread_annotations.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/torchscript_file.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/learn/strength.h"
#include "zerofarm/learn/train.h"
#include "zerofarm/proc/child_process.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::learn {
namespace fs = std::filesystem;
namespace {

volatile std::sig_atomic_t g_loop_stop = 0;
void OnLoopSignal(int sig) { g_loop_stop = sig; }

double ReadSeconds(const std::string& path) {
  std::ifstream in(path);
  double s = 0;
  return (in >> s) ? s : 0.0;
}

// The label of a trainer command's child (LoopConfig::trainer_command) in the log.
constexpr const char* kTrainerCommand = "trainer command";

// The loop's exit code for a child that stopped: its own when it says bad
// input (2) or a full disk (4), as `zerofarm run` would; else 1 (issue 21).
int ChildFailureCode(int status) {
  if (WIFEXITED(status) && (WEXITSTATUS(status) == kExitUsage || WEXITSTATUS(status) == kExitNoSpace))
    return WEXITSTATUS(status);
  return kExitFailure;
}

// A child stopped at the end of a piece exits 0 once its last checkpoint or
// games are written; any other end (killed after its grace, a full disk) is
// the loop's failure too: its code, and no checkpoint mean written.
// A child killed by the loop's own SIGTERM got it before installing its handler
// (on a short piece of a loaded machine, while LibTorch was still being loaded):
// it had written no checkpoint and no game, so it stopped as cleanly as one that
// exits 0 (before 2026-12-01 this failed the loop).
// A trainer command of the user's (LoopConfig::trainer_command) killed by
// SIGTERM is its ordinary end: a Python script's default action.
void CheckStopped(const char* what, int status, int* code) {
  if (status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == kExitOk)) return;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM && std::string(what) == kTrainerCommand) return;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) {
    ZF_LOG(WARN) << "loop: the " << what
                 << " was stopped before it could catch SIGTERM, before writing a checkpoint or a game";
    return;
  }
  ZF_LOG(ERROR) << "loop: the " << what << " did not stop cleanly: " << proc::DescribeWaitStatus(status);
  if (*code == kExitOk) *code = ChildFailureCode(status);
}

// The stage in force (nullptr: none, or none started yet).
const RecipeStage* StageIn(const LoopConfig& c, size_t started) {
  return started == 0 ? nullptr : &c.stages[started - 1];
}

// The farm's command line: its settings go as RUN/eval/farm-config.txt.
std::vector<std::string> FarmArgv(const LoopConfig& c, const std::string& farm_exe,
                                  const RecipeStage* stage) {
  const std::string loop_config = io::RunDir(c.farm.out).LoopFarmConfig();
  proc::FarmConfig farm_config = c.farm;
  farm_config.status_line = false;
  // --weights starts a run; the farm refuses it once the run has models (it serves the newest).
  if (io::RunDir(c.farm.out).NewestModel().first >= 0) farm_config.weights.clear();
  io::WriteTextFileAtomically(loop_config, farm_config.ToText());
  std::vector<std::string> argv = {farm_exe, "run", "--config", loop_config};
  if (farm_config.allow_foreign_dir) argv.push_back("--allow-foreign-dir");  // command line only
  if (c.hours > 0) {  // a bound of its own, should this process die without stopping it
    argv.push_back("--duration");
    argv.push_back(std::to_string(c.hours * 3600 + 120));
  }
  argv.insert(argv.end(), c.run_args.begin(), c.run_args.end());
  if (stage) argv.insert(argv.end(), stage->run_args.begin(), stage->run_args.end());
  return argv;
}

// The trainer's command line: options both children take (the trainer's net is the farm's).
std::vector<std::string> TrainerArgv(const LoopConfig& c, const std::string& exe, const RecipeStage* stage) {
  const proc::FarmConfig& f = c.farm;
  std::ostringstream net_args;
  net_args << "--value-discount " << f.search.value_discount << " --eval-threads " << f.eval_threads;
  // --weights starts a run with its own shape; the trainer refuses it once the
  // run has models (it resumes from them), and a shape beside it always.
  if (f.weights.empty()) {
    net_args << " --blocks " << f.blocks << " --filters " << f.filters;
    if (f.score_head) net_args << " --score-head";
    if (f.value_channels != 1) net_args << " --value-channels " << f.value_channels;
  } else if (io::RunDir(f.out).NewestModel().first < 0) {
    net_args << " --weights " << f.weights;
  }
  std::vector<std::string> argv = {exe, "train", "--run", f.out, "--seed", std::to_string(f.seed)};
  std::istringstream words(net_args.str());
  for (std::string w; words >> w;) argv.push_back(w);
  if (!f.game_plugin.empty()) argv.insert(argv.end(), {"--game-plugin", f.game_plugin});  // its shards' game
  argv.insert(argv.end(), c.train_args.begin(), c.train_args.end());
  if (stage) argv.insert(argv.end(), stage->train_args.begin(), stage->train_args.end());
  return argv;
}

// The program of a trainer command: itself when it names a path, else the
// first executable of that name on PATH; ConfigError when there is none.
std::string ProgramOnPath(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate;
  }
  throw ConfigError("--trainer-command: " + program + " is not an executable on PATH");
}

// `name` and the file `path` (its program) really is, every link resolved:
// "python3 -> /usr/bin/python3.11", or `name` alone when it is that file.
std::string Resolved(const std::string& name, const std::string& path) {
  std::error_code ec;
  const std::string real = fs::canonical(path, ec).string();
  return ec || real == name ? name : name + " -> " + real;
}

// The interpreter a trainer command runs, for the loop's lines (issue 82): its
// program resolved, and a script's #! interpreter (through env) resolved too,
// e.g. "train.py (#!/usr/bin/env python3: python3 -> /usr/bin/python3.11)".
std::string DescribeTrainerProgram(const std::string& word) {
  std::string program;
  try {
    program = ProgramOnPath(word);
  } catch (const ConfigError&) {
    return word;
  }
  const std::string shown = Resolved(word, program);
  std::ifstream in(program, std::ios::binary);
  std::string line(256, '\0');
  in.read(&line[0], static_cast<std::streamsize>(line.size()));
  line.resize(static_cast<size_t>(in.gcount()));
  line = line.substr(0, line.find('\n'));
  if (line.rfind("#!", 0) != 0) return shown;
  std::istringstream words(line.substr(2));
  std::string interpreter, arg;
  words >> interpreter >> arg;
  if (interpreter.empty()) return shown;
  std::string via = Resolved(interpreter, interpreter);
  if (fs::path(interpreter).filename() == "env" && !arg.empty() && arg[0] != '-') {
    try {
      via = Resolved(arg, ProgramOnPath(arg));
    } catch (const ConfigError&) {
      via = arg + " (not on PATH)";
    }
  }
  return shown + " (" + PrintableText(line, 200) + ": " + via + ")";
}

// The user's trainer's command line: its words and the run directory last.
std::vector<std::string> TrainerCommandArgv(const LoopConfig& c) {
  std::vector<std::string> argv = c.trainer_command;
  argv.push_back(c.farm.out);
  return argv;
}

// The user's trainer's environment: ZF_START_MODEL, the model it continues
// (docs/models.md): the run's newest model (a resumed run), else --weights,
// as an absolute path; empty (set, so an inherited one is not taken) when the
// run starts from random weights.
std::vector<std::string> TrainerCommandEnv(const LoopConfig& c) {
  const auto [n, newest] = io::RunDir(c.farm.out).NewestModel();
  const std::string model = n >= 0 ? newest : c.farm.weights;
  const std::string path = model.empty() ? "" : fs::absolute(model).lexically_normal().string();
  ZF_LOG(INFO) << "loop: the trainer command starts from " << (path.empty() ? "random weights" : path)
               << " (ZF_START_MODEL)";
  return {"ZF_START_MODEL=" + path};
}

void InstallStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnLoopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// Solver verdicts (cached in RUN/eval and shipped in data/connect4) on a
// thread per file: a file not yet rated joins the evaluations once it is.
// On the way out, a rating still running is abandoned (its cache keeps
// what it did, saved every 30 s).
class Ratings {
 public:
  Ratings(std::vector<std::vector<PonsPosition>>* sets, const LoopConfig& c) : ready_(sets->size(), 0) {
    for (size_t i = 0; i < sets->size(); ++i)
      rated_.push_back(std::async(std::launch::async, [this, sets, i, &c] {
        RatePositions(&(*sets)[i], io::RunDir(c.farm.out).RatedFile(fs::path(c.pons[i]).filename().string()),
                      c.shipped_ratings, [this](int, int) {
                        // relaxed: a stop request; the thread publishes nothing through it.
                        if (abandon_.load(std::memory_order_relaxed)) throw Error("rating abandoned");
                      });
      }));
  }
  Ratings(const Ratings&) = delete;
  Ratings& operator=(const Ratings&) = delete;
  ~Ratings() { Abandon(); }

  // Whether file i is rated, waiting up to `wait` for it; rethrows a corrupt file's error.
  bool IsRated(size_t i, std::chrono::seconds wait = std::chrono::seconds(0)) {
    if (!ready_[i] && rated_[i].wait_for(wait) == std::future_status::ready) {
      rated_[i].get();
      ready_[i] = 1;
    }
    return ready_[i] != 0;
  }

  // Stops the ratings still running and waits for them.
  void Abandon() {
    // relaxed: see the rating threads.
    abandon_.store(true, std::memory_order_relaxed);
    for (auto& f : rated_)
      if (f.valid()) try {
          f.get();
        } catch (const std::exception&) {
        }
  }

 private:
  std::atomic<bool> abandon_{false};
  std::vector<std::future<void>> rated_;
  std::vector<char> ready_;
};

// The curve's clocks: hours and CPU hours, earlier pieces of the run included.
// Kept for the next piece by a thread of their own, every kSaveSeconds, and by
// Save: the loop's thread spends minutes at a time in an evaluation, and a
// loop killed there (SIGKILL, a lost machine) would otherwise lose that span of
// its CPU hours, and its budget and stage boundaries overshoot by it.
class LoopClock {
 public:
  explicit LoopClock(const std::string& run);
  ~LoopClock();
  LoopClock(const LoopClock&) = delete;
  LoopClock& operator=(const LoopClock&) = delete;
  double Hours() const { return (earlier_ + MonotonicSeconds() - t0_) / 3600.0; }
  double CpuHours() const { return (earlier_cpu_ + proc::TreeCpuSeconds(getpid())) / 3600.0; }
  double SecondsHere() const { return MonotonicSeconds() - t0_; }
  // Writes both now: at every evaluation and when the loop ends. The CPU file
  // goes first: whoever finds a new seconds file (the next piece, a test) finds
  // a CPU file at least as new, even if the loop was killed between the two.
  // Both are read under the lock, so a later write never holds less.
  void Save() const;

 private:
  // How often the thread writes them: a loop killed without a chance to save
  // loses at most this much of its hours and CPU hours.
  static constexpr auto kSaveSeconds = std::chrono::seconds(10);
  void SaveEvery();  // the thread's body, until the destructor

  const std::string seconds_file_, cpu_file_;
  double earlier_, earlier_cpu_;
  const double t0_;
  mutable Mutex save_;  // one Save at a time: both threads write the same files
  Mutex stop_mutex_;
  std::condition_variable_any stop_changed_;
  bool stop_ ZF_GUARDED_BY(stop_mutex_) = false;  // set by the destructor; the thread then ends
  std::thread saver_;                             // last: starts once every member above is made
};

LoopClock::LoopClock(const std::string& run)
    : seconds_file_(io::RunDir(run).LoopSecondsFile()),
      cpu_file_(io::RunDir(run).LoopCpuSecondsFile()),
      earlier_(ReadSeconds(seconds_file_)),
      earlier_cpu_(ReadSeconds(cpu_file_)),
      t0_(MonotonicSeconds()) {
  ZF_LOG(INFO) << "loop on " << run << ": " << earlier_ / 3600.0 << " h of earlier pieces";
  // CPU time of the loop's whole process tree (farm, trainer, evaluations), the
  // fair clock on a shared machine. Pieces from before this was kept count as
  // every granted CPU busy for their wall time: an upper bound.
  if (earlier_ > 0 && !fs::exists(cpu_file_)) {
    earlier_cpu_ = earlier_ * proc::CpusGranted();
    ZF_LOG(INFO) << "earlier pieces kept no CPU time: counting them as " << proc::CpusGranted()
                 << " CPUs busy, " << earlier_cpu_ / 3600.0 << " CPU hours";
  }
  saver_ = std::thread([this] { SaveEvery(); });
}

LoopClock::~LoopClock() {
  {
    const MutexLock lock(stop_mutex_);
    stop_ = true;
  }
  stop_changed_.notify_one();
  saver_.join();
}

void LoopClock::Save() const {
  const MutexLock lock(save_);
  io::WriteTextFileAtomically(cpu_file_, std::to_string(CpuHours() * 3600.0) + "\n");
  io::WriteTextFileAtomically(seconds_file_, std::to_string(earlier_ + MonotonicSeconds() - t0_) + "\n");
}

void LoopClock::SaveEvery() {
  sigset_t all;  // signals go to the loop's thread, which acts on them
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  const MutexLock lock(stop_mutex_);
  while (!stop_) {
    // Woken (or spuriously) before the period: look at stop_ again.
    if (stop_changed_.wait_for(stop_mutex_, kSaveSeconds) == std::cv_status::no_timeout || stop_) continue;
    try {
      Save();
    } catch (const std::exception& e) {  // a full disk: the loop goes on, and says so
      ZF_LOG(WARN) << "the loop's clocks were not saved: " << e.what();
    }
  }
}

// The model version of curve.csv's last row, by its header's model_version
// column; 0 when there is none (or the row does not read as one). A piece that
// starts with nothing new to measure (its budget spent) does not measure again
// what the last piece measured.
uint32_t LastCurveVersion(const std::string& csv) {
  std::ifstream in(csv);
  std::string header, line, last;
  std::getline(in, header);
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const std::vector<std::string> names = io::SplitFields(header), values = io::SplitFields(last);
  const size_t column = std::find(names.begin(), names.end(), "model_version") - names.begin();
  if (column >= values.size()) return 0;
  const std::string& field = values[column];
  if (field.empty() || field.size() > 9 || field.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return static_cast<uint32_t>(std::stoul(field));
}

// The periodic measurement of the newest model, and the curve so far.
class Evaluation {
 public:
  Evaluation(const LoopConfig& c, const std::vector<std::vector<PonsPosition>>& sets, Ratings& ratings,
             const LoopClock& clock)
      : c_(c),
        sets_(sets),
        ratings_(ratings),
        clock_(clock),
        curve_(io::RunDir(c.farm.out).CurveCsv()),
        last_evaluated_(LastCurveVersion(curve_)),
        next_due_(MonotonicSeconds() + c.eval_every) {}
  // Measures the newest model if it is new; appends to curve.csv; prints the curve.
  // The next one is due eval_every seconds after it ends.
  void Run();
  // Whether eval_every seconds have passed since the last Run (or since this
  // object was made). The cadence is the whole loop's, across its stages'
  // pieces: a piece that starts does not restart it.
  bool Due() const { return MonotonicSeconds() >= next_due_; }
  // Measures the checkpoint mean at `path`, the mean of `count` checkpoints from
  // v`first` on, as Run measures a checkpoint, into RUN/eval/mean.csv; prints the curve.
  void MeasureMean(const std::string& path, size_t count, int64_t first);
  // Measures the model the run starts from (--weights) as the curve's first
  // point, once, while the curve has no row (a resumed run has measured it).
  // It waits for a rating still running, as MeasureMean does.
  void MeasureStart();

 private:
  void Measure();  // Run without the cadence
  struct Rows {  // where a measurement's rows go: `csv`, each row ending in `extra` (columns `extra_header`)
    const std::string& csv;
    const std::string& extra_header;
    const std::string& extra;
  };
  // Measures the model at `path`: a table line labelled `label`, and its rows.
  // `wait`: how long a file's rating still running may hold the measurement up.
  // Returns the model's version (0 when there is nothing to measure on).
  // `published`: a file of the models directory, refused (ConfigError) as the
  // farm refuses it when it records another version than its name's.
  uint32_t MeasureModel(const std::string& path, const char* label, const Rows& rows,
                        std::chrono::seconds wait = std::chrono::seconds(0), bool published = false);
  std::vector<mcts::SearchConfig> Searches() const;
  void MeasureFile(const game::Game& game, eval::Evaluator& net, size_t i,
                   const std::vector<mcts::SearchConfig>& searches, double cpu_hours, const Rows& rows);
  void PrintCurve(const std::vector<mcts::SearchConfig>& searches);

  const LoopConfig& c_;
  const std::vector<std::vector<PonsPosition>>& sets_;
  Ratings& ratings_;
  const LoopClock& clock_;
  const std::string curve_;
  uint32_t last_evaluated_;   // the newest model measured, this piece or the last one's end
  bool start_tried_ = false;  // MeasureStart ran
  double next_due_;           // MonotonicSeconds(); set by the constructor and Run
  std::ostringstream table_;
};

// Two measures: plain PUCT, what the network adds (with the solver on,
// Test_L2_R1's move error is mostly the solver's, docs/search.md; points
// from before the solver stay comparable), and PUCT with the solver, the
// search the farm plays with. curve.csv's `solver` column tells them apart.
std::vector<mcts::SearchConfig> Evaluation::Searches() const {
  std::vector<mcts::SearchConfig> searches(1);
  searches[0].simulations = c_.eval_simulations;
  searches[0].solver = false;
  if (c_.eval_solver_simulations > 0) {
    searches.emplace_back();
    searches[1].simulations = c_.eval_solver_simulations;
    searches[1].solver = true;
  }
  return searches;
}

void Evaluation::Run() {
  Measure();
  next_due_ = MonotonicSeconds() + c_.eval_every;
}

void Evaluation::Measure() {
  const auto [best, model] = io::RunDir(c_.farm.out).NewestModel();
  if (model.empty() || static_cast<uint32_t>(best) == last_evaluated_) {
    clock_.Save();
    return;
  }
  last_evaluated_ = static_cast<uint32_t>(best);
  try {
    MeasureModel(model, "model", Rows{curve_, "", ""}, std::chrono::seconds(0), /*published=*/true);
  } catch (const ConfigError& e) {  // a model the farm refuses too (its probe): the loop goes on
    ZF_LOG(WARN) << "loop: " << model << " not measured: " << e.what();
  }
}

void Evaluation::MeasureStart() {
  if (start_tried_) return;
  start_tried_ = true;
  if (c_.farm.weights.empty() || sets_.empty() || fs::exists(curve_)) return;
  try {
    last_evaluated_ = MeasureModel(c_.farm.weights, "start", Rows{curve_, "", ""}, std::chrono::seconds(120));
  } catch (const ConfigError& e) {  // the farm refuses it too, in one line
    ZF_LOG(WARN) << "loop: the start " << c_.farm.weights << " not measured: " << e.what();
  }
}

void Evaluation::MeasureMean(const std::string& path, size_t count, int64_t first) {
  const std::string csv = io::RunDir(c_.farm.out).CheckpointMeanCsv(),
                    extra = ',' + std::to_string(count) + ',' + std::to_string(first);
  // The run's result, measured once: worth waiting for a rating that has not
  // finished (reading the shipped verdicts takes a moment after the start).
  MeasureModel(path, "mean ", Rows{csv, ",mean_of,first_version", extra}, std::chrono::seconds(120));
}

uint32_t Evaluation::MeasureModel(const std::string& model, const char* label, const Rows& rows,
                                  std::chrono::seconds wait, bool published) {
  const double cpu_hours = clock_.CpuHours();
  clock_.Save();
  if (sets_.empty()) return 0;  // a game without Pons sets: nothing to measure here
  const auto game = game::MakeGame(c_.farm.game);
  eval::TorchOptions topt;
  // On the GPU when the farm uses one (this process is no supervisor: it may
  // initialise CUDA); MCTS-600 on 2000 positions takes seconds there.
  topt.cuda = c_.farm.gpus != 0 && eval::CudaBuilt() && eval::CudaDeviceCount() > 0;
  topt.value_discount = c_.farm.search.value_discount;
  eval::WeightSet weights = proc::LoadWeightsFor(*game, model);
  if (published) io::RunDir::CheckModelFileVersion(model, weights.version);
  auto net = eval::MakeTorchEvaluator(weights, topt);
  const std::vector<mcts::SearchConfig> searches = Searches();
  char line[256];
  std::snprintf(line, sizeof line, "%7.2f h %7.2f CPU h  %s v%-5u", clock_.Hours(), cpu_hours, label,
                net->ModelVersion());
  table_ << line;
  for (size_t i = 0; i < sets_.size(); ++i) {
    if (!ratings_.IsRated(i, wait)) {
      std::snprintf(line, sizeof line, "  %s: (the solver is still rating it)",
                    fs::path(c_.pons[i]).filename().c_str());
      table_ << line;
      continue;
    }
    MeasureFile(*game, *net, i, searches, cpu_hours, rows);
  }
  table_ << "\n";
  PrintCurve(searches);
  return net->ModelVersion();
}

void Evaluation::MeasureFile(const game::Game& game, eval::Evaluator& net, size_t i,
                             const std::vector<mcts::SearchConfig>& searches, double cpu_hours,
                             const Rows& rows) {
  const std::string name = fs::path(c_.pons[i]).filename().string();
  char line[256];
  for (mcts::SearchConfig search : searches) {
    search.value_discount = c_.farm.search.value_discount;
    search.temperature_plies = 0;
    const MoveErrorResult m = MoveError(game, net, sets_[i], search);
    try {
      io::AppendCsvRow(rows.csv,
                       std::string("hours,model_version,file,") + kMoveErrorCsvColumns + ",cpu_hours,solver" +
                           rows.extra_header,
                       std::to_string(clock_.Hours()) + ',' + std::to_string(net.ModelVersion()) + ',' +
                           name + ',' + MoveErrorCsvFields(m) + ',' + std::to_string(cpu_hours) + ',' +
                           (search.solver ? "1" : "0") + rows.extra);
    } catch (const Error& e) {
      ZF_LOG(WARN) << e.what();  // the table below still shows it
    }
    if (!search.solver)
      std::snprintf(line, sizeof line, "  %s: net %5.1f%% (%4.1f%%)  mcts %5.1f%% (%4.1f%%)", name.c_str(),
                    100 * m.NetRate(), 100 * m.NetOutcomeRate(), 100 * m.MctsRate(),
                    100 * m.MctsOutcomeRate());
    else
      std::snprintf(line, sizeof line, "  +solver %5.1f%% (%4.1f%%)", 100 * m.MctsRate(),
                    100 * m.MctsOutcomeRate());
    table_ << line;
  }
}

void Evaluation::PrintCurve(const std::vector<mcts::SearchConfig>& searches) {
  std::cout << "zerofarm loop: move error against the exact solver (net alone; plain PUCT MCTS at "
            << searches[0].simulations << " simulations";
  if (searches.size() > 1) std::cout << "; +solver: PUCT with the MCTS-solver at " << searches[1].simulations;
  std::cout << "; in brackets: moves that give away the outcome)\n" << table_.str() << std::flush;
}

// A run's net is the shape of its models: a resumed run asked for another one
// (by its recipe or its command line) is refused before any child starts. The
// trainer would go on with the models' net and the farm would load it, but the
// run's records (farm-config.txt, each shard's config.txt) would name the other.
// A run started from --weights has that file's net: no shape was asked for.
// A TorchScript model (--weights or the run's newest) is refused: the loop's
// trainer trains zerofarm's own net only. A trainer command of the user's
// trains whatever net it likes: nothing to check.
void CheckRunNet(const LoopConfig& c) {
  if (!c.trainer_command.empty()) {
    ProgramOnPath(c.trainer_command[0]);  // a typo fails now, before any child starts
    ZF_LOG(INFO) << "loop: the trainer command runs " << DescribeTrainerProgram(c.trainer_command[0]);
    return;
  }
  for (const std::string& m : {c.farm.weights, io::RunDir(c.farm.out).NewestModel().second})
    if (io::IsTorchScriptPath(m) || io::IsPt2Path(m))
      throw ConfigError(m +
                        ": zerofarm's trainer trains its own net only; give --trainer-command \"python3 "
                        "examples/train_torch.py\" or run your trainer beside zerofarm run (docs/models.md)");
  const auto [newest, model] = io::RunDir(c.farm.out).NewestModel();
  if (model.empty() || !c.farm.weights.empty()) return;  // --weights: the run's net is the file's
  const auto game = game::MakeGame(c.farm.game);
  const eval::NetConfig kept = proc::LoadWeightsFor(*game, model).config;
  const eval::NetConfig asked = proc::NetConfigFor(*game, c.farm);
  if (kept.SameShape(asked)) return;
  const auto shape = [](const eval::NetConfig& n) {
    return std::to_string(n.blocks) + " blocks x " + std::to_string(n.filters) + " filters" +
           (n.value_channels != 1 ? " with a value head of " + std::to_string(n.value_channels) + " channels"
                                  : "") +
           (n.score_plies > 0 ? " with a score head" : "");
  };
  const bool name_channels = kept.value_channels != 1 || asked.value_channels != 1;
  throw ConfigError("the run " + c.farm.out + " trains a net of " + shape(kept) + ", not the " +
                    shape(asked) + " asked for: give --blocks " + std::to_string(kept.blocks) +
                    " --filters " + std::to_string(kept.filters) +
                    (name_channels ? " --value-channels " + std::to_string(kept.value_channels) : "") +
                    (kept.score_plies > 0 ? " --score-head" : " without --score-head") + " to go on with it");
}

// The run's CPU hours and trainer steps (0 before its first checkpoint).
RunProgress Progress(const LoopConfig& c, const LoopClock& clock) {
  RunProgress at;
  at.cpu_hours = clock.CpuHours();
  const std::string state = io::RunDir(c.farm.out).TrainStateFile();
  if (fs::exists(state)) try {
      at.steps = TrainState::FromText(io::ReadTextFile(state)).step;
    } catch (const Error& e) {
      ZF_LOG(WARN) << state << ": " << e.what();  // being replaced: read again in 5 s
    }
  return at;
}

// Why WatchChildren returned.
enum class Watched { kStopped, kChildFailed, kNextStage, kCpuBudget };

// Until `hours`, a signal, a child that stopped (*code: its exit code), the
// next stage or the CPU-hour bound; measures when the evaluation is due.
Watched WatchChildren(const LoopConfig& c, proc::ChildProcess& farm, proc::ChildProcess& trainer,
                      const LoopClock& clock, Evaluation& evaluation, size_t stages_started, int* code) {
  double next_clock = MonotonicSeconds() + 5;
  const bool watch_progress = !c.stages.empty() || c.cpu_hours > 0;
  while (g_loop_stop == 0) {
    if (c.hours > 0 && clock.SecondsHere() >= c.hours * 3600) break;
    int status = 0;
    for (proc::ChildProcess* child : {&farm, &trainer})
      if (child->TryReap(&status)) {
        if (child == &trainer && !c.trainer_command.empty() && WIFEXITED(status) &&
            WEXITSTATUS(status) == kExitOk) {
          ZF_LOG(INFO) << "loop: the trainer command finished (exit 0): the loop ends";
          return Watched::kStopped;
        }
        ZF_LOG(ERROR) << "the " << (child == &farm ? "farm" : trainer.role())
                      << " stopped: " << proc::DescribeWaitStatus(status);
        if (child == &trainer && !c.trainer_command.empty())  // a missing module is the interpreter's
          ZF_LOG(ERROR)
              << "loop: the trainer command ran " << DescribeTrainerProgram(c.trainer_command[0])
              << "; a ModuleNotFoundError above means that interpreter lacks the module: install it "
                 "there or name another interpreter in --trainer-command";
        *code = ChildFailureCode(status);
        return Watched::kChildFailed;
      }
    if (evaluation.Due()) evaluation.Run();
    if (watch_progress && MonotonicSeconds() >= next_clock) {  // /proc and state.txt reads, every 5 s
      const RunProgress at = Progress(c, clock);
      if (c.cpu_hours > 0 && at.cpu_hours >= c.cpu_hours) return Watched::kCpuBudget;
      // Only forward: a state file read while being replaced counts as step 0.
      if (StagesStarted(c.stages, at) > stages_started) return Watched::kNextStage;
      next_clock = MonotonicSeconds() + 5;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Watched::kStopped;
}

// Appends a row to RUN/eval/stages.csv: when (hours, CPU hours, steps) what began.
void AppendStageRow(const LoopConfig& c, const LoopClock& clock, const RunProgress& at, size_t stage,
                    std::string what) {
  for (char& ch : what)
    if (ch == '"' || ch == ',' || ch == '\n') ch = ' ';
  io::AppendCsvRow(io::RunDir(c.farm.out).LoopStagesCsv(), "hours,cpu_hours,steps,stage,description",
                   std::to_string(clock.Hours()) + ',' + std::to_string(at.cpu_hours) + ',' +
                       std::to_string(at.steps) + ',' + std::to_string(stage) + ",\"" + what + '"');
}

// Records and logs the start of a piece in a stage.
void NoteStage(const LoopConfig& c, size_t started, const LoopClock& clock, const RunProgress& at) {
  if (c.stages.empty()) return;
  const RecipeStage* stage = StageIn(c, started);
  const std::string what = stage ? stage->Describe() : "before the first stage: the base options";
  ZF_LOG(INFO) << "loop: stage " << started << " of " << c.stages.size() << " at step " << at.steps << ", "
               << at.cpu_hours << " CPU hours (" << what << ")";
  AppendStageRow(c, clock, at, started, what);
}

// Records and logs a run resumed with --recipe-changed into another recipe: where the
// schedule was changed, with or without stages.
void NoteRecipeChange(const LoopConfig& c, const LoopClock& clock) {
  if (c.recipe_change.empty()) return;
  const RunProgress at = Progress(c, clock);
  const std::string what = "recipe changed with --recipe-changed: " + c.recipe_change;
  ZF_LOG(INFO) << "loop: at step " << at.steps << ", " << at.cpu_hours << " CPU hours, " << what;
  AppendStageRow(c, clock, at, StagesStarted(c.stages, at), what);
}

// One piece of the run in one stage: farm and trainer from start to stop.
Watched RunPiece(const LoopConfig& c, const LoopClock& clock, Evaluation& evaluation, int* code) {
  const RunProgress at = Progress(c, clock);
  const size_t started = StagesStarted(c.stages, at);
  NoteStage(c, started, clock, at);
  const std::string exe = proc::SelfBinary(), farm_exe = proc::FarmBinary();
  const RecipeStage* stage = StageIn(c, started);
  proc::ChildProcess farm = proc::ChildProcess::Exec("farm", farm_exe, FarmArgv(c, farm_exe, stage), {});
  proc::ChildProcess trainer =
      c.trainer_command.empty()
          ? proc::ChildProcess::Exec("trainer", exe, TrainerArgv(c, exe, stage), {})
          : proc::ChildProcess::Exec(kTrainerCommand, ProgramOnPath(c.trainer_command[0]),
                                     TrainerCommandArgv(c), TrainerCommandEnv(c));
  evaluation.MeasureStart();  // the farm and trainer at work meanwhile
  const Watched why = WatchChildren(c, farm, trainer, clock, evaluation, started, code);
  // The farm flushes its finished games and the trainer writes a checkpoint on SIGTERM.
  if (trainer.running()) CheckStopped(trainer.role().c_str(), trainer.Stop(60'000), code);
  if (farm.running()) CheckStopped("farm", farm.Stop(120'000), code);
  return why;
}

// The run's result at the end of a piece (LoopConfig::final_mean): the mean of
// its newest checkpoints, written to RUN/eval/checkpoint-mean.h5 and measured.
void WriteCheckpointMean(const LoopConfig& c, Evaluation& evaluation) {
  const io::RunDir dir(c.farm.out);
  const auto models = io::RunDir::NewestModelsIn(dir.ModelsDir(), static_cast<size_t>(c.final_mean));
  if (models.empty()) return;
  std::vector<std::string> paths;
  for (const auto& m : models) paths.push_back(m.second);
  io::WriteWeights(dir.CheckpointMean(), io::MeanOfWeightsFiles(paths));
  ZF_LOG(INFO) << "loop: wrote " << dir.CheckpointMean() << ", the mean of " << models.size()
               << " checkpoints, v" << models.front().first << " to v" << models.back().first
               << (models.size() < static_cast<size_t>(c.final_mean)
                       ? " (all the run has; --final-mean asks for " + std::to_string(c.final_mean) + ")"
                       : "");
  evaluation.MeasureMean(dir.CheckpointMean(), models.size(), models.front().first);
}

}  // namespace

int RunLoop(const LoopConfig& config) {
  const std::string& run = config.farm.out;
  // Read every evaluation file now: a typo fails in a second, not after an hour.
  std::vector<std::vector<PonsPosition>> sets;
  for (const auto& f : config.pons) sets.push_back(ReadPonsFile(f, config.eval_positions));
  CheckRunNet(config);

  fs::create_directories(io::RunDir(run).EvalDir());
  const io::RunDir::HostLock lock = io::RunDir(run).LockLoop();  // for the loop's life
  if (!config.recipe_text.empty())
    io::WriteTextFileAtomically(io::RunDir(run).LoopRecipeCopy(), config.recipe_text);
  Ratings ratings(&sets, config);
  InstallStopHandlers();
  const LoopClock clock(run);
  NoteRecipeChange(config, clock);
  Evaluation evaluation(config, sets, ratings, clock);
  int exit_code = kExitOk;
  for (Watched why = Watched::kNextStage; why == Watched::kNextStage;) {
    if (config.cpu_hours > 0 && clock.CpuHours() >= config.cpu_hours) {
      ZF_LOG(INFO) << "loop: the run has had its " << config.cpu_hours << " CPU hours";
      break;
    }
    why = RunPiece(config, clock, evaluation, &exit_code);
    if (why == Watched::kCpuBudget)
      ZF_LOG(INFO) << "loop: the run has had its " << config.cpu_hours << " CPU hours";
  }
  evaluation.Run();
  // A piece that ended by its hours or the CPU-hour bound: not stopped by hand, no child failed.
  if (config.final_mean > 0 && exit_code == kExitOk && g_loop_stop == 0)
    WriteCheckpointMean(config, evaluation);
  ratings.Abandon();
  clock.Save();  // the last evaluation's CPU time counts too
  return exit_code;
}

}  // namespace zerofarm::learn
