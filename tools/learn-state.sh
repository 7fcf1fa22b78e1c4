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
set -euo pipefail
usage() { echo "usage: $0 save RUN KEPT | restore KEPT RUN" >&2; exit 2; }
[ $# -eq 3 ] || usage
cmd=$1 from=${2%/} to=${3%/}
case $cmd in
save)
  state="$from/train/state.txt"
  [ -f "$state" ] || { echo "learn-state: $state not found: not a trained run" >&2; exit 1; }
  version=$(sed -n 's/^version=//p' "$state")
  model=$(ls "$from/models/" | grep -E "^model-0*${version}\.h5$" | head -1 || true)
  [ -n "$model" ] || { echo "learn-state: $from/models has no model of version $version" >&2; exit 1; }
  tmp="$to.tmp.$$"
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
  rm -rf "$to" && mv "$tmp" "$to"
  echo "learn-state: kept $from (model v$version) in $to ($(du -sh "$to" | cut -f1))"
  ;;
restore)
  [ -f "$from/train/state.txt" ] || { echo "learn-state: $from/train/state.txt not found: not a kept run" >&2; exit 1; }
  [ ! -e "$to/train/state.txt" ] || { echo "learn-state: $to already has a trainer state; not overwriting it" >&2; exit 1; }
  mkdir -p "$to" && cp -r "$from/." "$to/"
  echo "learn-state: restored $from into $to; resume with the loop command of docs/learning.md"
  ;;
*) usage ;;
esac
