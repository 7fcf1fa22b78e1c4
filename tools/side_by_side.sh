#!/usr/bin/env bash
# zerofarm beside OpenSpiel's C++ AlphaZero (LibTorch) on this machine,
# interleaved, Connect Four, 6x64 resnet, 100 simulations (issue #23 point 3).
# Each round runs, one after the other and alone on the machine:
#   openspiel  its best setting: 2 actors, no evaluator thread, OPENBLAS_NUM_THREADS=1
#              (../shared/peer-bench/run-openspiel.sh; build it first with
#              MIRROR=DIR ../shared/peer-bench/build-openspiel.sh)
#   openspiel-malloc  the same with glibc's malloc keeping freed memory
#              (GLIBC_TUNABLES, the settings eval::KeepFreedMemory gives
#              zerofarm's evaluators; docs/benchmarks.md "The allocator"), so
#              that zerofarm is not compared with a peer missing a setting
#              anyone can give it. Ratios are against the better of the two.
#   zerofarm   defaults (what the README's command runs)
#   zerofarm   the same with --precision fp32
# Positions/s are STEADY STATE for both: OpenSpiel's from its logs' own
# timestamps over [warm-up, duration]; zerofarm's from its metrics.csv
# (positions of finished games, one row a second) over the same window. The
# whole-run figure for zerofarm (positions in renamed shards / duration, which
# counts start-up and drops the games in flight at the stop) is printed beside it.
#
#   tools/side_by_side.sh [--rounds N] [--duration S] [--warmup S] [--results DIR]
#                         [--zerofarm BIN] [--peer-bench DIR] [--only openspiel|zerofarm]
#                         [--setting LABEL=ARGS ...]
#
# --setting replaces zerofarm's two settings (defaults, fp32) with the ones
# given, in order, each LABEL run with `zerofarm run ... ARGS` (ARGS split on
# spaces): e.g. --only zerofarm --setting k32="--games-per-worker 32"
# --setting k128="--games-per-worker 128" compares two defaults interleaved.
#
# Writes DIR/side-by-side.jsonl (one JSON line a run, plus machine and load
# lines) and DIR/summary.txt (medians and ratios). Defaults: 1 round, 300 s,
# 60 s warm-up, docs/results/side-by-side-YYYY-MM-DD. Needs python3.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
rounds=1 dur=300 warmup=60 results="" zf=build/zerofarm peer=../shared/peer-bench only=""
settings=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --duration) dur=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --results) results=$2; shift ;;
    --zerofarm) zf=$2; shift ;;
    --peer-bench) peer=$2; shift ;;
    --only) only=$2; shift ;;
    --setting) [[ $2 == *=* ]] || { echo "side_by_side: --setting needs LABEL=ARGS" >&2; exit 2; }
      settings+=("$2"); shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "side_by_side: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$warmup" -lt "$dur" ] || { echo "side_by_side: --warmup must be shorter than --duration" >&2; exit 2; }
[ -x "$zf" ] || { echo "side_by_side: no zerofarm binary at $zf (build first)" >&2; exit 2; }
results=${results:-docs/results/side-by-side-$(date -u +%F)}
mkdir -p "$results" || exit 2
jsonl=$results/side-by-side.jsonl

meta() {  # one JSON line: what, when, where, how loaded
  python3 -c 'import json,sys,os; print(json.dumps({"event": sys.argv[1], "date": sys.argv[2],
    "commit": sys.argv[3], "machine": sys.argv[4], "cores": os.cpu_count(), "loadavg": open("/proc/loadavg").read().split()[:3],
    "command": sys.argv[5]}))' "$1" "$(date -u +%FT%TZ)" "$(git rev-parse --short HEAD)$(git status --porcelain -uno | grep -q . && echo '+changes')" \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" "$0 --rounds $rounds --duration $dur --warmup $warmup${settings[*]:+ settings: ${settings[*]}}"
}

openspiel() {  # round system tunables
  GLIBC_TUNABLES=$3 OPENBLAS_NUM_THREADS=1 RUNS=1 WARMUP=$warmup WINDOW=$((dur - warmup)) EVALUATORS=0 \
    bash "$peer/run-openspiel.sh" 2>/dev/null | grep positions_per_s |
    python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); d.update(system=sys.argv[2],
      setting="2 actors, no evaluator, OPENBLAS_NUM_THREADS=1" + (", GLIBC_TUNABLES=" + sys.argv[3] if sys.argv[3] else ""),
      round=int(sys.argv[1])); print(json.dumps(d))' "$1" "$2" "$3"
}
malloc_kept=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824

zerofarm() {  # round label extra-args...
  local round=$1 label=$2 out
  shift 2
  out=$(mktemp -d /tmp/zf-sbs.XXXXXX)
  local t0=$SECONDS
  "$zf" run --game connect4 --simulations 100 --blocks 6 --filters 64 --duration "$dur" --out "$out/run" \
    "$@" >"$out/stdout" 2>"$out/stderr"
  local rc=$? wall=$((SECONDS - t0))
  python3 - "$out" "$round" "$label" "$rc" "$wall" "$dur" "$warmup" "$*" <<'PY'
import csv, glob, json, re, sys
out, rnd, label, rc, wall, dur, warm, extra = sys.argv[1:]
dur, warm = float(dur), float(warm)
rows = []
for path in glob.glob(out + "/run/shards/*/metrics.csv"):
    with open(path) as f:
        rows += [r for r in csv.DictReader(f)]
rows.sort(key=lambda r: float(r["time_s"]))
def at(t):  # the first row at or after t
    return next((r for r in rows if float(r["time_s"]) >= t), rows[-1] if rows else None)
a, b = at(warm), (rows[-1] if rows else None)
steady = evals = None
if a and b and float(b["time_s"]) > float(a["time_s"]):
    span = float(b["time_s"]) - float(a["time_s"])
    steady = (int(b["positions_total"]) - int(a["positions_total"])) / span
    evals = (int(b["leaf_evals_total"]) - int(a["leaf_evals_total"])) / span
written = 0
for path in glob.glob(out + "/run/shards/*/metrics.prom"):
    m = re.search(r"^zerofarm_positions_written_total (\d+)", open(path).read(), re.M)
    if m: written += int(m.group(1))
lookups = hits = 0
for path in glob.glob(out + "/run/shards/*/metrics.prom"):
    t = open(path).read()
    m1 = re.search(r"^zerofarm_eval_cache_lookups_total (\d+)", t, re.M)
    m2 = re.search(r"^zerofarm_eval_cache_hits_total (\d+)", t, re.M)
    if m1 and m2: lookups += int(m1.group(1)); hits += int(m2.group(1))
summary = open(out + "/stdout").read().strip().splitlines()
print(json.dumps({"system": "zerofarm", "setting": label, "round": int(rnd), "extra_args": extra,
    "exit": int(rc), "wall_s": int(wall), "duration_s": dur, "warmup_s": warm,
    "positions_per_s": steady, "leaf_evals_per_s": evals,
    "evals_per_position": (evals / steady) if steady else None,
    "whole_run_positions": written, "whole_run_positions_per_s": written / dur,
    "cache_hit_ratio": (hits / lookups) if lookups else None,
    "summary": summary[-3:] if summary else []}))
PY
  rm -rf "$out"
}

meta start | tee -a "$jsonl"
for r in $(seq 1 "$rounds"); do
  if [ "$only" != zerofarm ]; then
    openspiel "$r" openspiel "" | tee -a "$jsonl"
    openspiel "$r" openspiel-malloc "$malloc_kept" | tee -a "$jsonl"
  fi
  if [ "$only" != openspiel ] && [ ${#settings[@]} -eq 0 ]; then
    zerofarm "$r" "defaults" | tee -a "$jsonl"
    zerofarm "$r" "fp32" --precision fp32 | tee -a "$jsonl"
  elif [ "$only" != openspiel ]; then
    for setting in "${settings[@]}"; do
      # shellcheck disable=SC2086  # ARGS is split on spaces on purpose
      zerofarm "$r" "${setting%%=*}" ${setting#*=} | tee -a "$jsonl"
    done
  fi
  meta "round $r done" | tee -a "$jsonl"
done
labels=$(printf '%s\n' "${settings[@]%%=*}")
python3 - "$jsonl" "$labels" <<'PY' | tee "$results/summary.txt"
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if '"system"' in l]
ours = sys.argv[2].split() or ["defaults", "fp32"]
med = {}
for key in ["openspiel", "openspiel-malloc"] + ours:
    xs = [r["positions_per_s"] for r in runs
          if (r["system"] == key or (r["system"] == "zerofarm" and r.get("setting") == key)) and r.get("positions_per_s")]
    med[key] = statistics.median(xs) if xs else None
    print(f"{key:16s} steady-state positions/s: {xs} median {med[key]}")
peers = [k for k in ("openspiel", "openspiel-malloc") if med.get(k)]
if peers:
    best = max(peers, key=lambda k: med[k])
    print(f"OpenSpiel's best setting here: {best}")
    for key in ours:
        if med.get(key):
            print(f"ratio {key} / {best}: {med[key] / med[best]:.2f}")
for key in ours[1:]:
    if med.get(key) and med.get(ours[0]):
        print(f"ratio {key} / {ours[0]}: {med[key] / med[ours[0]]:.2f}")
PY
