#!/usr/bin/env bash
# Mutation check of the search: applies each one-line mutation of a list
# (default tools/mutations.txt: NAME FILE OLD => NEW) to a scratch copy of
# the tree, builds only zf_mcts_test there and runs it. A mutation the tests
# fail on is "killed"; one they pass is "SURVIVED". A mutation whose OLD text
# is not in its file exactly once, or whose build fails, is "ERROR" (the
# list is stale). Exits 0 only when every mutation was killed, 1 otherwise,
# 2 on bad usage. Needs what tools/build.sh needs; about 1 minute a mutation on 2 cores.
#   tools/mutate.sh [LIST]       ZF_MUTATE_DIR=DIR keeps the scratch copy there
set -uo pipefail
case "${1:-}" in -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
list=$(realpath -e "${1:-tools/mutations.txt}" 2>/dev/null) ||
  { echo "mutate: no mutation list ${1:-tools/mutations.txt}" >&2; exit 2; }
tree=$PWD
if [ -n "${ZF_MUTATE_DIR:-}" ]; then
  scratch=$ZF_MUTATE_DIR && mkdir -p "$scratch"
else
  scratch=$(mktemp -d /tmp/zf-mutate.XXXXXX) && trap 'rm -rf "$scratch"' EXIT
fi
# The tracked and untracked (not ignored) files, without any build directory.
rm -rf "$scratch/tree" && mkdir -p "$scratch/tree"
git ls-files -z -co --exclude-standard | (cd "$tree" && xargs -0 cp -a --parents -t "$scratch/tree" 2>/dev/null)
build() {
  # build/ inside the copy: the same relative paths as the tree's, so ccache hits.
  (cd "$scratch/tree" && ZF_BUILD_DIR=build ZF_TARGETS=zf_mcts_test ZF_JOBS="${ZF_JOBS:-2}" \
    bash tools/build.sh -DZF_BUILD_TESTS=ON -DZF_WITH_TORCH=OFF) >"$scratch/build.log" 2>&1
}
# -a: the first failure ends the run (a killed mutation needs no more).
run_tests() { timeout 600 "$scratch/tree/build/tests/zf_mcts_test" -a >"$scratch/test.log" 2>&1; }
# apply NAME FILE REST: replaces REST's OLD by its NEW in the scratch copy of FILE.
apply() {
  /usr/bin/python3 - "$scratch/tree/$2" "$3" <<'PY'
import sys
path, rest = sys.argv[1], sys.argv[2]
old, sep, new = rest.partition(" =>")
if not sep:
    sys.exit("no ' =>' in the line")
old, new = old.replace("\\n", "\n"), new[1:].replace("\\n", "\n") if new.startswith(" ") else new
text = open(path).read()
if text.count(old) != 1:
    sys.exit(f"the text occurs {text.count(old)} times, not once")
open(path, "w").write(text.replace(old, new))
PY
}

changed=$(git status --porcelain -- CMakeLists.txt cmake include src tests tools)
echo "mutate: $(git rev-parse --short HEAD)${changed:+ (with uncommitted changes)}, list ${list#"$tree"/}, $(date -u '+%F %T UTC')"
if ! build || ! run_tests; then
  echo "mutate: the unmutated tree fails to build or pass zf_mcts_test (see $scratch/*.log)" >&2
  trap - EXIT && exit 1
fi
killed=0 survived=0 errors=0
while read -r name file rest; do
  case "$name" in "" | \#*) continue ;; esac
  cp "$tree/$file" "$scratch/tree/$file"
  if ! why=$(apply "$name" "$file" "$rest" 2>&1); then
    printf '%-24s ERROR (%s)\n' "$name" "$why" && errors=$((errors + 1))
  elif ! build; then
    printf '%-24s ERROR (the build fails)\n' "$name" && errors=$((errors + 1))
  elif run_tests; then
    printf '%-24s SURVIVED\n' "$name" && survived=$((survived + 1))
  else
    # The first failing test's name follows Catch's first rule of dashes.
    test=$(grep -m1 -A1 -E '^-{79}$' "$scratch/test.log" | tail -1)
    printf '%-24s killed (%s)\n' "$name" "${test:-no failed test named: a crash or a timeout}"
    killed=$((killed + 1))
  fi
  cp "$tree/$file" "$scratch/tree/$file"
done <"$list"
build >/dev/null  # leave the scratch build unmutated
echo "mutate: $killed killed, $survived survived, $errors errors"
[ "$survived" = 0 ] && [ "$errors" = 0 ]
