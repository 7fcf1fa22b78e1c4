#!/usr/bin/env bash
# The evaluator alone with and without eval::KeepFreedMemory (glibc's malloc
# keeping freed memory), interleaved, with the page faults of each run:
#   tools/bench_allocator.sh [OUTDIR] [ROUNDS]
# "glibc defaults" sets GLIBC_TUNABLES=glibc.malloc.check=0, which changes
# nothing in glibc but makes KeepFreedMemory leave malloc alone (a user's
# malloc tunables win). Writes OUTDIR/allocator.txt (one line per run).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/allocator-$(date -u +%F)}
rounds=${2:-3}
mkdir -p "$out"
log="$out/allocator.txt"
{
  echo "# $(date -u +%FT%TZ) $(uname -n) $(nproc) cores, commit $(git rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  for r in $(seq "$rounds"); do
    for precision in fp32 bf16; do
      for mode in kept defaults; do
        tunables=""
        [ "$mode" = defaults ] && tunables=glibc.malloc.check=0
        line=$(GLIBC_TUNABLES=$tunables perf stat -x, -e page-faults -- build/zerofarm-torch bench --parts bound \
                 --runs 1 --bound-batches 32,64,256 --bound-seconds 2 --precision "$precision" --blocks 6 \
                 --filters 64 2>&1 | grep -E '"bench":"bound"|page-faults' |
                 sed -E 's/.*"batch":([0-9]+),"evals_per_s":([0-9.]+).*/batch\1=\2/; s/^([0-9]+),,page-faults.*/page_faults=\1/' |
                 tr '\n' ' ')
        echo "round=$r precision=$precision malloc=$mode $line"
      done
    done
  done
  echo "# end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$log"
