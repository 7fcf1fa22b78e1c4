#!/usr/bin/env bash
# Runs every test of zerofarm:
#   0. tools/check_shape.py: every C++ file clang-formatted, no function in
#      src/ over 80 lines without a reason above it, every source path the
#      docs cite exists, the docs' sentences short, their openings short,
#      their total under 25,000 words, and evidence.md's numbers in the raw
#      files it cites; tools/check_threads.sh: clang's thread-safety
#      analysis over every mutex; tools/check_tests.py discovery: every Catch test has
#      exactly one CTest entry that selects it (no vacuous entries), every
#      hidden test a home;
#   1. the build in ./build (or $ZF_BUILD_DIR), every target (tools/build.sh with
#      ZF_TARGETS=all; needs tools/setup.sh --test's packages): unit tests in parallel, then
#      the multi-process tests one at a time (they start real process trees
#      and must not compete for the cores), the `slurm` test among them (a
#      one-node Slurm started as root);
#   2. unless ZF_SANITIZERS=0: the unit, integration and fault tests again
#      under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan), and
#      the ring and threaded tests under ThreadSanitizer (build-tsan: only
#      zf_shm_test, without LibTorch, whose OpenMP runtime TSan cannot
#      follow). The [slow] tests (deep perft, the hard solver lines, the
#      longest farm runs: loop, train, bench, tune, NaN at start and by hot
#      reload, hung children, two hosts, SGF export, the gnugo games, gomoku
#      and 9x9 go farms, the config file and metrics farms, the two-GPU plans,
#      the resign target, the loop's evaluation cadence across stages, the
#      value head of several channels trained and played) run only in the plain
#      build, to keep CI under 45 minutes on 2 cores (a full run took 44
#      minutes on 2026-11-29): each of them adds no code path under the
#      sanitizers that a shorter test lacks;
#   3. the list of skipped tests with their reasons (tools/check_tests.py
#      skips): the command fails if a test was skipped that must run here
#      (only GPU tests, the Slurm test without a cgroup filesystem, the
#      PID-namespace test where unshare cannot run, the status line where no
#      pseudo-terminal opens, KeepFreedMemory under ASan, and the CUDA compile
#      check turned off or unable to fetch, may).
#
#   tools/test.sh --quick     only steps 0 and 3 and the plain build's unit tests
#                             (about 3 minutes on 2 cores): the check to run before each
#                             commit, since a unit test pins generated files
#                             (docs/config-example.conf) that a change of help
#                             text alone makes stale
#   tools/test.sh --long      only the hidden long tests instead: the chaos
#                             test's 100 SIGKILLs and SIGSTOPs in 10 minutes and the first
#                             40 Begin-Hard solver lines, 10 GTP games
#                             against GNU Go (about 20 minutes)
#   tools/test.sh --long-all  those and all 1000 Begin-Hard lines (hours)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${ZF_BUILD_DIR:-build}
jobs=$(nproc)
results="$PWD/$build/test-results"

case "${1:-}" in
  --long | --long-all)
    set -e
    "$build/tests/zf_fault_test" -w NoTests "[long]"
    "$build/tests/zf_integration_test" -w NoTests "[long]"  # gtp: 10 games against GNU Go
    "$build/tests/zf_game_test" -w NoTests "[solver-40]"
    if [ "$1" = --long-all ]; then "$build/tests/zf_game_test" -w NoTests "[solver-full]"; fi
    exit 0 ;;
  "" | --quick) ;;
  *) echo "usage: tools/test.sh [--quick | --long | --long-all]" >&2; exit 2 ;;
esac

quick=0
[ "${1:-}" = --quick ] && quick=1
failed=()
# step NAME CMD...: runs one step, remembers a failure and goes on, so the
# skip list below is printed whatever failed.
step() {
  local name=$1; shift
  "$@" || failed+=("$name")
}

# Everything, the tests too (tools/build.sh alone builds only the two binaries).
ZF_TARGETS=all bash tools/build.sh -DZF_BUILD_TESTS=ON ||
  { echo "test.sh: the build failed (tools/setup.sh --test installs what the tests need)" >&2; exit 1; }
rm -rf "$results" && mkdir -p "$results"
step "shape check" /usr/bin/python3 tools/check_shape.py
step "thread-safety check" bash tools/check_threads.sh
step "test discovery" /usr/bin/python3 tools/check_tests.py discovery "$build"
step "unit tests" ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE multiprocess \
  --output-junit "$results/unit.xml"
[ $quick = 1 ] || step "multi-process tests" ctest --test-dir "$build" --output-on-failure -L multiprocess \
  --output-junit "$results/multiprocess.xml"

if [ $quick = 0 ] && [ "${ZF_SANITIZERS:-1}" != 0 ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
  if ZF_BUILD_DIR=build-asan ZF_BUILD_TYPE=Debug ZF_TARGETS=all bash tools/build.sh -DZF_SANITIZE=address,undefined; then
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    step "asan unit tests" ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'multiprocess|slow' \
      --output-junit "$results/asan-unit.xml"
    step "asan multi-process tests" ctest --test-dir build-asan --output-on-failure -L multiprocess -LE slow \
      -E 'chaos|python_tools|slurm' --output-junit "$results/asan-multiprocess.xml"
  else
    failed+=("asan build")
  fi
  echo "== ThreadSanitizer (rings, queues, futexes, threads)"
  # Only the executable whose tests it runs: the rest of a TSan build cost CI minutes and ran nothing.
  if ZF_BUILD_DIR=build-tsan ZF_BUILD_TYPE=RelWithDebInfo ZF_TARGETS=zf_shm_test bash tools/build.sh \
    -DZF_SANITIZE=thread -DZF_WITH_TORCH=OFF; then
    step "tsan tests" env TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure -R '^shm:' \
      --output-junit "$results/tsan.xml"
  else
    failed+=("tsan build")
  fi
fi

echo "== Skipped tests"
step "skip check" /usr/bin/python3 tools/check_tests.py skips "$build" "$results"/*.xml

if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh${1:+ $1}: FAILED: ${failed[*]}" >&2
  exit 1
fi
[ $quick = 1 ] && echo "test.sh --quick: all passed (the shape check, discovery, unit tests and skip list only)" ||
  echo "test.sh: all passed"
