#!/usr/bin/env bash
# Checkpoints of a loop run on all four Pons sets, as the recipe choices judge them
# (docs/learning.md, "Choices"): the network alone and plain PUCT at 600 simulations.
#
#   tools/eval_sets.sh RUN OUTDIR VERSION [VERSION ...]
#
# writes OUTDIR/sets-NAME-vN.log and OUTDIR/positions-NAME-vN.csv (NAME = RUN's last
# component) for tools/positions_compare.py. ZF (default build/zerofarm) is the binary,
# THREADS (default 1) its --eval-threads. Deterministic: the load does not move the figures.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 RUN OUTDIR VERSION [VERSION ...]" >&2; exit 2; }
run=${1%/} out=${2%/}
shift 2
zf=${ZF:-build/zerofarm}
sets=$(cd "$(dirname "$0")/.." && pwd)/data/reference/connect4
mkdir -p "$out"
for v in "$@"; do
  [[ $v =~ ^[0-9]+$ ]] || { echo "eval_sets: '$v' is not a model version (a number)" >&2; exit 2; }
  model=$(ls "$run/models/" | grep -E "^model-0*$v\.h5$" | head -1 || true)
  [ -n "$model" ] || { echo "eval_sets: $run/models has no model of version $v" >&2; exit 1; }
  tag=$(basename "$run")-v$v
  "$zf" eval --rate-threads 1 --eval-threads "${THREADS:-1}" --weights "$run/models/$model" --sets "$sets" \
    --simulations 600 --no-solver --value-discount 0.98 --no-status \
    --positions-csv "$out/positions-$tag.csv" > "$out/sets-$tag.log" 2>&1 ||
    { echo "eval_sets: $tag failed; the end of $out/sets-$tag.log:" >&2; tail -3 "$out/sets-$tag.log" >&2; exit 1; }
  echo "eval_sets: $tag -> $out/sets-$tag.log"
done
