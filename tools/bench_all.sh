#!/usr/bin/env bash
# Reruns every benchmark of docs/benchmarks.md and keeps the output:
#   tools/bench_all.sh [OUT_DIR]        (default bench-results/DATE)
# Run it alone on the machine (check `uptime` first): the numbers are only
# meaningful on a quiet machine. Takes about 25 minutes on 2 cores.
#   1. zerofarm bench --runs 3                  the default precision (auto)
#   2. zerofarm bench --runs 3 --precision fp32 --parts bound,farm
#   3. zerofarm bench --runs 3 --eval-threads 2 --parts bound   (a second intra-op thread)
#   4. zerofarm tune                            the sweep, its table and tune.png
#   5. tools/bench_farm.sh 3 30                 farm against in-process self-play
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ZF_BINARY:-build/zerofarm}
out=${1:-bench-results/$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$out"
{
  echo "date: $(date -u)"
  echo "host: $(hostname)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) ($(nproc) cores)"
  echo "flags: $(grep -m1 -o 'avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "uptime before: $(uptime)"
} | tee "$out/machine.txt"
run() {  # name, command...
  local name=$1
  shift
  echo "== $name: $*" | tee -a "$out/commands.txt"
  "$@" >"$out/$name.txt" 2>"$out/$name.err"
  grep -v '^{' "$out/$name.txt" | tail -40
}
run bench "$bin" bench --runs 3
run bench-fp32 "$bin" bench --runs 3 --precision fp32 --parts bound,farm
run bench-threads2 "$bin" bench --runs 3 --eval-threads 2 --parts bound
run tune "$bin" tune --out "$out/tune"
ZF_BINARY=$bin run bench-farm tools/bench_farm.sh 3 30
echo "uptime after: $(uptime)" | tee -a "$out/machine.txt"
echo "results in $out"
