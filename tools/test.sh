#!/usr/bin/env bash
# Runs every test of zerofarm:
#   1. the build in ./build (or $ZF_BUILD_DIR): unit tests in parallel, then
#      the multi-process tests one at a time (they start real process trees
#      and must not compete for the cores), the `slurm` test among them (a
#      one-node Slurm started as root; skipped when not root);
#   2. unless ZF_SANITIZERS=0: the unit, integration and fault tests again
#      under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan), and
#      the ring and threaded tests under ThreadSanitizer (build-tsan, without
#      LibTorch, whose OpenMP runtime TSan cannot follow). The [slow] tests
#      (deep perft, the hard solver lines) run only in the plain build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ZF_BUILD_DIR:-build}
jobs=$(nproc)
ctest --test-dir "$build" --output-on-failure -j"$jobs" -LE multiprocess
ctest --test-dir "$build" --output-on-failure -L multiprocess

if [ "${ZF_SANITIZERS:-1}" != 0 ]; then
  echo "== AddressSanitizer + UndefinedBehaviorSanitizer"
  ZF_BUILD_DIR=build-asan ZF_BUILD_TYPE=Debug bash tools/build.sh -DZF_SANITIZE=address,undefined
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE 'multiprocess|slow'
  ctest --test-dir build-asan --output-on-failure -L multiprocess -E 'chaos|python_tools|slurm'
  echo "== ThreadSanitizer (rings, queues, futexes, threads)"
  ZF_BUILD_DIR=build-tsan ZF_BUILD_TYPE=RelWithDebInfo bash tools/build.sh -DZF_SANITIZE=thread -DZF_WITH_TORCH=OFF
  TSAN_OPTIONS=halt_on_error=1 ctest --test-dir build-tsan --output-on-failure -R '^shm:'
fi
