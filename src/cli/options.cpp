// Options shared by the subcommands.
#include <iostream>

#include "commands.h"
#include "zerofarm/core/error.h"

namespace zerofarm::cli {

namespace {
template <typename T>
std::string Str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// cxxopts reports a bad number as "Argument 'abc' failed to parse", without
// the option: find the option in argv that was given that value (issue 21).
std::string BadNumberMessage(int argc, char** argv, const std::string& what) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) continue;
    const size_t eq = a.find('=');
    if (eq == std::string::npos && i + 1 >= argc) continue;
    const std::string name = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? argv[i + 1] : a.substr(eq + 1);
    if (what.find("\u2018" + value + "\u2019") != std::string::npos || what.find("'" + value + "'") != std::string::npos)
      return name + ": '" + PrintableText(value) + "' is not a valid number";
  }
  return PrintableText(what, 200);
}
}  // namespace

bool ParseArgs(cxxopts::Options& options, int argc, char** argv, cxxopts::ParseResult* result,
               int* exit_code) {
  options.add_options("help")("h,help", "Print this help");
  try {
    *result = options.parse(argc, argv);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    throw ConfigError(BadNumberMessage(argc, argv, e.what()));
  }
  if (result->count("help")) {
    std::cout << options.help() << std::endl;
    *exit_code = 0;
    return false;
  }
  if (!result->unmatched().empty())
    throw ConfigError("unexpected argument '" + result->unmatched().front() + "'");
  return true;
}

void AddGameAndSearchOptions(cxxopts::Options& options, const proc::FarmConfig& d) {
  options.add_options("game and search")
      ("game", "Game to play: tictactoe, connect4", cxxopts::value<std::string>()->default_value(d.game))
      ("simulations", "Root visits per move", cxxopts::value<int>()->default_value(Str(d.search.simulations)))
      ("c-puct", "PUCT exploration constant", cxxopts::value<float>()->default_value(Str(d.search.c_puct)))
      ("value-discount", "Backed-up values shrink by this factor a ply: < 1 prefers quicker wins (1 = off)",
       cxxopts::value<float>()->default_value(Str(d.search.value_discount)))
      ("fpu-reduction", "First-play urgency: unvisited child Q = parent Q minus this",
       cxxopts::value<float>()->default_value(Str(d.search.fpu_reduction)))
      ("dirichlet-alpha", "Root Dirichlet noise concentration",
       cxxopts::value<float>()->default_value(Str(d.search.dirichlet_alpha)))
      ("dirichlet-fraction", "Share of the root prior replaced by noise (0 = off)",
       cxxopts::value<float>()->default_value(Str(d.search.dirichlet_fraction)))
      ("temperature-plies", "Opening plies whose move is sampled from the visits",
       cxxopts::value<int>()->default_value(Str(d.search.temperature_plies)))
      ("leaves-per-round", "Leaves per tree in flight (virtual loss when > 1)",
       cxxopts::value<int>()->default_value(Str(d.search.leaves_per_round)))
      ("no-tree-reuse", "Discard the tree after every move")
      ("no-solver", "PUCT: do not prove wins and losses up the tree (MCTS-solver off)")
      ("no-proof-targets", "Solver: record the raw visits as the policy target, not the proof-shaped one")
      ("search", "Root search: puct, or gumbel (Gumbel MuZero: sequential halving, improved-policy targets)",
       cxxopts::value<std::string>()->default_value(d.search.gumbel ? "gumbel" : "puct"))
      ("gumbel-m", "Gumbel: root actions sampled without replacement",
       cxxopts::value<int>()->default_value(Str(d.search.gumbel_m)))
      ("gumbel-scale", "Gumbel: scale of the root noise (0 = deterministic)",
       cxxopts::value<float>()->default_value(Str(d.search.gumbel_scale)))
      ("gumbel-c-visit", "Gumbel: c_visit of sigma(q)", cxxopts::value<float>()->default_value(Str(d.search.gumbel_c_visit)))
      ("gumbel-c-scale", "Gumbel: c_scale of sigma(q)", cxxopts::value<float>()->default_value(Str(d.search.gumbel_c_scale)))
      ("playout-cap-fraction", "Share of moves searched with --fast-simulations, not recorded as policy targets",
       cxxopts::value<float>()->default_value(Str(d.search.playout_cap_fraction)))
      ("fast-simulations", "Simulations of a playout-capped move",
       cxxopts::value<int>()->default_value(Str(d.search.fast_simulations)))
      ("resign-threshold", "Resign below this root value (-1 = never)",
       cxxopts::value<float>()->default_value(Str(d.search.resign_threshold)))
      ("resign-moves", "Consecutive own moves below the threshold before resigning",
       cxxopts::value<int>()->default_value(Str(d.search.resign_moves)))
      ("resign-playthrough", "Share of games that never resign (they measure false resignations)",
       cxxopts::value<float>()->default_value(Str(d.search.resign_playthrough)))
      ("resign-target", "Move the threshold toward this false-resignation rate (0 = fixed threshold)",
       cxxopts::value<float>()->default_value(Str(d.search.resign_target)))
      ("eval-cache", "Entries of the evaluation cache shared by the workers (farm only; 0 = none; default: "
       "auto, from the host's memory: docs/search.md)", cxxopts::value<uint64_t>())
      ("seed", "Run seed (games, noise and the random net derive from it)",
       cxxopts::value<uint64_t>()->default_value(Str(d.seed)));
  options.add_options("network")
      ("weights", "HDF5 weights file (default: a random net from --seed)",
       cxxopts::value<std::string>()->default_value(""))
      ("blocks", "Residual blocks of the random net", cxxopts::value<int>()->default_value(Str(d.blocks)))
      ("filters", "Filters of the random net", cxxopts::value<int>()->default_value(Str(d.filters)))
      ("eval-threads", "LibTorch intra-op threads per evaluator (0 = auto: 1)",
       cxxopts::value<int>()->default_value(Str(d.eval_threads)))
      ("precision", "Network precision: fp32, bf16, fp16 (GPU only) or auto (bf16 on CPUs with "
       "AVX512-BF16/AMX, else fp32)", cxxopts::value<std::string>()->default_value(d.precision))
      ("bf16", "Run the network in bfloat16 (same as --precision bf16)")
      ("fp16", "Run the network in float16 (GPU evaluators only)");
  options.add_options("safety")
      ("allow-foreign-dir", "Write into a run or models directory that another user owns or that group or "
       "others can write (refused by default: such a directory lets them plant links)");
}

void ReadGameAndSearchOptions(const cxxopts::ParseResult& r, proc::FarmConfig* c) {
  // Only options given on the command line: they override the config file
  // (or the built-in defaults, which *c starts with).
  Override(r, "game", &c->game);
  Override(r, "simulations", &c->search.simulations);
  Override(r, "c-puct", &c->search.c_puct);
  Override(r, "value-discount", &c->search.value_discount);
  Override(r, "fpu-reduction", &c->search.fpu_reduction);
  Override(r, "dirichlet-alpha", &c->search.dirichlet_alpha);
  Override(r, "dirichlet-fraction", &c->search.dirichlet_fraction);
  Override(r, "temperature-plies", &c->search.temperature_plies);
  Override(r, "leaves-per-round", &c->search.leaves_per_round);
  if (r.count("no-tree-reuse")) c->search.reuse_tree = false;
  if (r.count("no-solver")) c->search.solver = false;
  if (r.count("no-proof-targets")) c->search.proof_targets = false;
  if (r.count("search")) {
    const std::string s = r["search"].as<std::string>();
    if (s != "puct" && s != "gumbel") throw ConfigError("--search must be puct or gumbel, got '" + s + "'");
    c->search.gumbel = s == "gumbel";
  }
  Override(r, "gumbel-m", &c->search.gumbel_m);
  Override(r, "gumbel-scale", &c->search.gumbel_scale);
  Override(r, "gumbel-c-visit", &c->search.gumbel_c_visit);
  Override(r, "gumbel-c-scale", &c->search.gumbel_c_scale);
  Override(r, "playout-cap-fraction", &c->search.playout_cap_fraction);
  Override(r, "fast-simulations", &c->search.fast_simulations);
  Override(r, "resign-threshold", &c->search.resign_threshold);
  Override(r, "resign-moves", &c->search.resign_moves);
  Override(r, "resign-playthrough", &c->search.resign_playthrough);
  Override(r, "resign-target", &c->search.resign_target);
  Override(r, "eval-cache", &c->eval_cache);
  Override(r, "seed", &c->seed);
  Override(r, "weights", &c->weights);
  Override(r, "blocks", &c->blocks);
  Override(r, "filters", &c->filters);
  Override(r, "eval-threads", &c->eval_threads);
  Override(r, "precision", &c->precision);
  if (r.count("bf16")) c->bf16 = true;
  if (r.count("fp16")) c->fp16 = true;
  if (r.count("allow-foreign-dir")) c->allow_foreign_dir = true;
}

}  // namespace zerofarm::cli
