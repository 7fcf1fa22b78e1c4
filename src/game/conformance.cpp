// The game conformance suite (conformance.h): each check walks random
// playouts and reports, in one line each, where a promise of game.h breaks.
#include "zerofarm/game/conformance.h"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "zerofarm/core/rng.h"
#include "zerofarm/game/symmetry.h"

namespace zerofarm::game {
namespace {

// Collects one check's failures, up to the limit.
class Report {
 public:
  Report(const char* check, const ConformanceOptions& options) : check_(check), max_(options.max_failures) {}
  bool full() const { return static_cast<int>(failures_.size()) >= max_; }
  void Fail(const std::string& message) {
    if (!full()) failures_.push_back({check_, message});
  }
  // Fails with `message` unless `ok`; returns ok.
  bool Expect(bool ok, const std::string& message) {
    if (!ok) Fail(message);
    return ok;
  }
  ConformanceFailures Take() { return std::move(failures_); }

 private:
  const char* check_;
  int max_;
  ConformanceFailures failures_;
};

// "after moves a b c" (the moves as the game writes them; raw numbers when
// an action is out of range).
std::string Where(const Game& game, const std::vector<int>& moves) {
  std::string text;
  for (int a : moves) {
    text += text.empty() ? "" : " ";
    text += (a >= 0 && a < game.ActionCount()) ? game.ActionToString(a) : std::to_string(a);
  }
  return "after moves [" + text + "]";
}

std::vector<int> Legal(const State& state) {
  std::vector<int> legal;
  state.LegalActions(&legal);
  return legal;
}

std::vector<uint8_t> Features(const Game& game, const State& state) {
  std::vector<uint8_t> features(game.Shape().FeatureBytes());
  state.EncodeFeatures(features.data());
  return features;
}

// Calls visit(state, moves) for every state of every playout, the initial
// state included, while the report has room. Stops a playout at its end.
template <class Visit>
void Walk(const Game& game, const ConformanceOptions& options, const Report& report, Visit visit) {
  for (const std::vector<int>& playout : RandomPlayouts(game, options)) {
    std::unique_ptr<State> state = game.NewInitialState();
    std::vector<int> moves;
    for (size_t i = 0;; ++i) {
      if (report.full()) return;
      visit(*state, moves);
      if (i == playout.size() || !state->IsLegal(playout[i])) break;
      state->Apply(playout[i]);
      moves.push_back(playout[i]);
    }
  }
}

// Runs one check, turning an exception thrown by the game into a failure.
template <class Body>
ConformanceFailures Guarded(const char* check, const ConformanceOptions& options, Body body) {
  Report report(check, options);
  try {
    body(report);
  } catch (const std::exception& e) {
    report.Fail(std::string("threw: ") + e.what());
  }
  return report.Take();
}

bool IsPermutation(const std::vector<int>& map, int size) {
  if (static_cast<int>(map.size()) != size) return false;
  std::vector<char> seen(size, 0);
  for (int x : map) {
    if (x < 0 || x >= size || seen[x]) return false;
    seen[x] = 1;
  }
  return true;
}

// (a after b)[x] = a[b[x]]
std::vector<int> Compose(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> c(b.size());
  for (size_t x = 0; x < b.size(); ++x) c[x] = a[b[x]];
  return c;
}

std::vector<int> MapActions(const std::vector<int>& map, const std::vector<int>& actions) {
  std::vector<int> out;
  for (int a : actions) out.push_back(map[a]);
  std::sort(out.begin(), out.end());
  return out;
}

// The permutation checks of CheckSymmetryGroup; false when any fails (the
// group checks need permutations).
bool CheckPermutations(const Game& game, const std::vector<std::vector<int>>& cells,
                       const std::vector<std::vector<int>>& actions, Report* report) {
  const int n = game.SymmetryCount();
  bool ok = report->Expect(n >= 1, "SymmetryCount() is " + std::to_string(n) + ", not >= 1");
  for (int s = 0; s < n; ++s) {
    const std::string sym = "symmetry " + std::to_string(s);
    ok &= report->Expect(IsPermutation(cells[s], game.Shape().Cells()),
                         "CellMap(" + std::to_string(s) + ") is not a permutation of the cells");
    ok &= report->Expect(IsPermutation(actions[s], game.ActionCount()),
                         "ActionMap(" + std::to_string(s) + ") is not a permutation of the actions");
  }
  if (!ok) return false;
  std::vector<int> identity_cells(game.Shape().Cells()), identity_actions(game.ActionCount());
  for (size_t i = 0; i < identity_cells.size(); ++i) identity_cells[i] = static_cast<int>(i);
  for (size_t i = 0; i < identity_actions.size(); ++i) identity_actions[i] = static_cast<int>(i);
  ok &= report->Expect(cells[0] == identity_cells && actions[0] == identity_actions,
                       "symmetry 0 is not the identity");
  return ok;
}

// The symmetry whose (cell, action) maps are (c, a), or -1.
int FindSymmetry(const std::vector<std::vector<int>>& cells, const std::vector<std::vector<int>>& actions,
                 const std::vector<int>& c, const std::vector<int>& a) {
  for (size_t s = 0; s < cells.size(); ++s) {
    if (cells[s] == c && actions[s] == a) return static_cast<int>(s);
  }
  return -1;
}

// A state's image under one symmetry, kept in step with it by playing the
// mapped moves.
struct Image {
  int symmetry;
  std::unique_ptr<State> state;
  bool alive = true;  // false once a mapped move was illegal (reported once)
};

// Compares `state` with its image; reports and kills the image on mismatch.
void CompareImage(const Game& game, const SymmetryTables& tables, const State& state, Image* image,
                  const std::vector<int>& action_map, const std::string& where, Report* report) {
  const std::string sym = "symmetry " + std::to_string(image->symmetry) + " " + where;
  const std::vector<uint8_t> features = Features(game, state);
  std::vector<uint8_t> mapped(features.size());
  tables.TransformFeatures(image->symmetry, features.data(), mapped.data());
  bool ok = report->Expect(Features(game, *image->state) == mapped,
                           sym + ": the mapped game's features are not the transformed features");
  ok = ok && report->Expect(Legal(*image->state) == MapActions(action_map, Legal(state)),
                            sym + ": the mapped game's legal actions are not the mapped legal actions");
  ok = ok && report->Expect(image->state->IsTerminal() == state.IsTerminal() &&
                                (!state.IsTerminal() || image->state->Winner() == state.Winner()),
                            sym + ": the mapped game does not end the same way");
  image->alive = ok;
}

// One playout of CheckSymmetricPositions.
void CheckSymmetricPlayout(const Game& game, const SymmetryTables& tables,
                           const std::vector<std::vector<int>>& action_maps, const std::vector<int>& playout,
                           Report* report) {
  std::unique_ptr<State> state = game.NewInitialState();
  std::vector<Image> images;
  for (int s = 1; s < tables.Count(); ++s) images.push_back({s, game.NewInitialState()});
  std::vector<int> moves;
  for (size_t i = 0;; ++i) {
    for (Image& image : images) {
      if (image.alive && !report->full()) {
        CompareImage(game, tables, *state, &image, action_maps[image.symmetry], Where(game, moves), report);
      }
    }
    if (i == playout.size() || !state->IsLegal(playout[i])) return;
    state->Apply(playout[i]);
    moves.push_back(playout[i]);
    for (Image& image : images) {
      if (!image.alive) continue;
      const int mapped = action_maps[image.symmetry][playout[i]];
      image.alive =
          report->Expect(!image.state->IsTerminal() && image.state->IsLegal(mapped),
                         "symmetry " + std::to_string(image.symmetry) + " maps legal move " +
                             game.ActionToString(playout[i]) + " to an illegal move " + Where(game, moves));
      if (image.alive) image.state->Apply(mapped);
    }
  }
}

// The cache half of CheckHash: non-terminal states whose features are equal
// up to a symmetry (HashCanonical's key) have the same legal actions, mapped.
// Terminal leaves never reach the cache, so they are left out.
void CheckFeatureKeys(const Game& game, const ConformanceOptions& options, Report* report) {
  const SymmetryTables tables(game);
  std::vector<uint8_t> scratch(tables.FeatureBytes());
  struct Seen {
    std::vector<int> legal;
    std::string where;
  };
  std::map<std::vector<uint8_t>, Seen> seen;
  Walk(game, options, *report, [&](const State& state, const std::vector<int>& moves) {
    if (state.IsTerminal()) return;  // the search scores terminal leaves itself
    std::vector<uint8_t> features = Features(game, state);
    const CanonicalHash key = HashCanonical(tables, features.data(), scratch.data());
    std::vector<uint8_t> canonical(features.size());
    tables.TransformFeatures(key.symmetry, features.data(), canonical.data());
    const std::vector<int> legal = MapActions(game.ActionMap(key.symmetry), Legal(state));
    auto [it, inserted] = seen.emplace(std::move(canonical), Seen{legal, Where(game, moves)});
    if (inserted) return;
    report->Expect(it->second.legal == legal, "equal features (the evaluation cache's key) " +
                                                  Where(game, moves) + " and " + it->second.where +
                                                  " but different legal actions");
  });
}

// The planes of a name in PlaneNames(), or -1.
int PlaneIndex(const Game& game, const std::string& name) {
  const std::vector<std::string> names = game.PlaneNames();
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// A declared pair of planes from the mover's view: ownX and opponentX
// ("own" and "opponent", "own_wins" and "opponent_wins").
struct PlanePair {
  std::string own_name;
  int own, opponent;
};

std::vector<PlanePair> PlanePairs(const Game& game) {
  std::vector<PlanePair> pairs;
  const std::vector<std::string> names = game.PlaneNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].rfind("own", 0) != 0) continue;
    const int other = PlaneIndex(game, "opponent" + names[i].substr(3));
    if (other >= 0) pairs.push_back({names[i], static_cast<int>(i), other});
  }
  return pairs;
}

bool Set(const std::vector<uint8_t>& features, int plane, int cells, int cell) {
  return features[static_cast<size_t>(plane) * cells + cell] != 0;
}

// Calls visit(before, after, mover, next, moves) for each ply of each
// playout that leaves a non-terminal state: the features before and after
// the move, the player who made it, the player to move next, the moves up to
// and with it.
template <class Visit>
void WalkPlies(const Game& game, const ConformanceOptions& options, const Report& report, Visit visit) {
  for (const std::vector<int>& playout : RandomPlayouts(game, options)) {
    std::unique_ptr<State> state = game.NewInitialState();
    std::vector<int> moves;
    std::vector<uint8_t> before = Features(game, *state);
    for (int a : playout) {
      if (report.full() || state->IsTerminal() || !state->IsLegal(a)) break;
      const int mover = state->CurrentPlayer();
      state->Apply(a);
      moves.push_back(a);
      if (state->IsTerminal()) break;
      std::vector<uint8_t> after = Features(game, *state);
      visit(before, after, mover, state->CurrentPlayer(), moves);
      before = std::move(after);
    }
  }
}

}  // namespace

std::vector<std::vector<int>> RandomPlayouts(const Game& game, const ConformanceOptions& options) {
  Rng rng(options.seed);
  std::vector<std::vector<int>> playouts;
  std::vector<int> legal;
  for (int p = 0; p < options.playouts; ++p) {
    std::unique_ptr<State> state = game.NewInitialState();
    std::vector<int> moves;
    while (!state->IsTerminal() && static_cast<int>(moves.size()) <= game.MaxGameLength()) {
      state->LegalActions(&legal);
      if (legal.empty()) break;
      moves.push_back(legal[rng.Below(legal.size())]);
      state->Apply(moves.back());
    }
    playouts.push_back(std::move(moves));
  }
  return playouts;
}

ConformanceFailures CheckPlayoutsEnd(const Game& game, const ConformanceOptions& options) {
  return Guarded("playouts-end", options, [&](Report& report) {
    const int max = game.MaxGameLength();
    for (const std::vector<int>& playout : RandomPlayouts(game, options)) {
      const std::unique_ptr<State> state = game.Replay(playout);
      const std::string where = Where(game, playout);
      if (!report.Expect(static_cast<int>(playout.size()) <= max,
                         "a random game is still going after MaxGameLength() = " + std::to_string(max) +
                             " plies " + where))
        continue;
      report.Expect(state->IsTerminal(), "a non-terminal state has no legal action " + where);
    }
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      report.Expect(state.MoveNumber() == static_cast<int>(moves.size()),
                    "MoveNumber() is " + std::to_string(state.MoveNumber()) + " " + Where(game, moves));
      report.Expect(state.IsTerminal() || state.CurrentPlayer() == 0 || state.CurrentPlayer() == 1,
                    "CurrentPlayer() is " + std::to_string(state.CurrentPlayer()) + " " + Where(game, moves));
    });
  });
}

ConformanceFailures CheckLegality(const Game& game, const ConformanceOptions& options) {
  return Guarded("legality", options, [&](Report& report) {
    const int bytes = game.Shape().FeatureBytes();
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      const std::string where = Where(game, moves);
      const std::vector<int> legal = Legal(state);
      report.Expect(std::is_sorted(legal.begin(), legal.end()) &&
                        std::adjacent_find(legal.begin(), legal.end()) == legal.end(),
                    "LegalActions is not strictly increasing " + where);
      report.Expect(legal.empty() == state.IsTerminal(),
                    "LegalActions is " + std::string(legal.empty() ? "empty" : "not empty") +
                        " but IsTerminal() is " + (state.IsTerminal() ? "true " : "false ") + where);
      std::vector<char> in_list(game.ActionCount(), 0);
      for (int a : legal) {
        if (report.Expect(a >= 0 && a < game.ActionCount(),
                          "legal action " + std::to_string(a) + " is out of range " + where))
          in_list[a] = 1;
      }
      for (int a = 0; a < game.ActionCount(); ++a) {
        report.Expect(state.IsLegal(a) == static_cast<bool>(in_list[a]),
                      "IsLegal(" + game.ActionToString(a) + ") disagrees with LegalActions " + where);
      }
      std::vector<uint8_t> a(bytes + 8, 0x00), b(bytes + 8, 0xA5);
      state.EncodeFeatures(a.data());
      state.EncodeFeatures(b.data());
      report.Expect(std::equal(a.begin(), a.begin() + bytes, b.begin()) &&
                        std::all_of(b.begin() + bytes, b.end(), [](uint8_t x) { return x == 0xA5; }),
                    "EncodeFeatures does not write exactly Shape().FeatureBytes() bytes " + where);
    });
  });
}

ConformanceFailures CheckCopies(const Game& game, const ConformanceOptions& options) {
  return Guarded("copies", options, [&](Report& report) {
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      const std::string where = Where(game, moves);
      std::unique_ptr<State> copied = game.NewInitialState();
      copied->CopyFrom(state);
      const std::unique_ptr<State> cloned = state.Clone();
      for (const State* copy : {cloned.get(), copied.get()}) {
        const std::string how = copy == cloned.get() ? "Clone() " : "CopyFrom() ";
        report.Expect(copy->Equals(state) && state.Equals(*copy), how + "does not equal its source " + where);
        report.Expect(
            Features(game, *copy) == Features(game, state) && Legal(*copy) == Legal(state) &&
                copy->Hash() == state.Hash() && copy->ToString() == state.ToString() &&
                copy->MoveNumber() == state.MoveNumber() && copy->IsTerminal() == state.IsTerminal() &&
                (state.IsTerminal() || copy->CurrentPlayer() == state.CurrentPlayer()),
            how + "differs from its source (features, legal actions, hash, text, player or move number) " +
                where);
      }
      const std::vector<int> legal = Legal(state);
      if (legal.empty()) return;
      const std::string before = state.ToString();
      cloned->Apply(legal.front());
      report.Expect(state.ToString() == before && !cloned->Equals(state),
                    "a move played on a clone changes its source, or changes nothing " + where);
    });
  });
}

ConformanceFailures CheckSymmetryGroup(const Game& game, const ConformanceOptions& options) {
  return Guarded("symmetry-group", options, [&](Report& report) {
    const int n = game.SymmetryCount();
    std::vector<std::vector<int>> cells, actions;
    for (int s = 0; s < n; ++s) {
      cells.push_back(game.CellMap(s));
      actions.push_back(game.ActionMap(s));
    }
    if (!CheckPermutations(game, cells, actions, &report)) return;
    for (int a = 0; a < n; ++a) {
      bool has_inverse = false;
      for (int b = 0; b < n; ++b) {
        const int c =
            FindSymmetry(cells, actions, Compose(cells[a], cells[b]), Compose(actions[a], actions[b]));
        report.Expect(c >= 0, "symmetry " + std::to_string(a) + " after symmetry " + std::to_string(b) +
                                  " is none of the symmetries (not a group)");
        has_inverse |= c == 0;
      }
      report.Expect(has_inverse, "symmetry " + std::to_string(a) + " has no inverse among the symmetries");
    }
  });
}

ConformanceFailures CheckSymmetricPositions(const Game& game, const ConformanceOptions& options) {
  return Guarded("symmetric-positions", options, [&](Report& report) {
    // The maps must be permutations before they can be applied.
    if (!CheckSymmetryGroup(game, options).empty()) {
      report.Fail("the symmetries are not a group of permutations (see symmetry-group)");
      return;
    }
    const SymmetryTables tables(game);
    std::vector<std::vector<int>> action_maps;
    for (int s = 0; s < tables.Count(); ++s) action_maps.push_back(game.ActionMap(s));
    for (const std::vector<int>& playout : RandomPlayouts(game, options)) {
      CheckSymmetricPlayout(game, tables, action_maps, playout, &report);
    }
  });
}

ConformanceFailures CheckOutcomes(const Game& game, const ConformanceOptions& options) {
  return Guarded("outcomes", options, [&](Report& report) {
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      if (!state.IsTerminal()) return;
      const int w = state.Winner();
      report.Expect(w >= -1 && w <= 1 && state.Outcome(0) + state.Outcome(1) == 0.0f,
                    "terminal Winner() is " + std::to_string(w) + ", outcomes " +
                        std::to_string(state.Outcome(0)) + " and " + std::to_string(state.Outcome(1)) +
                        " are not zero-sum " + Where(game, moves));
    });
  });
}

ConformanceFailures CheckHash(const Game& game, const ConformanceOptions& options) {
  return Guarded("hash", options, [&](Report& report) {
    std::map<std::string, std::vector<std::unique_ptr<State>>> by_text;  // transpositions
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      const std::string where = Where(game, moves);
      report.Expect(state.Clone()->Hash() == state.Hash(), "a clone hashes differently " + where);
      std::unique_ptr<State> parsed = game.ParseBoard(state.ToString());
      report.Expect(!parsed->Equals(state) || parsed->Hash() == state.Hash(),
                    "ParseBoard(ToString()) equals the state but hashes differently " + where);
      std::vector<std::unique_ptr<State>>& same_text = by_text[state.ToString()];
      for (const auto& other : same_text) {
        if (other->Equals(state)) {
          report.Expect(other->Hash() == state.Hash(), "equal states hash differently " + where);
          return;
        }
      }
      same_text.push_back(state.Clone());
    });
    CheckFeatureKeys(game, options, &report);
  });
}

ConformanceFailures CheckText(const Game& game, const ConformanceOptions& options) {
  return Guarded("text", options, [&](Report& report) {
    for (const char* junk : {"", "?!", "zz99"}) {
      report.Expect(game.ParseAction(junk) == -1, std::string("ParseAction(\"") + junk + "\") is not -1");
    }
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      const std::string where = Where(game, moves);
      for (int a : Legal(state)) {
        report.Expect(game.ParseAction(game.ActionToString(a)) == a,
                      "ParseAction(\"" + game.ActionToString(a) + "\") is not action " + std::to_string(a));
      }
      report.Expect(game.ParseMoves(game.FormatMoves(moves)) == moves,
                    "ParseMoves(FormatMoves(moves)) differs " + where);
      const std::string text = state.ToString();
      std::unique_ptr<State> parsed;
      try {
        parsed = game.ParseBoard(text);
      } catch (const std::exception& e) {
        report.Fail("ParseBoard(ToString()) throws (" + std::string(e.what()) + ") " + where);
        return;
      }
      report.Expect(parsed->Equals(state) && parsed->ToString() == text,
                    "ParseBoard(ToString()) is not the state " + where + ":\n" + text);
    });
  });
}

ConformanceFailures CheckPointOfView(const Game& game, const ConformanceOptions& options) {
  return Guarded("point-of-view", options, [&](Report& report) {
    const int own = PlaneIndex(game, "own"), opponent = PlaneIndex(game, "opponent");
    const int cells = game.Shape().Cells();
    const std::vector<std::string> names = game.PlaneNames();
    if (!report.Expect(static_cast<int>(names.size()) == game.Shape().planes,
                       std::to_string(names.size()) + " plane names for " +
                           std::to_string(game.Shape().planes) + " planes") ||
        !report.Expect(own >= 0 && opponent >= 0,
                       "no planes named own and opponent: the mover's view cannot be checked (name the "
                       "mover's and the other player's stones so, docs/adding-a-game.md)"))
      return;
    WalkPlies(game, options, report,
              [&](const auto& before, const auto& after, int mover, int next, const std::vector<int>& moves) {
                // The mover's stones are "own" while it moves again, else "opponent".
                const int mine = next == mover ? own : opponent, theirs = next == mover ? opponent : own;
                for (int c = 0; c < cells; ++c) {
                  const bool placed = !Set(before, own, cells, c) && !Set(before, opponent, cells, c) &&
                                      (Set(after, own, cells, c) || Set(after, opponent, cells, c));
                  if (!placed) continue;
                  report.Expect(Set(after, mine, cells, c) && !Set(after, theirs, cells, c),
                                "the stone just played on cell " + std::to_string(c) +
                                    " is not in the next position's " + names[mine] +
                                    " plane (features from the mover's view) " + Where(game, moves));
                }
              });
  });
}

ConformanceFailures CheckColourSwap(const Game& game, const ConformanceOptions& options) {
  return Guarded("colour-swap", options, [&](Report& report) {
    const int cells = game.Shape().Cells();
    for (const PlanePair& pair : PlanePairs(game)) {
      // Cells held by one side before and after a move that passes the turn:
      // from the mover's view they change plane (swapped), unless a capture
      // or a flip changed their owner (kept). Absolute colours keep them all.
      uint64_t swapped = 0, kept = 0;
      WalkPlies(
          game, options, report,
          [&](const auto& before, const auto& after, int mover, int next, const std::vector<int>&) {
            if (next == mover) return;
            for (int c = 0; c < cells; ++c) {
              const bool own0 = Set(before, pair.own, cells, c), opp0 = Set(before, pair.opponent, cells, c);
              const bool own1 = Set(after, pair.own, cells, c), opp1 = Set(after, pair.opponent, cells, c);
              if (own0 == opp0 || own1 == opp1) continue;
              (own1 == opp0 ? swapped : kept) += 1;
            }
          });
      const std::string other = game.PlaneNames()[pair.opponent];
      report.Expect(kept <= swapped, "planes " + pair.own_name + " and " + other +
                                         " do not swap when the turn passes: " + std::to_string(kept) +
                                         " cells stayed in their plane, " + std::to_string(swapped) +
                                         " swapped (absolute colours? they must be the mover's view)");
    }
  });
}

ConformanceFailures CheckSideToMove(const Game& game, const ConformanceOptions& options) {
  return Guarded("side-to-move", options, [&](Report& report) {
    const int plane = PlaneIndex(game, "first_player_to_move");
    if (plane < 0) return;  // none declared
    const int cells = game.Shape().Cells();
    Walk(game, options, report, [&](const State& state, const std::vector<int>& moves) {
      if (state.IsTerminal()) return;
      const std::vector<uint8_t> features = Features(game, state);
      const bool first = state.CurrentPlayer() == 0;
      bool ok = true;
      for (int c = 0; c < cells; ++c) ok &= Set(features, plane, cells, c) == first;
      report.Expect(ok, std::string("plane first_player_to_move is not all ") + (first ? "ones" : "zeros") +
                            " with player " + std::to_string(state.CurrentPlayer()) + " to move " +
                            Where(game, moves));
    });
  });
}

const std::vector<ConformanceCheck>& ConformanceChecks() {
  static const std::vector<ConformanceCheck> checks = {
      {"playouts-end", CheckPlayoutsEnd},
      {"legality", CheckLegality},
      {"copies", CheckCopies},
      {"symmetry-group", CheckSymmetryGroup},
      {"symmetric-positions", CheckSymmetricPositions},
      {"outcomes", CheckOutcomes},
      {"hash", CheckHash},
      {"text", CheckText},
      {"point-of-view", CheckPointOfView},
      {"colour-swap", CheckColourSwap},
      {"side-to-move", CheckSideToMove},
  };
  return checks;
}

ConformanceFailures CheckConformance(const Game& game, const ConformanceOptions& options) {
  ConformanceFailures all;
  for (const ConformanceCheck& check : ConformanceChecks()) {
    ConformanceFailures failures = check.run(game, options);
    all.insert(all.end(), failures.begin(), failures.end());
  }
  return all;
}

}  // namespace zerofarm::game
