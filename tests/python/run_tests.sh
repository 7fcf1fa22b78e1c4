#!/usr/bin/env bash
# Runs the tests of the Python tools (tools/*.py) with Debian's Python, which
# has h5py, numpy and matplotlib (python3 on PATH may be another one).
#
#   tests/python/run_tests.sh [ZERO_FARM_BINARY]
#
# The binary (the argument, else $ZF_BINARY) enables the tests that run a
# real farm; without it they are skipped. Without PyTorch (import torch
# fails) the torch tests are skipped and say "SKIPPED: torch not installed".
# Prints unittest's per-test lines and summary; exits non-zero on a failure,
# and when /usr/bin/python3 is missing.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python=/usr/bin/python3

if [ $# -gt 1 ]; then
  echo "usage: $0 [ZERO_FARM_BINARY]" >&2
  exit 2
fi
if [ $# -eq 1 ]; then
  export ZF_BINARY="$1"
fi
if [ -n "${ZF_BINARY:-}" ]; then
  if [ ! -x "$ZF_BINARY" ]; then
    echo "run_tests.sh: ZF_BINARY=$ZF_BINARY is not an executable file" >&2
    exit 2
  fi
  ZF_BINARY="$(cd "$(dirname "$ZF_BINARY")" && pwd)/$(basename "$ZF_BINARY")"
  export ZF_BINARY
  echo "run_tests.sh: farm tests use $ZF_BINARY"
else
  echo "run_tests.sh: ZF_BINARY not set: the farm tests will be skipped"
fi
# No interpreter is a failure, said in one line: the Python tests never
# vanish or pass without running (CTest always registers this test).
if [ ! -x "$python" ]; then
  echo "run_tests.sh: FAIL: $python not found: the Python tools' tests cannot run (tools/setup.sh installs python3)" >&2
  exit 1
fi
if ! "$python" -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
  echo "run_tests.sh: $python lacks h5py, numpy or matplotlib (tools/setup.sh --test installs them)" >&2
  exit 1
fi
# Debian's python3-torch installed (tools/setup.sh --test installs it): torch must
# work, and a broken one fails the tests instead of skipping them.
if dpkg-query -W -f='${Status}' python3-torch 2>/dev/null | grep -q "install ok installed"; then
  export ZF_REQUIRE_TORCH=1
fi
if "$python" -c 'import torch' 2>/dev/null; then
  echo "run_tests.sh: torch $("$python" -c 'import torch; print(torch.__version__)') found: torch tests run"
elif [ "${ZF_REQUIRE_TORCH:-0}" = 1 ]; then
  echo "run_tests.sh: FAIL: python3-torch is installed but 'import torch' fails:" >&2
  "$python" -c 'import torch' 2>&1 | tail -3 >&2
  exit 1
else
  echo "run_tests.sh: SKIPPED: torch not installed (the torch tests are skipped)"
fi

cd "$repo"
# Keep the test processes to a few threads: they run beside other tests.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" MPLBACKEND=Agg
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$python" -m unittest discover -s tests/python -t tests/python -v 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if grep -qE '^Ran 0 tests' "$log"; then  # Python 3.11's unittest exits 0 when it finds nothing
  echo "run_tests.sh: FAIL: unittest found no tests in tests/python" >&2
  exit 1
fi
# A skipped Python test makes the whole CTest entry read as skipped (never as
# passed); tools/test.sh then lists it and fails where it must not skip.
skips=$(grep -cE '\.\.\. skipped' "$log" || true)
if [ "$rc" = 0 ] && [ "$skips" -gt 0 ]; then
  echo "[skipped] python tools: $skips test(s) skipped: $(grep -E '\.\.\. skipped' "$log" | sed 's/.*skipped //' | sort -u | tr '\n' ' ')"
  exit 77  # CTest's SKIP_RETURN_CODE: a failed run that skipped too stays a failure
fi
exit "$rc"
