#!/usr/bin/env bash
# One command proves the GPU path (issue #22), on a machine with a CUDA GPU,
# nvcc, CMake, ninja and a CUDA PyTorch (python3 -c 'import torch'):
#   1. machine   GPU, driver, nvcc, PyTorch, CMake, compiler, commit
#   2. prefix    (with --debs DIR, made here by tools/gpu_debs.sh on a Debian 12
#                machine) unpacks Debian 12's Boost, HDF5, cxxopts and Catch2
#                into a prefix (dpkg-deb -x; nothing is installed)
#   3. build     every target (zerofarm, zerofarm-torch, every test binary) against
#                PyTorch's LibTorch, with CUDA required (-DZF_REQUIRE_CUDA=ON), into build-gpu/
#   4. gpu tests every test tagged [gpu] (and [gpu_plan]) of every test binary (all of
#                tests/CMakeLists.txt's, each must be built), each test case in its own
#                process (one that aborts leaves the rest their run) with Catch's XML
#                reporter; tools/catch_cases.py then proves that every case the binaries
#                list ran and passed (gpu-cases.txt: the list): a skip, a crash, a timeout
#                or a case missing counts as a failure
#   5. unit      the eval and io unit tests (network, trainer, weights; CPU)
#                against this LibTorch, time-boxed
#   6. bench     zerofarm bench with the farm on the GPU, then the same farm on
#                the CPU for comparison: each with the search alone (the farm with
#                --random-evaluator), the farm's efficiency against the smaller bound,
#                and the evaluator alone by precision (part sweep)
#   7. layouts   (with --farm-layouts "K[:B:G[:FLAGS]] ...") the loop's farm, from the kept run's
#                config and newest model, with K evaluators sharing the one GPU (and, given B and G,
#                --max-batch B and --games-per-worker G; given FLAGS, those farm options, comma-
#                separated, e.g. --gpu-graphs,--precision=bf16), each for --layout-seconds, in two
#                rounds (the second in reverse order): which layout makes the most positions/s
#                (farm-layouts.log)
#   8. net sizes (with --net-sizes "BxF ...") what a net size costs on the GPU, in wall
#                seconds: for each, the recipe's farm from random weights for --layout-seconds
#                (positions/s) and the trainer alone on that farm's shards for 1000 steps
#                (positions/s while training), eager (--cuda-graph=off) and then as a CUDA graph, one after
#                the other (net-sizes.log)
#   9. loop      (with --loop MINUTES) `zerofarm loop --recipe connect4` with the
#                farm and the trainer on the GPU (issue #25 point 5), its curve
#                measured every --loop-eval-every seconds on the Pons files in
#                --loop-pons DIR (../shared does not travel to a lent machine); not run
#                when an earlier step failed, except a CUDA-graph test ([graphs]): then
#                the loop runs without that graph (--gpu-graphs left out of --loop-args
#                for the evaluator's, --train-args=--cuda-graph=off added for the
#                trainer's), as summary.txt says
# Everything goes to one results directory (summary.txt, machine.txt, build.log,
# gpu-cases.txt, gpu-tests.log, unit-tests.log, bench-gpu.txt, bench-cpu.txt, gpu-samples.csv;
# with --loop: loop.log and loop-state.tgz, which holds the run's eval/curve.csv and
# eval/stages.csv; farm-layouts.log and net-sizes.log besides). gpu-samples.csv holds
# nvidia-smi's GPU utilisation and memory every second of every step after the build
# (a "# begin: STEP" line before each), summary.txt their mean and peak per step.
# machine.txt names the exact commit: the check refuses a work tree whose tracked files
# differ from HEAD, unless --allow-local-changes (then the run is PARTIAL).
# Exit 0 when every step ran whole and passed; 1 when a step failed; 2 on a usage
# error; 3 (PARTIAL) when every step that ran passed but the check was narrowed
# (--no-gpu-tests, --no-unit, --no-bench, a --gpu-tests other than the default,
# --allow-local-changes with changes, no nvidia-smi to sample the GPU): summary.txt
# names what was left out, and only exit 0 proves the GPU path.
#
#   tools/gpu_check.sh [--debs DIR] [--deb-prefix DIR] [--results DIR] [--build DIR]
#                      [--jobs N] [--workers P] [--torch pytorch|DIR] [--no-bench] [--no-unit]
#                      [--no-gpu-tests] [--gpu-tests SPEC] [--prefix-only] [--list]
#                      [--allow-local-changes]
#                      [--loop MINUTES --loop-pons DIR [--loop-eval-every S] [--loop-args "..."]
#                       [--loop-recipe NAME|FILE]
#                       [--loop-state DIR | --loop-keep] [--loop-gpus K]]
#                      [--farm-layouts "K[:B:G[:FLAGS]] ..." --loop-state DIR [--layout-seconds S]]
#                      [--net-sizes "BxF ..." [--layout-seconds S]]
#
#   --debs DIR        .deb files to unpack (tools/gpu_debs.sh), DIR/fallback/ too
#   --deb-prefix DIR  where they are (or were already) unpacked (default /tmp/zf-gpu-prefix)
#   --results DIR     default docs/results/gpu-YYYYMMDD-HHMM
#   --workers P       bench farm workers (default: cores - 2)
#   --prefix-only     stop after the prefix step; print the CMake arguments and LD_LIBRARY_PATH
#   --list            list the [gpu] test cases of the build in --build (already built; no GPU
#                     needed), one "BINARY<TAB>NAME" a line, and their count; build or run nothing
#   --allow-local-changes  run on a work tree that differs from HEAD (machine.txt lists the
#                     changes); the run is then PARTIAL, never a PASS
#   --gpu-tests SPEC  the Catch test spec of the gpu tests step (default '[gpu],[gpu_plan]');
#                     any other makes the run PARTIAL
# (--targets is gone: it built some test binaries only, and the [gpu] step then left
# the others out without a word. The check builds every target.)
#   --loop-args "..." more options for the loop (e.g. --eval-positions 300)
#   --loop-recipe R   the loop's --recipe (default connect4; a file for a branch of a kept run,
#                     whose loop-args then need --recipe-changed)
#   --loop-state DIR  go on with the run kept in DIR (tools/learn-state.sh's layout, e.g.
#                     runs/gpu-state) when it holds one; either way the run's state is kept
#                     afterwards as RESULTS/loop-state.tgz (a lent machine keeps nothing), to
#                     be unpacked into DIR for the next session (outside git: data/ keeps no
#                     experiment states)
#   --loop-keep       go on with the run an earlier call left in /tmp/zf-gpu-loop on this same
#                     (warm) machine, shards and all, in place of starting or restoring one
#   --loop-gpus K     K evaluators on the one GPU for the loop's farm (K > 1 adds --share-gpus;
#                     default 1)
#   --farm-layouts "K[:B:G[:FLAGS]] ..."  see step 7 (e.g. "1:512:64 1:512:64:--gpu-graphs"); needs --loop-state DIR with
#                     a kept run (its config and model); --layout-seconds S each (default 30)
#   --no-gpu-tests, --no-unit, --no-bench   leave a step out (to split the check over two
#                     commands where one may run 10 minutes at most: the build is kept)
# Budget: under 15 minutes on 16 cores and one GPU (build about 5, [gpu] tests about 3,
# unit tests at most 3, bench at most 5 + 2; every step after the build is time-boxed).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
invocation="$0 $*"
debs="" prefix="" results="" build=build-gpu jobs=$(nproc) workers="" torch=${ZF_TORCH:-pytorch}
bench=1 unit=1 gpu=1 prefix_only=0 list_only=0 allow_changes=0 default_spec='[gpu],[gpu_plan]'
gpu_spec=$default_spec loop_minutes="" loop_pons="" loop_eval=300 loop_args="" loop_state="" loop_keep=0 loop_gpus=1 loop_recipe=connect4 layouts="" layout_seconds=30 net_sizes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --debs) debs=$2; shift ;;
    --deb-prefix) prefix=$2; shift ;;
    --results) results=$2; shift ;;
    --build) build=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --workers) workers=$2; shift ;;
    --torch) torch=$2; shift ;;
    --no-bench) bench=0 ;;
    --no-unit) unit=0 ;;
    --no-gpu-tests) gpu=0 ;;
    --prefix-only) prefix_only=1 ;;
    --gpu-tests) gpu_spec=$2; shift ;;
    --targets) echo "gpu_check: --targets is gone (issue 77): it left the test binaries not built out of the" \
      "[gpu] step without a word; the check builds every target" >&2; exit 2 ;;
    --list) list_only=1 ;;
    --allow-local-changes) allow_changes=1 ;;
    --loop) loop_minutes=$2; shift ;;
    --loop-pons) loop_pons=$2; shift ;;
    --loop-eval-every) loop_eval=$2; shift ;;
    --loop-args) loop_args=$2; shift ;;
    --loop-state) loop_state=$2; shift ;;
    --loop-recipe) loop_recipe=$2; shift ;;
    --loop-keep) loop_keep=1 ;;
    --loop-gpus) loop_gpus=$2; shift ;;
    --farm-layouts) layouts=$2; shift ;;
    --layout-seconds) layout_seconds=$2; shift ;;
    --net-sizes) net_sizes=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$layouts" ] && ! compgen -G "$loop_state/shards/*/config.txt" >/dev/null; then
  echo "gpu_check: --farm-layouts needs --loop-state DIR holding a kept run (shards/HOST/config.txt)" >&2; exit 2
fi
if [ -n "$loop_minutes" ] && [ ! -f "$loop_pons/Test_L2_R1" ]; then
  echo "gpu_check: --loop needs --loop-pons DIR holding Test_L2_R1 and Test_L1_R1" >&2; exit 2
fi
# gpu_cases: "BINARY<TAB>NAME" for every test case of $gpu_spec in every test
# binary of $build; fails (saying which) when a test binary of the build's is
# missing or cannot list its tests. (Catch2 v2's --list-* exits with the number
# of tests listed: only a death by a signal, 128 and above, is a failure.)
gpu_cases() {
  local bin names want missing=0 rc
  want=$(ninja -C "$build" -t targets all 2>/dev/null | grep -oE '^tests/zf_[a-z0-9_]+_test:' | tr -d : | sort -u)
  [ -n "$want" ] || { echo "gpu_check: no test executables in $build's targets (not configured?)" >&2; return 1; }
  for bin in $want; do
    if [ ! -x "$build/$bin" ]; then echo "gpu_check: $build/$bin is not built" >&2; missing=1; continue; fi
    names=$("$build/$bin" --list-test-names-only "$gpu_spec")
    rc=$?
    if [ $rc -ge 128 ]; then echo "gpu_check: $bin cannot list its tests (exit $rc)" >&2; missing=1; continue; fi
    while IFS= read -r name; do [ -n "$name" ] && printf '%s\t%s\n' "$(basename "$bin")" "$name"; done <<<"$names"
  done
  return $missing
}
if [ $list_only = 1 ]; then
  cases=$(gpu_cases) || exit 1
  printf '%s\n' "$cases" | grep .
  echo "gpu_check: $(grep -c . <<<"$cases") test cases of '$gpu_spec' in $build ($(grep -c . <<<"$(cut -f1 <<<"$cases" | sort -u)") binaries)"
  exit 0
fi
# The exact commit: tracked files as at HEAD, unless --allow-local-changes.
local_changes=$(git status --porcelain --untracked-files=no 2>&1) && git rev-parse -q --verify HEAD >/dev/null ||
  local_changes="not a git checkout: no commit to name"
if [ -n "$local_changes" ] && [ $allow_changes = 0 ]; then
  echo "gpu_check: the work tree differs from HEAD; commit first, so the results name the exact commit" \
    "(or --allow-local-changes for a PARTIAL run):" >&2
  head -20 <<<"$local_changes" >&2
  exit 2
fi
results=${results:-docs/results/gpu-$(date -u +%Y%m%d-%H%M)}
mkdir -p "$results" || exit 2
results=$(cd "$results" && pwd)
summary=$results/summary.txt
samples=$results/gpu-samples.csv
partial=""  # what the run left out, "; "-separated (a PARTIAL run)
[ $gpu = 0 ] && partial+="; --no-gpu-tests"
[ $gpu = 1 ] && [ "$gpu_spec" != "$default_spec" ] && partial+="; --gpu-tests '$gpu_spec'"
[ $unit = 0 ] && partial+="; --no-unit"
[ $bench = 0 ] && partial+="; --no-bench"
[ -n "$local_changes" ] && partial+="; local changes (--allow-local-changes)"
command -v nvidia-smi >/dev/null || partial+="; no nvidia-smi: the GPU was not sampled"
cores=$(nproc)
workers=${workers:-$(( cores > 3 ? cores - 2 : 1 ))}
started=$(date +%s)
failed_steps=""  # the names of the steps that failed, a line each
echo "== $(date -u '+%F %T UTC'): $invocation" >>"$summary"  # appended: a split check keeps both halves

note() { echo "$*" | tee -a "$summary"; }
# The check's exit status so far: 1 when a step failed, 3 when it was narrowed.
status() { if [ -n "$failed_steps" ]; then echo 1; elif [ -n "$partial" ]; then echo 3; else echo 0; fi; }

# GPU utilisation and memory every second, to gpu-samples.csv, while a step
# runs (sampled_step); its mean and peak go to the summary.
sampler_pid="" sampler_from=0
sampler_start() {
  command -v nvidia-smi >/dev/null || return 0
  [ -s "$samples" ] || echo "# timestamp, gpu, utilization.gpu %, utilization.memory %, memory.used MiB," \
    "memory.total MiB, power.draw W" >"$samples"
  echo "# begin: $1" >>"$samples"
  sampler_from=$(wc -l <"$samples")
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw \
    --format=csv,noheader,nounits -l 1 >>"$samples" 2>&1 &
  sampler_pid=$!
}
sampler_stop() {
  [ -n "$sampler_pid" ] || return 0
  kill "$sampler_pid" 2>/dev/null
  wait "$sampler_pid" 2>/dev/null
  sampler_pid=""
  tail -n +"$(( sampler_from + 1 ))" "$samples" | awk -F', *' -v step="$1" '
    $1 !~ /^#/ && NF >= 5 { n++; u += $3; if ($3 > umax) umax = $3; if ($5 > mmax) mmax = $5 }
    END { if (n) printf "  GPU during %s: %d samples, utilisation mean %.0f %%, peak %d %%, memory peak %d MiB\n",
                        step, n, u / n, umax, mmax
          else printf "  GPU during %s: no samples\n", step }' | tee -a "$summary"
}
trap 'sampler_stop exit' EXIT
# sampled_step NAME LOG COMMAND...: step, with the GPU sampled while it runs.
sampled_step() {
  local rc
  sampler_start "$1"
  step "$@"
  rc=$?
  sampler_stop "$1"
  return $rc
}
# step NAME LOG COMMAND...: runs a step, records PASS/FAIL and its seconds.
step() {
  local name=$1 log=$2 t0 rc
  shift 2
  t0=$(date +%s)
  echo "== $name (log: $log)"
  "$@" >>"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then note "PASS $name ($(( $(date +%s) - t0 )) s)"
  else note "FAIL $name (exit $rc, $(( $(date +%s) - t0 )) s; see $(basename "$log"))"
    failed_steps+="$name"$'\n'
  fi
  return $rc
}

machine() {
  echo "date: $(date -u '+%F %T UTC')"
  echo "commit: $(git rev-parse HEAD 2>/dev/null)"
  if [ -n "$local_changes" ]; then echo "LOCAL CHANGES (--allow-local-changes; the run is PARTIAL):"; echo "$local_changes"; fi
  echo "untracked files (not built unless CMake names them): $(git status --porcelain 2>/dev/null | grep -c '^??')"
  echo "host: $(hostname), $cores cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "kernel: $(uname -r)"
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader || echo "nvidia-smi: none"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -2 | tr '\n' ' ')"
  python3 -c 'import torch; print("pytorch:", torch.__version__, "cuda", torch.version.cuda,
    "available", torch.cuda.is_available(), "devices", torch.cuda.device_count())' || echo "pytorch: none"
  echo "cmake: $(cmake --version | head -1); ninja $(ninja --version 2>/dev/null)"
  echo "c++: $(c++ --version | head -1)"
  echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-(unset)}"
}

cmake_args=()
# deb_x DEB DIR: dpkg-deb -x, or ar + tar where dpkg is missing.
deb_x() {
  if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$1" "$2"
  else (ar p "$1" "$(ar t "$1" | grep '^data.tar')" | tar -x -J -C "$2")
  fi
}
# Unpacks the .debs into $prefix; fallback libraries only for sonames the machine lacks.
unpack() {
  local d f so
  mkdir -p "$prefix/fallback-root" "$prefix/fallback-lib"
  for d in "$debs"/*.deb; do echo "unpack $(basename "$d")"; deb_x "$d" "$prefix" || return 1; done
  for d in "$debs"/fallback/*.deb; do
    [ -e "$d" ] && { deb_x "$d" "$prefix/fallback-root" || return 1; }
  done
  local have
  have=$(ldconfig -p | awk 'NR > 1 { print $1 }')
  for f in "$prefix"/fallback-root/usr/lib/x86_64-linux-gnu/*.so.* "$prefix"/fallback-root/lib/x86_64-linux-gnu/*.so.*; do
    [ -L "$f" ] || continue  # the soname links, not the versioned files they point to
    so=$(basename "$f")
    if ! grep -qxF "$so" <<<"$have"; then ln -sf "$f" "$prefix/fallback-lib/$so"; echo "fallback: $so"; fi
  done
  ls "$prefix/usr/include/hdf5/serial/hdf5.h" "$prefix/usr/include/boost/version.hpp" \
     "$prefix/usr/include/cxxopts.hpp" "$prefix/usr/include/catch2/catch.hpp" \
     "$prefix/usr/include/nlohmann/json.hpp"
}
use_prefix() {
  local lib=$prefix/usr/lib/x86_64-linux-gnu
  cmake_args+=(-DCMAKE_PREFIX_PATH="$prefix/usr" -DHDF5_ROOT="$lib/hdf5/serial")
  export LD_LIBRARY_PATH="$lib:$lib/hdf5/serial:$prefix/fallback-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

build() {
  ZF_TORCH=$torch ZF_BUILD_DIR=$build ZF_JOBS=$jobs ZF_CONFIGURE_LOG=$results/build.log ZF_TARGETS=all \
    bash tools/build.sh -DZF_REQUIRE_CUDA=ON "${cmake_args[@]}" || return 1
  echo "== libraries of zerofarm-torch"
  ldd "$build/zerofarm-torch" | grep -E 'torch|c10|cuda|hdf5|not found'
  ! ldd "$build/zerofarm-torch" "$build/zerofarm" | grep 'not found'
}

# A Catch test name as a test spec that matches it alone (commas, brackets and
# wildcards escaped).
catch_escape() { printf '%s' "$1" | sed 's/[][\\,*"~]/\\&/g'; }

# Every test of --gpu-tests in every test binary, each test case in its own
# process with the XML reporter; tools/catch_cases.py proves that every case
# listed ran and passed. What failed, for the loop: graph_failures lists "eval"
# (the evaluator's CUDA graphs: [graphs] ~[trainer]) and "trainer"
# ([graphs][trainer]), which the loop can run without; gpu_core_failed any other.
graph_failures="" gpu_core_failed=0
gpu_tests() {
  local bin name rc=0 log=$results/gpu-tests.log cases=$results/gpu-cases.txt xml i=0 eval_graphs trainer_graphs
  gpu_cases >"$cases" || { gpu_core_failed=1; return 1; }
  note "  [gpu] tests: $(grep -c . "$cases") test cases of '$gpu_spec' in $(cut -f1 "$cases" | sort -u | grep -c .) binaries (gpu-cases.txt)"
  xml=$(mktemp -d) || return 1
  while IFS=$'\t' read -r bin name; do
    i=$(( i + 1 ))
    eval_graphs=$("$build/tests/$bin" --list-test-names-only '[graphs]~[trainer]')
    trainer_graphs=$("$build/tests/$bin" --list-test-names-only '[graphs][trainer]')
    echo "== $bin: $name"
    timeout 300 "$build/tests/$bin" "$(catch_escape "$name")" --durations yes -r xml -o "$xml/$i.xml" </dev/null
    local case_rc=$?
    cat "$xml/$i.xml" 2>/dev/null
    [ $case_rc = 0 ] && continue
    # 77: it skipped (tests/support/skip.h); catch_cases.py counts it as not passed.
    [ $case_rc = 77 ] && { echo "== skipped (exit 77)"; continue; }
    echo "== exit $case_rc"
    rc=1
    if grep -qxF -- "$name" <<<"$eval_graphs"; then graph_failures+=" eval"
    elif grep -qxF -- "$name" <<<"$trainer_graphs"; then graph_failures+=" trainer"
    else gpu_core_failed=1
    fi
  done <"$cases"
  echo "== every case of gpu-cases.txt ran and passed? (tools/catch_cases.py)"
  if ! python3 tools/catch_cases.py check "$cases" "$xml"/*.xml | tee "$xml/verdict"; then
    rc=1
    # A skip or a missing report with exit 0 (no graph test to leave out): the core failed.
    grep -q '^\(SKIPPED\|NOT RUN\) ' "$xml/verdict" && gpu_core_failed=1
  fi
  note "  [gpu] tests: $(tail -1 "$xml/verdict")"
  rm -rf "$xml"
  return $rc
}

# Whether the loop may run after the steps so far: no step failed but the [gpu]
# tests, and of those only graph tests, whose graphs the loop then leaves out.
loop_may_run() {
  local other
  other=$(grep -v '^\[gpu\] tests$' <<<"$failed_steps" | grep -c .)
  [ "$other" = 0 ] && [ $gpu_core_failed = 0 ] || return 1
  if [[ " $graph_failures " == *" eval "* ]]; then
    loop_args=$(tr ' ' '\n' <<<"$loop_args" | grep -vx -- '--gpu-graphs' | tr '\n' ' ')
    note "loop: without --gpu-graphs (the evaluator's CUDA-graph test failed)"
  fi
  if [[ " $graph_failures " == *" trainer "* ]]; then
    loop_args+=" --train-args=--cuda-graph=off"
    note "loop: with --train-args=--cuda-graph=off (the trainer's CUDA-graph test failed)"
  fi
}

# The modules that run LibTorch (network, trainer, weights), on the CPU: this
# LibTorch (2.x) must give what Debian's 1.13 gives.
unit_tests() {
  timeout 180 ctest --test-dir "$build" -R '^(eval|io):' --no-tests=error -LE 'multiprocess|slow' -j"$jobs" --timeout 150 \
    --output-on-failure
}

bench_gpu() {
  timeout 300 "$build/zerofarm" bench --gpus 1 --runs 1 --workers "$workers" --games-per-worker 64 \
    --simulations 100 --farm-seconds 10 --parts bound,search,farm,scaling,handoff,sweep
}
bench_cpu() {
  timeout 180 "$build/zerofarm" bench --gpus 0 --runs 1 --workers "$workers" --games-per-worker 64 \
    --simulations 100 --farm-seconds 10 --parts bound,search,farm,sweep
}

# share_flag K: --share-gpus where K evaluators are more than the one GPU.
share_flag() { [ "$1" -gt 1 ] && echo --share-gpus; }

# A directory of this script's under /tmp: made here with mode 700, or one this
# user made before (--loop-keep, a warm machine's prefix); never a link or
# another user's, whose content the steps would trust (a shared /tmp).
own_dir() {
  [ -e "$1" ] || [ -L "$1" ] || mkdir -m 700 "$1" || return 1
  if [ -L "$1" ] || [ ! -d "$1" ] || [ ! -O "$1" ]; then
    echo "gpu_check: $1 is not a directory of this user's (a link, or another user's): refusing it" >&2
    return 1
  fi
}

# The kept run's farm (its config.txt, less what names that run, and its newest
# model) with K evaluators on the one GPU for --layout-seconds, for each K, in
# two rounds (the second reversed, so drift favours no layout); each farm's own
# summary line says its positions/s and leaf evals/s.
farm_layouts() {
  local cfg model layout k batch games flags more round order=$layouts
  own_dir /tmp/zf-gpu || return 1
  cfg=$(ls "$loop_state"/shards/*/config.txt | head -1)
  model=$(ls "$loop_state"/models/model-*.h5 | sort -V | tail -1)
  grep -vE '^(out|host_id|host_index|run_id|epoch|duration|weights|models|gpus|share_gpus|workers)=' "$cfg" \
    >/tmp/zf-gpu/layout.conf || return 1
  echo "farm: $cfg, less what names that run; model $model; $workers workers; $layout_seconds s each"
  for round in 1 2; do
    for layout in $order; do
      IFS=: read -r k batch games flags <<<"$layout"
      local sizes=()
      [ -n "$batch" ] && sizes=(--max-batch "$batch" --games-per-worker "$games")
      [ -n "$flags" ] && IFS=, read -r -a more <<<"$flags" && sizes+=("${more[@]}")
      rm -rf /tmp/zf-gpu/layout-run
      echo "== round $round: $k evaluator(s) on the GPU ${sizes[*]}"
      # shellcheck disable=SC2046  # share_flag is empty or one word
      timeout $(( layout_seconds + 90 )) "$build/zerofarm" run --config /tmp/zf-gpu/layout.conf --weights "$model" \
        --workers "$workers" --gpus "$k" $(share_flag "$k") "${sizes[@]}" --duration "$layout_seconds" \
        --no-status --out /tmp/zf-gpu/layout-run 2>&1 | grep -E '^zerofarm run: |eval cache' || return 1
    done
    order=$(echo "$layouts" | tr ' ' '\n' | tac | tr '\n' ' ')
  done
  rm -rf /tmp/zf-gpu/layout-run
}

# For each BxF of --net-sizes: the recipe's farm (its search, data/recipes/connect4.recipe)
# from random weights on the GPU for --layout-seconds, then the trainer alone (the
# recipe's options) for 1000 steps on that farm's shards. Wall-clock rates: each
# summary line says positions/s (farm) and positions/s while training (trainer).
# Alone, each has the machine to itself, so both are upper bounds for the loop,
# where they share it.
net_sizes_step() {
  local size blocks filters farm=/tmp/zf-gpu/netsize
  own_dir /tmp/zf-gpu || return 1
  source tools/recipe_options.sh
  for size in $net_sizes; do
    blocks=${size%x*} filters=${size#*x}
    rm -rf "$farm"
    echo "== $size: farm, $workers workers, $layout_seconds s"
    timeout $(( layout_seconds + 90 )) "$build/zerofarm" run "${recipe_search[@]}" --eval-cache 1048576 \
      --blocks "$blocks" --filters "$filters" --gpus 1 --workers "$workers" \
      --duration "$layout_seconds" --no-status --out "$farm" 2>&1 | grep -E '^zerofarm run: ' || return 1
    for graph in off on; do
      echo "== $size: trainer, 1000 steps --cuda-graph=$graph"
      rm -rf "$farm/models" "$farm/train"
      timeout 300 "$build/zerofarm-torch" train --run "$farm" --steps 1000 --no-wait --replay 0 \
        --checkpoint-steps 1000000 --no-status "${recipe_train[@]}" --cuda-graph=$graph \
        --blocks "$blocks" --filters "$filters" 2>&1 | grep -E 'positions/s while training|training connect4' ||
        return 1
    done
  done
  rm -rf "$farm"
}

# The recipe with the farm (one evaluator on GPU 0) and the trainer on the GPU,
# for --loop minutes of wall time; CPU hours are no clock here (--cpu-hours 0).
loop_gpu() {
  local run=/tmp/zf-gpu-loop/run rc
  if [ $loop_keep = 1 ]; then
    own_dir /tmp/zf-gpu-loop || return 1
    [ -f "$run/train/state.txt" ] || { echo "gpu_check: --loop-keep: no run in $run on this machine" >&2; return 1; }
  else
    rm -rf /tmp/zf-gpu-loop && own_dir /tmp/zf-gpu-loop || return 1
    if [ -n "$loop_state" ] && [ -f "$loop_state/train/state.txt" ]; then
      bash tools/learn-state.sh restore "$loop_state" "$run" || return 1
    fi
  fi
  # shellcheck disable=SC2086,SC2046  # loop_args is split on spaces on purpose; share_flag is 0-1 word
  timeout $(( loop_minutes * 60 + 400 )) "$build/zerofarm" loop --recipe "$loop_recipe" --out "$run" --gpus "$loop_gpus" $(share_flag "$loop_gpus") \
    --workers "$workers" --cpu-hours 0 --hours "$(python3 -c "print($loop_minutes / 60)")" \
    --eval-every "$loop_eval" --pons "$loop_pons/Test_L2_R1" --pons "$loop_pons/Test_L1_R1" $loop_args
  rc=$?
  bash tools/learn-state.sh save "$run" /tmp/zf-gpu-loop/kept &&
    tar czf "$results/loop-state.tgz" -C /tmp/zf-gpu-loop/kept . || rc=1
  tail -5 "$run"/shards/*/metrics.csv 2>/dev/null
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv
  return $rc
}

machine >"$results/machine.txt" 2>&1
cat "$results/machine.txt"
if [ -n "$debs" ] || [ -n "$prefix" ]; then
  if [ -z "$prefix" ]; then
    prefix=/tmp/zf-gpu-prefix
    own_dir "$prefix" || exit 1
  fi
  mkdir -p "$prefix" && prefix=$(cd "$prefix" && pwd)
  if [ -n "$debs" ]; then step "prefix: unpack $(ls "$debs"/*.deb | wc -l) .debs into $prefix" "$results/build.log" unpack; fi
  use_prefix
fi
if [ $prefix_only = 1 ]; then
  printf 'cmake arguments:'; printf ' %q' "${cmake_args[@]}"; echo
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  [ -z "$failed_steps" ] && exit 0 || exit 1
fi
if step "build zerofarm-torch with CUDA ($torch LibTorch, $jobs jobs)" "$results/build.log" build; then
  [ $gpu = 1 ] && sampled_step "[gpu] tests" "$results/gpu-tests.log" gpu_tests
  [ $unit = 1 ] && step "eval and io unit tests (CPU) against this LibTorch" "$results/unit-tests.log" unit_tests
  [ -n "$layouts" ] && sampled_step "farm layouts: $layouts evaluator(s) on the GPU" "$results/farm-layouts.log" farm_layouts
  [ -n "$net_sizes" ] && sampled_step "net sizes: $net_sizes on the GPU" "$results/net-sizes.log" net_sizes_step
  if [ -n "$loop_minutes" ] && ! loop_may_run; then
    note "SKIP loop: an earlier step failed (a broken GPU path would spend the loop's device time for nothing)"
  elif [ -n "$loop_minutes" ]; then
    sampled_step "loop --recipe $loop_recipe on the GPU, $loop_minutes minutes" "$results/loop.log" loop_gpu
  fi
  if [ $bench = 1 ]; then
    sampled_step "bench, farm on the GPU ($workers workers)" "$results/bench-gpu.txt" bench_gpu
    sampled_step "bench, the same farm on the CPU" "$results/bench-cpu.txt" bench_cpu
  fi
fi
note "total $(( $(date +%s) - started )) s; results in $results"
case "$(status)" in
  0) note "gpu_check: PASS" ;;
  3) note "gpu_check: PARTIAL (every step run passed, but left out: ${partial#; })" ;;
  *) note "gpu_check: FAIL" ;;
esac
exit "$(status)"
