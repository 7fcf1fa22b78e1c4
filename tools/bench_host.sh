#!/usr/bin/env bash
# Per-host rates for the scale-out capacity model (docs/scale-out.md):
#   1. RUNS farms of SECONDS each (Connect Four, the defaults: workers = the
#      CPUs granted, 32 games each, 100 simulations, a 6x64 net, one CPU
#      evaluator in bf16 unless ZF_BENCH_FP32=1), each with --shard-positions
#      SHARD: positions/s and leaf evals/s (the host's summary line), bytes
#      per position on disk (its shard files), shards/s and bytes/s into the
#      run directory;
#   2. the Python reader (tools/zf_shards.py load_run, what a trainer calls)
#      on a run of many small fast games: positions/s and MB/s read.
# Prints one line per run and min / median / max. Usage:
#   tools/bench_host.sh [RUNS=3] [SECONDS=60] [SHARD=16384]
# ZF_BENCH_READER_ONLY=1 skips part 1 (the reader's run lasts SECONDS then).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
secs=${2:-60}
shard=${3:-16384}
zf=${ZEROFARM:-build/zerofarm}
python=/usr/bin/python3
tmp=$(mktemp -d /tmp/zf-bench-host.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prec=--bf16
[ "${ZF_BENCH_FP32:-0}" = 1 ] && prec=

stats() {  # min / median / max of the numbers on stdin
  sort -g | awk '{a[NR] = $1} END {printf "%g / %g / %g", a[1], a[int((NR + 1) / 2)], a[NR]}'
}

reader_secs=20
if [ "${ZF_BENCH_READER_ONLY:-0}" = 1 ]; then
  reader_secs=$secs
else
echo "== farm: connect4, defaults $prec, $secs s, --shard-positions $shard, $runs runs ($(nproc) CPUs)"
: > "$tmp/farm.txt"
for i in $(seq 1 "$runs"); do
  out=$("$zf" run --game connect4 --gpus 0 $prec --duration "$secs" --shard-positions "$shard" \
    --out "$tmp/run$i" --host-id bench --no-status 2>/dev/null)
  echo "$out" | "$python" -c '
import os, re, sys
sys.path.insert(0, "tools")
import zf_shards
secs, shard, host_dir = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = sys.stdin.read()
pps = float(re.search(r"([0-9.]+) positions/s", s).group(1))
eps = float(re.search(r"([0-9.]+) leaf evals/s", s).group(1))
paths = zf_shards.iter_shards(host_dir)
pos = sum(int(zf_shards.read_meta(p)["positions"]) for p in paths)
size = sum(os.path.getsize(p) for p in paths)
bpp = size / pos if pos else 0
print(f"{pps:.1f} {bpp:.1f} {pps / shard:.6f} {pps * bpp:.0f} {eps:.0f}")
' "$secs" "$shard" "$tmp/run$i/shards/bench" | tee -a "$tmp/farm.txt" |
    awk '{printf "  run: %s positions/s, %s leaf evals/s, %s bytes/position (on disk), %s shards/s, %s bytes/s\n", $1, $5, $2, $3, $4}'
done
echo "  positions/s       $(cut -d' ' -f1 "$tmp/farm.txt" | stats)"
echo "  leaf evals/s      $(cut -d' ' -f5 "$tmp/farm.txt" | stats)"
echo "  bytes/position    $(cut -d' ' -f2 "$tmp/farm.txt" | stats)"
echo "  shards/s          $(cut -d' ' -f3 "$tmp/farm.txt" | stats)"
echo "  bytes/s written   $(cut -d' ' -f4 "$tmp/farm.txt" | stats)"
fi

echo "== reader: tools/zf_shards.py load_run on a run of fast games, $runs runs"
"$zf" run --game connect4 --gpus 0 --simulations 4 --blocks 1 --filters 8 --duration "$reader_secs" \
  --shard-positions "$shard" --out "$tmp/read" --host-id bench --no-status > /dev/null 2>&1
: > "$tmp/read.txt"
for i in $(seq 1 "$runs"); do
  "$python" - "$tmp/read" <<'EOF' | tee -a "$tmp/read.txt" | awk '{printf "  run: %s positions/s, %s MB/s (on disk), %s positions in %s shards\n", $1, $2, $3, $4}'
import os, sys, time
sys.path.insert(0, "tools")
import zf_shards
run = sys.argv[1]
paths = zf_shards.iter_shards(run)
t = time.perf_counter()
data = zf_shards.load_run(run, fields=zf_shards.TRAINING_FIELDS)
dt = time.perf_counter() - t
n = data["meta"]["positions"]
size = sum(os.path.getsize(p) for p in paths)
print(f"{n / dt:.0f} {size / dt / 1e6:.1f} {n} {len(paths)}")
EOF
done
echo "  positions/s       $(cut -d' ' -f1 "$tmp/read.txt" | stats)"
echo "  MB/s              $(cut -d' ' -f2 "$tmp/read.txt" | stats)"
