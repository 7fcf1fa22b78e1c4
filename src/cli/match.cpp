// zerofarm match: zerofarm (a network and MCTS) against an outside GTP
// engine, Go or Othello (learn/match.h, docs/match.md). One process, one
// thread; the engine is a child in its own process group, restarted after a
// game it broke. Per game one line on stderr; the last line on stdout is the
// match's JSON summary.
#include "zerofarm/learn/match.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/go.h"
#include "zerofarm/io/files.h"
#include "zerofarm/io/game_records.h"
#include "zerofarm/learn/gtp.h"
#include "zerofarm/learn/recipe.h"

namespace zerofarm::cli {
namespace {

constexpr uintmax_t kMaxOpeningsBytes = 16u << 20;

// OUT made, or an empty directory that is no link: nothing there is overwritten.
void PrepareOut(const std::string& out) {
  if (out.empty()) throw ConfigError("--out DIR is required (each game's SGF goes there)");
  struct stat st {};
  if (lstat(out.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw ConfigError("--out " + PrintableText(out) + ": not a directory (or a link)");
    if (!std::filesystem::is_empty(out))
      throw ConfigError("--out " + PrintableText(out) + ": not empty (a match never overwrites games)");
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) throw ConfigError("--out " + PrintableText(out) + ": " + ec.message());
}

std::vector<std::vector<int>> ReadOpenings(const game::Game& game, const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw ConfigError("--openings " + PrintableText(path) + ": " + ec.message());
  if (size > kMaxOpeningsBytes) throw ConfigError("--openings " + PrintableText(path) + ": over 16 MiB");
  return learn::ParseOpenings(game, io::ReadTextFile(path), path);
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

nlohmann::ordered_json GameJson(const game::Game& game, const learn::MatchGame& g) {
  return {{"game", g.index},
          {"zerofarm", g.zerofarm_colour == 0 ? "B" : "W"},
          {"opening", g.opening},
          {"end", learn::MatchEndName(g.end)},
          {"scored", g.Scored()},
          {"result", g.result},
          {"plies", g.moves.size()},
          {"engine_score", g.engine_score},
          {"score_agrees", g.score_agrees},
          {"detail", g.detail},
          {"moves", game.FormatMoves(g.moves)}};
}

// The summary: counts, the score of the scored games with its Wilson 95 %
// interval (draws as half), and the Elo difference with the interval's.
nlohmann::ordered_json Summary(const learn::MatchResult& m) {
  const eval::ArenaResult& a = m.score;
  const auto [low, high] = a.Interval95();
  nlohmann::ordered_json j = {{"games", m.games}, {"scored", a.games},
                              {"wins", a.wins},   {"losses", a.losses},
                              {"draws", a.draws}, {"engine_failures", m.games - a.games}};
  for (learn::MatchEnd e : {learn::MatchEnd::kHang, learn::MatchEnd::kCrash, learn::MatchEnd::kNoGtp,
                            learn::MatchEnd::kIllegal, learn::MatchEnd::kRefused})
    j[learn::MatchEndName(e)] = m.failures[static_cast<int>(e)];
  j["score_disagreements"] = m.score_disagreements;
  j["zerofarm_black"] = m.zerofarm_black;
  j["zerofarm_white"] = m.zerofarm_white;
  if (a.games == 0) {
    j["win_rate"] = nullptr, j["low95"] = nullptr, j["high95"] = nullptr;
    j["elo"] = nullptr, j["elo_low95"] = nullptr, j["elo_high95"] = nullptr;
    return j;
  }
  j["win_rate"] = a.Score(), j["low95"] = low, j["high95"] = high;
  j["elo"] = a.Elo(), j["elo_low95"] = eval::ArenaResult::EloOf(low),
  j["elo_high95"] = eval::ArenaResult::EloOf(high);
  return j;
}

// Plays the match, each game's SGF and line written as it ends, then the summary.
int RunMatch(const game::Game& game, GtpEngineParts& parts, const proc::FarmConfig& c, const MatchOptions& o,
             const learn::MatchConfig& mc) {
  const auto* go = dynamic_cast<const game::GoGame*>(&game);
  const std::string zf = "zerofarm " + c.weights + " (" + std::to_string(parts.search.simulations) + " sims)";
  const std::string date = Today();
  auto on_game = [&](const learn::MatchGame& g) {
    char name[32];
    std::snprintf(name, sizeof name, "game-%04d", g.index);
    io::SgfRecord rec;
    rec.moves = g.moves, rec.result = g.result, rec.name = name, rec.date = date;
    rec.black = g.zerofarm_colour == 0 ? zf : o.engine;
    rec.white = g.zerofarm_colour == 0 ? o.engine : zf;
    rec.comment = "zerofarm match, game " + std::to_string(g.index) + ": " + learn::MatchEndName(g.end) +
                  (g.detail.empty() ? "" : " (" + g.detail + ")") +
                  (g.engine_score.empty() ? "" : "; the engine's final_score " + g.engine_score);
    io::WriteTextFileAtomically(o.out + "/" + name + ".sgf", io::RecordToSgf(game, rec));
    const nlohmann::ordered_json line = GameJson(game, g);
    std::ofstream jsonl(o.out + "/games.jsonl", std::ios::app);
    jsonl << line.dump() << "\n";
    if (!jsonl.flush()) throw Error("cannot write " + o.out + "/games.jsonl");
    if (g.Scored())
      std::fprintf(stderr, "game %d/%d: zerofarm %s, %s (%s, %zu plies%s%s)\n", g.index + 1, mc.games,
                   g.zerofarm_colour == 0 ? "B" : "W", g.result.c_str(), learn::MatchEndName(g.end),
                   g.moves.size(), g.engine_score.empty() ? "" : "; engine says ", g.engine_score.c_str());
    else
      std::fprintf(stderr, "game %d/%d: not scored, engine failure (%s): %s\n", g.index + 1, mc.games,
                   learn::MatchEndName(g.end), g.detail.c_str());
  };
  const learn::MatchResult m = learn::PlayMatch(game, *parts.net, parts.search, mc, on_game);
  nlohmann::ordered_json j = {{"kind", "match"},      {"game", game.Name()},
                              {"weights", c.weights}, {"simulations", parts.search.simulations},
                              {"engine", o.engine},   {"engine_name", m.engine_name}};
  if (go) j["komi"] = go->komi(), j["rules"] = "tromp-taylor";
  j["openings"] = o.openings.empty() ? "random " + std::to_string(mc.opening_plies) + " plies" : o.openings;
  j["out"] = o.out;
  j.update(Summary(m));
  io::WriteTextFileAtomically(o.out + "/match.json", j.dump() + "\n");
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace

void AddMatchOptions(cxxopts::Options& options) {
  AddCommandOptions(options, proc::kMatch);
  AddTableOptions(options, proc::kMatch);
}

int MatchCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm match",
      "Play zerofarm against any GTP engine, Go (9x9) or Othello, refereed by zerofarm's rules.\n"
      "  zerofarm match --game othello --weights W.h5 --engine 'gtp-rhino --level 1' --games 20 --out DIR\n"
      "Each game's SGF goes to DIR; the last line printed is the match's JSON summary (docs/match.md).");
  AddMatchOptions(options);
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  const proc::FarmConfig c = ReadTableOptions(r, proc::kMatch);
  CheckTableOptions(c, proc::kMatch);
  const MatchOptions o = ReadCommandOptions(r, proc::kMatch).match;
  if (c.weights.empty()) throw ConfigError("--weights W.h5 (or --weights random) is required");
  learn::MatchConfig mc;
  mc.engine = learn::SplitWords(o.engine);
  if (mc.engine.empty()) throw ConfigError("--engine 'CMD ARGS' is required (a GTP engine's command line)");
  GtpEngineParts parts = MakeGtpEngineParts(c, r.count("game") > 0, c.weights, /*othello_too=*/true);
  const auto* go = dynamic_cast<const game::GoGame*>(parts.game.get());
  if (!o.komi.empty()) {
    if (!go) throw ConfigError("--komi is for Go; " + parts.game->Name() + " has none");
    double komi = 0;
    try {
      komi = proc::ParseOptionValue<double>(o.komi);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("--komi: ") + e.what());
    }
    if (!std::isfinite(komi) || std::fabs(komi) > 1000) throw ConfigError("--komi must be in [-1000, 1000]");
    parts.game = std::make_unique<game::GoGame>(go->size(), komi);
  }
  if (!o.openings.empty()) mc.openings = ReadOpenings(*parts.game, o.openings);
  PrepareOut(o.out);
  mc.engine_stderr = o.engine_stderr.empty() ? o.out + "/engine.err" : o.engine_stderr;
  mc.move_seconds = o.move_seconds, mc.games = o.games, mc.opening_plies = o.opening_plies;
  mc.seed = c.seed, mc.max_plies = o.max_plies;
  return RunMatch(*parts.game, parts, c, o, mc);
}

}  // namespace zerofarm::cli
