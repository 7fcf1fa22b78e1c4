// zerofarm export: the games of a run (or of shards) as human-readable
// records. SGF (one file per game in --out DIR, or one SGF collection on
// stdout) for Go, Othello and Gomoku; JSON lines (one object per game, to
// --out FILE or stdout) for every game. Never overwrites a file.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "zerofarm/core/error.h"
#include "zerofarm/game/game.h"
#include "zerofarm/io/game_records.h"
#include "zerofarm/io/h5.h"
#include "zerofarm/io/h5_check.h"
#include "zerofarm/io/run_dir.h"
#include "zerofarm/io/shard.h"

namespace zerofarm::cli {
namespace fs = std::filesystem;
namespace {

// Every shard under PATH (a run directory: its shards/), sorted; PATH itself
// when it is a file.
std::vector<std::string> ShardFiles(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ConfigError(path + ": No such file or directory");
  if (!fs::is_directory(path, ec)) return {path};
  const std::string root = io::RunDir::ShardsRootOf(path);
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root, ec))
    if (e.is_regular_file() && e.path().extension() == ".h5") out.push_back(e.path().string());
  if (ec) throw Error(root + ": " + ec.message());
  std::sort(out.begin(), out.end());
  if (out.empty()) throw ConfigError(path + ": no *.h5 shards in it");
  return out;
}

// Writes `text` to a file that must not exist yet (O_EXCL, no link followed).
void WriteFresh(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) throw ConfigError(path + " exists; export never overwrites a file");
  if (fd < 0) throw Error(ErrnoMessage(path + ": create", errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      if (err == ENOSPC || err == EDQUOT) throw io::NoSpaceError(ErrnoMessage(path + ": write", err));
      throw Error(ErrnoMessage(path + ": write", err));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) throw Error(ErrnoMessage(path + ": close", errno));
}

nlohmann::ordered_json GameJson(const game::Game& game, const io::ShardMeta& meta, const std::string& shard,
                                const io::ShardGame& g, const std::vector<io::MoveNote>& notes) {
  using Json = nlohmann::ordered_json;
  Json moves = Json::array(), values = Json::array(), versions = Json::array();
  for (int16_t m : g.moves) moves.push_back(game.ActionToString(m));
  for (const io::MoveNote& n : notes) {
    values.push_back(n.known ? Json(n.root_value) : Json());
    versions.push_back(n.known ? Json(n.model_version) : Json());
  }
  return {{"game", game.Name()},
          {"game_id", g.game_id},
          {"game_id_hex", io::GameIdHex(g.game_id)},
          {"result", g.result},
          {"resigned", g.resigned},
          {"length", g.length},
          {"worker", g.worker},
          {"host", meta.host},
          {"run_id", meta.run_id},
          {"shard", shard},
          {"moves", moves},
          {"actions", g.moves},
          {"root_value", values},
          {"model_version", versions},
          {"sgf_result", io::SgfGameType(game) ? io::SgfResult(game, g) : std::string()}};
}

}  // namespace

int ExportCommand(int argc, char** argv) {
  cxxopts::Options options(
      "zerofarm export",
      "Write a run's games as records: --format sgf (Go GM[1], Othello GM[2], Gomoku GM[4]; one FILE per "
      "game,\n"
      "GAMEID.sgf, in --out DIR, or one SGF collection on stdout) or --format jsonl (every game; one JSON "
      "object\n"
      "per line, to --out FILE or stdout). Existing files are never overwritten (exit 2).");
  AddCommandOptions(options, proc::kExport);
  AddGamePluginOption(options);  // a plugin game's shards
  options.parse_positional({"path"});
  options.positional_help("RUN");
  cxxopts::ParseResult r;
  int code = 0;
  if (!ParseArgs(options, argc, argv, &r, &code)) return code;
  LoadGamePluginOption(r);
  if (!r.count("path")) throw ConfigError("give a run directory or shard: zerofarm export RUN --format sgf");
  const ExportConfig e = ReadCommandOptions(r, proc::kExport).exporting;  // each in its range or choices
  const std::string& format = e.format;
  const int limit = e.limit;
  const std::string& out = e.out;
  const auto shards = ShardFiles(e.path);
  if (format == "sgf" && !out.empty()) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec || !fs::is_directory(out)) throw ConfigError("--out " + out + ": not a directory we can make");
  }
  std::string jsonl;
  int written = 0;
  // libhdf5 crashes on some damaged files: a checker process reads them first (io/h5_check.h).
  io::H5CheckAhead checked(io::H5CheckKind::kShard, shards);  // --limit: no more than needed
  for (size_t i = 0; i < shards.size() && !(limit > 0 && written >= limit); ++i) {
    const std::string& path = shards[i];
    if (!checked.Verdict(i).empty()) throw Error(checked.Verdict(i));
    io::ShardReader shard(path);
    const auto game = game::MakeGame(shard.meta().game);
    if (format == "sgf" && io::SgfGameType(*game) == 0)
      throw ConfigError(path + ": SGF has no game type for " + game->Name() + "; use --format jsonl");
    const io::PositionRows rows = shard.ReadAllPositions();
    for (const io::ShardGame& g : shard.ReadGames()) {
      if (limit > 0 && written >= limit) break;
      const auto notes = io::MoveNotes(g, rows);
      if (format == "jsonl") {
        jsonl += GameJson(*game, shard.meta(), path, g, notes).dump() + "\n";
      } else if (out.empty()) {
        std::cout << io::GameToSgf(*game, shard.meta(), g, notes);
      } else {
        WriteFresh(out + "/" + io::GameIdHex(g.game_id) + ".sgf",
                   io::GameToSgf(*game, shard.meta(), g, notes));
      }
      ++written;
    }
  }
  if (format == "jsonl" && !out.empty())
    WriteFresh(out, jsonl);
  else if (format == "jsonl")
    std::cout << jsonl;
  std::cout.flush();
  std::cerr << "zerofarm export: " << written << " game(s) as " << format << " to "
            << (out.empty() ? std::string("stdout") : out) << "\n";
  return 0;
}

}  // namespace zerofarm::cli
