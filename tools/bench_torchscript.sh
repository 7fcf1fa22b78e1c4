#!/usr/bin/env bash
# The built-in net as TorchScript against the native path (issue 71 point 6):
# the same 6 x 64 Connect Four weights as W.h5 and as W.pt
# (tools/zf_weights_torch.py to-torchscript), farms of R rounds, interleaved
# (each round runs both, the first format alternating), every farm's summary
# line printed raw, then min/median/max positions/s and leaf evals/s and the
# pt/h5 ratio of the medians. 32 games per worker, so that games finish
# within a round (positions/s counts finished games; leaf evals/s is the
# steadier figure). Run it alone on the machine; tee its output into
# docs/results/ to keep it.
#   tools/bench_torchscript.sh [RUNS] [SECONDS] [PRECISION] [-- MORE RUN OPTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
secs=${2:-120}
precision=${3:-fp32}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = "--" ] && shift
bin=${ZF_BINARY:-build/zerofarm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/zf_weights_torch.py init "$tmp/w.h5" --game connect4 --blocks 6 --filters 64 >/dev/null
/usr/bin/python3 tools/zf_weights_torch.py to-torchscript "$tmp/w.h5" "$tmp/w.pt" >/dev/null
echo "$(date -u +%FT%TZ) $(uname -n) $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg);" \
  "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); $runs rounds x $secs s, $precision; $*"
declare -A pos evals
for r in $(seq "$runs"); do
  order="h5 pt"
  [ $((r % 2)) = 0 ] && order="pt h5"
  for format in $order; do
    "$bin" run --game connect4 --simulations 100 --workers 2 --games-per-worker 32 --gpus 0 --precision "$precision" \
      --weights "$tmp/w.$format" --duration "$secs" --no-status --out "$tmp/run-$format-$r" "$@" \
      >"$tmp/out-$format-$r.txt" 2>"$tmp/err-$format-$r.txt" || true
    line=$(grep -m1 'positions/s' "$tmp/out-$format-$r.txt" || echo "no summary line: $(tail -1 "$tmp/err-$format-$r.txt")")
    echo "round $r $format (load $(cut -d' ' -f1 /proc/loadavg)): $line"
    pos[$format]+="$(grep -oE '[0-9.]+ positions/s' <<<"$line" | grep -oE '^[0-9.]+' || true) "
    evals[$format]+="$(grep -oE '[0-9.]+ leaf evals/s' <<<"$line" | grep -oE '^[0-9.]+' || true) "
    rm -rf "$tmp/run-$format-$r"
  done
done
stats() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR) printf "min %.1f median %.1f max %.1f", a[1], a[int((NR+1)/2)], a[NR]; else printf "none"}'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "" && b > 0) printf "%.3f", a / b; else printf "n/a (no figure)"}'; }
for format in h5 pt; do
  echo "$format: positions/s $(echo "${pos[$format]}" | stats); leaf evals/s $(echo "${evals[$format]}" | stats)"
done
echo "pt/h5 median ratio: positions/s $(ratio "$(echo "${pos[pt]}" | median)" "$(echo "${pos[h5]}" | median)")," \
  "leaf evals/s $(ratio "$(echo "${evals[pt]}" | median)" "$(echo "${evals[h5]}" | median)")"
