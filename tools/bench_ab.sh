#!/usr/bin/env bash
# Two builds side by side, interleaved: `zerofarm bench` of build A, then of
# build B, ROUNDS times, the same bench arguments for both (a refactoring's
# "no slowdown" check; the load changes between runs, so compare the medians
# of the ratios of adjacent runs, not absolute figures).
#   tools/bench_ab.sh A_BUILD_DIR B_BUILD_DIR OUTDIR ROUNDS [BENCH ARGS...]
# Writes OUTDIR/{a,b}-ROUND.jsonl (the bench's JSON lines) and OUTDIR/summary.txt.
#   tools/bench_ab.sh --summarize OUTDIR ROUNDS   only (re)makes the table from the JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '6,8s/^# //p' "$0" >&2; exit 2; }
summarize_only=0
if [ "${1:-}" = --summarize ]; then [ $# -eq 3 ] || usage; summarize_only=1; set -- - - "$2" "$3"; fi
[ $# -ge 4 ] || usage
a=$1 b=$2 out=$3 rounds=$4
shift 4
mkdir -p "$out"
if [ "$summarize_only" = 1 ]; then sed -i '/^figure /,$d' "$out/summary.txt"; else
{
  echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# A: $a ($(git -C "$(dirname "$a")" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "# B: $b ($(git rev-parse --short HEAD))"
  echo "# bench args: $*"
} > "$out/summary.txt"
for r in $(seq "$rounds"); do
  for side in a b; do
    dir=$a
    [ "$side" = b ] && dir=$b
    # A failed bench stops the comparison (its stderr in OUTDIR/SIDE-ROUND.err), not a silent gap.
    rc=0
    "$dir/zerofarm" bench "$@" 2>"$out/$side-$r.err" | grep '^{' > "$out/$side-$r.jsonl" || rc=$?
    [ "$rc" = 0 ] || { echo "bench_ab: $dir/zerofarm bench failed (round $r, side $side): $out/$side-$r.err" >&2; exit 1; }
    rm -f "$out/$side-$r.err"
  done
done
echo "# end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/summary.txt"
fi
/usr/bin/python3 - "$out" "$rounds" >> "$out/summary.txt" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def figures(path):
    f = {}
    for line in open(path):
        j = json.loads(line)
        kind = j.get("bench")
        if kind == "farm" and "evals_per_s" in j:
            f["farm leaf evals/s"] = j["evals_per_s"]
            for k in ("positions_per_s", "positions_per_s_after_warmup"):
                if isinstance(j.get(k), (int, float)): f["farm " + k.replace("_", " ")] = j[k]
        elif kind == "bound" and "evals_per_s" in j:
            f["bound batch %4d evals/s" % j["batch"]] = j["evals_per_s"]
        elif kind == "handoff" and "ns_per_leaf" in j:
            f["handoff %s batch %s ns/leaf" % (j.get("transport"), j.get("batch"))] = j["ns_per_leaf"]
        elif kind == "writer" and "positions_per_s" in j:
            f["writer deflate %s threads %s positions/s" % (j.get("deflate"), j.get("threads"))] = j["positions_per_s"]
    return f
rows = {}
for r in range(1, rounds + 1):
    fa, fb = figures(f"{out}/a-{r}.jsonl"), figures(f"{out}/b-{r}.jsonl")
    for k in fa.keys() & fb.keys():
        rows.setdefault(k, []).append((fa[k], fb[k]))
print("%-48s %14s %14s %10s" % ("figure", "A median", "B median", "B/A (median of rounds)"))
for k in sorted(rows):
    a = statistics.median(x for x, _ in rows[k]); b = statistics.median(y for _, y in rows[k])
    ratio = statistics.median(y / x for x, y in rows[k] if x)
    print("%-48s %14.1f %14.1f %10.3f" % (k, a, b, ratio))
PY
cat "$out/summary.txt"
