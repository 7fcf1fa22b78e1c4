#pragma once
// Human-readable game records of shard games: SGF (Smart Game Format, FF[4])
// for the games SGF has a type for, Go (GM[1]), Othello (GM[2]) and Gomoku
// (GM[4]), and the per-move notes both SGF and `zerofarm export --format
// jsonl` carry. Implementation: src/io/game_records.cpp.
//
// Coordinates: every one of these games numbers cells row * width + col with
// row 0 = the TOP row as drawn, which is SGF's own order: a point is the
// column letter then the row letter, "aa" = top-left. A pass (action =
// width * height) is an empty move, B[] / W[]. Player 0 moves first and is
// Black (B) in all three games.
//
// Result (RE): "B+R" / "W+R" for a resignation; for a Go game played to its
// end the Tromp-Taylor area score of the final board, "B+3.5" / "W+0.5"
// (game/go.h: stones plus empty regions reaching one colour, komi to White,
// no dead-stone removal); "0" for a draw; "B+" / "W+" otherwise (Othello,
// Gomoku: the winner, no margin). Go records carry SZ and KM; RU is
// "Tromp-Taylor" (area scoring, suicide illegal, positional superko).
#include <cstdint>
#include <string>
#include <vector>

#include "zerofarm/io/shard.h"

namespace zerofarm::game {
class Game;
}

namespace zerofarm::io {

// What the shard says about one move: the search's root value from the view
// of the player making it, in [-1, 1], and the model version that searched.
// `known` = false where the shard has no row for that ply.
struct MoveNote {
  bool known = false;
  float root_value = 0.0f;
  uint32_t model_version = 0;
  bool full_search = true;
};

// The notes of `g`'s plies 0..length-1, from its rows of /positions (rows
// holds at least [g.first_position, g.first_position + g.position_count)).
std::vector<MoveNote> MoveNotes(const ShardGame& g, const PositionRows& rows);

// The SGF GM number of `game` (1 Go, 2 Othello, 4 Gomoku), or 0 when SGF has
// no type for it (tic-tac-toe, Connect Four).
int SgfGameType(const game::Game& game);

// The SGF RE value of `g` (see above). Throws zerofarm::Error when a Go game's
// moves do not replay (a corrupt shard).
std::string SgfResult(const game::Game& game, const ShardGame& g);

// One game as an SGF game tree "(;FF[4]GM[..]...;B[ee]C[..];W[..]...)\n".
// `notes` (from MoveNotes; may be empty) become each move's comment:
// "value +0.123 for B, model 3". Throws ConfigError when SgfGameType(game) is 0.
std::string GameToSgf(const game::Game& game, const ShardMeta& meta, const ShardGame& g,
                      const std::vector<MoveNote>& notes);

// A game not from a shard (zerofarm match): moves from the start position,
// Black first, one a ply; the players' names, the RE value, the root comment.
struct SgfRecord {
  std::vector<int> moves;
  std::string black, white;  // PB, PW
  std::string result;        // RE: "B+3.5", "W+R", "0", "Void"
  std::string name;          // GN ("" = none)
  std::string date;          // DT, YYYY-MM-DD ("" = none)
  std::string comment;       // the root's C ("" = none)
};
// `r` as an SGF game tree, as GameToSgf writes one. ConfigError when SgfGameType(game) is 0.
std::string RecordToSgf(const game::Game& game, const SgfRecord& r);

// "0x" + 16 hex digits: a game id as written in records and file names.
std::string GameIdHex(uint64_t game_id);

}  // namespace zerofarm::io
