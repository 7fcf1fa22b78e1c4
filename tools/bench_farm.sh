#!/usr/bin/env bash
# Measures farm throughput: R runs of each setting, interleaved (so the
# machine's noise hits every setting alike), min/median/max of positions/s
# and leaf evals/s. Run it alone on the machine.
#   tools/bench_farm.sh [RUNS] [SECONDS]
# The settings are PEERS.md's: Connect Four, 100 simulations, 6 blocks x 64
# filters, CPU; the farm with 2 workers, fp32 and bf16, and the single-process
# batched self-play (`zerofarm selfplay`) as a reference.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
secs=${2:-60}
bin=${ZF_BINARY:-build/zerofarm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--game connect4 --simulations 100 --blocks 6 --filters 64)
declare -A pos evals
for r in $(seq "$runs"); do
  for setting in farm-fp32 farm-bf16 selfplay-fp32; do
    case $setting in
      farm-fp32) line=$("$bin" run "${common[@]}" --precision fp32 --workers 2 --gpus 0 --duration "$secs" --no-status --out "$tmp/$setting-$r" 2>/dev/null | head -1) ;;
      farm-bf16) line=$("$bin" run "${common[@]}" --workers 2 --gpus 0 --bf16 --duration "$secs" --no-status --out "$tmp/$setting-$r" 2>/dev/null | head -1) ;;
      selfplay-fp32) line=$("$bin" selfplay "${common[@]}" --precision fp32 --games 64 --concurrent 64 2>/dev/null | head -1) ;;
    esac
    p=$(grep -oE '[0-9.]+ positions/s' <<<"$line" | grep -oE '^[0-9.]+')
    e=$(grep -oE '[0-9.]+ leaf evals/s' <<<"$line" | grep -oE '^[0-9.]+')
    echo "run $r $setting: $p positions/s, $e leaf evals/s"
    pos[$setting]+="$p "
    evals[$setting]+="$e "
  done
done
stats() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {printf "min %.1f  median %.1f  max %.1f", a[1], a[int((NR+1)/2)], a[NR]}'; }
for setting in farm-fp32 farm-bf16 selfplay-fp32; do
  echo "$setting: positions/s $(echo "${pos[$setting]}" | stats); leaf evals/s $(echo "${evals[$setting]}" | stats)"
done
