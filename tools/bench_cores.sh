#!/usr/bin/env bash
# Scaling with cores in one command (issue #23): `zerofarm bench` (the bound,
# the machine bound and the default farm) pinned with taskset to the first N
# CPUs for each N, so the farm resolves its workers and E x T evaluators as on
# an N-core host (CpusGranted reads the affinity mask). About 1 minute per N.
#
#   tools/bench_cores.sh [-b BUILD_DIR] [-c 1,2,4,8,16] [-o OUT_DIR] [-- BENCH_ARGS...]
#
# Writes OUT_DIR/cores-N.txt (each bench's raw output) and prints one line per
# N: cores, evaluators x threads, machine bound, farm leaf evals/s, machine
# efficiency, positions/s (after warm-up and whole run).
set -euo pipefail
build=build
cores=1,2,4,8,16
out=bench-cores-$(date -u +%Y%m%d-%H%M%S)
while getopts "b:c:o:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    c) cores=$OPTARG ;;
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-b BUILD_DIR] [-c 1,2,4,8,16] [-o OUT_DIR] [-- BENCH_ARGS...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
bin=$build/zerofarm
[ -x "$bin" ] || { echo "bench_cores.sh: no zerofarm binary in $build" >&2; exit 2; }
have=$(nproc --all)
mkdir -p "$out"
{ echo "command: $0 $*"; echo "date: $(date -u +%FT%TZ)"; echo "host: $(uname -n), $have CPUs"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"; echo "load: $(cat /proc/loadavg)"; } > "$out/README.txt"
IFS=, read -r -a list <<< "$cores"
for n in "${list[@]}"; do
  if [ "$n" -gt "$have" ]; then echo "cores $n: skipped (this host has $have CPUs)"; continue; fi
  taskset -c "0-$((n - 1))" "$bin" bench --parts bound,machine,farm --runs 1 --farm-seconds 20 \
    --bound-batches 16,32,64,128,256 "$@" > "$out/cores-$n.txt" 2> "$out/cores-$n.err" || {
    echo "cores $n: bench failed, see $out/cores-$n.err"; continue; }
  python3 - "$n" "$out/cores-$n.txt" <<'PY'
import json, sys
n, path = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(path) if l.startswith("{")]
mb = next((r for r in rows if r["bench"] == "machine_bound"), {})
f = next((r for r in rows if r["bench"] == "farm"), {})
fmt = lambda v, d=0: "-" if v is None else f"{v:.{d}f}"
print(f"cores {n}: {f.get('cpu_evaluators')} evaluator(s) x {f.get('eval_threads')} thread(s), "
      f"{f.get('workers')} workers; machine bound {fmt(mb.get('evals_per_s'))} evals/s; farm "
      f"{fmt(f.get('evals_per_s'))} evals/s, machine efficiency {fmt(f.get('machine_efficiency'), 2)}; "
      f"positions/s after warm-up {fmt(f.get('positions_per_s_after_warmup'), 1)}, whole run "
      f"{fmt(f.get('positions_per_s_whole_run'), 1)}")
PY
done | tee "$out/summary.txt"
