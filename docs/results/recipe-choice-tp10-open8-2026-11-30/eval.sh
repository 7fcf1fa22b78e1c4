#!/usr/bin/env bash
# eval.sh WEIGHTS TAG OUTDIR: one network on Pons's four sets and the five made sets.
set -euo pipefail
w=$1 tag=$2 out=$3
zf=/work/main/build/zerofarm
for sets in /work/shared/data/reference/connect4 /work/main/data/connect4/made; do
  name=$(basename "$sets")
  [ "$name" = made ] || name=pons
  "$zf" eval --rate-threads 1 --eval-threads 1 --weights "$w" --sets "$sets" --simulations 600 --no-solver \
    --value-discount 0.98 --no-status --positions-csv "$out/positions-$tag-$name.csv" > "$out/sets-$tag-$name.log" 2>&1
done
echo "eval.sh: $tag done"
