#!/usr/bin/env bash
# The last stage's two arms compared (README, "The last stage, planned"): each arm's
# checkpoint mean and last checkpoint on Pons's four sets and the five made sets, then
# position by position, the shipped recipe's arm as A, this recipe's as B.
#
#   docs/results/recipe-c4-lw500/compare.sh [RUNS]     (from the repository root)
#
# RUNS (default runs) holds recipe-c4-lw500 (B) and recipe-c4-lw500-base (A), each stopped
# by its own budget, so that its eval/checkpoint-mean.h5 is the recipe's result. Writes
# sets-TAG-{pons,made}.log, positions-TAG-{pons,made}.csv and compare.txt beside this
# script. ZF (default build/zerofarm) is the binary. Deterministic: the load does not move
# the figures, only their time; the two arms run at once, one thread each.
set -euo pipefail
runs=${1:-runs}
here=$(dirname "$0")
zf=${ZF:-build/zerofarm}
# The rated sets from this checkout: a binary copied out of build/ finds no data/ beside it and
# would rate Test_L1_R3 with the solver again (about 4 CPU hours) before measuring anything.
export ZF_DATA_DIR=${ZF_DATA_DIR:-$PWD/data}
pons=$(cd "$(dirname "$0")/../../../.." && pwd)/shared/data/reference/connect4
made=data/connect4/made

eval_one() {  # eval_one WEIGHTS TAG: one network on both groups of sets
  local w=$1 tag=$2 sets name
  for sets in "$pons" "$made"; do
    name=pons
    [ "$sets" = "$made" ] && name=made
    "$zf" eval --rate-threads 1 --eval-threads 1 --weights "$w" --sets "$sets" --simulations 600 \
      --no-solver --value-discount 0.98 --no-status \
      --positions-csv "$here/positions-$tag-$name.csv" > "$here/sets-$tag-$name.log" 2>&1
  done
  echo "compare.sh: $tag measured"
}

last_model() {  # last_model RUN: the path of RUN's newest checkpoint
  local v
  v=$(ls "$1/models" | sed -n 's/^model-\([0-9]*\)\.h5$/\1/p' | sort -n | tail -1)
  [ -n "$v" ] || { echo "compare.sh: $1/models has no checkpoint" >&2; exit 1; }
  echo "$1/models/model-$v.h5"
}

arm_run() {  # arm_run ARM: the run directory of arm base or lw500
  if [ "$1" = base ]; then echo "$runs/recipe-c4-lw500-base"; else echo "$runs/recipe-c4-lw500"; fi
}

for arm in base lw500; do
  [ -f "$(arm_run $arm)/eval/checkpoint-mean.h5" ] || {
    echo "compare.sh: $(arm_run $arm)/eval/checkpoint-mean.h5 is missing (has the arm reached its budget?)" >&2
    exit 1
  }
done
# Two arms at once, each mean then each last checkpoint: one thread each on a 2-core machine.
for arm in base lw500; do
  run=$(arm_run $arm)
  last=$(last_model "$run")
  v=$(basename "$last" .h5)
  { eval_one "$run/eval/checkpoint-mean.h5" "$arm-mean" && eval_one "$last" "$arm-${v#model-}"; } &
done
wait

{
  echo "# A = the shipped recipe's last stage (recipe-c4-lw500-base), B = this recipe's (recipe-c4-lw500)"
  for group in pons made; do
    echo "## checkpoint means, $group sets"
    /usr/bin/python3 tools/positions_compare.py "$here/positions-base-mean-$group.csv" \
      "$here/positions-lw500-mean-$group.csv"
    if [ "$group" = pons ]; then
      echo "## checkpoint means, Test_L1_R3 only"
      /usr/bin/python3 tools/positions_compare.py "$here/positions-base-mean-pons.csv" \
        "$here/positions-lw500-mean-pons.csv" Test_L1_R3
    fi
  done
  echo "## last checkpoints, pons sets"
  /usr/bin/python3 tools/positions_compare.py "$(ls "$here"/positions-base-[0-9]*-pons.csv)" \
    "$(ls "$here"/positions-lw500-[0-9]*-pons.csv)"
} > "$here/compare.txt"
echo "compare.sh: $here/compare.txt written"
