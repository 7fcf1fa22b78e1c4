// zerofarm eval: how strong a network is. Move error against the exact
// Connect Four solver on Pons-format files, or an arena between two networks.
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
std::string CacheDir(const cxxopts::ParseResult& r, const std::string& run) {
  if (!r["cache-dir"].as<std::string>().empty()) return r["cache-dir"].as<std::string>();
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
std::vector<std::string> PonsFiles(const cxxopts::ParseResult& r) {
  std::vector<std::string> files;
  if (r.count("pons")) files = r["pons"].as<std::vector<std::string>>();
  if (!r.count("sets")) return files;
  for (const std::string& dir : r["sets"].as<std::vector<std::string>>()) {
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

void AddEvalOptions(cxxopts::Options& options) {
  options.add_options("what")("run", "Evaluate the newest model of this run directory",
                              cxxopts::value<std::string>()->default_value(""))(
      "pons", "Pons-format file of Connect Four positions ('moves score' lines); repeatable",
      cxxopts::value<std::vector<std::string>>())(
      "sets",
      "Every Pons test file (Test_L*_R*, or Made_L*_R* of --make-set) of this directory, e.g. "
      "data/reference/connect4 or data/connect4/made; repeatable",
      cxxopts::value<std::vector<std::string>>())("limit", "Use the first N positions of each file (0 = all)",
                                                  cxxopts::value<int>()->default_value("0"))(
      "against", "Arena: the opponent's weights file", cxxopts::value<std::string>()->default_value(""))(
      "against-gtp",
      "Arena against a GTP Go program: its command line, e.g. \"gnugo --mode gtp --level 10\" "
      "(docs/gtp.md)",
      cxxopts::value<std::string>()->default_value(""))("games", "Arena games",
                                                        cxxopts::value<int>()->default_value("100"))(
      "opening-plies", "Arena: random opening plies, each opening played twice with colours swapped",
      cxxopts::value<int>()->default_value("4"));
  // Game, search and network options are `run`'s (the option table); the
  // arena's --games is eval's own (run's --games is a limit, 0 = none).
  AddTableOptions(options, proc::kEval);
  options.add_options("what")(
      "cache-dir", "Where the solver's verdicts are cached (default RUN/eval or ~/.cache/zerofarm)",
      cxxopts::value<std::string>()->default_value(""))(
      "positions-csv",
      "Move error: write every position's moves (the network's and the search's, their solver verdicts and "
      "values) to this CSV file, one row a position of every file",
      cxxopts::value<std::string>()->default_value(""))(
      "rate-threads",
      "Solver threads for the positions with no cached verdict (0 = one per CPU granted; "
      "64 MiB each)",
      cxxopts::value<int>()->default_value("0"));
  options.add_options("make a set")(
      "make-set",
      "Write --count positions of Pons's kind KIND (L1_R3: 1-14 stones, 29 or more plies left with "
      "perfect play; L<1-3>_R<1-3>, docs/training.md \"Sets made here\") to --out, from random games of "
      "--seed that block a threatened four and give none, solved and rated here; the positions of --pons and "
      "--sets files and their mirrors "
      "are left out. A stopped run resumes from OUT.solving",
      cxxopts::value<std::string>()->default_value(""))("count", "--make-set: positions",
                                                        cxxopts::value<int>()->default_value("1000"))(
      "out", "--make-set: the Pons-format file to write (it must not exist)",
      cxxopts::value<std::string>()->default_value(""));
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
std::string EvalGameName(const cxxopts::ParseResult& r, const proc::FarmConfig& c,
                         const std::string& weights) {
  if (weights == "random") return c.game;
  std::error_code ec;
  if (!fs::exists(weights, ec)) throw ConfigError(weights + ": No such file or directory");
  return r.count("game") ? c.game : io::ReadWeights(weights).config.game;
}

int ArenaCommand(const cxxopts::ParseResult& r, const proc::FarmConfig& c, const game::Game& game,
                 eval::Evaluator& net, const std::string& weights, const mcts::SearchConfig& search) {
  if (search.simulations < 1) throw ConfigError("an arena needs --simulations >= 1");
  const int games = r["games"].as<int>();
  if (games < 1 || games > 1'000'000) throw ConfigError("--games must be in [1, 1000000]");
  const int opening = r["opening-plies"].as<int>();
  if (opening < 0 || opening > 100) throw ConfigError("--opening-plies must be in [0, 100]");
  auto other = LoadNet(game, r["against"].as<std::string>(), c);
  const learn::ArenaResult a = learn::Arena(game, net, *other, games, search, opening, c.seed);
  const eval::Orientation shown = OrientationOf(c, game);  // both networks' (LoadNet)
  std::printf(
      "zerofarm eval: arena %s vs %s, %d games at %d simulations (%d random opening plies, colours "
      "swapped): %d wins, %d draws, %d losses; score %.3f (95%% interval %.3f..%.3f), Elo %+.0f\n",
      weights.c_str(), r["against"].as<std::string>().c_str(), a.games, search.simulations, opening, a.wins,
      a.draws, a.losses, a.Score(), a.Interval95().first, a.Interval95().second, a.Elo());
  const nlohmann::ordered_json j = {{"kind", "arena"},
                                    {"a", weights},
                                    {"b", r["against"].as<std::string>()},
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
int RateThreads(const cxxopts::ParseResult& r) {
  const int n = r["rate-threads"].as<int>();
  return n > 0 ? n : proc::CpusGranted();
}

int MoveErrorCommand(const cxxopts::ParseResult& r, const proc::FarmConfig& c, const game::Game& game,
                     eval::Evaluator& net, const std::string& weights, const mcts::SearchConfig& search) {
  const std::string run = r["run"].as<std::string>();
  const bool quiet = !c.status_line;
  const std::string cache_dir = CacheDir(r, run);
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  const std::string positions_csv = r["positions-csv"].as<std::string>();
  // Written at the end: a path that cannot be written fails now, not after the evaluation.
  const fs::path csv_dir = fs::path(positions_csv).parent_path();
  if (!positions_csv.empty() && !csv_dir.empty() && !fs::is_directory(csv_dir))
    throw ConfigError("--positions-csv " + positions_csv + ": " + csv_dir.string() + " is not a directory");
  std::string rows = std::string(learn::kPositionCsvColumns) + '\n';
  const eval::Orientation shown = OrientationOf(c, game);
  for (const auto& file : PonsFiles(r)) {
    auto positions = learn::ReadPonsFile(file, r["limit"].as<int>());
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
          if (!quiet && done < total)
            std::fprintf(stderr, "\rrating %s with the solver: %d/%d", file.c_str(), done, total);
          if (!quiet && done == total && total >= 25) std::fprintf(stderr, "\r\033[K");
        },
        RateThreads(r));
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
int MakeSetCommand(const cxxopts::ParseResult& r, const proc::FarmConfig& c) {
  const std::string out = r["out"].as<std::string>();
  if (out.empty()) throw ConfigError("--make-set needs --out FILE");
  std::error_code ec;
  if (fs::symlink_status(out, ec).type() != fs::file_type::not_found)
    throw ConfigError("--out " + out + " exists: remove it or give another file");
  const int count = r["count"].as<int>();
  if (count < 1 || count > 100000) throw ConfigError("--count must be in [1, 100000]");
  learn::PonsSetRequest request;
  request.kind = learn::ParsePonsSetKind(r["make-set"].as<std::string>());
  request.count = count;
  request.seed = c.seed;
  request.work_file = out + ".solving";
  request.threads = RateThreads(r);
  request.tt_log2 = kMakeSetTableLog2;
  for (const auto& file : PonsFiles(r))
    for (const auto& p : learn::ReadPonsFile(file)) request.exclude.insert(learn::MirrorFreeKey(p.moves));
  const bool quiet = !c.status_line;
  auto positions = learn::MakePonsSet(request, [&](int kept, int solved) {
    if (!quiet)
      std::fprintf(stderr, "\rmaking %s: %d solved, %d of %d kept so far", out.c_str(), solved, kept, count);
  });
  if (!quiet) std::fprintf(stderr, "\r\033[K");
  std::string text;
  for (const auto& p : positions) text += p.moves + ' ' + std::to_string(p.score) + '\n';
  io::WriteTextFileAtomically(out, text);
  // The verdicts where a later `zerofarm eval --pons OUT` looks for them first.
  const std::string cache_dir = CacheDir(r, "");
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

}  // namespace

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
  const std::string run = r["run"].as<std::string>();
  if (!r["make-set"].as<std::string>().empty()) return MakeSetCommand(r, c);
  std::string weights = c.weights;
  if (!run.empty() && weights.empty()) weights = NewestModel(run);
  if (weights.empty()) throw ConfigError("--weights or --run is required");
  const bool arena = !r["against"].as<std::string>().empty() || !r["against-gtp"].as<std::string>().empty();
  if (arena && !r["positions-csv"].as<std::string>().empty())
    throw ConfigError("--positions-csv is for move error (--pons, --sets), not for an arena");
  if (!r["against-gtp"].as<std::string>().empty()) return GtpArenaCommand(r, c, weights);
  if (!arena && !r.count("pons") && !r.count("sets"))
    throw ConfigError("give --pons FILE or --sets DIR (move error), or --against B.h5 (arena)");
  const mcts::SearchConfig search = EvalSearch(c);
  if (r["limit"].as<int>() < 0) throw ConfigError("--limit must be >= 0");
  if (r["rate-threads"].as<int>() < 0 || r["rate-threads"].as<int>() > 1024)
    throw ConfigError("--rate-threads must be in [0, 1024]");
  const auto game = game::MakeGame(EvalGameName(r, c, weights));
  auto net = LoadNet(*game, weights, c);
  if (arena) return ArenaCommand(r, c, *game, *net, weights, search);
  return MoveErrorCommand(r, c, *game, *net, weights, search);
}

}  // namespace zerofarm::cli
