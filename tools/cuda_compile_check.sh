#!/usr/bin/env bash
# Compiles every ZF_WITH_CUDA translation unit of src/ to an object file
# against CUDA 11.8's headers (Debian 12 non-free: nvidia-cuda-dev) and the
# build's own LibTorch headers (Debian's libtorch-dev ships ATen/cuda and
# c10/cuda), with the flags of the real build (BUILD/compile_commands.json)
# plus -DZF_WITH_CUDA=1. No GPU and no CUDA LibTorch needed; nothing is linked.
#
#   tools/cuda_compile_check.sh [BUILD_DIR]     (default $ZF_BUILD_DIR, else build)
#   tools/cuda_compile_check.sh --fetch-only    (only fill the cache)
#
# The package is fetched once per machine into a cache directory with a
# PRIVATE apt sources list and lists directory (the system's apt
# configuration, lists and caches are not touched); only its headers are kept
# (about 14 MB; the 774 MB .deb is deleted after unpacking).
#
# Environment:
#   ZF_CUDA_CHECK=0   skip (prints "[skipped] cuda compile check: ZF_CUDA_CHECK=0")
#   ZF_CUDA_CACHE     cache directory (default /var/cache/zerofarm/cuda when
#                     writable, else ~/.cache/zerofarm/cuda)
#   ZF_CUDA_MIRROR    Debian mirror (default: the system's, else deb.debian.org)
# Exit: 0 compiled; 77 skipped visibly (a line starting "[skipped]") when the
# package cannot be fetched or ZF_CUDA_CHECK=0 (CTest's SKIP_RETURN_CODE); 1 a translation unit does not compile or the
# build directory lacks what is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
src_root=$PWD

say() { echo "cuda compile check: $*"; }
skip() { echo "[skipped] cuda compile check: $*"; exit 77; }
fail() { echo "cuda compile check: FAILED: $*" >&2; exit 1; }

[ "${ZF_CUDA_CHECK:-1}" = 0 ] && skip "ZF_CUDA_CHECK=0"

fetch_only=0
build=${ZF_BUILD_DIR:-build}
case "${1:-}" in
  --fetch-only) fetch_only=1 ;;
  "") ;;
  *) build=$1 ;;
esac

cache=${ZF_CUDA_CACHE:-}
if [ -z "$cache" ]; then
  cache=/var/cache/zerofarm/cuda
  mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] || cache=${XDG_CACHE_HOME:-$HOME/.cache}/zerofarm/cuda
fi
mkdir -p "$cache" || skip "cannot create the cache directory $cache"
headers=$cache/headers     # usr/include of nvidia-cuda-dev
standin=$cache/standin     # c10/cuda/impl/cuda_cmake_macros.h
package=nvidia-cuda-dev

# The mirror and suite of the system's Debian sources (read, never changed).
system_mirror() {
  local uri
  uri=$(grep -hsoE '^(URIs:|deb) +(\[[^]]*\] +)?https?://[^ ]+' /etc/apt/sources.list.d/*.sources \
          /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        grep -oE 'https?://[^ ]+' | grep -v -- '-security' | head -1 || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# Fills $headers once: private apt update + download, unpack usr/include only.
fetch() {
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || skip "apt-get or dpkg-deb not found"
  local codename mirror apt work deb
  codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
  [ "$codename" = bookworm ] || skip "not Debian 12 (bookworm), which has CUDA 11.8 in non-free (found '${codename:-unknown}')"
  mirror=${ZF_CUDA_MIRROR:-$(system_mirror)}
  apt=$cache/apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  echo "deb [signed-by=$keyring] $mirror $codename contrib non-free" >"$apt/sources.list"
  local opts=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
              -o Dir::Cache::Archives="$apt/cache/archives" -o APT::Architecture=amd64 -q)
  say "fetching $package from $mirror $codename non-free into $cache (once per machine)"
  apt-get "${opts[@]}" update >"$apt/update.log" 2>&1 ||
    skip "apt-get update of the private sources list failed (no network?): $(tail -1 "$apt/update.log")"
  rm -f "$apt/debs/"*.deb
  (cd "$apt/debs" && apt-get "${opts[@]}" download "$package" >"$apt/download.log" 2>&1) ||
    skip "apt-get download $package failed: $(tail -1 "$apt/download.log")"
  deb=$(ls "$apt/debs/"*.deb | head -1)
  say "downloaded $(basename "$deb") ($(du -m "$deb" | cut -f1) MB); unpacking its headers"
  work=$(mktemp -d "$cache/unpack.XXXXXX")
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './usr/include/*' ||
    { rm -rf "$work"; fail "could not unpack the headers of $deb"; }
  rm -rf "$headers"
  mv "$work" "$headers"
  basename "$deb" >"$headers/PACKAGE"
  rm -f "$deb"
}

started=$(date +%s.%N)
exec 9>"$cache/lock"
flock 9  # one fetch at a time on this machine; the others wait and reuse it
if [ -f "$headers/PACKAGE" ]; then
  say "cached: $(cat "$headers/PACKAGE") headers in $headers (nothing downloaded)"
else
  fetch
fi
# A CUDA build of PyTorch generates this header; Debian's CPU LibTorch lacks it.
mkdir -p "$standin/c10/cuda/impl"
printf '#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n' >"$standin/c10/cuda/impl/cuda_cmake_macros.h"
flock -u 9
[ $fetch_only = 1 ] && exit 0

db=$build/compile_commands.json
[ -f "$db" ] || fail "$db not found: build first (tools/build.sh; CMAKE_EXPORT_COMPILE_COMMANDS is on)"
mapfile -t units < <(grep -rl --include='*.cpp' 'ZF_WITH_CUDA' src | sort)
[ ${#units[@]} -gt 0 ] || fail "no translation unit of src/ mentions ZF_WITH_CUDA"
out=$(mktemp -d "${TMPDIR:-/tmp}/zf-cuda-check.XXXXXX")
trap 'rm -rf "$out"' EXIT
for unit in "${units[@]}"; do
  # The unit's compile command, without its output and dependency-file flags.
  cmd=$(python3 - "$db" "$src_root/$unit" <<'EOF'
import json, shlex, sys
db, unit = sys.argv[1], sys.argv[2]
for e in json.load(open(db)):
    if e["file"] == unit:
        args = e.get("arguments") or shlex.split(e["command"])
        keep, skip = [], 0
        for a in args:
            if skip: skip -= 1; continue
            if a in ("-o", "-c", "-MT", "-MF", "-MQ"): skip = 1; continue
            if a in ("-MD", "-MMD"): continue
            keep.append(a)
        print(shlex.quote(e["directory"]))
        print(" ".join(shlex.quote(a) for a in keep))
        break
EOF
)
  [ -n "$cmd" ] || fail "$unit is not in $db (is it built in this configuration? ZF_WITH_TORCH=ON needed)"
  dir=$(sed -n 1p <<<"$cmd")
  flags=$(sed -n 2p <<<"$cmd")
  obj=$out/$(basename "$unit" .cpp).o
  # -idirafter: a real cuda_cmake_macros.h (a CUDA LibTorch) wins over the stand-in.
  # $dir and $flags come shell-quoted (shlex.quote above); the paths of this script are quoted here.
  if ! (eval "cd $dir && $flags -DZF_WITH_CUDA=1 -isystem $(printf %q "$headers/usr/include") \
        -idirafter $(printf %q "$standin") -c $(printf %q "$src_root/$unit") -o $(printf %q "$obj")"); then
    fail "$unit does not compile with ZF_WITH_CUDA=1 against $(cat "$headers/PACKAGE")"
  fi
  say "compiled $unit with ZF_WITH_CUDA=1 ($(du -k "$obj" | cut -f1) KB object)"
done
say "${#units[@]} translation unit(s) compiled in $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }') s"
