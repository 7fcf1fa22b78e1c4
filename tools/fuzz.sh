#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, no LibTorch)
# into ./build-fuzz (or $ZF_FUZZ_BUILD_DIR) and runs them:
#   tools/fuzz.sh --smoke [TARGET...]   each for a few seconds ($ZF_FUZZ_SMOKE_SECONDS, 5;
#                                       weights and shard: their seeds only, see
#                                       below): the step of tools/test.sh
#   tools/fuzz.sh SECONDS [TARGET...]   each for SECONDS (the long runs: 1800 and more)
#   tools/fuzz.sh --build               only build
# TARGETs: config recipe pons gtp weights shard options model (default: all), run one
# after the other on one core each. Seeds: tests/fuzz/corpus/model (read only)
# and build-fuzz/seeds/TARGET (the text targets': from tests/fuzz/seeds.txt;
# weights and shard: valid files this build's writers make, tests/fuzz/make_seeds.cpp);
# what a run adds goes to build-fuzz/corpus/TARGET, kept for the next run; a
# crash, leak or hang is written to build-fuzz/findings/ and fails the command.
# Each run's output (executions, coverage, corpus) goes to
# build-fuzz/logs/TARGET.log. The smoke starts each target from its seeds alone
# with -seed=1. ZF_FUZZ_ARGS adds libFuzzer flags, or overrides the defaults
# (a long run that goes on past a finding: ZF_FUZZ_ARGS="-fork=1
# -ignore_crashes=1 -ignore_timeouts=1"; on a loaded machine, where a niced
# run can stall for a minute, -timeout=600).
# Needs clang and libclang-rt-14-dev (tools/setup.sh). Results of kept runs:
# docs/results/fuzz-*/.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${ZF_FUZZ_BUILD_DIR:-build-fuzz}
all=(config recipe pons gtp weights shard options model)

smoke=0
case "${1:-}" in
  --smoke) seconds=${ZF_FUZZ_SMOKE_SECONDS:-5} smoke=1 ;;
  --build) seconds=0 ;;
  [0-9]*) seconds=$1 ;;
  *) echo "usage: tools/fuzz.sh --smoke | SECONDS | --build  [TARGET...]" >&2; exit 2 ;;
esac
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (tools/setup.sh installs it)" >&2; exit 2; }
CC=clang CXX=clang++ ZF_BUILD_DIR=$build ZF_BUILD_TYPE=RelWithDebInfo ZF_JOBS=${ZF_JOBS:-$(nproc)} \
  ZF_TARGETS="zf_fuzz_seeds ${targets[*]/#/zf_fuzz_}" \
  bash tools/build.sh -DZF_FUZZ=ON -DZF_WITH_TORCH=OFF -DZF_BUILD_TESTS=OFF || exit 1
[ "$seconds" -gt 0 ] || exit 0

mkdir -p "$build/findings" "$build/logs"
# The binary seeds (HDF5 files) are made by this build's writers, so that they
# follow the current schema. The text seeds are in the tree, bundled in
# tests/fuzz/seeds.txt: each after a "==> TARGET/NAME <==" line (" -n" after it:
# the file has no final newline), written out to $seeds/TARGET/NAME here.
seeds=$build/seeds
rm -rf "$seeds" && "$build/tests/fuzz/zf_fuzz_seeds" "$seeds" || exit 1
awk -v out="$seeds" '
  function flush() { if (f != "") { printf "%s", (nonl ? substr(buf, 1, length(buf) - 1) : buf) > f; close(f) } }
  /^==> [^ ]+ <==( -n)?$/ {
    flush(); f = out "/" $2; nonl = ($4 == "-n"); buf = ""
    d = f; sub(/\/[^\/]*$/, "", d); system("mkdir -p \"" d "\""); next
  }
  { buf = buf $0 "\n" }
  END { flush() }' tests/fuzz/seeds.txt || exit 1
# The targets' scratch input files (tests/fuzz/fuzz_input.h), removed at the end.
ZF_FUZZ_SCRATCH=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")/zf-fuzz.XXXXXX") || exit 1
export ZF_FUZZ_SCRATCH
trap 'rm -rf "$ZF_FUZZ_SCRATCH"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=()
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t
  # The smoke starts from the seeds alone, with a fixed seed: what it tries
  # does not depend on what long runs kept (its first corpus is scratch).
  args=()
  if [ $smoke = 1 ]; then
    corpus=$build/smoke-corpus/$t args=(-seed=1)
    rm -rf "$corpus"
  fi
  # The HDF5 targets: Debian 12's libhdf5 (1.10.8) crashes and leaks on damaged
  # files within seconds of fuzzing, in its own code (docs/results/fuzz-2026-12-04/):
  # the smoke only replays their seeds (a regression check); long runs fuzz
  # them, with its leaks not reported.
  span="in $seconds s"
  case $t in weights | shard)
    args+=(-detect_leaks=0)
    [ $smoke = 1 ] && args+=(-runs=0) && span="(the seeds replayed)" ;;
  esac
  mkdir -p "$corpus"
  dirs=("$corpus")
  [ -d "tests/fuzz/corpus/$t" ] && dirs+=("tests/fuzz/corpus/$t")
  [ -d "$seeds/$t" ] && dirs+=("$seeds/$t")
  # ZF_FUZZ_ARGS come after the defaults, so they win (libFuzzer takes a flag's last value).
  # shellcheck disable=SC2086  # ZF_FUZZ_ARGS: extra libFuzzer flags, e.g. -fork=1 -ignore_crashes=1
  if "$build/tests/fuzz/zf_fuzz_$t" "${args[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 ${ZF_FUZZ_ARGS:-} -artifact_prefix="$build/findings/$t-" "${dirs[@]}" >"$build/logs/$t.log" 2>&1; then
    echo "fuzz $t: $(grep -E '^stat::number_of_executed_units' "$build/logs/$t.log" | awk '{print $2}') runs" \
      "$span, $(grep -Eo 'cov: [0-9]+' "$build/logs/$t.log" | tail -1), no finding"
  else
    echo "fuzz $t: FAILED (a finding or a harness error): $build/logs/$t.log, $build/findings/$t-*" >&2
    tail -30 "$build/logs/$t.log" >&2
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: FAILED: ${failed[*]}" >&2; exit 1; }
echo "fuzz: ${#targets[@]} targets, no finding"
