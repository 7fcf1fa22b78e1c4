#!/usr/bin/env bash
# The trainer of two builds side by side, interleaved: `zerofarm train` of build A,
# then of build B, ROUNDS times, each from random weights on a copy of the same
# shards, the same steps and options (a trainer change's speed check; the load
# changes between runs, so compare the ratios of adjacent runs, not absolute figures).
#   tools/bench_trainer.sh A_BUILD_DIR B_BUILD_DIR SHARDS_DIR OUTDIR [ROUNDS [STEPS [TRAIN ARGS...]]]
# SHARDS_DIR: a directory of Connect Four shards (e.g. RUN/shards/HOST of any farm
# run: `zerofarm run --out R --duration 60` makes enough). ROUNDS defaults to 3,
# STEPS to 300; TRAIN ARGS default to the recipe's (4 blocks x 32 filters, its
# trainer options). Writes OUTDIR/summary.txt: a header (machine, load, commits),
# a line per run (samples/s while training, CPU seconds of the process, last
# losses) and the B/A ratio of each round.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n 2,12p "$0" >&2; exit 2; }
a=$1 b=$2 shards=$3 out=$4 rounds=${5:-3} steps=${6:-300}
shift $(( $# < 6 ? $# : 6 ))
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--blocks 4 --filters 32 --seed 1 --window 150000 --lr 0.02 --value-discount 0.98)
ls "$shards"/*.h5 >/dev/null 2>&1 || { echo "bench_trainer: $shards holds no .h5 shards" >&2; exit 2; }
for side in "$a" "$b"; do
  [ -x "$side/zerofarm-torch" ] || { echo "bench_trainer: $side/zerofarm-torch not found" >&2; exit 2; }
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
commit() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo '?'; }
{
  echo "# $(date -u +%FT%TZ) $(uname -n), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# A: $a ($(commit "$a")), B: $b ($(commit "$b"))"
  echo "# shards: $shards ($(ls "$shards"/*.h5 | wc -l) files); $steps steps; train args: ${args[*]}"
} > "$out/summary.txt"
for r in $(seq "$rounds"); do
  rate_a=
  for side in A B; do
    dir=$a
    [ "$side" = B ] && dir=$b
    rm -rf "$work/run" && mkdir -p "$work/run/shards/h" && cp "$shards"/*.h5 "$work/run/shards/h/"
    start=$(awk '{print $16 + $17}' /proc/$$/stat)  # CPU of this shell's waited-for children so far (ticks)
    log=$("$dir/zerofarm-torch" train --run "$work/run" --steps "$steps" --no-wait --replay 0 \
          --checkpoint-steps 1000000 --no-status "${args[@]}" 2>&1 | grep 'positions/s while training')
    ticks=$(( $(awk '{print $16 + $17}' /proc/$$/stat) - start ))
    rate=$(sed -n 's/.*(\([0-9.]*\) positions\/s while training.*/\1/p' <<<"$log")
    losses=$(sed -n 's/.*losses \(.*\)/\1/p' <<<"$log")
    echo "round $r $side: $rate samples/s, $(awk -v t="$ticks" -v h="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", t/h}') CPU s; $losses" >> "$out/summary.txt"
    if [ "$side" = A ]; then rate_a=$rate; else
      awk -v a="$rate_a" -v b="$rate" -v r="$r" 'BEGIN{printf "round %d: B/A %.3f\n", r, b/a}' >> "$out/summary.txt"
    fi
  done
done
echo "# end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/summary.txt"
cat "$out/summary.txt"
