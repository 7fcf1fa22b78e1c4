#!/usr/bin/env bash
# A game plugin built outside the tree (issue 73, point 4), end to end:
#   tests/plugin/game_plugin_test.sh BUILD_DIR [CXX]
# installs BUILD_DIR's headers and CMake package into a temporary prefix,
# builds examples/game-plugin with CMake and find_package(zerofarm), runs
# `check-game` on it, a short farm on it (workers, CPU evaluator and writer
# must all load it), `inspect` and `export` of its shards; then plugins that
# must be refused before anything starts (exit 2, one line, no run directory):
# missing, group-writable, not ELF, no entry point, unresolved symbol, another
# ABI, a built-in game's name. Exits non-zero at the first failed check.
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

step "a farm on the plugin's game"
run=$tmp/run
farm=(--workers 2 --gpus 0 --games-per-worker 4 --simulations 8 --blocks 1 --filters 8 --no-status
  --shard-positions 1000 --seed 5)
"$zf" run --game-plugin "$plugin" --game misere "${farm[@]}" --games 12 --duration 120 --out "$run" \
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

step "plugins that must be refused"
refused "$tmp/missing.so" "No such file"
cp "$plugin" "$tmp/group.so" && chmod g+w "$tmp/group.so"
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
step "PASS"
