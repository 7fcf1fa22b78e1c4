#!/usr/bin/env bash
# Each run's last checkpoint on Pons's four sets and the five made sets, the two runs at once.
set -euo pipefail
cd /work/main/runs
for n in seed2 tp10; do
  v=$(ls cmp-fp-$n/models | sed -n 's/^model-\([0-9]*\)\.h5$/\1/p' | sort -n | tail -1)
  bash cmp-fp/eval.sh cmp-fp-$n/models/model-$v.h5 $n-v$v cmp-fp2 > cmp-fp2/eval-$n.out 2>&1 &
done
wait
date -u +"evals done %FT%TZ"
