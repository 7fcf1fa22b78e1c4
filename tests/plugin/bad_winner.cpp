// A game plugin that breaks the contract mid-run (tests/plugin/game_plugin_test.sh):
// tic-tac-toe, whose terminal Winner() becomes 7 once a process has asked
// for a terminal Winner() kBreakAfter times. The quick conformance pass
// before a run asks far fewer times, so it passes (check-game's full suite
// does not); a farm's workers ask
// that often within their first games, so later games break and earlier
// ones do not. -DZF_BREAK_AT_ONCE: broken from the first call, which the
// pass before a run refuses.
#include <memory>
#include <string>
#include <vector>

#include "zerofarm/game/plugin.h"

namespace {

using zerofarm::game::BoardShape;
using zerofarm::game::Game;
using zerofarm::game::State;

#ifdef ZF_BREAK_AT_ONCE
constexpr int kBreakAfter = 0;
#else
constexpr int kBreakAfter = 150;
#endif

int terminal_winner_calls = 0;  // of this process

class BadState : public State {
 public:
  explicit BadState(std::unique_ptr<State> inner) : inner_(std::move(inner)) {}
  std::unique_ptr<State> Clone() const override { return std::make_unique<BadState>(inner_->Clone()); }
  void CopyFrom(const State& other) override {
    inner_->CopyFrom(*static_cast<const BadState&>(other).inner_);
  }
  bool Equals(const State& other) const override {
    const auto* o = dynamic_cast<const BadState*>(&other);
    return o != nullptr && inner_->Equals(*o->inner_);
  }
  int CurrentPlayer() const override { return inner_->CurrentPlayer(); }
  int MoveNumber() const override { return inner_->MoveNumber(); }
  void LegalActions(std::vector<int>* out) const override { inner_->LegalActions(out); }
  bool IsLegal(int action) const override { return inner_->IsLegal(action); }
  void Apply(int action) override { inner_->Apply(action); }
  bool IsTerminal() const override { return inner_->IsTerminal(); }
  int Winner() const override {
    if (inner_->IsTerminal() && ++terminal_winner_calls > kBreakAfter) return 7;
    return inner_->Winner();
  }
  void EncodeFeatures(uint8_t* out) const override { inner_->EncodeFeatures(out); }
  uint64_t Hash() const override { return inner_->Hash(); }
  std::string ToString() const override { return inner_->ToString(); }

 private:
  std::unique_ptr<State> inner_;
};

class BadGame : public Game {
 public:
  BadGame() : inner_(zerofarm::game::MakeGame("tictactoe")) {}
  std::string Name() const override { return "badwinner"; }
  int ActionCount() const override { return inner_->ActionCount(); }
  BoardShape Shape() const override { return inner_->Shape(); }
  std::vector<std::string> PlaneNames() const override { return inner_->PlaneNames(); }
  int MaxGameLength() const override { return inner_->MaxGameLength(); }
  std::unique_ptr<State> NewInitialState() const override {
    return std::make_unique<BadState>(inner_->NewInitialState());
  }
  int SymmetryCount() const override { return inner_->SymmetryCount(); }
  std::vector<int> CellMap(int s) const override { return inner_->CellMap(s); }
  std::vector<int> ActionMap(int s) const override { return inner_->ActionMap(s); }
  std::string ActionToString(int a) const override { return inner_->ActionToString(a); }
  int ParseAction(const std::string& text) const override { return inner_->ParseAction(text); }
  std::unique_ptr<State> ParseBoard(const std::string& text) const override {
    return std::make_unique<BadState>(inner_->ParseBoard(text));
  }

 private:
  std::unique_ptr<Game> inner_;
};

}  // namespace

ZF_GAME_PLUGIN("badwinner", BadGame)
