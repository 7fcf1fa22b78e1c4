#!/usr/bin/env bash
# Installs the Debian 12 packages zerofarm needs, only those that are missing.
#   tools/setup.sh          what building and running `zerofarm` and `zerofarm-torch`
#                           needs (the quick start)
#   tools/setup.sh --test   that and what the tests and the Python tools need
#                           (the test command, CI)
# Idempotent: a second run installs nothing and says so. Runs `apt-get update`
# only when a missing package is unknown to apt's current lists.
# Needs root, or sudo.
set -euo pipefail

# Building and running the two binaries.
run_packages=(
  build-essential cmake ninja-build ccache
  libboost-dev                       # Boost.Interprocess (header-only)
  libtorch-dev libopenblas0-pthread  # LibTorch; OpenBLAS (the reference BLAS is ~12x slower)
  libhdf5-dev                        # HDF5 shards and weights
  libcxxopts-dev                     # command line
  nlohmann-json3-dev                 # JSON output (bench, tune, eval)
)
# The tests and the Python tools, besides.
test_packages=(
  catch2                             # the C++ tests (CMake builds them when it finds Catch2)
  hdf5-tools                         # h5dump
  python3 python3-h5py python3-numpy python3-matplotlib  # reader, plots
  python3-torch                      # the Python Dataset and weights converter (tests)
  slurm-wlm munge                    # the `slurm` test: a one-node Slurm (docs/scale-out.md)
  gnugo                              # GNU Go: the export, gtp, --against-gtp and match tests (/usr/games/gnugo)
  grhino                             # GRhino's gtp-rhino: the Othello match test (/usr/games/gtp-rhino)
  clang-format universal-ctags       # tools/check_shape.py: formatting and function length (tools/test.sh)
  clang libclang-rt-14-dev           # tools/check_threads.sh (thread safety); tools/fuzz.sh and the fuzz smoke: libFuzzer, ASan, UBSan
)

case "${1:-}" in
  "") packages=("${run_packages[@]}") ;;
  --test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "usage: tools/setup.sh [--test]" >&2; exit 2 ;;
esac

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi

known=1
for p in "${missing[@]}"; do
  apt-cache show "$p" >/dev/null 2>&1 || { known=0; break; }
done
if [ $known -eq 0 ]; then
  echo "setup: apt-get update (package lists are missing or old)"
  $sudo apt-get update -qq
fi
echo "setup: installing ${#missing[@]} missing package(s): ${missing[*]}"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
