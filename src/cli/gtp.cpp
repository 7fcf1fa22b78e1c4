// zerofarm gtp: a Go engine speaking the Go Text Protocol on stdin/stdout
// (GoGui, Sabaki, gnugo's twogtp, `zerofarm eval --against-gtp`). One
// process, one thread: read a command line, answer it, until quit or EOF.
// Logs go to stderr only; stdout carries nothing but GTP responses.
#include "zerofarm/learn/gtp.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/eval/torch_evaluator.h"
#include "zerofarm/io/weights_file.h"
#include "zerofarm/proc/roles.h"

namespace zerofarm::cli {

// The Go game, the search and the net of a gtp engine or a GTP arena, from
// options added by AddGtpEngineOptions (or eval's own of the same names).
GtpEngineParts MakeGtpEngineParts(const proc::FarmConfig& c, bool game_given, const std::string& weights,
                                  bool othello_too) {
  GtpEngineParts parts;
  std::string name = game_given ? c.game : "go";
  if (weights != "random") {
    std::error_code ec;
    if (!std::filesystem::exists(weights, ec)) throw ConfigError(weights + ": No such file or directory");
    if (!game_given) name = io::ReadWeights(weights).config.game;
  }
  parts.game = game::MakeGame(name);
  const auto* go = dynamic_cast<const game::GoGame*>(parts.game.get());
  if (!go && !(othello_too && name == "othello"))
    throw ConfigError(std::string(othello_too ? "match plays go and othello" : "GTP plays Go only") +
                      "; --game (or the weights' game) is " + name);
  eval::TorchOptions options;
  options.intra_op_threads = std::max(1, c.eval_threads);  // 0 = auto: 1
  options.value_discount = c.search.value_discount;
  if (weights == "random") {
    parts.net =
        eval::MakeTorchEvaluator(eval::RandomWeights(proc::NetConfigFor(*parts.game, c), c.seed), options);
  } else {
    parts.net = eval::MakeTorchEvaluator(proc::LoadWeightsFor(*parts.game, weights), options);
  }
  parts.search.simulations = c.search.simulations;
  parts.search.c_puct = c.search.c_puct;
  if (parts.search.simulations < 1) throw ConfigError("--simulations must be at least 1 to play " + name);
  parts.size = parts.game->Shape().width;
  parts.komi = go ? go->komi() : 0.0;
  return parts;
}

int GtpCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm gtp",
      "Play Go through the Go Text Protocol v2 on stdin/stdout (GoGui, Sabaki, gnugo twogtp).\n"
      "  zerofarm gtp --game go --weights W.h5 [--simulations N]\n"
      "Rules: Tromp-Taylor area scoring, suicide illegal, positional superko (docs/gtp.md).");
  // The option table's game, search and network rows (kGtp): the same names,
  // defaults and ranges as `run`; --game defaults to the weights' own, or go.
  AddTableOptions(options, proc::kGtp);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  const proc::FarmConfig c = ReadTableOptions(r, proc::kGtp);
  CheckTableOptions(c, proc::kGtp);
  if (c.weights.empty()) throw ConfigError("--weights W.h5 (or --weights random) is required");
  GtpEngineParts parts = MakeGtpEngineParts(c, GameGiven(r, c), c.weights);
  learn::GtpEngine engine(*parts.net, parts.size, parts.komi, parts.search, c.seed);
  bool quit = false;
  for (std::string line; !quit && std::getline(std::cin, line);) {
    const std::string response = engine.Handle(line, &quit);
    std::cout << response << std::flush;
  }
  return 0;
}

}  // namespace zerofarm::cli

namespace zerofarm::cli {

int GtpArenaCommand(const EvalConfig& e, const proc::FarmConfig& c, bool game_given,
                    const std::string& weights) {
  const std::string& opponent = e.against_gtp;
  const int games = e.games, opening = e.opening_plies;  // in range: the table's
  GtpEngineParts parts = MakeGtpEngineParts(c, game_given, weights);
  const uint64_t seed = c.seed;
  learn::GtpEngine engine(*parts.net, parts.size, parts.komi, parts.search, seed);
  learn::GtpProcess program(opponent);
  std::string opponent_name = opponent;
  try {
    opponent_name = program.Command("name") + " " + program.Command("version");
  } catch (const learn::GtpError&) {
  }
  const bool quiet = !c.status_line;
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  int illegal = 0;
  const eval::ArenaResult a = learn::GtpArena(
      engine, program, parts.size, parts.komi, games, opening, seed,
      [&](int i, const learn::GtpGameResult& g, int colour) {
        illegal += g.reason == "illegal";
        records.push_back({{"game", i},
                           {"zerofarm", colour == 0 ? "B" : "W"},
                           {"result", g.Result()},
                           {"reason", g.reason},
                           {"detail", g.detail},
                           {"plies", g.moves.size()},
                           {"opponent_score", colour == 0 ? g.white_score : g.black_score}});
        if (!quiet)
          std::fprintf(stderr, "game %d: zerofarm %s, %s (%s, %zu plies)\n", i + 1, colour == 0 ? "B" : "W",
                       g.Result().c_str(), g.reason.c_str(), g.moves.size());
      });
  std::printf(
      "zerofarm eval: GTP arena %s vs %s, %d games of %dx%d Go (komi %g, %d simulations, %d random opening "
      "plies, colours alternating): %d wins, %d draws, %d losses; score %.3f (95%% interval %.3f..%.3f), Elo "
      "%+.0f\n",
      weights.c_str(), opponent_name.c_str(), a.games, parts.size, parts.size, parts.komi,
      parts.search.simulations, opening, a.wins, a.draws, a.losses, a.Score(), a.Interval95().first,
      a.Interval95().second, a.Elo());
  const nlohmann::ordered_json j = {{"kind", "gtp_arena"},
                                    {"a", weights},
                                    {"b", opponent},
                                    {"b_name", opponent_name},
                                    {"games", a.games},
                                    {"board", parts.size},
                                    {"komi", parts.komi},
                                    {"rules", "tromp-taylor"},
                                    {"simulations", parts.search.simulations},
                                    {"wins", a.wins},
                                    {"draws", a.draws},
                                    {"losses", a.losses},
                                    {"illegal_endings", illegal},
                                    {"score", a.Score()},
                                    {"low95", a.Interval95().first},
                                    {"high95", a.Interval95().second},
                                    {"elo", a.Elo()},
                                    {"records", records}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace zerofarm::cli
