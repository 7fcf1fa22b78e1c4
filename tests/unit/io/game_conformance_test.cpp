// The conformance suite's shard round trip (io/game_conformance.h): every
// registered game passes it, and it fails on games broken on purpose.
#include "zerofarm/io/game_conformance.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "test_paths.h"
#include "zerofarm/game/game.h"
#include "zerofarm/game/tictactoe.h"

namespace zerofarm::io {
namespace {

using testing::ScratchDir;

std::string Describe(const game::ConformanceFailures& failures) {
  std::string text;
  for (const auto& f : failures) text += f.check + ": " + f.message + "\n";
  return text;
}

TEST_CASE("every registered game's records round trip through a shard", "[io][conformance]") {
  for (const std::string& name : game::GameNames()) {
    SECTION(name) {
      ScratchDir dir("zf-conformance");
      const auto failures = CheckShardRoundTrip(*game::MakeGame(name), dir.path());
      INFO(Describe(failures));
      CHECK(failures.empty());
    }
  }
}

// Tic-tac-toe under a name no reader can rebuild.
class UnregisteredGame : public game::TicTacToeGame {
 public:
  std::string Name() const override { return "no-such-game"; }
};

// Tic-tac-toe whose features change every time they are encoded.
class DriftingState : public game::TicTacToeState {
 public:
  std::unique_ptr<game::State> Clone() const override { return std::make_unique<DriftingState>(*this); }
  void EncodeFeatures(uint8_t* out) const override {
    static int calls = 0;
    TicTacToeState::EncodeFeatures(out);
    out[0] = static_cast<uint8_t>(++calls % 2);
  }
};
class DriftingGame : public game::TicTacToeGame {
 public:
  std::unique_ptr<game::State> NewInitialState() const override { return std::make_unique<DriftingState>(); }
};

TEST_CASE("the shard round trip fails for a game readers cannot rebuild", "[io][conformance]") {
  ScratchDir dir("zf-conformance");
  const auto failures = CheckShardRoundTrip(UnregisteredGame(), dir.path());
  REQUIRE(!failures.empty());
  CHECK(failures[0].check == "shard-round-trip");
  CHECK_THAT(failures[0].message, Catch::Contains("unknown game 'no-such-game'"));
}

TEST_CASE("the shard round trip fails when replayed moves do not give the recorded features",
          "[io][conformance]") {
  ScratchDir dir("zf-conformance");
  const auto failures = CheckShardRoundTrip(DriftingGame(), dir.path());
  REQUIRE(!failures.empty());
  CHECK_THAT(failures[0].message, Catch::Contains("features at ply"));
}

}  // namespace
}  // namespace zerofarm::io
