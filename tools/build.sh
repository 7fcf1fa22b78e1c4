#!/usr/bin/env bash
# Configures and builds zerofarm into ./build (or $ZF_BUILD_DIR) with ccache.
# Extra arguments go to cmake's configure step, e.g. -DZF_SANITIZE=address,undefined.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${ZF_BUILD_DIR:-build}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Paths relative to the checkout, so worktrees and CI clones share cache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${ZF_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j"${ZF_JOBS:-$(nproc)}"
echo "build: $build/zerofarm"
