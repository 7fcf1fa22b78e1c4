#!/usr/bin/env bash
# Keeps the resumable state of a `zerofarm loop` run without its shards, so a
# learning run can go on in pieces on machines that do not keep run directories.
#
#   tools/learn-state.sh save RUN KEPT      (a stopped run) RUN -> KEPT: the trainer's state, momentum and heads, the model
#                                           they name, RUN/eval's curve, clocks and checkpoint mean, the run's small files
#   tools/learn-state.sh restore KEPT RUN   KEPT -> RUN (a new directory), then run the same loop command
#
# What is left out: the shards (hundreds of MB; the resumed trainer paces on new
# ones, see include/zerofarm/learn/train.h), older models, logs, locks.
# Refused (one line, exit 1): a RUN or KEPT holding anything but regular files and
# directories (a link could carry a file from outside into the copy, or let a farm
# running as root write through it), a KEPT that is RUN, inside it or above it, and
# an existing KEPT that is not a kept state (save replaces only a kept state).
set -euo pipefail
usage() { echo "usage: $0 save RUN KEPT | restore KEPT RUN" >&2; exit 2; }
fail() { echo "learn-state: $*" >&2; exit 1; }
[ $# -eq 3 ] || usage
cmd=$1 from=${2%/} to=${3%/}
[ -n "$from" ] && [ -n "$to" ] || usage

# only_files DIR: refuses DIR when it (or anything in it) is not a regular file or directory.
only_files() {
  [ ! -L "$1" ] || fail "$1 is a symbolic link; refusing to follow it"
  local odd
  odd=$(find "$1" ! -type f ! -type d -print -quit)
  [ -z "$odd" ] || fail "$odd is not a regular file or directory (a link?); refusing to copy it"
}

save() {
  local state="$from/train/state.txt"
  [ -f "$state" ] || fail "$state not found: not a trained run"
  only_files "$from"
  local run kept
  run=$(realpath "$from") kept=$(realpath -m "$to")
  case "$kept/" in "$run/"*) fail "$to is $from or inside it: it would be copied into itself" ;; esac
  case "$run/" in "$kept/"*) fail "$to holds $from: replacing it would remove the run" ;; esac
  [ ! -e "$to" ] || [ -f "$to/train/state.txt" ] || fail "$to exists and is not a kept state; not replacing it"
  local version model
  version=$(sed -n 's/^version=//p' "$state")
  [[ $version =~ ^[0-9]+$ ]] || fail "$state names no model version"
  model=$(ls "$from/models/" | grep -E "^model-0*${version}\.h5$" | head -1 || true)
  [ -n "$model" ] || fail "$from/models has no model of version $version"
  tmp="$to.tmp.$$"
  trap 'rm -rf "$tmp"' EXIT
  rm -rf "$tmp" && mkdir -p "$tmp/models" "$tmp/train"
  cp "$from/models/$model" "$tmp/models/"
  cp "$state" "$from/train/momentum.h5" "$tmp/train/"
  # The ownership head (zerofarm train --ownership), a training aid the models leave out.
  [ ! -f "$from/train/heads.h5" ] || cp "$from/train/heads.h5" "$tmp/train/"
  # The run's result, the checkpoint mean (zerofarm loop --final-mean), when it has one.
  [ ! -f "$from/eval/checkpoint-mean.h5" ] || { mkdir -p "$tmp/eval" && cp "$from/eval/checkpoint-mean.h5" "$tmp/eval/"; }
  # The small files of the run: its id, host claims and epochs (so game ids stay unique), the farm's
  # config, the curve and clocks; not shards or models (*.h5), metrics, logs, locks or solver caches.
  (cd "$from" && find . -type f -size -256k ! -name '*.h5' ! -path './train/*' ! -path './logs/*' \
      ! -name '*.log' ! -name '*.lock' ! -name '.*' ! -name '*.tmp' ! -name '*.rated' ! -name 'metrics*' -print0) |
    while IFS= read -r -d '' f; do mkdir -p "$tmp/$(dirname "$f")" && cp "$from/$f" "$tmp/$f"; done
  # The old kept state goes only once the new one is complete.
  local old="$to.old.$$"
  [ ! -e "$to" ] || mv "$to" "$old"
  mv "$tmp" "$to"
  rm -rf "$old"
  echo "learn-state: kept $from (model v$version) in $to ($(du -sh "$to" | cut -f1))"
}

restore() {
  [ -f "$from/train/state.txt" ] || fail "$from/train/state.txt not found: not a kept run"
  only_files "$from"
  [ ! -L "$to" ] || fail "$to is a symbolic link; refusing to follow it"
  [ ! -e "$to/train/state.txt" ] || fail "$to already has a trainer state; not overwriting it"
  mkdir -p "$to" && cp -r "$from/." "$to/"
  echo "learn-state: restored $from into $to; resume with the loop command of docs/learning.md"
}

case $cmd in
save) save ;;
restore) restore ;;
*) usage ;;
esac
