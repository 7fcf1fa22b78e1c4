#!/usr/bin/env bash
# A game plugin built outside the tree (issue 73, point 4), end to end:
#   tests/plugin/game_plugin_test.sh BUILD_DIR [CXX]
# installs BUILD_DIR's headers and CMake package into a temporary prefix,
# builds examples/game-plugin with CMake and find_package(zerofarm), runs
# `check-game` on it, a short farm on it (workers, CPU evaluator and writer
# must all load it), `inspect` and `export` of its shards; then plugins that
# must be refused before anything starts (exit 2, one line, no run directory):
# missing, group-writable, not ELF, no entry point, unresolved symbol, another
# ABI, a built-in game's name, a game failing the quick conformance pass; a
# --game naming another game than the plugin's (issue 82). Last, a plugin
# whose game breaks the contract mid-run (tests/plugin/bad_winner.cpp): the
# farm sets those games aside and writes every other. Exits non-zero at the
# first failed check.
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR [CXX]}" && pwd)
cxx=${2:-c++}
src=$(cd "$(dirname "$0")/../.." && pwd)
zf=$build/zerofarm
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zf-plugin-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "game_plugin_test: FAIL: $*" >&2; exit 1; }
step() { echo "game_plugin_test: $*"; }

step "install the headers and the CMake package"
cmake --install "$build" --prefix "$tmp/prefix" --component dev >"$tmp/install.log" ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
[ -f "$tmp/prefix/include/zerofarm/game/plugin.h" ] || fail "plugin.h not installed"

step "build the example plugin with find_package(zerofarm)"
cmake -S "$src/examples/game-plugin" -B "$tmp/pb" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$tmp/plugin-build.log" 2>&1 &&
  cmake --build "$tmp/pb" >>"$tmp/plugin-build.log" 2>&1 || { cat "$tmp/plugin-build.log"; fail "plugin build"; }
plugin=$tmp/pb/misere.so
[ -f "$plugin" ] || fail "no $plugin"

step "check-game on the plugin"
"$zf" check-game "$plugin" --playouts 6 >"$tmp/check.out" 2>&1 || { cat "$tmp/check.out"; fail "check-game"; }
grep -q "^misere: all checks passed" "$tmp/check.out" || { cat "$tmp/check.out"; fail "check-game output"; }

step "a farm on the plugin's game: --game-plugin alone names it"
run=$tmp/run
farm=(--workers 2 --gpus 0 --games-per-worker 4 --simulations 8 --blocks 1 --filters 8 --no-status
  --shard-positions 1000 --seed 5)
"$zf" run --game-plugin "$plugin" "${farm[@]}" --games 12 --duration 120 --out "$run" \
  >"$tmp/farm.out" 2>&1 || { tail -20 "$tmp/farm.out"; fail "the farm on the plugin"; }
shards=$(find "$run/shards" -name 'shard-*.h5' | wc -l)
[ "$shards" -ge 1 ] || fail "the farm wrote no shard"
"$zf" inspect "$run" --game-plugin "$plugin" >"$tmp/inspect.out" 2>&1 || { cat "$tmp/inspect.out"; fail "inspect"; }
grep -q "misere" "$tmp/inspect.out" || fail "inspect does not name the game"
grep -Eq "total: [0-9]+ shard\(s\), (1[2-9]|[2-9][0-9]|[0-9]{3,}) games" "$tmp/inspect.out" ||
  { cat "$tmp/inspect.out"; fail "inspect counts fewer than 12 games"; }
"$zf" export "$run" --format jsonl --game-plugin "$plugin" >"$tmp/games.jsonl" 2>/dev/null || fail "export"
[ "$(grep -c '"game":"misere"' "$tmp/games.jsonl")" -ge 12 ] || fail "export wrote fewer than 12 misere games"
"$zf" inspect "$run" >/dev/null 2>"$tmp/noplugin.err" && fail "inspect without the plugin read its shards"
grep -q "unknown game 'misere'.*--game-plugin" "$tmp/noplugin.err" || { cat "$tmp/noplugin.err"; fail "inspect without the plugin"; }

# refused FILE WHAT: `run` and `check-game` exit 2 with one line naming FILE and WHAT, start nothing.
refused() {
  local file=$1 what=$2 out=$tmp/refused-run
  "$zf" run --game-plugin "$file" --game misere "${farm[@]}" --games 4 --out "$out" >"$tmp/r.out" 2>"$tmp/r.err"
  local code=$?
  [ "$code" -eq 2 ] || { cat "$tmp/r.err"; fail "run with $file: exit $code, not 2"; }
  [ "$(wc -l <"$tmp/r.err")" -eq 1 ] || { cat "$tmp/r.err"; fail "run with $file: not one line"; }
  grep -q -- "$what" "$tmp/r.err" || { cat "$tmp/r.err"; fail "run with $file: no '$what'"; }
  grep -q -- "$file" "$tmp/r.err" || { cat "$tmp/r.err"; fail "run with $file: the file is not named"; }
  [ ! -e "$out" ] || fail "run with $file made $out: something started"
  "$zf" check-game "$file" >/dev/null 2>"$tmp/c.err"
  code=$?
  [ "$code" -eq 2 ] && [ "$(wc -l <"$tmp/c.err")" -eq 1 ] || { cat "$tmp/c.err"; fail "check-game $file: exit $code"; }
  step "refused: $(cat "$tmp/r.err")"
}
compile() {  # compile OUT.so SOURCE [FLAGS...]: a shared object against the installed headers
  local out=$1 source=$2
  shift 2
  "$cxx" -std=c++17 -shared -fPIC -I"$tmp/prefix/include" "$@" -o "$out" "$source" || fail "compiling $out"
}

step "selfplay plays the plugin's game without --game"
"$zf" selfplay --game-plugin "$plugin" --games 2 --simulations 4 --blocks 1 --filters 8 --out "$tmp/sp" \
  >"$tmp/sp.out" 2>&1 || { cat "$tmp/sp.out"; fail "selfplay with the plugin alone"; }
"$zf" inspect "$tmp/sp" --game-plugin "$plugin" 2>&1 | grep -q misere || fail "selfplay did not play misere"

step "a --game naming another game than the plugin's is refused"
for cmd in run selfplay; do
  args=("${farm[@]}")
  [ "$cmd" = selfplay ] && args=()
  "$zf" $cmd --game-plugin "$plugin" --game tictactoe "${args[@]}" --games 2 --out "$tmp/other" \
    >/dev/null 2>"$tmp/g.err"
  code=$?
  [ "$code" -eq 2 ] && [ "$(wc -l <"$tmp/g.err")" -eq 1 ] || { cat "$tmp/g.err"; fail "$cmd --game tictactoe: exit $code"; }
  grep -q "whose game is 'misere': leave --game out" "$tmp/g.err" || { cat "$tmp/g.err"; fail "$cmd --game tictactoe"; }
  [ ! -e "$tmp/other" ] || fail "$cmd --game tictactoe started something"
done
step "refused: $(cat "$tmp/g.err")"

step "plugins that must be refused"
refused "$tmp/missing.so" "No such file"
cp "$plugin" "$tmp/group.so" && chmod g+w "$tmp/group.so" && chgrp 100 "$tmp/group.so"  # a shared group (users)
refused "$tmp/group.so" "writable by its group"
cp "$plugin" "$tmp/others.so" && chmod o+w "$tmp/others.so"
refused "$tmp/others.so" "writable by others"
echo "not a library" >"$tmp/text.so"
refused "$tmp/text.so" "not a shared object"
echo 'int zf_not_a_plugin = 1;' >"$tmp/none.cpp"
compile "$tmp/none.so" "$tmp/none.cpp"
refused "$tmp/none.so" "no zerofarm_game_plugin() entry point"
echo 'extern int zf_no_such_symbol; int zf_use() { return zf_no_such_symbol; }' >"$tmp/undef.cpp"
compile "$tmp/undef.so" "$tmp/undef.cpp"
refused "$tmp/undef.so" "cannot load it: .*zf_no_such_symbol"
compile "$tmp/old.so" "$src/examples/game-plugin/misere.cpp" -DZF_GAME_PLUGIN_ABI=999
refused "$tmp/old.so" "built for game plugin ABI 999"
cat >"$tmp/clash.cpp" <<'CPP'
#include "zerofarm/game/plugin.h"
extern "C" const ZfGamePlugin* zerofarm_game_plugin() {
  static const ZfGamePlugin p = {ZF_GAME_PLUGIN_ABI, ZF_VERSION_STRING, "tictactoe",
                                 []() -> zerofarm::game::Game* { return nullptr; }};
  return &p;
}
CPP
compile "$tmp/clash.so" "$tmp/clash.cpp"
refused "$tmp/clash.so" "its game 'tictactoe' has the name of a game zerofarm already has"

step "a plugin failing the quick conformance pass is refused before anything starts"
compile "$tmp/badnow.so" "$src/tests/plugin/bad_winner.cpp" -DZF_BREAK_AT_ONCE
for cmd in run selfplay eval; do
  args=("${farm[@]}" --games 2 --out "$tmp/badnow-run")
  [ "$cmd" = selfplay ] && args=(--games 2 --out "$tmp/badnow-run")
  [ "$cmd" = eval ] && args=(--weights random --against random --games 2 --simulations 4)
  "$zf" $cmd --game-plugin "$tmp/badnow.so" "${args[@]}" >/dev/null 2>"$tmp/b.err"
  code=$?
  [ "$code" -eq 2 ] && [ "$(wc -l <"$tmp/b.err")" -eq 1 ] || { cat "$tmp/b.err"; fail "$cmd with badnow.so: exit $code"; }
  grep -q "fails the conformance check outcomes: terminal Winner() is 7" "$tmp/b.err" ||
    { cat "$tmp/b.err"; fail "$cmd with badnow.so: not the check's line"; }
  [ ! -e "$tmp/badnow-run" ] || fail "$cmd with badnow.so started something"
done
step "refused: $(cat "$tmp/b.err")"

step "a plugin whose game breaks the contract mid-run loses no other game"
compile "$tmp/bad.so" "$src/tests/plugin/bad_winner.cpp"
bad=$tmp/bad-run
"$zf" run --game-plugin "$tmp/bad.so" --workers 2 --gpus 0 --games-per-worker 1 --simulations 8 --blocks 1 \
  --filters 8 --no-status --shard-positions 1000 --seed 3 --games 60 --out "$bad" >"$tmp/bad.out" 2>&1 ||
  { tail -20 "$tmp/bad.out"; fail "the farm on bad.so"; }
json=$(find "$bad/shards" -name summary.json)
field() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" "$json"; }
finished=$(field games_finished) written=$(field games_written) aside=$(field games_set_aside)
restarts=$(field restarts)
step "bad.so: $finished finished, $written written, $aside set aside, $restarts restarts"
[ "$aside" -ge 1 ] && [ "$written" -ge 1 ] || fail "expected games both written and set aside"
[ "$((written + aside))" -eq "$finished" ] || fail "$finished finished but $written written + $aside set aside"
[ "$restarts" -eq 0 ] || fail "the farm restarted a child $restarts times"
[ "$(find "$bad/rejected" -name 'game-0x*.zfgame' | wc -l)" -eq "$aside" ] || fail "not one .zfgame per game set aside"
[ "$(grep -l "winner 7" "$bad"/rejected/*.txt | wc -l)" -eq "$aside" ] || fail "a .txt does not say winner 7"
[ "$(grep -c "breaks the game's contract (winner 7" "$tmp/bad.out")" -eq "$aside" ] || fail "not one log line per game"
grep -q "$aside finished games broke the game's contract and were set aside" "$tmp/bad.out" || fail "the summary"
grep -q "^zerofarm_games_set_aside_total $aside$" "$(find "$bad/shards" -name metrics.prom)" || fail "metrics.prom"
"$zf" inspect "$bad" --game-plugin "$tmp/bad.so" >"$tmp/badinspect.out" 2>&1 || fail "inspect of the bad run"
grep -Eq "total: [0-9]+ shard\(s\), $written games" "$tmp/badinspect.out" || { cat "$tmp/badinspect.out"; fail "inspect"; }
step "PASS"
