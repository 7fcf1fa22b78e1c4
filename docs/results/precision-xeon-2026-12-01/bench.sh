#!/usr/bin/env bash
# fp32 against bf16 on this CPU, interleaved (A B A B ...), the recipe's farm and trainer:
#   docs/results/precision-xeon-2026-12-01/bench.sh BUILD MODEL SHARDS_DIR OUT ROUNDS
# The farm: `zerofarm run` with the recipe's search settings for 45 s from MODEL;
# the trainer: `zerofarm train` 600 steps from random weights on a copy of SHARDS_DIR.
set -euo pipefail
build=$1 model=$2 shards=$3 out=$4 rounds=${5:-3}
mkdir -p "$out"; work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
log() { echo "$*" | tee -a "$out/summary.txt"; }
log "# $(date -u +%FT%TZ) $(uname -n), $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD)"
for r in $(seq 1 "$rounds"); do
  for p in fp32 bf16; do
    rm -rf "$work/f"
    "$build/zerofarm" run --game connect4 --workers 2 --cpu-evaluators 2 --games-per-worker 32 --simulations 64 \
      --random-opening-plies 8 --temperature-plies 20 --final-temperature 0.3 --value-discount 0.98 \
      --weights "$model" --precision "$p" --duration 45 --out "$work/f" --no-status > "$out/farm-$r-$p.log" 2>&1
    log "round $r farm $p: $(grep -o '[0-9.]* positions/s, [0-9.]* leaf evals/s' "$out/farm-$r-$p.log")"
  done
  for p in fp32 bf16; do
    rm -rf "$work/t"; mkdir -p "$work/t/shards"; cp -r "$shards" "$work/t/shards/"
    /usr/bin/time -f "cpu_s %U %S wall_s %e" "$build/zerofarm" train --run "$work/t" --steps 600 --replay 0 --blocks 4 \
      --filters 32 --window 150000 --lr 0.02 --precision "$p" --no-wait > "$out/train-$r-$p.log" 2>&1
    log "round $r train $p: $(grep -o '[0-9]* positions/s while training' "$out/train-$r-$p.log"), $(tail -1 "$out/train-$r-$p.log")"
  done
done
log "# end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
