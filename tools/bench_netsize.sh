#!/usr/bin/env bash
# What a net size costs the loop on this machine: for each BLOCKSxFILTERS, the
# farm's network evaluations per CPU second (the recipe's search, `zerofarm run`
# for SECONDS from random weights) made into positions at ZF_LEAVES_PER_POSITION
# evaluations each (default 11.0, what the recipe's farm spent in recipe-c4b's
# piece 14: a random network's games are not the recipe's), and the trainer's
# samples per CPU second (`zerofarm train` for STEPS steps on a copy of
# SHARDS_DIR), interleaved over ROUNDS rounds so the machine's noise hits every
# size alike. Run it alone on the machine.
#   tools/bench_netsize.sh SHARDS_DIR OUTDIR [ROUNDS [SECONDS [STEPS [SIZES...]]]]
# SHARDS_DIR: Connect Four shards (e.g. RUN/shards/HOST of any farm run). ROUNDS
# defaults to 2, SECONDS to 60, STEPS to 200, SIZES to "4x32 6x64 8x64".
# Writes OUTDIR/summary.txt: a header (machine, load, commit), a line per run,
# and per size the medians and the trainer steps that 16 CPU hours of the loop
# would buy at the trainer's cap of 4 samples per position (the loop's CPU split
# so that samples = 4 x positions: an upper bound; the farm's leaves are the
# rest). Uses build/ (ZF_BUILD to change).
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,17p "$0" >&2; exit 2; }
mkdir -p "$2"
shards=$(realpath "$1") out=$(realpath "$2")  # before the cd: the caller's relative paths
cd "$(dirname "$0")/.."
rounds=${3:-2} secs=${4:-60} steps=${5:-200}
shift $(( $# < 5 ? $# : 5 ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4x32 6x64 8x64)
build=${ZF_BUILD:-build}
leaves=${ZF_LEAVES_PER_POSITION:-11.0}  # network evaluations a position costs the recipe's farm (recipe-c4b piece 14: 11.0)
ls "$shards"/*.h5 >/dev/null 2>&1 || { echo "bench_netsize: $shards holds no .h5 shards" >&2; exit 2; }
for b in zerofarm zerofarm-torch; do
  [ -x "$build/$b" ] || { echo "bench_netsize: $build/$b not found" >&2; exit 2; }
done
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ticks() { awk '{print $16 + $17}' /proc/$$/stat; }  # CPU of this shell's waited-for children (ticks)
hz=$(getconf CLK_TCK)
# The recipe's search and trainer options, the net aside.
source tools/recipe_options.sh
search=("${recipe_search[@]}") train=("${recipe_train[@]}")
{
  echo "# $(date -u +%FT%TZ) $(uname -n), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# build: $build (commit $(git rev-parse --short HEAD)); shards: $shards ($(ls "$shards"/*.h5 | wc -l) files)"
  echo "# farm: zerofarm run ${search[*]} --blocks B --filters F --duration $secs --no-status"
  echo "# trainer: zerofarm-torch train --steps $steps --no-wait --replay 0 ${train[*]} --blocks B --filters F"
} > "$out/summary.txt"
for r in $(seq "$rounds"); do
  for size in "${sizes[@]}"; do
    blocks=${size%x*} filters=${size#*x}
    rm -rf "$work/farm"
    t0=$(ticks)
    line=$("$build/zerofarm" run "${search[@]}" --blocks "$blocks" --filters "$filters" --duration "$secs" \
           --no-status --out "$work/farm" 2>"$work/farm.err" | awk '/positions\/s/ && !n++') || true
    farm_cpu=$(awk -v t=$(( $(ticks) - t0 )) -v h="$hz" 'BEGIN{printf "%.1f", t/h}')
    wall=$(sed -n 's/.* after \([0-9.]*\) s:.*/\1/p' <<<"$line")
    rate=$(grep -oE '[0-9]+ leaf evals/s' <<<"$line" | grep -oE '^[0-9]+' || true)
    [ -n "$wall" ] && [ -n "$rate" ] ||
      { echo "bench_netsize: the $size farm printed no summary: $(tail -1 "$work/farm.err")" >&2; exit 1; }
    evals=$(awk -v w="$wall" -v r="$rate" 'BEGIN{printf "%.0f", w * r}')
    rm -rf "$work/run" && mkdir -p "$work/run/shards/h" && cp "$shards"/*.h5 "$work/run/shards/h/"
    t0=$(ticks)
    log=$("$build/zerofarm-torch" train --run "$work/run" --steps "$steps" --no-wait --replay 0 \
          --checkpoint-steps 1000000 --no-status "${train[@]}" --blocks "$blocks" --filters "$filters" 2>&1 |
          grep 'positions/s while training' || true)
    [ -n "$log" ] || { echo "bench_netsize: the $size trainer printed no summary" >&2; exit 1; }
    train_cpu=$(awk -v t=$(( $(ticks) - t0 )) -v h="$hz" 'BEGIN{printf "%.1f", t/h}')
    echo "round $r $size: farm $evals leaf evals in $farm_cpu CPU s; trainer $((steps * 256)) samples in $train_cpu CPU s ($(sed -n 's/.*(\([0-9.]*\) positions\/s while training.*/\1/p' <<<"$log") samples/s while training)" >> "$out/summary.txt"
  done
done
awk -v sizes="${sizes[*]}" -v lpp="$leaves" '
  /^round/ { s=$3; sub(":", "", s); n[s]++; p[s, n[s]] = $5 / $9 / lpp; t[s, n[s]] = $13 / $16 }
  function med(a, s, k,   i, j, v, x) { for (i = 1; i <= k; i++) v[i] = a[s, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
    return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
  END { split(sizes, z, " ")
    for (i = 1; i in z; i++) { s = z[i]; pp = med(p, s, n[s]); tt = med(t, s, n[s])
      f = tt / (tt + 4 * pp)  # the farm share of the CPU at which samples = 4 x positions
      printf "%s: median %.0f positions per farm CPU s (at %s leaf evals a position), %.0f samples per trainer CPU s; 16 CPU hours at 4 samples per position: %.0f positions, %.0f steps\n", \
        s, pp, lpp, tt, f * pp * 57600, (1 - f) * tt * 57600 / 256 } }' "$out/summary.txt" >> "$out/summary.txt"
echo "# end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/summary.txt"
cat "$out/summary.txt"
