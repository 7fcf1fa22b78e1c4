#!/usr/bin/env bash
# The CTest entry `skip_honesty`: ZF_SKIP (tests/support/skip.h) reports a
# skip only when no check of the test failed. Runs zf_skip_selftest's three
# test cases one by one and checks the exit code (77 for a skip, what CTest's
# SKIP_RETURN_CODE reads; a failure's is neither 0 nor 77) and the "[skipped]" /
# "[skip refused]" line of each.  usage: skip_selftest.sh ZF_SKIP_SELFTEST
set -uo pipefail
exe=$1
bad=0
# expect NAME RC_WANTED LINE_WANTED LINE_FORBIDDEN (RC_WANTED: 77, or "fail": neither 0 nor 77)
expect() {
  local out rc ok
  out=$("$exe" -w NoTests "$1" 2>&1)
  rc=$?
  if [ "$2" = fail ]; then ok=$((rc != 0 && rc != 77)); else ok=$((rc == $2)); fi
  if [ $ok = 0 ] || ! grep -qF "$3" <<<"$out" || grep -qF "$4" <<<"$out"; then
    echo "skip_selftest: FAIL: '$1': exit $rc, wanted $([ "$2" = fail ] && echo 'neither 0 nor 77' || echo "$2")," \
      "a line '$3' and none '$4'; its output:"
    echo "$out" | sed 's/^/    /'
    bad=1
  else
    echo "skip_selftest: ok: '$1' (exit $rc, '$3')"
  fi
}
expect "skips with no failed check" 77 "[skipped] nothing to run here" "[skip refused]"
expect "fails a check then skips" fail "[skip refused] this skip must be refused" "[skipped]"
expect "one section fails and another skips" fail "[skip refused] this skip must be refused too" "[skipped]"
# A failure after a printed "[skipped]" (here another test of the same run) is no skip.
expect "skips with no failed check,fails a check then skips" fail "[skipped] nothing to run here" "[skip-never]"
exit $bad
