// zerofarm inspect FILE|DIR: counts, schema, per-game summary (game id with
// its fields, moves in the game's notation, the final board), per-host totals
// of a run with several hosts, and a board drawn for any position of a shard.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/shard.h"
#include "zerofarm/io/shard_manifest.h"
#include "zerofarm/proc/farm_config.h"

namespace zerofarm::cli {
namespace {

std::vector<std::string> ShardsOf(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::exists(path)) throw Error(path + ": no such file or directory");
  if (!fs::is_directory(path)) return {path};
  std::vector<std::string> out;
  const std::string root = io::RunDir::ShardsRootOf(path);  // a run directory: only its shards
  if (root != path) {
    out = io::RunShardFollower(root).NewShards();  // each host's manifest, else a listing
  } else {
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file() && e.path().extension() == ".h5") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
  }
  if (out.empty()) throw Error(path + ": no *.h5 shards in it");
  return out;
}

struct HostTotals {
  uint64_t shards = 0, games = 0, positions = 0;
};

const char* ResultText(int winner) { return winner == 0 ? "1-0" : winner == 1 ? "0-1" : "draw"; }

// "123456789 (host 0, epoch 1, worker 3, sequence 17)": the fields of proc::MakeGameId.
std::string GameIdText(uint64_t id) {
  const proc::GameIdFields f = proc::SplitGameId(id);
  return std::to_string(id) + " (host " + std::to_string(f.host_index) + ", epoch " +
         std::to_string(f.epoch) + ", worker " + std::to_string(f.worker) + ", sequence " +
         std::to_string(f.sequence) + ")";
}

// How moves are shown: the game's own notation of the 0-based action the shard
// stores, with the first legal action of the start as the example (action 0
// need not be a move that can be played, as in Breakthrough).
std::string MoveConvention(const game::Game& game) {
  const int last = game.ActionCount() - 1;
  std::vector<int> legal;
  game.NewInitialState()->LegalActions(&legal);
  const int example = legal.empty() ? 0 : legal.front();
  return "moves are shown in " + game.Name() + " notation: the shards store 0-based actions 0.." +
         std::to_string(last) + ", shown as " + game.ActionToString(0) + ".." + game.ActionToString(last) +
         " (action " + std::to_string(example) + " = " + game.ActionToString(example) + ")";
}

// The board after every move of `g`, each line indented.
void DrawFinalBoard(const game::Game& game, const io::ShardGame& g) {
  const auto state = game.Replay(std::vector<int>(g.moves.begin(), g.moves.end()));
  std::istringstream board(state->ToString());
  for (std::string line; std::getline(board, line);) std::cout << "      " << line << "\n";
}

void DrawPosition(const io::ShardReader& shard, const io::ShardGame& g, int ply) {
  auto game = game::MakeGame(shard.meta().game);
  if (ply < 0 || ply > g.length) throw ConfigError("--ply must be in [0, " + std::to_string(g.length) + "]");
  std::vector<int> moves(g.moves.begin(), g.moves.begin() + ply);
  auto state = game->Replay(moves);
  std::cout << "game " << GameIdText(g.game_id) << ", position after " << ply << " plies ("
            << (state->CurrentPlayer() == 0 ? "first" : "second") << " player to move):\n"
            << state->ToString();
  // The game's row at this ply: a game need not have a row for each ply
  // (--random-opening-plies leaves its opening without rows).
  const auto rows = shard.ReadPositions(g.first_position, g.position_count);
  const auto at = std::find(rows.ply.begin(), rows.ply.end(), ply);
  if (at == rows.ply.end()) {
    std::cout << (ply == g.length ? "(the final position; no search was recorded for it)\n"
                                  : "(no search was recorded for it: a random opening move)\n");
  } else {
    const auto r = static_cast<size_t>(at - rows.ply.begin());
    const auto na = static_cast<size_t>(shard.meta().actions);
    std::cout << "recorded: z " << rows.z[r] << ", root value " << std::fixed << std::setprecision(3)
              << rows.root_value[r] << ", model version " << rows.model_version[r] << "\npolicy target:";
    for (size_t a = 0; a < na; ++a)
      if (rows.policy[r * na + a] > 0)
        std::cout << " " << game->ActionToString(static_cast<int>(a)) << ":" << std::setprecision(3)
                  << rows.policy[r * na + a];
    std::cout << "\n";
  }
  if (ply < g.length) std::cout << "played: " << game->ActionToString(g.moves[ply]) << "\n";
}

// What inspect adds up over the shards it reads.
struct Totals {
  uint64_t games = 0, positions = 0;
  std::map<int, uint64_t> results;          // by winner (-1: draw)
  std::map<std::string, HostTotals> hosts;  // by host id
};

void AddToTotals(const io::ShardReader& shard, const std::vector<io::ShardGame>& games, Totals& t) {
  const io::ShardMeta& m = shard.meta();
  t.games += games.size();
  t.positions += shard.Positions();
  HostTotals& host = t.hosts[m.host_id.empty() ? std::string("(no host id)") : m.host_id];
  host.shards += 1;
  host.games += games.size();
  host.positions += shard.Positions();
}

// A host directory copied in from another run would mix two runs' data
// (and game ids): refuse it. Shards without a host id predate hosts.
void CheckSameRun(const std::string& path, const io::ShardMeta& m, const std::string& run_id,
                  const std::string& run_id_file) {
  if (!run_id.empty() && !m.host_id.empty() && m.run_id != run_id)
    throw Error(path + " belongs to run " + m.run_id + ", not to this run (" + run_id + ", " + run_id_file +
                "): host directory " + m.host_id + " comes from another run");
}

// The shard's attributes, then its first `list` games with their moves and final board.
void ListShard(const std::string& path, const io::ShardReader& shard, const std::vector<io::ShardGame>& games,
               int list, Totals& t) {
  const io::ShardMeta& m = shard.meta();
  std::cout << path << ": schema " << m.schema_version << ", " << m.game << " " << m.planes << "x" << m.height
            << "x" << m.width << " -> " << m.actions << " actions, " << games.size() << " games, "
            << shard.Positions() << " positions, model versions " << m.model_version_min << ".."
            << m.model_version_max << ", zerofarm " << m.zerofarm_version << ", host " << m.host
            << (m.host_id.empty() ? ""
                                  : " (host id " + m.host_id + ", epoch " + std::to_string(m.epoch) + ")")
            << ", created " << m.created << "\n";
  auto game = game::MakeGame(m.game);
  if (list > 0 && !games.empty()) std::cout << "  " << MoveConvention(*game) << "\n";
  int shown = 0;
  for (const auto& g : games) {
    t.results[g.result] += 1;
    if (shown++ >= list) continue;
    std::vector<int> moves(g.moves.begin(), g.moves.end());
    std::cout << "  game " << GameIdText(g.game_id) << "  " << g.length << " plies  " << ResultText(g.result)
              << "\n    moves: " << game->FormatMoves(moves) << "\n    final board:\n";
    DrawFinalBoard(*game, g);
  }
  if (shown > list) std::cout << "  ... " << shown - list << " more games\n";
}

// Per host (for a run, or shards of several hosts), the run, and the total.
void PrintTotals(const Totals& t, size_t shards, const std::string& run_id) {
  if (t.hosts.size() > 1 || !run_id.empty()) {
    for (const auto& [name, h] : t.hosts)
      std::cout << "host " << name << ": " << h.shards << " shard(s), " << h.games << " games, "
                << h.positions << " positions\n";
  }
  if (!run_id.empty()) std::cout << "run " << run_id << ": " << t.hosts.size() << " host(s)\n";
  auto count = [&](int winner) {
    auto it = t.results.find(winner);
    return it == t.results.end() ? uint64_t{0} : it->second;
  };
  std::cout << "total: " << shards << " shard(s), " << t.games << " games, " << t.positions
            << " positions; results: " << count(0) << " first-player wins, " << count(1)
            << " second-player wins, " << count(-1) << " draws\n";
}

// --game-id as a number; ConfigError naming it otherwise.
uint64_t ParseGameId(const std::string& text) {
  try {
    return proc::ParseOptionValue<uint64_t>(text);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("--game-id: ") + e.what());
  }
}

}  // namespace

int InspectCommand(int argc, char** argv) {
  cxxopts::Options options("zerofarm inspect", "Summarise zerofarm HDF5 shards and draw their positions.");
  AddCommandOptions(options, proc::kInspect);
  AddGamePluginOption(options);  // a plugin game's shards
  options.parse_positional({"path"});
  options.positional_help("FILE|DIR");
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  LoadGamePluginOption(r);
  if (!r.count("path")) throw ConfigError("give a shard file or a directory");
  const InspectConfig own = ReadCommandOptions(r, proc::kInspect).inspect;  // each in its range
  const int list = own.games;
  const bool draw = !own.game_id.empty();
  // Listing and drawing take different options: one of the other's is refused, never ignored.
  RefuseGiven(r, {draw ? "games" : "ply"},
              draw ? "lists the shards' games: --game-id draws one position"
                   : "goes with --game-id (the game whose position to draw)");
  const uint64_t game_id = draw ? ParseGameId(own.game_id) : 0;

  Totals totals;
  bool drawn = false;
  const auto shards = ShardsOf(own.path);
  std::string run_id_file;
  const std::string run_id = io::RunDir::RunIdAbove(own.path, &run_id_file);
  // libhdf5 crashes on some damaged files: a checker process reads them first (io/h5_check.h).
  const auto verdicts =
      io::CheckH5Files(draw ? io::H5CheckKind::kShard : io::H5CheckKind::kShardGames, shards);
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string& path = shards[i];
    if (!verdicts[i].empty()) throw Error(verdicts[i]);
    io::ShardReader shard(path);  // one clear line for a file that is not a shard
    CheckSameRun(path, shard.meta(), run_id, run_id_file);
    const auto games = shard.ReadGames();
    AddToTotals(shard, games, totals);
    if (!draw) {
      ListShard(path, shard, games, list, totals);
      continue;
    }
    for (const auto& g : games)
      if (g.game_id == game_id) {
        DrawPosition(shard, g, own.ply);
        drawn = true;
      }
  }
  if (draw) {
    if (!drawn) throw Error("no game with id " + std::to_string(game_id));
    return 0;
  }
  PrintTotals(totals, shards.size(), run_id);
  return 0;
}

}  // namespace zerofarm::cli
