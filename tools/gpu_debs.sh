#!/usr/bin/env bash
# Runs HERE, on a Debian 12 machine with a network: downloads the Debian 12
# packages a GPU machine may lack to build and test zerofarm-torch (headers,
# CMake configs and the runtime libraries they need) into one folder, to carry
# to the GPU machine, where `tools/gpu_check.sh --debs DIR` unpacks them into a
# prefix (dpkg-deb -x; nothing is installed there). LibTorch, CUDA, CMake,
# ninja and the compiler come from the GPU machine itself.
#
#   tools/gpu_debs.sh [DIR]     (default .gpu-debs: git ignores it; about 16 MB)
#
# Uses the system's apt lists read-only (`apt-get download`, no install, no
# update unless ZF_APT_UPDATE=1). A second run downloads only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu-debs}

# Build: headers and CMake configs. Run: the shared libraries they link.
packages=(
  libboost1.74-dev                                  # Boost.Interprocess (headers, BoostConfig.cmake)
  libhdf5-dev libhdf5-103-1 libhdf5-hl-100          # HDF5 1.10 serial (headers, libhdf5_serial.so.103)
  libsz2 libaec0                                    # HDF5's szip (runtime)
  zlib1g-dev zlib1g                                 # chunk compression (zlib.h, libz.so)
  libcxxopts-dev                                    # command line (header, cxxopts-config.cmake)
  catch2                                            # tests (header, Catch2Config.cmake, Catch2WithMain)
  nlohmann-json3-dev                                # JSON lines (header, nlohmann_jsonConfig.cmake)
)
# Fallbacks: libraries libhdf5 links that most machines already have.
# gpu_check.sh uses one only where the machine lacks its soname.
fallbacks=(libcurl4 libssl3 libnghttp2-14 librtmp1 libssh2-1 libpsl5 libbrotli1 libldap-2.5-0 libsasl2-2 libzstd1)

command -v apt-get >/dev/null || { echo "gpu_debs: needs apt-get (a Debian 12 machine)" >&2; exit 2; }
[ "${ZF_APT_UPDATE:-0}" = 1 ] && apt-get update -qq
mkdir -p "$dir" "$dir/fallback"
fetch() {  # fetch DEST PACKAGE...: those not yet in DEST
  local dest=$1 p missing=()
  shift
  for p in "$@"; do
    compgen -G "$dest/${p}_*.deb" >/dev/null || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  (cd "$dest" && apt-get download -q "${missing[@]}") ||
    { echo "gpu_debs: apt-get download failed for: ${missing[*]} (try ZF_APT_UPDATE=1)" >&2; exit 1; }
}
fetch "$dir" "${packages[@]}"
fetch "$dir/fallback" "${fallbacks[@]}"
echo "gpu_debs: $(ls "$dir"/*.deb | wc -l) packages + $(ls "$dir"/fallback/*.deb | wc -l) fallbacks," \
     "$(du -sm "$dir" | cut -f1) MB in $dir"
echo "gpu_debs: on the GPU machine: bash tools/gpu_check.sh --debs $dir"
