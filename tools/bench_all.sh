#!/usr/bin/env bash
# Reruns every measured table of docs/benchmarks.md, and the tables of
# docs/search.md and docs/learning.md that take minutes (not hours), and keeps
# the raw output under docs/results/ (docs/results/README.md lists them):
#   tools/bench_all.sh [OUT_DIR]     (default docs/results/bench-YYYY-MM-DD-HHMM)
#   ZF_BENCH_STEPS="bench tune" tools/bench_all.sh     runs only the steps named
# Steps, in order (about 45 minutes on 2 quiet cores, an estimate; an hour on 2 loaded ones):
#   bench           zerofarm bench --runs 3          bound, farm, wait, scaling, hand-off, writer
#   bench-fp32      zerofarm bench --runs 3 --precision fp32 --parts bound,farm
#   bench-threads2  zerofarm bench --runs 3 --eval-threads 2 --parts bound   (a second intra-op thread)
#   tune            zerofarm tune                     the sweep, tune/tune.csv and tune/tune.png
#   bench-farm      tools/bench_farm.sh 3 30          farm against in-process self-play
#   bench-host      tools/bench_host.sh 3 60 1024     per-host rates for docs/scale-out.md
#   reader-16384    tools/bench_host.sh 3 20 16384 (reader only)   the reader on big shards
#   search-evals    zerofarm selfplay, fixed seeds    leaf evals per position per search option
#   solver-cost     zerofarm selfplay --games 512     the MCTS-solver on and off, seeds 1-3
#   trainer-bf16    zerofarm train --bf16 or not      the trainer's samples/s, fp32 and bf16 alternated twice
#   learn-target    zerofarm eval --pons              docs/learning.md's target table: the shipped
#                                                     net and random nets, move error at 100-400 simulations
#   learn-arena     zerofarm eval --against           the shipped net against the one shipped before it
#   testset-stats   python over data/connect4/*.rated  what Pons's test sets ask (docs/learning.md)
#   weights-sizes   tools/zf_weights_torch.py init    weights file sizes, 6x64 and 20x256 (docs/scale-out.md)
#   profiles        perf stat / perf record           the hand-off's context switches, the farm's and
#                                                     the writer's CPU by process and library
#   chaos           zf_fault_test "[chaos]~[.long]"   the CI chaos test's own report (docs/reliability.md)
# Not by default (name them in ZF_BENCH_STEPS):
#   chaos-long      zf_fault_test "[chaos][.long]"    100 SIGKILLs and SIGSTOPs in 10 minutes (docs/reliability.md)
# Every step writes STEP.log: a header (command, git commit, machine, date,
# load average before), the command's stdout, and a footer (load average
# after, date); `zerofarm bench` steps also write STEP.jsonl (a "meta" line,
# the bench's own JSON lines, a "meta_after" line); stderr goes to STEP.err.
# The numbers are only as good as the machine was quiet: check the load
# averages in the logs, and compare settings as ratios within one step.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ZF_BINARY:-build/zerofarm}
out=${1:-docs/results/bench-$(date -u +%Y-%m-%d-%H%M)}
steps=${ZF_BENCH_STEPS:-bench bench-fp32 bench-threads2 tune bench-farm bench-host reader-16384 search-evals solver-cost trainer-bf16 learn-target learn-arena testset-stats weights-sizes profiles chaos}
mkdir -p "$out"
commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
git diff --quiet HEAD -- src include tools CMakeLists.txt 2>/dev/null || commit="$commit (with uncommitted changes)"
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
cores="$(nproc)"
mem="$(free -g | awk '/^Mem:/ {print $2}') GiB"
flags="$(grep -m1 -o 'avx512_bf16\|amx_bf16' /proc/cpuinfo | sort -u | tr '\n' ' ')"

header() {  # step, command...
  local step=$1
  shift
  echo "# zerofarm results: $step"
  echo "# command: $*"
  echo "# commit: $commit"
  echo "# machine: $cpu, $cores cores, $mem, bf16 flags: ${flags:-none}; $(uname -r)"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# loadavg before: $(cat /proc/loadavg)"
}
footer() {
  echo "# loadavg after: $(cat /proc/loadavg)"
  echo "# date end: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
}
meta_json() {  # key (meta | meta_after), step
  printf '{"%s":"%s","commit":"%s","cpu":"%s","cores":%s,"memory":"%s","date":"%s","loadavg":"%s"}\n' \
    "$1" "$2" "$commit" "$cpu" "$cores" "$mem" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(cat /proc/loadavg)"
}
failed=()  # steps whose command exited non-zero: the script then exits 1
run() {  # step, command...: STEP.log (+ STEP.jsonl for JSON output), STEP.err
  local step=$1
  shift
  echo "== $step: $*" | tee -a "$out/commands.txt"
  meta_json meta "$step" >"$out/$step.jsonl"
  { header "$step" "$@"; } >"$out/$step.log"
  local rc=0
  "$@" >>"$out/$step.log" 2>"$out/$step.err" || rc=$?
  footer >>"$out/$step.log"
  [ "$rc" = 0 ] || { echo "# exit code: $rc" | tee -a "$out/$step.log"; failed+=("$step"); }
  if grep -q '^{' "$out/$step.log"; then
    grep '^{' "$out/$step.log" >>"$out/$step.jsonl"
    meta_json meta_after "$step" >>"$out/$step.jsonl"
  else
    rm -f "$out/$step.jsonl"
  fi
  [ -s "$out/$step.err" ] || rm -f "$out/$step.err"
  grep -v '^{' "$out/$step.log" | tail -45
}
wants() { [[ " $steps " == *" $1 "* ]]; }
x() {  # echoes a command into the log, then runs it
  echo "\$ $*"
  "$@"
}

# In-process self-play with fixed seeds: leaf evals per position do not depend on the load.
search_evals() {
  local common=(--game connect4 --games 64 --concurrent 32 --simulations 64 --blocks 2 --filters 32 --seed 7)
  local -a settings=("" "--no-tree-reuse" "--no-solver" "--search gumbel --gumbel-m 16"
    "--playout-cap-fraction 0.75 --fast-simulations 16"
    "--resign-threshold -0.05 --resign-moves 3 --resign-playthrough 0.1")
  for s in "${settings[@]}"; do
    echo "-- setting: ${s:-(the defaults: PUCT, tree reuse, solver on)}"
    # shellcheck disable=SC2086
    x "$bin" selfplay "${common[@]}" $s
  done
}
# The solver's cost: the shipped net, seeds 1-3 interleaved, solver on and off.
solver_cost() {
  local common=(--game connect4 --games 512 --concurrent 64 --simulations 64 --weights data/connect4-4x32.h5
    --value-discount 0.98 --bf16)
  for seed in 1 2 3; do
    for s in "" "--no-solver"; do
      echo "-- seed $seed ${s:-solver on}"
      # shellcheck disable=SC2086
      x "$bin" selfplay "${common[@]}" --seed "$seed" $s
    done
  done
}

# The trainer's forward pass in fp32 and bf16 on one farm's shards (fresh
# models/ and train/ for every run), the two alternated, twice each.
trainer_bf16() {
  local run
  run=$(mktemp -d /tmp/zf-bench-train-XXXXXX)
  x "$bin" run --out "$run" --duration 40 --no-status --workers 2 --gpus 0
  for r in 1 2; do
    for p in "" --bf16; do
      rm -rf "$run/models" "$run/train"
      # shellcheck disable=SC2086
      x "$bin" train --run "$run" --blocks 4 --filters 32 --steps 300 --replay 0 --min-positions 100 \
        --checkpoint-steps 1000 --no-status $p
    done
  done
  rm -rf "$run"
}
# docs/learning.md, "The target": move error on Pons's Test_L2_R1 (and the random
# net's row of the curve on Test_L1_R1), the shipped net against random nets.
learn_target() {
  local pons=${ZF_REFERENCE_DIR:-data/reference}/connect4
  local l2=(--pons "$pons/Test_L2_R1") both=(--pons "$pons/Test_L2_R1" --pons "$pons/Test_L1_R1")
  local shipped=(--weights data/connect4-4x32.h5 --value-discount 0.98)
  local random=(--weights random --blocks 4 --filters 32 --value-discount 0.98)
  for n in 200 400; do x "$bin" eval "${shipped[@]}" "${l2[@]}" --simulations "$n"; done
  for n in 100 200 400; do x "$bin" eval "${shipped[@]}" "${l2[@]}" --simulations "$n" --no-solver; done
  for s in "" --no-solver; do
    # shellcheck disable=SC2086
    x "$bin" eval "${random[@]}" --seed 1 "${both[@]}" --simulations 100 $s
    # shellcheck disable=SC2086
    x "$bin" eval "${random[@]}" --seed 1 "${l2[@]}" --simulations 400 $s
  done
  for seed in 1 2 3; do x "$bin" eval "${random[@]}" --seed "$seed" "${l2[@]}" --simulations 200; done
}
# docs/learning.md: the shipped net (the recipe's third whole run's checkpoint mean,
# recipe-c4-lw500-base) against the one shipped before it (the first whole run's,
# recipe-c4-open8: data/connect4-4x32.h5 at commit 54fbf25, taken from git).
learn_arena() {
  local old
  old=$(mktemp /tmp/zf-open8-XXXXXX.h5)
  git show 54fbf25:data/connect4-4x32.h5 >"$old"
  x "$bin" eval --weights data/connect4-4x32.h5 --against "$old" --games 200 --simulations 64 --seed 3 \
    --value-discount 0.98
  rm -f "$old"
}

# Pons's test sets as rated by the exact solver (data/connect4/*.rated: `moves
# score verdicts`, a verdict per column: 2 best, 1 keeps the outcome, 0 gives it
# away): outcomes, plies to the end under optimal play (the winning move
# counted), and the move error of a player that keeps the outcome but picks
# uniformly among the moves that do.
testset_stats() {
  x /usr/bin/python3 - data/connect4/Test_L2_R1.rated data/connect4/Test_L1_R1.rated <<'PY'
import statistics, sys
for path in sys.argv[1:]:
    won = lost = drawn = worse = 0
    plies, uniform = [], 0.0
    for line in open(path):
        moves, score, verdicts = line.split()[:3]
        score = int(score)
        won += score > 0
        lost += score < 0
        drawn += score == 0
        worse += "1" in verdicts
        if score:
            plies.append(43 - 2 * abs(score) - len(moves) + 1)
        uniform += verdicts.count("1") / (verdicts.count("1") + verdicts.count("2"))
    n = won + lost + drawn
    print(f"{path}: {n} positions, {won} won, {lost} lost, {drawn} drawn for the side to move; "
          f"decided ones end {min(plies)}-{max(plies)} plies later (median {statistics.median(plies):g}); "
          f"{worse} have an outcome-keeping move of a worse score; uniform outcome-keeping player's "
          f"move error {100 * uniform / n:.1f} %")
PY
}
# Weights file sizes of a 6x64 and a 20x256 Connect Four net (PyTorch's init).
weights_sizes() {
  local d
  d=$(mktemp -d /tmp/zf-weights-XXXXXX)
  for net in "6 64" "20 256"; do
    set -- $net
    x /usr/bin/python3 tools/zf_weights_torch.py init --game connect4 --blocks "$1" --filters "$2" "$d/w.h5"
    echo "connect4 $1 blocks x $2 filters: $(stat -c %s "$d/w.h5") bytes"
  done
  rm -rf "$d"
}
# What bounds the hand-off, the farm and the writer (perf; skipped without it).
profiles() {
  command -v perf >/dev/null || { echo "perf not found: no profiles"; return 0; }
  local d
  d=$(mktemp -d /tmp/zf-perf-XXXXXX)
  x perf stat -e context-switches,task-clock -- "$bin" bench --runs 1 --parts handoff --handoff-batches 64 2>&1
  x perf record -q -F 499 -g -o "$d/farm.data" -- "$bin" run --game connect4 --workers 2 --gpus 0 \
    --simulations 100 --blocks 6 --filters 64 --duration 20 --no-status --out "$d/farm" 2>&1
  x perf report -i "$d/farm.data" --stdio --no-children -g none --percent-limit 0.5 --sort comm,dso >"$d/farm.txt" 2>/dev/null
  grep -v '^#' "$d/farm.txt" | grep '%' | head -25
  x perf record -q -g -o "$d/writer.data" -- "$bin" bench --parts writer --runs 1 --writer-positions 200000 >/dev/null 2>&1
  x perf report -i "$d/writer.data" --stdio --no-children -g none --percent-limit 0.5 --sort dso >"$d/writer.txt" 2>/dev/null
  grep -v '^#' "$d/writer.txt" | grep '%' | head -10
  rm -rf "$d"
}
chaos() {
  x "${ZF_BUILD_DIR:-build}/tests/zf_fault_test" -w NoTests "[chaos]~[.long]" 2>&1  # -w NoTests: a rename fails here
}
chaos_long() {
  x "${ZF_BUILD_DIR:-build}/tests/zf_fault_test" -w NoTests "[chaos][.long]" 2>&1
}

{
  echo "commit: $commit"
  echo "machine: $cpu, $cores cores, $mem, bf16 flags: ${flags:-none}"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "loadavg before: $(cat /proc/loadavg)"
  echo "steps: $steps"
} | tee -a "$out/machine.txt"
export ZF_BINARY=$bin ZEROFARM=$bin
wants bench && run bench "$bin" bench --runs 3
wants bench-fp32 && run bench-fp32 "$bin" bench --runs 3 --precision fp32 --parts bound,farm
wants bench-threads2 && run bench-threads2 "$bin" bench --runs 3 --eval-threads 2 --parts bound \
  --bound-batches 1,8,16,32,64,128,256
wants tune && run tune "$bin" tune --out "$out/tune"
wants bench-farm && run bench-farm tools/bench_farm.sh 3 30
wants bench-host && run bench-host tools/bench_host.sh 3 60 1024
wants reader-16384 && ZF_BENCH_READER_ONLY=1 run reader-16384 tools/bench_host.sh 3 20 16384
wants search-evals && run search-evals search_evals
wants solver-cost && run solver-cost solver_cost
wants trainer-bf16 && run trainer-bf16 trainer_bf16
wants learn-target && run learn-target learn_target
wants learn-arena && run learn-arena learn_arena
wants testset-stats && run testset-stats testset_stats
wants weights-sizes && run weights-sizes weights_sizes
wants profiles && run profiles profiles
wants chaos && run chaos chaos
wants chaos-long && run chaos-long chaos_long
echo "loadavg after: $(cat /proc/loadavg)" | tee -a "$out/machine.txt"
echo "date end: $(date -u +%Y-%m-%dT%H:%M:%SZ)" | tee -a "$out/machine.txt"
echo "results in $out"
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench_all: failed steps: ${failed[*]} (their logs end with their exit codes)" >&2
  exit 1
fi
