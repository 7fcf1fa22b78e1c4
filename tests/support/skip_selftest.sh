#!/usr/bin/env bash
# The CTest entry `skip_honesty`: ZF_SKIP (tests/support/skip.h) reports a
# skip only when no check of the test failed. Runs zf_skip_selftest's three
# test cases one by one and checks the exit code and the "[skipped]" /
# "[skip refused]" line of each.  usage: skip_selftest.sh ZF_SKIP_SELFTEST
set -uo pipefail
exe=$1
bad=0
# expect NAME RC_WANTED LINE_WANTED LINE_FORBIDDEN
expect() {
  local out rc
  out=$("$exe" -w NoTests "$1" 2>&1)
  rc=$?
  if [ $((rc != 0)) != "$2" ] || ! grep -qF "$3" <<<"$out" || grep -qF "$4" <<<"$out"; then
    echo "skip_selftest: FAIL: '$1': exit $rc, wanted $([ "$2" = 1 ] && echo non-zero || echo 0)," \
      "a line '$3' and none '$4'; its output:"
    echo "$out" | sed 's/^/    /'
    bad=1
  else
    echo "skip_selftest: ok: '$1' (exit $rc, '$3')"
  fi
}
expect "skips with no failed check" 0 "[skipped] nothing to run here" "[skip refused]"
expect "fails a check then skips" 1 "[skip refused] this skip must be refused" "[skipped]"
expect "one section fails and another skips" 1 "[skip refused] this skip must be refused too" "[skipped]"
exit $bad
