// zerofarm eval: how strong a network is. Move error against the exact
// Connect Four solver on Pons-format files, or an arena between two networks.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/log.h"
#include "zerofarm/eval/symmetric_evaluator.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/learn/pons_sets.h"
#include "zerofarm/learn/strength.h"
#include "zerofarm/learn/train.h"
#include "zerofarm/proc/roles.h"
#include "zerofarm/proc/slurm_env.h"

namespace zerofarm::cli {
namespace fs = std::filesystem;
namespace {

// Where solver verdicts are cached: --cache-dir, else RUN/eval, else
// $XDG_CACHE_HOME/zerofarm or ~/.cache/zerofarm.
std::string CacheDir(const EvalConfig& e, const std::string& run) {
  if (!e.cache_dir.empty()) return e.cache_dir;
  if (!run.empty()) return io::RunDir(run).EvalDir();
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/zerofarm";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/zerofarm";
  return ".";
}

// "Test_L2_R1-<hash of its content>.rated": a changed file gets a new cache.
std::string CacheName(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(os.str())));
  return fs::path(path).filename().string() + "-" + hash + ".rated";
}

}  // namespace

// Verdicts shipped with zerofarm: DATA/connect4/*.rated, DATA = $ZF_DATA_DIR
// or the data/ folder beside the build directory of this binary.
std::string DataDir() {
  if (const char* d = std::getenv("ZF_DATA_DIR"); d && *d) return d;
  return (fs::path(proc::SelfBinary()).parent_path().parent_path() / "data").string();
}

std::vector<std::string> ShippedRatings() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(DataDir() + "/connect4", ec))
    if (e.path().extension() == ".rated") out.push_back(e.path().string());
  return out;
}

namespace {

// The newest model-N.h5 of RUN/models.
std::string NewestModel(const std::string& run) {
  const io::RunDir dir(run);
  const auto [n, path] = dir.NewestModel();
  if (n < 0) throw ConfigError(dir.ModelsDir() + " has no model-N.h5");
  return path;
}

// --orientation, or --average-symmetries (the same as --orientation mean).
eval::Orientation OrientationOf(const proc::FarmConfig& c, const game::Game& game) {
  if (c.average_symmetries && c.orientation != "as-is" && c.orientation != "mean")
    throw ConfigError("--average-symmetries contradicts --orientation " + c.orientation);
  return eval::ParseOrientation(c.average_symmetries ? "mean" : c.orientation, game);
}

std::unique_ptr<eval::Evaluator> LoadNet(const game::Game& game, const std::string& spec,
                                         const proc::FarmConfig& c) {
  eval::TorchOptions options;
  // --eval-threads 0 (auto) is every CPU granted here, where no worker shares
  // them (a farm's evaluators keep 1): 1.47x on 2 cores (docs/benchmarks.md).
  options.intra_op_threads = c.eval_threads > 0 ? c.eval_threads : proc::CpusGranted();
  options.bf16 = c.bf16 || c.precision == "bf16";  // auto: fp32, as before
  options.value_discount = c.search.value_discount;
  auto net = spec == "random"
                 ? eval::MakeTorchEvaluator(eval::RandomWeights(proc::NetConfigFor(game, c), c.seed), options)
                 : eval::MakeTorchEvaluator(proc::LoadWeightsFor(game, spec), options);
  return eval::MakeOrientedEvaluator(game, std::move(net), OrientationOf(c, game));
}

// What each number of a move-error report means (the JSON's "metrics").
nlohmann::ordered_json MoveErrorMetrics() {
  return {
      {"score_error",
       "share of positions where the chosen move's exact score is below the best move's "
       "(a slower win or a faster loss counts)"},
      {"outcome_error",
       "share of positions where the chosen move gives away the game-theoretic outcome "
       "(a win becomes a draw or a loss, a draw a loss)"},
      {"value_agreement", "share of positions whose value is nearest the exact outcome of -1, 0, +1"},
      {"symmetries_averaged",
       "how many orientations of each position the network's policy and value are the mean of "
       "(--orientation mean; 1 = one orientation)"},
      {"orientation",
       "how the network was shown each position (--orientation): as-is, a symmetry's index, canonical or "
       "mean"},
      {"value_mean", "the value head's mean over the positions lost, drawn and won for the side to move"}};
}

// How the text says the network was shown the positions: "" as they are.
std::string ShownAs(const eval::Orientation& shown, const game::Game& game) {
  switch (shown.kind) {
    case eval::Orientation::kMean:
      return " (mean over " + std::to_string(shown.EvaluationsPerLeaf(game)) + " symmetries)";
    case eval::Orientation::kCanonical:
      return " (canonical orientation)";
    default:
      return shown.AsIs() ? std::string() : " (turned by symmetry " + shown.Name() + ")";
  }
}

// One move-error result: a text line (no MCTS figure when none was
// measured) and a JSON line whose keys name the metric of each number.
// `shown`: how the network was shown each position (--orientation).
void PrintMoveError(const std::string& weights, uint32_t version, const std::string& name,
                    const learn::MoveErrorResult& m, const eval::Orientation& shown, const game::Game& game) {
  const int symmetries = shown.EvaluationsPerLeaf(game);
  const std::string averaged = ShownAs(shown, game);
  std::printf(
      "zerofarm eval: %s model v%u on %s (%d positions): network%s alone %.1f%% move error (%.1f%% give "
      "away the outcome)",
      weights.c_str(), version, name.c_str(), m.positions, averaged.c_str(), 100 * m.NetRate(),
      100 * m.NetOutcomeRate());
  if (m.simulations > 0)
    std::printf(", MCTS %d simulations %.1f%% (%.1f%%)", m.simulations, 100 * m.MctsRate(),
                100 * m.MctsOutcomeRate());
  std::printf(", %.1f s\n", m.seconds);
  std::printf(
      "zerofarm eval: value head on %s: %.1f%% read the exact outcome; mean value of lost %+.2f, drawn "
      "%+.2f, won %+.2f positions\n",
      name.c_str(), 100 * m.ValueAgreement(), m.value_mean[0], m.value_mean[1], m.value_mean[2]);
  nlohmann::ordered_json j = {{"kind", "move_error"},       {"weights", weights},
                              {"model_version", version},   {"file", name},
                              {"positions", m.positions},   {"symmetries_averaged", symmetries},
                              {"orientation", shown.Name()}};
  j["network_alone"] = {{"score_error", m.NetRate()}, {"outcome_error", m.NetOutcomeRate()}};
  if (m.simulations > 0)
    j["mcts"] = {{"simulations", m.simulations},
                 {"score_error", m.MctsRate()},
                 {"outcome_error", m.MctsOutcomeRate()}};
  j["value_head"] = {
      {"value_agreement", m.ValueAgreement()},
      {"value_mean", {{"lost", m.value_mean[0]}, {"drawn", m.value_mean[1]}, {"won", m.value_mean[2]}}}};
  j["seconds"] = m.seconds;
  j["metrics"] = MoveErrorMetrics();
  std::printf("%s\n", j.dump().c_str());
}

// --pons files, then every Pons test file (named Test_L*_R*, as Pons names
// them, or Made_L*_R*, as --make-set's are in data/connect4/made) of each
// --sets directory, in name order.
std::vector<std::string> PonsFiles(const EvalConfig& e) {
  std::vector<std::string> files = e.pons;
  for (const std::string& dir : e.sets) {
    std::error_code ec;
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      static const std::regex pons_name("(Test|Made)_L[0-9]+_R[0-9]+");  // not .rated, .solving
      if (std::regex_match(name, pons_name) && e.is_regular_file(ec)) found.push_back(e.path().string());
    }
    if (ec) throw ConfigError("--sets " + dir + ": " + ec.message());
    if (found.empty())
      throw ConfigError("--sets " + dir + ": no Pons test files (Test_L*_R*, Made_L*_R*) there");
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

// The search of an arena or a move error: run's search options, no sampling.
mcts::SearchConfig EvalSearch(const proc::FarmConfig& c) {
  mcts::SearchConfig search;
  search.simulations = c.search.simulations;
  search.c_puct = c.search.c_puct;
  search.value_discount = c.search.value_discount;
  search.solver = c.search.solver;
  search.temperature_plies = 0;
  return search;
}

// The weights' game unless --game says otherwise (the option table's for "random").
std::string EvalGameName(bool game_given, const proc::FarmConfig& c, const std::string& weights) {
  if (weights == "random") return c.game;
  std::error_code ec;
  if (!fs::exists(weights, ec)) throw ConfigError(weights + ": No such file or directory");
  return game_given ? c.game : io::ReadWeights(weights).config.game;
}

int ArenaCommand(const EvalConfig& e, const proc::FarmConfig& c, const game::Game& game, eval::Evaluator& net,
                 const std::string& weights, const mcts::SearchConfig& search) {
  if (search.simulations < 1) throw ConfigError("an arena needs --simulations >= 1");
  const int games = e.games, opening = e.opening_plies;  // in range: the table's
  auto other = LoadNet(game, e.against, c);
  const learn::ArenaResult a = learn::Arena(game, net, *other, games, search, opening, c.seed);
  const eval::Orientation shown = OrientationOf(c, game);  // both networks' (LoadNet)
  std::printf(
      "zerofarm eval: arena %s vs %s, %d games at %d simulations (%d random opening plies, colours "
      "swapped): %d wins, %d draws, %d losses; score %.3f (95%% interval %.3f..%.3f), Elo %+.0f\n",
      weights.c_str(), e.against.c_str(), a.games, search.simulations, opening, a.wins, a.draws, a.losses,
      a.Score(), a.Interval95().first, a.Interval95().second, a.Elo());
  const nlohmann::ordered_json j = {{"kind", "arena"},
                                    {"a", weights},
                                    {"b", e.against},
                                    {"games", a.games},
                                    {"simulations", search.simulations},
                                    {"symmetries_averaged", shown.EvaluationsPerLeaf(game)},
                                    {"orientation", shown.Name()},
                                    {"wins", a.wins},
                                    {"draws", a.draws},
                                    {"losses", a.losses},
                                    {"score", a.Score()},
                                    {"low95", a.Interval95().first},
                                    {"high95", a.Interval95().second},
                                    {"elo", a.Elo()}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

// --rate-threads; 0 = the CPUs granted (Slurm's, else this process's affinity mask).
int RateThreads(const EvalConfig& e) {
  const int n = e.rate_threads;
  return n > 0 ? n : proc::CpusGranted();
}

int MoveErrorCommand(const EvalConfig& e, const proc::FarmConfig& c, const game::Game& game,
                     eval::Evaluator& net, const std::string& weights, const mcts::SearchConfig& search) {
  const std::string run = e.run;
  const bool quiet = !c.status_line;
  const bool tty = isatty(STDERR_FILENO);  // control codes only where a terminal reads them
  const std::string cache_dir = CacheDir(e, run);
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  const std::string positions_csv = e.positions_csv;
  // Written at the end: a path that cannot be written fails now, not after the evaluation.
  const fs::path csv_dir = fs::path(positions_csv).parent_path();
  if (!positions_csv.empty() && !csv_dir.empty() && !fs::is_directory(csv_dir))
    throw ConfigError("--positions-csv " + positions_csv + ": " + csv_dir.string() + " is not a directory");
  std::string rows = std::string(learn::kPositionCsvColumns) + '\n';
  const eval::Orientation shown = OrientationOf(c, game);
  for (const auto& file : PonsFiles(e)) {
    auto positions = learn::ReadPonsFile(file, e.limit);
    const std::string cache = ec ? std::string() : cache_dir + "/" + CacheName(file);
    bool announced = false;
    learn::RatePositions(
        &positions, cache, ShippedRatings(),
        [&](int done, int total) {
          if (!announced && done < total) {  // even with --no-status: it may take hours, and says why
            announced = true;
            ZF_LOG(INFO) << "rating " << total - done << " of " << total << " positions of " << file
                         << " with the exact solver: they are in no rated file of " << DataDir()
                         << "/connect4 ($ZF_DATA_DIR) nor in " << (cache.empty() ? "a cache" : cache)
                         << " (the hard sets take seconds a position)";
          }
          if (quiet) return;
          if (!tty) {  // a file or a pipe: whole lines, a tenth of the file apart, no control codes
            if (done < total && done * 10 / total != (done - 1) * 10 / total)
              std::fprintf(stderr, "rating %s with the solver: %d/%d\n", file.c_str(), done, total);
            return;
          }
          if (done < total)
            std::fprintf(stderr, "\rrating %s with the solver: %d/%d", file.c_str(), done, total);
          if (done == total && total >= 25) std::fprintf(stderr, "\r\033[K");
        },
        RateThreads(e));
    const learn::MoveErrorResult m = learn::MoveError(game, net, positions, search);
    const std::string name = fs::path(file).filename().string();
    PrintMoveError(weights, net.ModelVersion(), name, m, shown, game);
    for (size_t i = 0; i < positions.size(); ++i)
      rows += learn::PositionCsvRow(name, positions[i], m.moves[i]) + '\n';
    // eval.csv has no column for the orientation: a run's curve stays the network shown positions as they
    // are.
    if (!run.empty() && !shown.AsIs()) {
      ZF_LOG(WARN) << "--orientation " << shown.Name() << ": " << name << " not appended to "
                   << io::RunDir(run).EvalCsv();
    } else if (!run.empty()) {
      try {
        io::AppendCsvRow(io::RunDir(run).EvalCsv(),
                         std::string("unix_time,model_version,file,") + learn::kMoveErrorCsvColumns,
                         std::to_string(std::time(nullptr)) + ',' + std::to_string(net.ModelVersion()) + ',' +
                             name + ',' + learn::MoveErrorCsvFields(m));
      } catch (const Error& e) {
        ZF_LOG(WARN) << e.what();
      }
    }
  }
  if (!positions_csv.empty()) io::WriteTextFileAtomically(positions_csv, rows);
  return 0;
}

// --make-set's solver tables: 2^26 entries, 512 MiB a thread. Positions of
// under 8 stones take minutes each with eval's 64 MiB.
constexpr int kMakeSetTableLog2 = 26;

// --make-set: a Pons-format file of positions of one of Pons's kinds, made
// from random games, and the solver's verdicts on them in the cache.
int MakeSetCommand(const EvalConfig& e, const proc::FarmConfig& c) {
  const std::string out = e.out;
  if (out.empty()) throw ConfigError("--make-set needs --out FILE");
  std::error_code ec;
  if (fs::symlink_status(out, ec).type() != fs::file_type::not_found)
    throw ConfigError("--out " + out + " exists: remove it or give another file");
  const int count = e.count;  // in range: the table's
  learn::PonsSetRequest request;
  request.kind = learn::ParsePonsSetKind(e.make_set);
  request.count = count;
  request.seed = c.seed;
  request.work_file = out + ".solving";
  request.threads = RateThreads(e);
  request.tt_log2 = kMakeSetTableLog2;
  for (const auto& file : PonsFiles(e))
    for (const auto& p : learn::ReadPonsFile(file)) request.exclude.insert(learn::MirrorFreeKey(p.moves));
  const bool quiet = !c.status_line || !isatty(STDERR_FILENO);  // no control codes into a file or pipe
  auto positions = learn::MakePonsSet(request, [&](int kept, int solved) {
    if (!quiet)
      std::fprintf(stderr, "\rmaking %s: %d solved, %d of %d kept so far", out.c_str(), solved, kept, count);
  });
  if (!quiet) std::fprintf(stderr, "\r\033[K");
  std::string text;
  for (const auto& p : positions) text += p.moves + ' ' + std::to_string(p.score) + '\n';
  io::WriteTextFileAtomically(out, text);
  // The verdicts where a later `zerofarm eval --pons OUT` looks for them first.
  const std::string cache_dir = CacheDir(e, "");
  fs::create_directories(cache_dir, ec);
  const std::string cache = cache_dir + "/" + CacheName(out);
  std::string rated;
  for (const auto& p : positions) rated += learn::RatingLine(p.moves, p.score, p.rating);
  io::WriteTextFileAtomically(cache, rated);
  fs::remove(request.work_file, ec);
  std::printf(
      "zerofarm eval: wrote %s: %d positions of Pons's kind %s (%d-%d stones, %d-%d plies left), seed %llu, "
      "%zu excluded; the solver's verdicts in %s\n",
      out.c_str(), count, request.kind.name.c_str(), request.kind.min_stones, request.kind.max_stones,
      request.kind.min_left, request.kind.max_left, static_cast<unsigned long long>(c.seed),
      request.exclude.size(), cache.c_str());
  return 0;
}

// Each of eval's modes ignores the others' options: one given there is
// refused, never ignored (issue 72). `random`: a random net plays (--weights
// or --against random), the only one that --blocks and its kin shape.
void RefuseOtherModes(const cxxopts::ParseResult& r, const EvalConfig& e, bool random) {
  if (!e.make_set.empty()) {
    RefuseGiven(
        r,
        {"run",       "weights",       "against",     "against-gtp",       "games",          "opening-plies",
         "limit",     "positions-csv", "game",        "simulations",       "c-puct",         "value-discount",
         "no-solver", "blocks",        "filters",     "score-head",        "value-channels", "eval-threads",
         "precision", "bf16",          "orientation", "average-symmetries"},
        "is not for --make-set (it plays random games and rates them with the exact solver)");
    return;
  }
  RefuseGiven(r, {"count", "out"}, "is for --make-set");
  const bool arena = !e.against.empty() || !e.against_gtp.empty();
  if (arena) {
    RefuseGiven(r, {"pons", "sets", "limit", "cache-dir", "rate-threads"},
                "is for move error (--pons, --sets), not for an arena");
  } else {
    RefuseGiven(r, {"games", "opening-plies"},
                "is for an arena (--against, --against-gtp), not for move error");
    if (!random)
      RefuseGiven(r, {"seed"}, "seeds a random net or an arena's openings: a move error of a file has none");
  }
  if (!random)
    RefuseGiven(r, {"blocks", "filters", "score-head", "value-channels"},
                "shapes a random net (--weights random, --against random): a weights file has its own shape");
}

}  // namespace

void AddEvalOptions(cxxopts::Options& options) {
  // Game, search and network options are `run`'s (the option table); the
  // arena's --games is eval's own (run's --games is a limit, 0 = none).
  AddCommandOptions(options, proc::kEval);
  AddTableOptions(options, proc::kEval);
}

int EvalCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm eval",
      "Measure a network's strength.\n"
      "  move error: zerofarm eval --weights W.h5 --pons FILE [--pons FILE2] [--sets DIR] [--simulations N]\n"
      "  arena:      zerofarm eval --weights A.h5 --against B.h5 --games 100 [--simulations N]\n"
      "  GTP arena:  zerofarm eval --weights GO.h5 --against-gtp \"gnugo --mode gtp --level 10\" --games 20\n"
      "  a set:      zerofarm eval --make-set L1_R3 --count 1000 --seed 2 --out FILE [--sets DIR]\n"
      "--run RUN evaluates the newest RUN/models/model-N.h5 and appends the result to RUN/eval/eval.csv.");
  AddEvalOptions(options);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  const proc::FarmConfig c = ReadTableOptions(r, proc::kEval);
  CheckTableOptions(c, proc::kEval);
  if (c.fp16 || c.precision == "fp16") throw ConfigError("--precision: eval runs on the CPU, fp32 or bf16");
  const EvalConfig e = ReadCommandOptions(r, proc::kEval).eval;
  const bool arena = !e.against.empty() || !e.against_gtp.empty();
  if (arena && !e.positions_csv.empty())
    throw ConfigError("--positions-csv is for move error (--pons, --sets), not for an arena");
  RefuseOtherModes(r, e, c.weights == "random" || e.against == "random");
  if (!e.make_set.empty()) return MakeSetCommand(e, c);
  std::string weights = c.weights;
  if (!e.run.empty() && weights.empty()) weights = NewestModel(e.run);
  if (weights.empty()) throw ConfigError("--weights or --run is required");
  if (!e.against_gtp.empty()) return GtpArenaCommand(e, c, GameGiven(r, c), weights);
  if (!arena && e.pons.empty() && e.sets.empty())
    throw ConfigError("give --pons FILE or --sets DIR (move error), or --against B.h5 (arena)");
  const mcts::SearchConfig search = EvalSearch(c);
  const auto game = game::MakeGame(EvalGameName(GameGiven(r, c), c, weights));
  auto net = LoadNet(*game, weights, c);
  if (arena) return ArenaCommand(e, c, *game, *net, weights, search);
  return MoveErrorCommand(e, c, *game, *net, weights, search);
}

}  // namespace zerofarm::cli
