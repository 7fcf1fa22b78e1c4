// Go rules against the shared reference data (go/): minigo's Tromp-Taylor
// scoring cases, OEIS A094777's legal position counts, the OpenSpiel 7x7
// playthrough, plus a naive implementation (board strings in a set for
// superko) over random games on small boards.
#include "zerofarm/game/go.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "openspiel_trace.h"
#include "test_paths.h"
#include "zerofarm/core/error.h"
#include "zerofarm/core/rng.h"
#include "zerofarm/game/game.h"

namespace zerofarm::game {
namespace {

using reference::ReadLines;

const GoState& AsGo(const State& s) { return dynamic_cast<const GoState&>(s); }

// ---- legal positions ----------------------------------------------------------

long long CountLegalPositions(int n) {
  const int cells = n * n;
  std::vector<int8_t> board(cells, GoState::kEmpty);  // an odometer over {empty, 0, 1}
  long long legal = 0;
  while (true) {
    if (GoState::EveryChainHasLiberty(board.data(), n)) ++legal;
    int i = 0;
    while (i < cells && board[i] == 1) board[i++] = GoState::kEmpty;
    if (i == cells) break;
    ++board[i];
  }
  return legal;
}

std::map<int, std::string> ReadA094777() {
  std::map<int, std::string> terms;
  for (const std::string& line : ReadLines(testing::ReferenceFile("go/go_legal_positions_A094777.csv"))) {
    if (line.empty() || line[0] == '#' || line.rfind("n,", 0) == 0) continue;
    const size_t comma = line.find(',');
    terms[std::stoi(line.substr(0, comma))] = line.substr(comma + 1);
  }
  REQUIRE(terms.size() == 9);
  return terms;
}

// ---- a naive reference implementation ---------------------------------------

// Chars 'X', 'O', '.'; every board of the game kept as a string.
struct NaiveGo {
  int n;
  std::string board;
  std::set<std::string> seen;
  explicit NaiveGo(int size) : n(size), board(size * size, '.') { seen.insert(board); }

  // The chain through `p` and whether it has a liberty.
  bool Chain(const std::string& b, int p, std::vector<int>* stones) const {
    std::vector<int> stack = {p};
    std::vector<bool> in(n * n, false);
    in[p] = true;
    bool liberty = false;
    while (!stack.empty()) {
      const int q = stack.back();
      stack.pop_back();
      stones->push_back(q);
      const int r = q / n, c = q % n;
      const int nbs[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
      for (const auto& nb : nbs) {
        if (nb[0] < 0 || nb[0] >= n || nb[1] < 0 || nb[1] >= n) continue;
        const int t = nb[0] * n + nb[1];
        if (b[t] == '.') liberty = true;
        if (b[t] == b[p] && !in[t]) {
          in[t] = true;
          stack.push_back(t);
        }
      }
    }
    return liberty;
  }
  // The board after `me` plays p, or "" if illegal (occupied, suicide, or a
  // repetition). *repetition is set when only superko forbids it.
  std::string Play(int p, char me, bool* repetition = nullptr) const {
    if (repetition) *repetition = false;
    if (board[p] != '.') return "";
    std::string b = board;
    b[p] = me;
    const char opp = me == 'X' ? 'O' : 'X';
    const int r = p / n, c = p % n;
    const int nbs[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
    for (const auto& nb : nbs) {
      if (nb[0] < 0 || nb[0] >= n || nb[1] < 0 || nb[1] >= n) continue;
      const int t = nb[0] * n + nb[1];
      std::vector<int> stones;
      if (b[t] == opp && !Chain(b, t, &stones))
        for (int s : stones) b[s] = '.';
    }
    std::vector<int> own;
    if (!Chain(b, p, &own)) return "";
    if (seen.count(b)) {
      if (repetition) *repetition = true;
      return "";
    }
    return b;
  }
  double Score(double komi) const {
    int area[2] = {0, 0};
    for (int p = 0; p < n * n; ++p) {
      if (board[p] != '.') {
        ++area[board[p] == 'X' ? 0 : 1];
        continue;
      }
      // Which colours does the empty region of p reach? (flood per point)
      std::vector<int> stack = {p};
      std::vector<bool> in(n * n, false);
      in[p] = true;
      bool reach[2] = {false, false};
      while (!stack.empty()) {
        const int q = stack.back();
        stack.pop_back();
        const int r = q / n, c = q % n;
        const int nbs[4][2] = {{r - 1, c}, {r + 1, c}, {r, c - 1}, {r, c + 1}};
        for (const auto& nb : nbs) {
          if (nb[0] < 0 || nb[0] >= n || nb[1] < 0 || nb[1] >= n) continue;
          const int t = nb[0] * n + nb[1];
          if (board[t] != '.')
            reach[board[t] == 'X' ? 0 : 1] = true;
          else if (!in[t]) {
            in[t] = true;
            stack.push_back(t);
          }
        }
      }
      if (reach[0] != reach[1]) ++area[reach[0] ? 0 : 1];
    }
    return area[0] - area[1] - komi;
  }
};

}  // namespace

TEST_CASE("go Tromp-Taylor scores of minigo's scoring cases", "[game][go]") {
  // "case k", "komi x", 9 rows (X Black, O White), "expected_score_black_minus_white v".
  const GoGame game(9, 7.5);
  std::vector<std::string> rows;
  double komi = 0;
  int cases = 0;
  const int expected_areas[2][2] = {{44, 36}, {45, 36}};  // the collector's flood-fill
  for (const std::string& line : ReadLines(testing::ReferenceFile("go/go_scoring_cases_minigo.txt"))) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("case ", 0) == 0) {
      rows.clear();
    } else if (line.rfind("komi ", 0) == 0) {
      komi = std::stod(line.substr(5));
    } else if (line.rfind("expected_score_black_minus_white ", 0) == 0) {
      const double expected = std::stod(line.substr(33));
      REQUIRE(rows.size() == 9);
      std::string cells;
      for (const std::string& r : rows) cells += r;
      INFO("case " << cases + 1 << "\n" << cells);
      const GoState s = GoState::FromCells(cells, 9, komi, 243, 0, 2, false);
      CHECK(s.IsTerminal());
      CHECK(s.Score() == Approx(expected));
      CHECK(s.Winner() == (expected > 0 ? 0 : 1));
      int black = 0, white = 0;
      s.Areas(&black, &white);
      REQUIRE(cases < 2);
      CHECK(black == expected_areas[cases][0]);
      CHECK(white == expected_areas[cases][1]);
      // The same board through the text reader, with komi 7.5 instead.
      std::string text;
      for (const std::string& r : rows) text += r + "\n";
      const auto parsed = game.ParseBoard(text + "X to move, 2 passes, game over\n");
      CHECK(AsGo(*parsed).Score() == Approx(expected + 6.5 - 7.5));
      ++cases;
    } else {
      REQUIRE(line.size() == 9);
      rows.push_back(line);
    }
  }
  CHECK(cases == 2);
}

TEST_CASE("go legal position counts match OEIS A094777 (n = 1..3)", "[game][go]") {
  const std::map<int, std::string> terms = ReadA094777();
  for (int n = 1; n <= 3; ++n) {
    INFO("n = " << n);
    CHECK(std::to_string(CountLegalPositions(n)) == terms.at(n));
  }
}

TEST_CASE("go legal position count matches OEIS A094777 (n = 4)", "[game][go][slow]") {
  CHECK(std::to_string(CountLegalPositions(4)) == ReadA094777().at(4));
}

TEST_CASE("go follows the OpenSpiel 7x7 playthrough", "[game][go]") {
  // go(board_size=7, komi=4.5): OpenSpiel's action (row from the BOTTOM) * 7 +
  // col, 49 = pass; boards "#  7 O+OXXXX" top row first ('+' empty), headers
  // "# GoState(komi=4.5, to_play=B, ...)". Its rules forbid suicide and the
  // simple-ko point (ours: suicide and any repetition).
  const auto game = MakeGame("go7");
  REQUIRE(game->ActionCount() == 50);
  const auto to_ours = [](int a) { return a == 49 ? 49 : (6 - a / 7) * 7 + a % 7; };
  std::unique_ptr<State> state = game->NewInitialState();
  std::vector<int> actions, os_actions;
  int full_states = 0;
  const auto trace = reference::ReadOpenSpielTrace(testing::ReferenceFile("go/go.txt"));
  for (const reference::TraceState& s : trace) {
    INFO("state " << s.index << " after moves " << game->FormatMoves(actions));
    REQUIRE(s.index == static_cast<int>(actions.size()));
    if (s.full()) {
      ++full_states;
      CHECK(state->IsTerminal() == *s.is_terminal);
      std::string board;
      int to_play = -1;
      for (const std::string& line : s.board) {
        if (line.rfind("GoState(", 0) == 0) {
          to_play = line.find("to_play=B") != std::string::npos ? 0 : 1;
        } else if (line.size() == 10 && line[0] == ' ' && std::isdigit(line[1])) {
          std::string row = line.substr(3);
          std::replace(row.begin(), row.end(), '+', '.');
          board += row + "\n";
        }
      }
      REQUIRE(std::count(board.begin(), board.end(), '\n') == 7);
      CHECK(state->ToString().substr(0, 56) == board);  // stones and captures
      CHECK(state->CurrentPlayer() == to_play);
    }
    if (s.history) CHECK(*s.history == os_actions);
    if (s.legal_actions) {
      std::vector<int> expected, legal;
      for (int a : *s.legal_actions) expected.push_back(to_ours(a));
      std::sort(expected.begin(), expected.end());
      state->LegalActions(&legal);
      CHECK(legal == expected);
    }
    if (s.action) {
      os_actions.push_back(*s.action);
      actions.push_back(to_ours(os_actions.back()));
      const std::string& applied_text = s.applied_text;  // "B d4", "W PASS"
      std::string text = applied_text.substr(2);
      for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      CHECK(game->ActionToString(actions.back()) == text);
      CHECK(applied_text[0] == (state->CurrentPlayer() == 0 ? 'B' : 'W'));
      REQUIRE(state->IsLegal(actions.back()));
      state->Apply(actions.back());
    }
  }
  CHECK(full_states >= 10);
  CHECK(actions.size() == 69);
  REQUIRE(state->IsTerminal());
  CHECK(AsGo(*state).ConsecutivePasses() == 2);
  int black = 0, white = 0;
  AsGo(*state).Areas(&black, &white);
  CHECK(black == 21);
  CHECK(white == 27);
  CHECK(AsGo(*state).Score() == Approx(-10.5));
  reference::CheckFinalReturns(trace, *state, {-1, 1});
  CHECK(state->Winner() == 1);
}

TEST_CASE("go agrees with a naive implementation over random games", "[game][go]") {
  Rng rng(99);
  std::vector<int> legal;
  long mismatches = 0, repetitions = 0, captures = 0, suicides = 0, max_length_games = 0;
  std::string first_mismatch;
  for (const int n : {2, 3, 4, 5, 7}) {
    const GoGame game(n, n == 7 ? 4.5 : 0.5);
    const int pass = game.PassAction();
    const int games = n <= 3 ? 300 : 100;
    for (int g = 0; g < games; ++g) {
      auto s = game.NewInitialState();
      NaiveGo naive(n);
      std::vector<int> moves;
      int passes = 0;
      auto note = [&](bool ok, const char* what) {
        if (!ok && mismatches++ == 0) {
          first_mismatch = game.Name() + ": " + what + " after " + game.FormatMoves(moves);
        }
      };
      const char stones[2] = {'X', 'O'};
      while (!s->IsTerminal()) {
        const char me = stones[s->CurrentPlayer()];
        std::vector<int> expected;
        std::map<int, std::string> after;
        for (int p = 0; p < n * n; ++p) {
          bool repetition = false;
          const std::string b = naive.Play(p, me, &repetition);
          if (repetition) ++repetitions;
          if (!b.empty()) {
            expected.push_back(p);
            after[p] = b;
          } else if (naive.board[p] == '.' && !repetition) {
            ++suicides;
          }
        }
        expected.push_back(pass);
        s->LegalActions(&legal);
        note(legal == expected, "legal actions");
        for (int a = -1; a <= pass + 1; ++a) {
          const bool in = std::find(legal.begin(), legal.end(), a) != legal.end();
          note(s->IsLegal(a) == in, "IsLegal");
        }
        if (legal != expected) break;
        // Pass rarely, so that boards fill up and capture.
        const int a = rng.Below(20) == 0 ? pass : legal[rng.Below(legal.size())];
        s->Apply(a);
        moves.push_back(a);
        if (a == pass) {
          ++passes;
        } else {
          passes = 0;
          const int before = static_cast<int>(std::count(naive.board.begin(), naive.board.end(), '.'));
          naive.board = after[a];
          naive.seen.insert(naive.board);
          if (std::count(naive.board.begin(), naive.board.end(), '.') >= before) ++captures;
        }
        std::string drawn;
        for (int r = 0; r < n; ++r) drawn += naive.board.substr(r * n, n) + "\n";
        note(s->ToString().substr(0, drawn.size()) == drawn, "board");
        const bool over = passes == 2 || static_cast<int>(moves.size()) == game.MaxGameLength();
        note(s->IsTerminal() == over, "terminal");
        note(s->MoveNumber() == static_cast<int>(moves.size()), "MoveNumber");
        const auto parsed = game.ParseBoard(s->ToString());
        note(parsed->Equals(*s) && parsed->Hash() == s->Hash(), "ParseBoard");
        auto copy = game.NewInitialState();
        copy->CopyFrom(*s);
        note(copy->Equals(*s) && s->Clone()->Equals(*s), "copies");
      }
      if (static_cast<int>(moves.size()) == game.MaxGameLength()) ++max_length_games;
      const double score = naive.Score(game.komi());
      note(AsGo(*s).Score() == score, "score");
      note(s->Winner() == (score > 0 ? 0 : score < 0 ? 1 : -1), "winner");
    }
  }
  INFO(first_mismatch);
  CHECK(mismatches == 0);
  CHECK(repetitions > 100);  // superko forbade moves
  CHECK(captures > 1000);
  CHECK(suicides > 100);
  CHECK(max_length_games > 0);
}

TEST_CASE("go captures, suicide, ko and passes", "[game][go]") {
  const GoGame game(5, 0.5);
  const auto parse = [&](const std::string& text) { return game.ParseBoard(text); };
  // Black captures the White stone at c3 (action 12) by playing d3 (13).
  auto s = parse(
      ".....\n"
      "..X..\n"
      ".XO..\n"
      "..X..\n"
      ".....\n"
      "X to move\n");
  REQUIRE(s->IsLegal(13));
  s->Apply(13);
  CHECK(AsGo(*s).At(12) == GoState::kEmpty);
  CHECK(s->ToString() == ".....\n..X..\n.X.X.\n..X..\n.....\nO to move\n");
  // White may not play the eye at c3: suicide.
  CHECK_FALSE(s->IsLegal(12));
  // Multi-stone suicide is illegal too; capturing instead of suicide is legal.
  auto t = parse(
      "OO.X.\n"
      "XXXX.\n"
      ".....\n"
      ".....\n"
      ".....\n"
      "O to move\n");
  CHECK_FALSE(t->IsLegal(2));  // c5 would leave the white pair without a liberty
  auto u = parse(
      ".XO..\n"
      "XO...\n"
      ".....\n"
      ".....\n"
      ".....\n"
      "O to move\n");
  REQUIRE(u->IsLegal(0));  // a5 has no liberty of its own but captures b5
  u->Apply(0);
  CHECK(AsGo(*u).At(1) == GoState::kEmpty);
  CHECK(AsGo(*u).At(0) == 1);
  // Ko: Black takes at c3 (action 12), White may not retake at b3 (11) at once.
  auto k = parse(
      ".....\n"
      ".XO..\n"
      "XO.O.\n"
      ".XO..\n"
      ".....\n"
      "X to move\n");
  REQUIRE(k->IsLegal(12));
  k->Apply(12);  // c3 captures b3 (11)
  CHECK(AsGo(*k).At(11) == GoState::kEmpty);
  CHECK_FALSE(k->IsLegal(11));  // the immediate retake repeats the board
  k->Apply(24);                 // White elsewhere
  k->Apply(0);                  // Black elsewhere
  CHECK(k->IsLegal(11));        // now the retake makes a new board
  // Two passes end the game; a stone in between resets the count.
  auto p = game.NewInitialState();
  p->Apply(25);
  CHECK(AsGo(*p).ConsecutivePasses() == 1);
  CHECK(p->ToString().find("O to move, 1 pass") != std::string::npos);
  p->Apply(12);
  p->Apply(25);
  CHECK_FALSE(p->IsTerminal());
  p->Apply(25);
  CHECK(p->IsTerminal());
  CHECK(p->Winner() == 1);  // White's lone stone owns the board: 0 - 25 - 0.5
  CHECK(p->ToString().find("X to move, 2 passes, game over") != std::string::npos);
  std::vector<int> legal{1};
  p->LegalActions(&legal);
  CHECK(legal.empty());
  CHECK_FALSE(p->IsLegal(25));
  CHECK(game.ParseBoard(p->ToString())->Equals(*p));
  CHECK(game.ParseBoard(p->ToString())->Winner() == 1);
}

TEST_CASE("go text, features, sizes and bad input", "[game][go]") {
  const GoGame game;  // 9x9, komi 7.5
  CHECK(game.Name() == "go");
  CHECK(MakeGame("go9")->Name() == "go9");
  CHECK(GoGame(7, 4.5).Name() == "go7");
  CHECK(GoGame(13, 6.5).Name() == "go13-komi6.5");
  CHECK(game.ActionCount() == 82);
  CHECK(game.MaxGameLength() == 243);
  CHECK_THROWS_AS(GoGame(1), ConfigError);
  CHECK_THROWS_AS(GoGame(20), ConfigError);
  const GoGame big(19, 7.5);
  CHECK(big.ActionCount() == 362);
  CHECK(big.ActionCount() <= kMaxActions);
  CHECK(big.ActionToString(18) == "t19");
  CHECK(big.ActionToString(360) == "t1");
  CHECK(big.ParseAction("j10") == 9 * 19 + 8);

  for (int a = 0; a <= 81; ++a) CHECK(game.ParseAction(game.ActionToString(a)) == a);
  CHECK(game.ActionToString(72) == "a1");
  CHECK(game.ActionToString(8) == "j9");
  CHECK(game.ActionToString(40) == "e5");
  CHECK(game.ActionToString(81) == "pass");
  CHECK(game.ParseAction("E5") == 40);
  CHECK(game.ParseAction("PASS") == 81);
  for (const char* bad : {"", "i5", "a0", "a10", "k1", "z1", "a", "5", "e05", "passe"}) {
    INFO(bad);
    CHECK(game.ParseAction(bad) == -1);
  }
  for (int s = 0; s < 8; ++s) CHECK(game.ActionMap(s)[81] == 81);
  CHECK(game.CellMap(1)[0] == 8);  // a quarter turn clockwise: top left -> top right

  auto s = game.Replay(game.ParseMoves("e5 c3"));  // Black to move
  std::vector<uint8_t> f(3 * 81, 9);
  s->EncodeFeatures(f.data());
  CHECK(f[40] == 1);
  CHECK(f[81 + 6 * 9 + 2] == 1);
  CHECK(std::count(f.begin(), f.begin() + 162, 1) == 2);
  CHECK(std::count(f.begin() + 162, f.end(), 1) == 81);
  s->Apply(81);
  s->EncodeFeatures(f.data());
  CHECK(f[81 + 40] == 1);
  CHECK(std::count(f.begin() + 162, f.end(), 1) == 0);
  REQUIRE(game.PlaneNames() == std::vector<std::string>{"own", "opponent", "first_player_to_move"});

  std::string rows;
  for (int r = 0; r < 9; ++r) rows += std::string(9, '.') + "\n";
  CHECK(game.ParseBoard(rows + "X to move\n")->Equals(*game.NewInitialState()));
  CHECK_FALSE(game.ParseBoard(rows + "O to move\n")->Equals(*game.NewInitialState()));
  CHECK_THROWS_WITH(game.ParseBoard(rows), Catch::Contains("status"));
  CHECK_THROWS_WITH(game.ParseBoard(rows + "X to move, 3 passes\n"), Catch::Contains("status"));
  CHECK_THROWS_WITH(game.ParseBoard(rows + "Z to move\n"), Catch::Contains("status"));
  std::string dead = rows;
  dead[0] = 'X';
  dead[1] = 'O';
  dead[10] = 'O';  // X at a9 has no liberty
  CHECK_THROWS_WITH(game.ParseBoard(dead + "X to move\n"), Catch::Contains("no liberty"));
  std::string bad = rows;
  bad[3] = '#';
  CHECK_THROWS_WITH(game.ParseBoard(bad + "X to move\n"), Catch::Contains("'#'"));
  CHECK_THROWS_AS(game.ParseBoard(rows.substr(10) + "X to move\n"), Error);
  CHECK_THROWS_WITH(game.Replay(game.ParseMoves("e5 e5")), Catch::Contains("move 2 (e5) is illegal"));
  CHECK_THROWS_WITH(game.Replay(game.ParseMoves("pass pass e5")), Catch::Contains("after the game ended"));
}

}  // namespace zerofarm::game
