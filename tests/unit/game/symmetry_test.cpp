// Symmetries of every registered game, and the game registry.
#include "zerofarm/game/symmetry.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "zerofarm/core/error.h"
#include "zerofarm/core/hash.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

bool IsPermutation(const std::vector<int>& map, int n) {
  if (static_cast<int>(map.size()) != n) return false;
  std::vector<int> sorted = map;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < n; ++i) {
    if (sorted[i] != i) return false;
  }
  return true;
}

// The symmetry t with t after s = identity on both cells and actions, or -1.
int InverseOf(const Game& game, int s) {
  const std::vector<int> cs = game.CellMap(s), as = game.ActionMap(s);
  for (int t = 0; t < game.SymmetryCount(); ++t) {
    const std::vector<int> ct = game.CellMap(t), at = game.ActionMap(t);
    bool ok = true;
    for (size_t c = 0; c < cs.size(); ++c) ok = ok && ct[cs[c]] == static_cast<int>(c);
    for (size_t a = 0; a < as.size(); ++a) ok = ok && at[as[a]] == static_cast<int>(a);
    if (ok) return t;
  }
  return -1;
}

// A random legal move sequence of random length (possibly ending the game).
std::vector<int> RandomMoves(const Game& game, Rng& rng) {
  auto state = game.NewInitialState();
  const int length = static_cast<int>(rng.Below(game.MaxGameLength() + 1));
  std::vector<int> moves, legal;
  while (static_cast<int>(moves.size()) < length && !state->IsTerminal()) {
    state->LegalActions(&legal);
    moves.push_back(legal[rng.Below(legal.size())]);
    state->Apply(moves.back());
  }
  return moves;
}

std::vector<uint8_t> Encode(const Game& game, const State& state) {
  std::vector<uint8_t> f(game.Shape().FeatureBytes(), 0xEE);
  state.EncodeFeatures(f.data());
  return f;
}

}  // namespace

TEST_CASE("game registry", "[game]") {
  const std::vector<std::string> names = GameNames();
  CHECK(std::find(names.begin(), names.end(), "tictactoe") != names.end());
  CHECK(std::find(names.begin(), names.end(), "connect4") != names.end());
  for (const std::string& name : names) {
    const auto game = MakeGame(name);
    CHECK(game->Name() == name);
    CHECK(static_cast<int>(game->PlaneNames().size()) == game->Shape().planes);
    CHECK(game->ActionCount() <= kMaxActions);
    const auto s = game->NewInitialState();
    CHECK(s->MoveNumber() == 0);
    CHECK(s->CurrentPlayer() == 0);
    CHECK_FALSE(s->IsTerminal());
  }
  CHECK_THROWS_AS(MakeGame("chess"), ConfigError);
  CHECK_THROWS_WITH(MakeGame("chess"),
                    Catch::Contains("chess") && Catch::Contains("connect4") && Catch::Contains("tictactoe"));
}

TEST_CASE("symmetry maps are permutations closed under inverses", "[game][symmetry]") {
  for (const std::string& name : GameNames()) {
    INFO(name);
    const auto game = MakeGame(name);
    const int n = game->SymmetryCount();
    const int cells = game->Shape().Cells();
    const int actions = game->ActionCount();
    std::vector<std::vector<int>> cell_maps;
    for (int s = 0; s < n; ++s) {
      INFO("symmetry " << s);
      const std::vector<int> cm = game->CellMap(s), am = game->ActionMap(s);
      CHECK(IsPermutation(cm, cells));
      CHECK(IsPermutation(am, actions));
      CHECK(InverseOf(*game, s) >= 0);
      if (s == 0) {
        std::vector<int> id(cells);
        std::iota(id.begin(), id.end(), 0);
        CHECK(cm == id);
      }
      cell_maps.push_back(cm);
    }
    std::sort(cell_maps.begin(), cell_maps.end());
    CHECK(std::unique(cell_maps.begin(), cell_maps.end()) == cell_maps.end());  // all distinct
  }
  CHECK(MakeGame("tictactoe")->SymmetryCount() == 8);
  CHECK(MakeGame("connect4")->SymmetryCount() == 2);
}

TEST_CASE("transformed features equal the features of the symmetric position", "[game][symmetry]") {
  Rng rng(2024);
  for (const std::string& name : GameNames()) {
    const auto game = MakeGame(name);
    const int bytes = game->Shape().FeatureBytes();
    const int actions = game->ActionCount();
    for (int s = 0; s < game->SymmetryCount(); ++s) {
      const std::vector<int> amap = game->ActionMap(s);
      const int inverse = InverseOf(*game, s);
      REQUIRE(inverse >= 0);
      for (int trial = 0; trial < 200; ++trial) {
        const std::vector<int> moves = RandomMoves(*game, rng);
        std::vector<int> mapped_moves;
        for (int m : moves) mapped_moves.push_back(amap[m]);
        INFO(name << " symmetry " << s << " moves " << game->FormatMoves(moves));
        const auto state = game->Replay(moves);
        std::unique_ptr<State> mapped;
        REQUIRE_NOTHROW(mapped = game->Replay(mapped_moves));
        CHECK(mapped->IsTerminal() == state->IsTerminal());
        CHECK(mapped->Winner() == state->Winner());
        if (s == 0) CHECK(mapped->Hash() == state->Hash());

        const std::vector<uint8_t> in = Encode(*game, *state);
        std::vector<uint8_t> out(bytes, 0xEE), back(bytes, 0xEE);
        TransformFeatures(*game, s, in.data(), out.data());
        CHECK(out == Encode(*game, *mapped));
        // One plane of cell values (a training target) moves as each feature plane does.
        const int cells = game->Shape().Cells();
        std::vector<int8_t> plane(in.begin(), in.begin() + cells), moved(static_cast<size_t>(cells), -7);
        for (int c = 0; c < cells; ++c) plane[static_cast<size_t>(c)] -= in[static_cast<size_t>(cells + c)];
        TransformCells(*game, s, plane.data(), moved.data());
        for (int c = 0; c < cells; ++c)
          CHECK(moved[static_cast<size_t>(c)] ==
                out[static_cast<size_t>(c)] - out[static_cast<size_t>(cells + c)]);
        TransformFeatures(*game, inverse, out.data(), back.data());
        CHECK(back == in);

        // Legal moves map onto legal moves.
        std::vector<int> legal, mapped_legal;
        state->LegalActions(&legal);
        mapped->LegalActions(&mapped_legal);
        for (int& a : legal) a = amap[a];
        std::sort(legal.begin(), legal.end());
        CHECK(legal == mapped_legal);

        // Policy: a permutation that keeps the sum, undone by the inverse.
        std::vector<float> policy(actions), p_out(actions, -1.0f), p_back(actions, -1.0f);
        for (float& p : policy) p = static_cast<float>(rng.Uniform());
        TransformPolicy(*game, s, policy.data(), p_out.data());
        for (int a = 0; a < actions; ++a) CHECK(p_out[amap[a]] == policy[a]);
        std::vector<float> sorted_in = policy, sorted_out = p_out;
        std::sort(sorted_in.begin(), sorted_in.end());
        std::sort(sorted_out.begin(), sorted_out.end());
        CHECK(sorted_in == sorted_out);
        CHECK(std::accumulate(p_out.begin(), p_out.end(), 0.0) ==
              Approx(std::accumulate(policy.begin(), policy.end(), 0.0)));
        TransformPolicy(*game, inverse, p_out.data(), p_back.data());
        CHECK(p_back == policy);
      }
    }
  }
}

TEST_CASE("concrete symmetry examples", "[game][symmetry]") {
  SECTION("connect4: the mirror maps column 1 to column 7") {
    const auto game = MakeGame("connect4");
    CHECK(game->ActionMap(1) == std::vector<int>{6, 5, 4, 3, 2, 1, 0});
    const auto a = game->Replay(game->ParseMoves("1123"));
    const auto b = game->Replay(game->ParseMoves("7765"));
    std::vector<uint8_t> out(game->Shape().FeatureBytes());
    TransformFeatures(*game, 1, Encode(*game, *a).data(), out.data());
    CHECK(out == Encode(*game, *b));
    CHECK(out != Encode(*game, *a));
    // Cell (row 5, col 0) <-> (row 5, col 6).
    CHECK(game->CellMap(1)[35] == 41);
  }
  SECTION("tictactoe: a quarter turn, and a board every symmetry fixes") {
    const auto game = MakeGame("tictactoe");
    // Symmetry 1 turns the board clockwise: top left -> top right -> bottom right.
    CHECK(game->CellMap(1)[0] == 2);
    CHECK(game->CellMap(1)[2] == 8);
    CHECK(game->CellMap(1)[4] == 4);
    const auto centre = game->Replay({4});
    const std::vector<uint8_t> in = Encode(*game, *centre);
    std::vector<uint8_t> out(in.size());
    for (int s = 0; s < game->SymmetryCount(); ++s) {
      TransformFeatures(*game, s, in.data(), out.data());
      CHECK(out == in);
    }
  }
}

TEST_CASE("symmetry tables: the same transforms, and one canonical key for all images of a position",
          "[game][symmetry]") {
  Rng rng(77);
  for (const std::string& name : GameNames()) {
    const auto game = MakeGame(name);
    const SymmetryTables tables(*game);
    REQUIRE(tables.Count() == game->SymmetryCount());
    REQUIRE(tables.FeatureBytes() == game->Shape().FeatureBytes());
    const int bytes = tables.FeatureBytes(), actions = game->ActionCount();
    std::vector<uint8_t> scratch(bytes);
    for (int trial = 0; trial < 30; ++trial) {
      const std::vector<int> moves = RandomMoves(*game, rng);
      const std::vector<uint8_t> in = Encode(*game, *game->Replay(moves));
      std::vector<float> policy(actions);
      for (float& p : policy) p = static_cast<float>(rng.Uniform());
      const CanonicalHash key = HashCanonical(tables, in.data(), scratch.data());
      bool self_symmetric = false;
      for (int s = 1; s < tables.Count(); ++s) {
        tables.TransformFeatures(s, in.data(), scratch.data());
        self_symmetric = self_symmetric || scratch == in;
      }
      CHECK(HashCanonical(tables, in.data(), scratch.data(), false).hash == HashBytes(in.data(), bytes));
      for (int s = 0; s < tables.Count(); ++s) {
        INFO(name << " symmetry " << s << " moves " << game->FormatMoves(moves));
        std::vector<uint8_t> expect(bytes), got(bytes);
        TransformFeatures(*game, s, in.data(), expect.data());
        tables.TransformFeatures(s, in.data(), got.data());
        CHECK(got == expect);
        std::vector<float> p_expect(actions), p_got(actions), p_back(actions);
        TransformPolicy(*game, s, policy.data(), p_expect.data());
        tables.TransformPolicy(s, policy.data(), p_got.data());
        CHECK(p_got == p_expect);
        tables.UntransformPolicy(s, p_got.data(), p_back.data());
        CHECK(p_back == policy);

        // Every image has the same canonical hash, and its own orientation
        // maps a policy of the image onto the same canonical policy.
        const CanonicalHash image_key = HashCanonical(tables, got.data(), scratch.data());
        CHECK(image_key.hash == key.hash);
        std::vector<float> canon_from_in(actions), canon_from_image(actions);
        tables.TransformPolicy(key.symmetry, policy.data(), canon_from_in.data());
        tables.TransformPolicy(image_key.symmetry, p_got.data(), canon_from_image.data());
        std::vector<uint8_t> canon_in(bytes), canon_image(bytes);
        tables.TransformFeatures(key.symmetry, in.data(), canon_in.data());
        tables.TransformFeatures(image_key.symmetry, got.data(), canon_image.data());
        CHECK(canon_in == canon_image);
        // (A position that is its own image has several orientations to the canonical form.)
        if (!self_symmetric) CHECK(canon_from_in == canon_from_image);
      }
    }
  }
  // Connect Four: an opening and its mirror share the key; a different opening does not.
  const auto c4 = MakeGame("connect4");
  const SymmetryTables tables(*c4);
  std::vector<uint8_t> scratch(tables.FeatureBytes());
  const auto a = Encode(*c4, *c4->Replay(c4->ParseMoves("12"))),
             b = Encode(*c4, *c4->Replay(c4->ParseMoves("76")));
  const auto c = Encode(*c4, *c4->Replay(c4->ParseMoves("13")));
  CHECK(HashCanonical(tables, a.data(), scratch.data()).hash ==
        HashCanonical(tables, b.data(), scratch.data()).hash);
  CHECK(HashCanonical(tables, a.data(), scratch.data()).symmetry !=
        HashCanonical(tables, b.data(), scratch.data()).symmetry);
  CHECK(HashCanonical(tables, a.data(), scratch.data()).hash !=
        HashCanonical(tables, c.data(), scratch.data()).hash);
}

}  // namespace zerofarm::game
