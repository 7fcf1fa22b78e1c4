#!/usr/bin/env bash
# eval-thr.sh RUN VERSION OUTDIR: all four Pons sets, MCTS-600 (plain PUCT) and the network alone,
# as eval-own.sh of recipe-choice-ownership-2026-11-28 (the baseline's files come from there).
set -euo pipefail
run=$1 v=$2 out=$3
w=$(ls /work/main/runs/$run/models/ | grep -E "^model-0*$v\.h5$")
name=$(basename $run)
cd /work/main
build-thr/zerofarm eval --rate-threads 1 --weights runs/$run/models/$w --sets ../shared/data/reference/connect4 \
  --simulations 600 --no-solver --value-discount 0.98 --no-status --eval-threads ${EVAL_THREADS:-1} \
  --positions-csv $out/positions-$name-v$v.csv > $out/sets-$name-v$v.log 2>&1
