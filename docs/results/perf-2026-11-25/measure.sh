#!/usr/bin/env bash
# Issue #23: which E x T (CPU evaluator processes x intra-op threads) a CPU
# farm runs best at on this host. Interleaved rounds of the three settings a
# 2-core host allows; each a `zerofarm bench` of the bound, the machine bound
# and the default farm. Usage: measure.sh BUILD_DIR OUT_DIR [ROUNDS]
set -euo pipefail
bin=$1/zerofarm
out=$2
rounds=${3:-3}
mkdir -p "$out"
{ echo "command: $0 $*"; echo "date: $(date -u +%FT%TZ)"; echo "commit: $(git rev-parse HEAD)"
  echo "cpu: $(lscpu | grep 'Model name' | sed 's/ *Model name: *//'), $(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "load before: $(cat /proc/loadavg)"; } > "$out/machine.txt"
for r in $(seq "$rounds"); do
  for s in "1 1" "1 2" "2 1"; do
    set -- $s
    echo "round $r: --cpu-evaluators $1 --eval-threads $2 (load $(cat /proc/loadavg))" | tee -a "$out/machine.txt"
    "$bin" bench --parts bound,machine,farm --runs 1 --farm-seconds 12 --bound-batches 16,32,64,128 \
      --cpu-evaluators "$1" --eval-threads "$2" > "$out/e$1-t$2-round$r.txt" 2> "$out/e$1-t$2-round$r.err" || true
  done
done
echo "load after: $(cat /proc/loadavg)" >> "$out/machine.txt"
