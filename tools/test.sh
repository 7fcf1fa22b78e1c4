#!/usr/bin/env bash
# Runs every test of the build in ./build (or $ZF_BUILD_DIR): unit tests in
# parallel, then the multi-process tests one at a time (they start real
# process trees and must not compete for the cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ZF_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE multiprocess
ctest --test-dir "$build" --output-on-failure -L multiprocess
