#!/usr/bin/env bash
# The built-in net as TorchScript against the native path (issue 71 point 6):
# the same 6 x 64 Connect Four weights as W.h5 and as W.pt
# (tools/zf_weights_torch.py to-torchscript), farms of R runs each,
# interleaved, min/median/max positions/s, and the ratio of the medians.
# Run it alone on the machine.
#   tools/bench_torchscript.sh [RUNS] [SECONDS] [PRECISION]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
secs=${2:-60}
precision=${3:-fp32}
bin=${ZF_BINARY:-build/zerofarm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 tools/zf_weights_torch.py init "$tmp/w.h5" --game connect4 --blocks 6 --filters 64 >/dev/null
/usr/bin/python3 tools/zf_weights_torch.py to-torchscript "$tmp/w.h5" "$tmp/w.pt" >/dev/null
echo "$(date -u +%FT%TZ) $(uname -n) $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $runs runs x $secs s, $precision"
declare -A pos
for r in $(seq "$runs"); do
  for format in h5 pt; do
    line=$("$bin" run --game connect4 --simulations 100 --workers 2 --gpus 0 --precision "$precision" \
      --weights "$tmp/w.$format" --duration "$secs" --no-status --out "$tmp/run-$format-$r" 2>/dev/null | head -1)
    p=$(grep -oE '[0-9.]+ positions/s' <<<"$line" | grep -oE '^[0-9.]+')
    echo "run $r $format: $p positions/s (load $(cut -d' ' -f1 /proc/loadavg))"
    pos[$format]+="$p "
  done
done
stats() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {printf "min %.1f median %.1f max %.1f", a[1], a[int((NR+1)/2)], a[NR]}'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for format in h5 pt; do echo "$format: positions/s $(echo "${pos[$format]}" | stats)"; done
echo "pt/h5 median ratio: $(awk -v a="$(echo "${pos[pt]}" | median)" -v b="$(echo "${pos[h5]}" | median)" 'BEGIN {if (b > 0) printf "%.3f", a / b; else printf "n/a (no positions)"}')"
