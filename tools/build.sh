#!/usr/bin/env bash
# Configures ./build (or $ZF_BUILD_DIR) and builds zerofarm and zerofarm-torch, with ccache.
# Extra arguments go to cmake's configure step, e.g. -DZF_SANITIZE=address,undefined.
#
# Which LibTorch (ZF_TORCH; a build directory keeps the one it was configured with):
#   (unset)          whatever CMake finds: Debian's libtorch-dev (1.13, CPU only), as CI builds
#   debian           Debian's libtorch-dev, explicitly
#   pytorch          the LibTorch of python3's installed PyTorch (pip or conda, 2.x, with CUDA
#                    when that PyTorch has it): torch.utils.cmake_prefix_path; ZF_PYTHON picks
#                    the interpreter (default python3)
#   DIR              a LibTorch the user names: a directory holding TorchConfig.cmake (a Torch_DIR)
#                    or a LibTorch prefix (an unpacked libtorch zip: DIR/share/cmake/Torch)
# Torch_DIR in the environment works as ZF_TORCH=DIR. With a CUDA LibTorch the GPU evaluator
# is built (nvcc must be on PATH); -DZF_REQUIRE_CUDA=ON makes a LibTorch without CUDA an error.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
build=${ZF_BUILD_DIR:-build}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
# Paths relative to the checkout, so worktrees and CI clones share cache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

torch=${ZF_TORCH:-${Torch_DIR:-}}
torch_args=()
case "$torch" in
  "") ;;
  debian) torch_args=(-DTorch_DIR=/usr/lib/x86_64-linux-gnu/cmake/Torch) ;;
  pytorch)
    python=${ZF_PYTHON:-python3}
    prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) ||
      { echo "build: ZF_TORCH=pytorch, but '$python -c \"import torch\"' fails: install PyTorch or set ZF_PYTHON" >&2; exit 2; }
    echo "build: LibTorch of PyTorch $("$python" -c 'import torch; print(torch.__version__)') ($prefix/Torch)"
    torch_args=(-DTorch_DIR="$prefix/Torch") ;;
  *)
    if [ -f "$torch/TorchConfig.cmake" ]; then torch_args=(-DTorch_DIR="$torch")
    elif [ -f "$torch/share/cmake/Torch/TorchConfig.cmake" ]; then torch_args=(-DTorch_DIR="$torch/share/cmake/Torch")
    else echo "build: ZF_TORCH=$torch holds neither TorchConfig.cmake nor share/cmake/Torch/TorchConfig.cmake" >&2; exit 2
    fi ;;
esac

# ZF_CONFIGURE_LOG=FILE keeps the configure step's output, appended (tools/gpu_check.sh does).
# ZF_TARGETS="T1 T2" builds those targets; default `zerofarm`, which builds both binaries
# (zerofarm and zerofarm-torch); ZF_TARGETS=all builds the tests too (tools/test.sh does).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${ZF_BUILD_TYPE:-RelWithDebInfo}" "${torch_args[@]}" "$@" \
  >>"${ZF_CONFIGURE_LOG:-/dev/null}"
targets=${ZF_TARGETS:-zerofarm}
# shellcheck disable=SC2086  # targets is a list
cmake --build "$build" -j"${ZF_JOBS:-$(nproc)}" --target $targets
case "$targets" in
  zerofarm) echo "build: $build/zerofarm" ;;
  all) echo "build: $build (everything, the tests too)" ;;
  *) echo "build: $build (only $targets)" ;;
esac
