#!/usr/bin/env bash
# eval-own.sh RUN VERSION OUTDIR: all four Pons sets, MCTS-600 (plain PUCT) and the network alone.
set -euo pipefail
run=$1 v=$2 out=$3
w=$(ls /work/main/runs/$run/models/ | grep -E "^model-0*$v\.h5$")
name=$(basename $run)
cd /work/main
build-exp/zerofarm eval --rate-threads 1 --weights runs/$run/models/$w --sets ../shared/data/reference/connect4 \
  --simulations 600 --no-solver --value-discount 0.98 --no-status \
  --positions-csv $out/positions-$name-v$v.csv > $out/sets-$name-v$v.log 2>&1
