#include "zerofarm/io/game_records.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "zerofarm/core/error.h"
#include "zerofarm/core_version.h"
#include "zerofarm/game/game.h"
#include "zerofarm/game/go.h"

namespace zerofarm::io {
namespace {

// SGF text values escape ']' and '\' with a backslash.
std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string Point(const game::Game& game, int action) {
  const game::BoardShape shape = game.Shape();
  if (action < 0 || action >= shape.Cells()) return "";  // pass
  const int row = action / shape.width, col = action % shape.width;
  return {static_cast<char>('a' + col), static_cast<char>('a' + row)};
}

std::string Margin(double score) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s+%g", score > 0 ? "B" : "W", std::fabs(score));
  return buf;
}

}  // namespace

std::vector<MoveNote> MoveNotes(const ShardGame& g, const PositionRows& rows) {
  std::vector<MoveNote> notes(static_cast<size_t>(g.length));
  for (int64_t i = 0; i < g.position_count; ++i) {
    const int64_t row = g.first_position + i - static_cast<int64_t>(rows.first);
    if (row < 0 || row >= static_cast<int64_t>(rows.count)) continue;
    const int ply = rows.ply[row];
    if (ply < 0 || ply >= g.length || rows.game_id[row] != g.game_id) continue;
    MoveNote& n = notes[ply];
    n.known = true;
    n.root_value = rows.root_value[row];
    n.model_version = rows.model_version[row];
    n.full_search = rows.full_search.empty() || rows.full_search[row] != 0;
  }
  return notes;
}

int SgfGameType(const game::Game& game) {
  const std::string name = game.Name();
  if (dynamic_cast<const game::GoGame*>(&game)) return 1;
  if (name == "othello") return 2;
  if (name.rfind("gomoku", 0) == 0) return 4;
  return 0;
}

std::string SgfResult(const game::Game& game, const ShardGame& g) {
  if (g.resigned == 0 || g.resigned == 1) return g.resigned == 0 ? "W+R" : "B+R";
  if (SgfGameType(game) == 1) {
    std::vector<int> moves(g.moves.begin(), g.moves.end());
    const auto state = game.Replay(moves);
    const auto* go = dynamic_cast<const game::GoState*>(state.get());
    if (go && state->IsTerminal()) {
      const double score = go->Score();
      return score == 0 ? "0" : Margin(score);
    }
  }
  return g.result < 0 ? "0" : (g.result == 0 ? "B+" : "W+");
}

std::string GameIdHex(uint64_t game_id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, game_id);
  return buf;
}

namespace {

// "(;FF[4]CA[UTF-8]GM[..]AP[..]SZ[..]" and, for Go, KM and RU.
void SgfRoot(const game::Game& game, std::ostringstream& os) {
  const int type = SgfGameType(game);
  if (type == 0) throw ConfigError("SGF has no game type for " + game.Name() + " (use --format jsonl)");
  const game::BoardShape shape = game.Shape();
  os << "(;FF[4]CA[UTF-8]GM[" << type << "]AP[zerofarm:" << ZF_VERSION_STRING << "]";
  if (shape.width == shape.height)
    os << "SZ[" << shape.width << "]";
  else
    os << "SZ[" << shape.width << ":" << shape.height << "]";
  if (const auto* go = dynamic_cast<const game::GoGame*>(&game))
    os << "KM[" << go->komi() << "]RU[Tromp-Taylor]";
}

}  // namespace

std::string GameToSgf(const game::Game& game, const ShardMeta& meta, const ShardGame& g,
                      const std::vector<MoveNote>& notes) {
  std::ostringstream os;
  SgfRoot(game, os);
  uint32_t vmin = UINT32_MAX, vmax = 0;
  for (const MoveNote& n : notes)
    if (n.known) vmin = std::min(vmin, n.model_version), vmax = std::max(vmax, n.model_version);
  const std::string model =
      vmin > vmax ? ""
                  : (vmin == vmax ? " model " + std::to_string(vmin)
                                  : " models " + std::to_string(vmin) + ".." + std::to_string(vmax));
  os << "PB[zerofarm" << model << "]PW[zerofarm" << model << "]";
  os << "RE[" << SgfResult(game, g) << "]GN[" << GameIdHex(g.game_id) << "]";
  if (meta.created.size() >= 10) os << "DT[" << meta.created.substr(0, 10) << "]";
  os << "C["
     << Escape("zerofarm " + game.Name() + " game " + GameIdHex(g.game_id) + ", worker " +
               std::to_string(g.worker) + ", host " + meta.host + ", run " + meta.run_id +
               "; search: " + meta.search +
               "; each move's comment: the search's root value for the "
               "player who made it, in [-1, 1], and the model version that searched")
     << "]\n";
  for (int ply = 0; ply < g.length; ++ply) {
    const char colour = ply % 2 == 0 ? 'B' : 'W';
    os << ';' << colour << '[' << Point(game, g.moves[ply]) << ']';
    if (ply < static_cast<int>(notes.size()) && notes[ply].known) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "value %+.3f for %c, model %u%s", notes[ply].root_value, colour,
                    notes[ply].model_version, notes[ply].full_search ? "" : " (fast search)");
      os << "C[" << buf << "]";
    }
    if (ply % 8 == 7) os << '\n';
  }
  os << ")\n";
  return os.str();
}

std::string RecordToSgf(const game::Game& game, const SgfRecord& r) {
  std::ostringstream os;
  SgfRoot(game, os);
  os << "PB[" << Escape(r.black) << "]PW[" << Escape(r.white) << "]RE[" << Escape(r.result) << "]";
  if (!r.name.empty()) os << "GN[" << Escape(r.name) << "]";
  if (!r.date.empty()) os << "DT[" << Escape(r.date) << "]";
  if (!r.comment.empty()) os << "C[" << Escape(r.comment) << "]";
  os << "\n";
  for (size_t ply = 0; ply < r.moves.size(); ++ply) {
    os << ';' << (ply % 2 == 0 ? 'B' : 'W') << '[' << Point(game, r.moves[ply]) << ']';
    if (ply % 8 == 7) os << '\n';
  }
  os << ")\n";
  return os.str();
}

}  // namespace zerofarm::io
