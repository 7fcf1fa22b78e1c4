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
#   2. unless ZF_SANITIZERS=0: the unit tests and the multi-process tests but
#      chaos, python_tools, slurm and slurm-nodes (-E 'chaos|python_tools|slurm')
#      again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan), and
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
#   2b. unless ZF_FUZZ_SMOKE=0: every fuzz target (tests/fuzz: config,
#      recipe, Pons and verdict files, the GTP stream, weights, shards, the
#      option parser, model archives) for ZF_FUZZ_SMOKE_SECONDS (5) each (weights and shards:
#      their seeds only, as Debian's HDF5 crashes on damaged files), built by
#      clang with ASan + UBSan into build-fuzz (tools/fuzz.sh --smoke);
#   3. the list of skipped tests with their reasons (tools/check_tests.py
#      skips): the command fails if a test was skipped that must run here
#      (only GPU tests, the Slurm test without a cgroup filesystem, the
#      PID-namespace test where unshare cannot run, the status line where no
#      pseudo-terminal opens, KeepFreedMemory under ASan, and the CUDA compile
#      check turned off or unable to fetch, may).
# Every CTest run fails when it finds no test (--no-tests=error). A step left
# out (--quick, ZF_SANITIZERS=0, ZF_FUZZ_SMOKE=0) prints "skipped: STEP (why)"
# and counts as one skipped check. The output ends with the tests run, passed,
# failed and skipped per step, and the totals alone on the last line:
# "N passed, N failed, N skipped".
#
#   tools/test.sh --quick     only steps 0 and 3 and the plain build's unit tests
#                             (about 3 minutes on 2 cores): the check to run before each
#                             commit, since a unit test pins generated files
#                             (docs/config-example.conf) that a change of help
#                             text alone makes stale
#   tools/test.sh --long      only the hidden long tests instead: the chaos
#                             test's 100 SIGKILLs and SIGSTOPs in 10 minutes and the first
#                             40 Begin-Hard solver lines, 10 GTP games
#                             against GNU Go, and tools/mutate.sh (every search
#                             mutation of tools/mutations.txt killed; about 50 minutes)
#   tools/test.sh --long-all  those and all 1000 Begin-Hard lines (hours)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${ZF_BUILD_DIR:-build}
jobs=$(nproc)
results="$PWD/$build/test-results"

case "${1:-}" in
  "" | --quick | --long | --long-all) ;;
  *) echo "usage: tools/test.sh [--quick | --long | --long-all]" >&2; exit 2 ;;
esac

quick=0
[ "${1:-}" = --quick ] && quick=1
failed=()
# step NAME CMD...: runs one step, remembers a failure and goes on, so the
# skip list below is printed whatever failed.
# ---- counts per step: what each step ran, passed, failed and skipped ----------
# record_step NAME RC [CMD...]: a step's result; a CTest step's counts come from
# the JUnit file its command writes (--output-junit), any other step counts as
# one check, skipped when RC is 77 (a Catch run whose tests skipped, a step
# left out: skip_step). print_counts prints them per step, then the totals alone on the
# last line ("N passed, N failed, N skipped"), which CI reads.
step_results=()
record_step() {
  local name=$1 rc=$2 junit="" prev=""; shift 2
  for a in "$@"; do [ "$prev" = --output-junit ] && junit=$a; prev=$a; done
  step_results+=("$name"$'\t'"$rc"$'\t'"$junit")
}
print_counts() {
  local total_p=0 total_f=0 total_s=0 name rc junit p f s
  echo "== Counts per step"
  for entry in "${step_results[@]}"; do
    IFS=$'\t' read -r name rc junit <<<"$entry"
    if [ -n "$junit" ] && [ -f "$junit" ]; then
      p=$(grep -c 'status="run"' "$junit"); f=$(grep -c 'status="fail"' "$junit")
      s=$(grep -Ec 'status="(notrun|disabled)"' "$junit")
      [ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1  # failed outside its tests (no tests found, a crash)
      printf '  %-28s %5d run: %5d passed, %d failed, %d skipped\n' "$name" $((p + f + s)) "$p" "$f" "$s"
    else
      p=0 f=0 s=0
      if [ "$rc" = 0 ]; then p=1; elif [ "$rc" = 77 ]; then s=1; else f=1; fi
      printf '  %-28s %5d run: %5d passed, %d failed, %d skipped (one check)\n' "$name" 1 "$p" "$f" "$s"
    fi
    total_p=$((total_p + p)) total_f=$((total_f + f)) total_s=$((total_s + s))
  done
  echo "$total_p passed, $total_f failed, $total_s skipped"
}

step() {
  local name=$1; shift
  "$@"
  local rc=$?
  [ $rc = 0 ] || [ $rc = 77 ] || failed+=("$name")
  record_step "$name" $rc "$@"
}
# skip_step NAME WHY: a step left out, said and counted.
skip_step() {
  echo "skipped: $1 ($2)"
  record_step "$1" 77
}
# finish: the verdict, then the counts (the totals on the last line).
finish() {
  if [ ${#failed[@]} -gt 0 ]; then
    echo "test.sh${1:+ $1}: FAILED: ${failed[*]}" >&2
    print_counts
    exit 1
  fi
  echo "test.sh${1:+ $1}: all passed"
  print_counts
  exit 0
}

if [ "${1:-}" = --long ] || [ "${1:-}" = --long-all ]; then
  step "long fault tests" "$build/tests/zf_fault_test" -w NoTests "[long]"
  step "long integration tests" "$build/tests/zf_integration_test" -w NoTests "[long]"  # 10 games against GNU Go
  step "solver lines (40)" "$build/tests/zf_game_test" -w NoTests "[solver-40]"
  if [ "$1" = --long-all ]; then
    step "solver lines (1000)" "$build/tests/zf_game_test" -w NoTests "[solver-full]"
  else
    skip_step "solver lines (1000)" "only with --long-all"
  fi
  step "search mutations" bash tools/mutate.sh
  finish "$1"
fi

# Everything, the tests too (tools/build.sh alone builds only the two binaries).
ZF_TARGETS=all bash tools/build.sh -DZF_BUILD_TESTS=ON ||
  { echo "test.sh: the build failed (tools/setup.sh --test installs what the tests need)" >&2; exit 1; }
rm -rf "$results" && mkdir -p "$results"
step "shape check" /usr/bin/python3 tools/check_shape.py
step "thread-safety check" bash tools/check_threads.sh
step "test discovery" /usr/bin/python3 tools/check_tests.py discovery "$build"
step "unit tests" ctest --test-dir "$build" --no-tests=error --output-on-failure -j"$jobs" -LE multiprocess \
  --output-junit "$results/unit.xml"
[ $quick = 1 ] && skip_step "multi-process tests" "--quick"
[ $quick = 1 ] || step "multi-process tests" ctest --test-dir "$build" --no-tests=error --output-on-failure -L multiprocess \
  --output-junit "$results/multiprocess.xml"

if [ $quick = 0 ] && [ "${ZF_SANITIZERS:-1}" != 0 ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
  if ZF_BUILD_DIR=build-asan ZF_BUILD_TYPE=Debug ZF_TARGETS=all bash tools/build.sh -DZF_SANITIZE=address,undefined; then
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    step "asan unit tests" ctest --test-dir build-asan --no-tests=error --output-on-failure -j"$jobs" -LE 'multiprocess|slow' \
      --output-junit "$results/asan-unit.xml"
    step "asan multi-process tests" ctest --test-dir build-asan --no-tests=error --output-on-failure -L multiprocess -LE slow \
      -E 'chaos|python_tools|slurm' --output-junit "$results/asan-multiprocess.xml"
  else
    failed+=("asan build") && record_step "asan build" 1
  fi
  echo "== ThreadSanitizer (rings, queues, futexes, threads)"
  # Only the executable whose tests it runs: the rest of a TSan build cost CI minutes and ran nothing.
  if ZF_BUILD_DIR=build-tsan ZF_BUILD_TYPE=RelWithDebInfo ZF_TARGETS=zf_shm_test bash tools/build.sh \
    -DZF_SANITIZE=thread -DZF_WITH_TORCH=OFF; then
    step "tsan tests" env TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --no-tests=error --output-on-failure -R '^shm:' \
      --output-junit "$results/tsan.xml"
  else
    failed+=("tsan build") && record_step "tsan build" 1
  fi
else
  why=$([ $quick = 1 ] && echo "--quick" || echo "ZF_SANITIZERS=0")
  for name in "asan unit tests" "asan multi-process tests" "tsan tests"; do skip_step "$name" "$why"; done
fi

if [ $quick = 0 ] && [ "${ZF_FUZZ_SMOKE:-1}" != 0 ]; then
  echo "== Fuzz smoke: every parser's libFuzzer target (clang, ASan + UBSan) for a few seconds"
  step "fuzz smoke" bash tools/fuzz.sh --smoke
else
  skip_step "fuzz smoke" "$([ $quick = 1 ] && echo "--quick" || echo "ZF_FUZZ_SMOKE=0")"
fi

echo "== Skipped tests"
step "skip check" /usr/bin/python3 tools/check_tests.py skips "$build" "$results"/*.xml

finish "${1:-}"
