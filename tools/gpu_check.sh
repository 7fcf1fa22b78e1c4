#!/usr/bin/env bash
# One command proves the GPU path (issues #22, #84) on a fresh GPU machine with a CUDA GPU,
# nvcc, CMake, ninja and a CUDA PyTorch (python3 -c 'import torch'), in 8 minutes of wall
# time (--budget): every step has a time budget, and a step that would end past the
# budget is not started ("not run: over budget", the run PARTIAL). The steps, in order:
#   1. machine   GPU, driver, nvcc, PyTorch, CMake, compiler, the exact commit
#   2. prefix    (with --debs DIR, made by tools/gpu_debs.sh on a Debian 12 machine)
#                Debian 12's Boost, HDF5, cxxopts and Catch2 unpacked into a prefix
#                (dpkg-deb -x; nothing is installed)
#   3. build     every target (zerofarm, zerofarm-torch, every test binary) against
#                PyTorch's LibTorch, with CUDA required (-DZF_REQUIRE_CUDA=ON), into build-gpu/
#   4. models    in the background from here on: the 6x64 Connect Four net as
#                weights (.h5, where python3 has h5py), TorchScript (.pt) and an
#                AOTInductor package for CUDA (.pt2), by tools/zf_weights_torch.py
#   5. gpu tests every test case tagged [gpu] or [gpu_plan] of every test binary, each in
#                its own process with Catch's XML reporter; tools/catch_cases.py then
#                proves that every case listed (gpu-cases.txt) ran and passed: a skip, a
#                crash, a timeout or a missing case is a failure
#   6. unit      the eval and io unit tests (network, trainer, weights; CPU) against this LibTorch
#   7. measurements, each `zerofarm bench` with its baseline in the same command or
#                beside it, interleaved (16 cores: 14 workers x 64 games, 100 simulations):
#      c4        Connect Four 6x64 in bf16: the evaluator alone, the search alone, the farm's
#                efficiency against the smaller bound, scaling at 1, 2, 4, 8 and 14 workers
#      sweep     the evaluator alone at batch 1 to 8192 in fp32, TF32, bf16 and fp16,
#                eager and as CUDA graphs
#      go        Go 9x9 10x128 in bf16: the two bounds and the farm
#      formats   the built-in net against the same net as .pt and .pt2 (fp32): .h5, .pt,
#                .pt2, .h5 again
#      depth     --eval-depth 1 against 2: 1, 2, 2, 1
# Opt-in steps after them (outside the 8 minutes): --farm-layouts, --net-sizes, --loop.
#
# Everything goes to one results folder: summary.txt (each step's PASS, FAIL or NOT RUN,
# its seconds and budget, the bench's figures and targets, GPU utilisation per step),
# machine.txt, commands.txt (every zerofarm command run), gpu-samples.csv (nvidia-smi's
# utilisation and memory each second of the whole run, "# begin:" and "# end:" lines
# around each step), and a log per step.
#
# --rehearse runs the same steps on a machine without a GPU, so that a CPU session proves
# the script before device time is spent: the build with whatever LibTorch CMake finds
# (the build dir "build" by default), the [gpu_plan] cases (CPU), the measurements with
# tiny sizes on the CPU; each GPU-only part says "not run (no GPU)". With --debs it
# unpacks them too, without building against them.
# --dry (with or without --rehearse) builds and runs nothing: it checks, in seconds, that
# every command line of every step parses (each zerofarm command with --help appended:
# every option exists and every value has its type), for the GPU's sizes and the
# rehearsal's, that the Python helpers exist, and that the build lists its [gpu] cases.
# CTest runs it (gpu_check_dry).
#
# Exit 0 when every step ran whole and passed; 1 when a step failed; 2 on a usage error;
# 3 (PARTIAL) when every step that ran passed but the check was narrowed (a step over
# budget, --no-gpu-tests, --no-unit, --no-bench, a --gpu-tests other than the default,
# --allow-local-changes with changes, no nvidia-smi to sample the GPU): summary.txt names
# what was left out, and only exit 0 proves the GPU path. --rehearse: 0 when every step it
# ran passed (it proves the script, never the GPU); --dry: 0 when every check passed.
#
#   tools/gpu_check.sh [--rehearse] [--dry] [--budget S] [--debs DIR] [--deb-prefix DIR]
#                      [--results DIR] [--build DIR] [--jobs N] [--workers P] [--torch pytorch|DIR]
#                      [--python PY] [--no-bench] [--no-unit] [--no-gpu-tests] [--gpu-tests SPEC]
#                      [--prefix-only] [--list] [--allow-local-changes]
#                      [--loop MINUTES --loop-pons DIR [--loop-eval-every S] [--loop-args "..."]
#                       [--loop-recipe NAME|FILE]
#                       [--loop-state DIR | --loop-keep] [--loop-gpus K]]
#                      [--farm-layouts "K[:B:G[:FLAGS]] ..." --loop-state DIR [--layout-seconds S]]
#                      [--net-sizes "BxF ..." [--layout-seconds S]]
#
#   --rehearse        the steps on a machine without a GPU (above); results default
#                     docs/results/gpu-rehearsal-YYYY-MM-DD
#   --dry             check every step's command lines; build and run nothing (above)
#   --budget S        wall seconds for the whole check (default 480; --rehearse 1800)
#   --debs DIR        .deb files to unpack (tools/gpu_debs.sh), DIR/fallback/ too
#   --deb-prefix DIR  where they are (or were already) unpacked (default /tmp/zf-gpu-prefix)
#   --results DIR     default docs/results/gpu-YYYYMMDD-HHMM
#   --workers P       bench farm workers (default: cores - 2)
#   --python PY       the Python with PyTorch for the models (default python3, or
#                     /usr/bin/python3 where only that one has torch)
#   --prefix-only     stop after the prefix step; print the CMake arguments and LD_LIBRARY_PATH
#   --list            list the [gpu] test cases of the build in --build (already built; no GPU
#                     needed), one "BINARY<TAB>NAME" a line, and their count; build or run nothing
#   --allow-local-changes  run on a work tree that differs from HEAD (machine.txt lists the
#                     changes); the run is then PARTIAL, never a PASS
#   --gpu-tests SPEC  the Catch test spec of the gpu tests step (default '[gpu],[gpu_plan]');
#                     any other makes the run PARTIAL
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
#   --farm-layouts "K[:B:G[:FLAGS]] ..."  the loop's farm, from the kept run's config and
#                     newest model, with K evaluators sharing the one GPU (and, given B and G,
#                     --max-batch B and --games-per-worker G; given FLAGS, those farm options,
#                     comma-separated), each for --layout-seconds (default 30), in two rounds
#                     (the second reversed); needs --loop-state DIR with a kept run
#   --net-sizes "BxF ..."  for each, the recipe's farm from random weights for
#                     --layout-seconds and the trainer alone on its shards for 1000 steps,
#                     eager and as a CUDA graph (net-sizes.log)
#   --loop MINUTES    `zerofarm loop --recipe connect4` with the farm and the trainer on the
#                     GPU, its curve measured every --loop-eval-every seconds on the Pons files
#                     in --loop-pons DIR; not run when an earlier step failed, except a
#                     CUDA-graph test ([graphs]): then without that graph
#   --no-gpu-tests, --no-unit, --no-bench   leave a step out (--no-bench: the measurements)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
invocation="$0 $*"
debs="" prefix="" results="" build="" jobs=$(nproc) workers="" torch=${ZF_TORCH:-pytorch} py=""
bench=1 unit=1 gpu=1 prefix_only=0 list_only=0 allow_changes=0 default_spec='[gpu],[gpu_plan]'
rehearse=0 dry=0 budget=""
gpu_spec=$default_spec loop_minutes="" loop_pons="" loop_eval=300 loop_args="" loop_state="" loop_keep=0 loop_gpus=1 loop_recipe=connect4 layouts="" layout_seconds=30 net_sizes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rehearse) rehearse=1 ;;
    --dry) dry=1 ;;
    --budget) budget=$2; shift ;;
    --debs) debs=$2; shift ;;
    --deb-prefix) prefix=$2; shift ;;
    --results) results=$2; shift ;;
    --build) build=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --workers) workers=$2; shift ;;
    --torch) torch=$2; shift ;;
    --python) py=$2; shift ;;
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
case "${budget:-x}" in x) ;; *[!0-9]*|0) echo "gpu_check: --budget must be a positive number of seconds" >&2; exit 2 ;; esac
if [ $rehearse = 1 ]; then
  build=${build:-build} budget=${budget:-1800}
  [ -n "${ZF_TORCH:-}" ] || torch=""  # whatever CMake finds (Debian's LibTorch), as tools/build.sh does
else
  build=${build:-build-gpu} budget=${budget:-480}
fi
[ $dry = 1 ] && [ $rehearse = 0 ] && [ "$build" = build-gpu ] && build=build  # --dry runs where the CPU build is
# The Python with PyTorch: python3, else Debian's (a python3 on PATH may be another one).
has_torch='import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)'  # no import: fast
if [ -z "$py" ]; then
  py=python3
  python3 -c "$has_torch" 2>/dev/null || ! /usr/bin/python3 -c "$has_torch" 2>/dev/null || py=/usr/bin/python3
fi
if [ $rehearse = 1 ] && { [ -n "$loop_minutes" ] || [ -n "$layouts" ] || [ -n "$net_sizes" ]; }; then
  echo "gpu_check: --rehearse runs the 8-minute check; --loop, --farm-layouts and --net-sizes need a GPU" >&2; exit 2
fi
if [ -n "$layouts" ] && ! compgen -G "$loop_state/shards/*/config.txt" >/dev/null; then
  echo "gpu_check: --farm-layouts needs --loop-state DIR holding a kept run (shards/HOST/config.txt)" >&2; exit 2
fi
if [ -n "$loop_minutes" ] && [ ! -f "$loop_pons/Test_L2_R1" ]; then
  echo "gpu_check: --loop needs --loop-pons DIR holding Test_L2_R1 and Test_L1_R1" >&2; exit 2
fi
# gpu_cases [SPEC]: "BINARY<TAB>NAME" for every test case of SPEC (default $gpu_spec) in
# every test binary of $build; fails (saying which) when a test binary of the build's is
# missing or cannot list its tests. (Catch2 v2's --list-* exits with the number
# of tests listed: only a death by a signal, 128 and above, is a failure.)
gpu_cases() {
  local bin names want missing=0 rc spec=${1:-$gpu_spec}
  want=$(ninja -C "$build" -t targets all 2>/dev/null | grep -oE '^tests/zf_[a-z0-9_]+_test:' | tr -d : | sort -u)
  [ -n "$want" ] || { echo "gpu_check: no test executables in $build's targets (not configured?)" >&2; return 1; }
  for bin in $want; do
    if [ ! -x "$build/$bin" ]; then echo "gpu_check: $build/$bin is not built" >&2; missing=1; continue; fi
    names=$("$build/$bin" --list-test-names-only "$spec")
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
# The exact commit: tracked files as at HEAD, unless --allow-local-changes (--dry writes no results).
local_changes=$(git status --porcelain --untracked-files=no 2>&1) && git rev-parse -q --verify HEAD >/dev/null ||
  local_changes="not a git checkout: no commit to name"
if [ -n "$local_changes" ] && [ $allow_changes = 0 ] && [ $dry = 0 ]; then
  echo "gpu_check: the work tree differs from HEAD; commit first, so the results name the exact commit" \
    "(or --allow-local-changes for a PARTIAL run):" >&2
  head -20 <<<"$local_changes" >&2
  exit 2
fi
if [ $dry = 1 ]; then
  results=$(mktemp -d) || exit 2
  trap 'rm -rf "$results"' EXIT
elif [ $rehearse = 1 ]; then
  results=${results:-docs/results/gpu-rehearsal-$(date -u +%Y-%m-%d)}
else
  results=${results:-docs/results/gpu-$(date -u +%Y%m%d-%H%M)}
fi
mkdir -p "$results" || exit 2
results=$(cd "$results" && pwd)
summary=$results/summary.txt
samples=$results/gpu-samples.csv
commands=$results/commands.txt
partial=""  # what the run left out, "; "-separated (a PARTIAL run)
[ $gpu = 0 ] && partial+="; --no-gpu-tests"
[ $gpu = 1 ] && [ "$gpu_spec" != "$default_spec" ] && partial+="; --gpu-tests '$gpu_spec'"
[ $unit = 0 ] && partial+="; --no-unit"
[ $bench = 0 ] && partial+="; --no-bench"
[ -n "$local_changes" ] && partial+="; local changes (--allow-local-changes)"
[ $rehearse = 0 ] && [ $dry = 0 ] && ! command -v nvidia-smi >/dev/null && partial+="; no nvidia-smi: the GPU was not sampled"
cores=$(nproc)
workers=${workers:-$(( cores > 3 ? cores - 2 : 1 ))}
started=$(date +%s)
deadline=$(( started + budget ))
failed_steps=""  # the names of the steps that failed, a line each
not_run=0        # GPU parts a rehearsal could not run
dry_failures=0
echo "== $(date -u '+%F %T UTC'): $invocation" >>"$summary"  # appended: a split check keeps both halves

note() { echo "$*" | tee -a "$summary"; }
# The check's exit status so far: 1 when a step failed, 3 when it was narrowed.
status() {
  if [ -n "$failed_steps" ] || [ $dry_failures -gt 0 ]; then echo 1
  elif [ -n "$partial" ] && [ $rehearse = 0 ] && [ $dry = 0 ]; then echo 3
  else echo 0
  fi
}
# not_here WHAT: a GPU part the rehearsal cannot run, said so.
not_here() {
  if [ $dry = 1 ]; then echo "dry: a GPU part: $1"; return 0; fi
  note "  NOT RUN $1 (no GPU)"
  not_run=$(( not_run + 1 ))
}

# GPU utilisation and memory each second of the whole run (after the machine step),
# to gpu-samples.csv; each step adds "# begin: NAME" and "# end: NAME" lines, and its
# mean and peak go to the summary.
sampler_pid=""
sampler_start() {
  [ $dry = 0 ] && command -v nvidia-smi >/dev/null || return 0
  [ -s "$samples" ] || echo "# timestamp, gpu, utilization.gpu %, utilization.memory %, memory.used MiB," \
    "memory.total MiB, power.draw W" >"$samples"
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw \
    --format=csv,noheader,nounits -l 1 >>"$samples" 2>&1 &
  sampler_pid=$!
}
sampler_stop() {
  [ -n "$sampler_pid" ] || return 0
  kill "$sampler_pid" 2>/dev/null
  wait "$sampler_pid" 2>/dev/null
  sampler_pid=""
}
mark() { [ -n "$sampler_pid" ] && echo "# $1: $2 ($(date -u '+%F %T'))" >>"$samples"; return 0; }
step_gpu_stats() {
  [ -n "$sampler_pid" ] || return 0
  awk -F', *' -v begin="# begin: $1 (" -v end="# end: $1 (" '
    index($0, begin) == 1 { on = 1; next }
    index($0, end) == 1 { on = 0; next }
    on && $1 !~ /^#/ && NF >= 5 { n++; u += $3; if ($3 > umax) umax = $3; if ($5 > mmax) mmax = $5 }
    END { if (n) printf "  GPU during %s: %d samples, utilisation mean %.0f %%, peak %d %%, memory peak %d MiB\n",
                        begin, n, u / n, umax, mmax
          else printf "  GPU during %s: no samples\n", begin }' "$samples" |
    sed 's/# begin: //; s/ ($//; s/ (:/:/' | tee -a "$summary"
}
trap 'sampler_stop' EXIT
[ $dry = 1 ] && trap 'sampler_stop; rm -rf "$results"' EXIT

# step NAME LOG BUDGET COMMAND...: runs a step with BUDGET seconds (bounded: each command
# in it gets what is left of them), records PASS/FAIL and its seconds; not started
# (NOT RUN, the run PARTIAL) when it could end past --budget.
step_end=0
step() {
  local name=$1 log=$2 limit=$3 t0 rc
  shift 3
  t0=$(date +%s)
  if [ "$limit" -gt 0 ] && [ $(( t0 + limit )) -gt $deadline ] && [ $dry = 0 ]; then
    note "NOT RUN $name: its $limit s would end past the $budget s budget ($(( deadline - t0 )) s left)"
    partial+="; $name (over budget)"
    return 0
  fi
  step_end=$(( t0 + (limit > 0 ? limit : 86400) ))  # 0: an opt-in step, outside the budget
  echo "== $name (log: $log; budget $([ "$limit" -gt 0 ] && echo "$limit s" || echo "none: opt-in"))"
  mark begin "$name"
  "$@" >>"$log" 2>&1
  rc=$?
  mark end "$name"
  local took="$(( $(date +%s) - t0 )) s"
  [ "$limit" -gt 0 ] && took+=" of $limit"
  if [ $rc -eq 0 ]; then note "PASS $name ($took)"
  else note "FAIL $name (exit $rc, $took; see $(basename "$log"))"
    failed_steps+="$name"$'\n'
  fi
  step_gpu_stats "$name"
  return $rc
}
# bounded COMMAND...: COMMAND with the seconds left of this step's budget.
bounded() {
  local left=$(( step_end - $(date +%s) ))
  if [ $left -le 0 ]; then echo "gpu_check: no time left of this step's budget for: $*"; return 124; fi
  timeout --kill-after=10 "$left" "$@"
}

# zf SUBCOMMAND ARGS...: build/zerofarm, bounded, the command line kept in commands.txt.
# --dry: `zerofarm SUBCOMMAND ARGS --help` instead, which parses every option (a name
# it lacks, or a value of the wrong type, is exit 2 with one line) and runs nothing.
dry_seen=""  # --dry: the command lines checked already (each is checked once)
zf() {
  if [ $dry = 1 ]; then
    local out
    grep -qxF -- "$*" <<<"$dry_seen" && return 0
    dry_seen+="$*"$'\n'
    if out=$("$build/zerofarm" "$@" --help 2>&1 </dev/null); then
      echo "dry: ok: zerofarm $*"
    else
      note "  dry: FAIL: zerofarm $*: $(grep -v '^$' <<<"$out" | tail -1)"
      dry_failures=$(( dry_failures + 1 ))
    fi
    return 0
  fi
  echo "zerofarm $*" | tee -a "$commands"
  bounded "$build/zerofarm" "$@" </dev/null
}
# py_check WHAT CODE: --dry: that $py runs CODE (the helpers a step calls exist).
py_check() {
  if ! "$py" -c "$has_torch" 2>/dev/null; then echo "dry: $1 not checked: $py has no torch"; return 0; fi
  if (cd tools && "$py" -c "$2") >/dev/null 2>&1; then echo "dry: ok: $1"; return 0; fi
  note "  dry: FAIL: $1: $(cd tools && "$py" -c "$2" 2>&1 | tail -1)"
  dry_failures=$(( dry_failures + 1 ))
}

machine() {
  echo "date: $(date -u '+%F %T UTC')"
  echo "commit: $(git rev-parse HEAD 2>/dev/null)"
  if [ -n "$local_changes" ]; then echo "LOCAL CHANGES (--allow-local-changes; the run is PARTIAL):"; echo "$local_changes"; fi
  echo "untracked files (not built unless CMake names them): $(git status --porcelain 2>/dev/null | grep -c '^??')"
  echo "mode: $([ $rehearse = 1 ] && echo "rehearsal (no GPU: GPU parts not run)" || echo "GPU check"); budget $budget s"
  echo "host: $(hostname), $cores cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "kernel: $(uname -r)"
  nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "nvidia-smi: none"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -2 | tr '\n' ' ')"
  "$py" -c 'import torch; print("pytorch:", torch.__version__, "cuda", torch.version.cuda,
    "available", torch.cuda.is_available(), "devices", torch.cuda.device_count())' 2>/dev/null ||
    echo "pytorch: none in $py"
  "$py" -c 'import h5py; print("h5py:", h5py.__version__)' 2>/dev/null || echo "h5py: none in $py"
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

# The build; --rehearse: with the LibTorch CMake finds, CUDA not required; --dry: that
# both binaries are there.
build() {
  if [ $dry = 1 ]; then ls "$build/zerofarm" "$build/zerofarm-torch"; return; fi
  local cuda=(-DZF_REQUIRE_CUDA=ON) targets=all
  [ $rehearse = 1 ] && cuda=()
  # A rehearsal that runs no test step needs no test binary (the GPU check always builds all).
  [ $rehearse = 1 ] && [ $gpu = 0 ] && [ $unit = 0 ] && targets=zerofarm
  ZF_TORCH=$torch ZF_BUILD_DIR=$build ZF_JOBS=$jobs ZF_CONFIGURE_LOG=$results/build.log ZF_TARGETS=$targets \
    bounded bash tools/build.sh "${cuda[@]}" "${cmake_args[@]}" || return 1
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
# --rehearse: the [gpu_plan] cases (CPU) only, the [gpu] ones listed and not run.
graph_failures="" gpu_core_failed=0
gpu_tests() {
  local bin name rc=0 log=$results/gpu-tests.log cases=$results/gpu-cases.txt xml i=0 eval_graphs trainer_graphs
  local spec=$gpu_spec
  if [ $rehearse = 1 ] || [ $dry = 1 ]; then
    gpu_cases '[gpu]' >"$results/gpu-only-cases.txt" || return 1
    [ -s "$results/gpu-only-cases.txt" ] || { echo "gpu_check: the build lists no [gpu] case"; return 1; }
    not_here "[gpu] tests: $(grep -c . "$results/gpu-only-cases.txt") cases listed"
    spec='[gpu_plan]'
  fi
  gpu_cases "$spec" >"$cases" || { gpu_core_failed=1; return 1; }
  note "  [gpu] tests: $(grep -c . "$cases") test cases of '$spec' in $(cut -f1 "$cases" | sort -u | grep -c .) binaries (gpu-cases.txt)"
  [ $dry = 1 ] && return 0
  xml=$(mktemp -d) || return 1
  while IFS=$'\t' read -r bin name; do
    i=$(( i + 1 ))
    eval_graphs=$("$build/tests/$bin" --list-test-names-only '[graphs]~[trainer]')
    trainer_graphs=$("$build/tests/$bin" --list-test-names-only '[graphs][trainer]')
    echo "== $bin: $name"
    bounded "$build/tests/$bin" "$(catch_escape "$name")" --durations yes -r xml -o "$xml/$i.xml" </dev/null
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

# The modules that run LibTorch (network, trainer, weights), on the CPU: this
# LibTorch (2.x) must give what Debian's 1.13 gives. --rehearse: the weights and
# TorchScript tests only (the 2-core machine builds and runs the rest in tools/test.sh).
unit_tests() {
  local filter='^(eval|io):'
  [ $rehearse = 1 ] && filter='^(eval|io): .*([Ww]eights|TorchScript)'
  if [ $dry = 1 ]; then
    ctest --test-dir "$build" -N -R "$filter" -LE 'multiprocess|slow' | tail -1
    return
  fi
  bounded ctest --test-dir "$build" -R "$filter" --no-tests=error -LE 'multiprocess|slow' -j"$jobs" --timeout 150 \
    --output-on-failure
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


# ---- the measurements -------------------------------------------------------------

# set_sizes gpu|cpu: the measurements' sizes. gpu: the issue's (16 cores: 14 workers x 64
# games, 100 simulations, 6x64 and 10x128 nets); cpu: the rehearsal's, tiny, on any CPU.
set_sizes() {
  if [ "$1" = gpu ]; then
    on_gpu=1 w=$workers games=64 sims=100 fsec=8 bsec=0.2 prec=bf16 netc4=(--blocks 6 --filters 64)
    netgo=(--blocks 10 --filters 128) sweep_b=1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192 few_b=64,256,1024
    scaling=$(printf '%s\n' 1 2 4 8 "$w" | awk -v w="$w" '$1 <= w' | sort -nu | paste -sd, -)
  else
    on_gpu=0 w=2 games=8 sims=12 fsec=15 bsec=0.05 prec=auto netc4=(--blocks 1 --filters 8)
    netgo=(--blocks 1 --filters 8) sweep_b=1,8,64 few_b=1,8,64 scaling=1,2
  fi
  common=(--gpus "$on_gpu" --runs 1 --workers "$w" --games-per-worker "$games" --simulations "$sims"
    --farm-seconds "$fsec" --bound-seconds "$bsec")
}
# Each step's budget in seconds, on the GPU machine and in a rehearsal.
budget_of() {
  local gpu_s cpu_s
  case "$1" in
    prefix) gpu_s=30 cpu_s=60 ;;        build) gpu_s=240 cpu_s=900 ;;
    gpu) gpu_s=150 cpu_s=300 ;;         unit) gpu_s=60 cpu_s=300 ;;
    models) gpu_s=200 cpu_s=200 ;;      c4) gpu_s=100 cpu_s=240 ;;
    sweep) gpu_s=60 cpu_s=120 ;;        go) gpu_s=60 cpu_s=180 ;;
    formats) gpu_s=70 cpu_s=240 ;;      depth) gpu_s=60 cpu_s=240 ;;
  esac
  [ $rehearse = 1 ] && echo "$cpu_s" || echo "$gpu_s"
}

# The figures of LOG's bench JSON lines, a line each, and its targets, into the summary:
# the evaluator alone at its best batch, the search alone, the farm against both, scaling,
# the sweep; an "== LABEL" line of LOG names the bench after it.
bench_figures() {
  python3 - "$1" <<'EOF' | sed 's/^/  /' | tee -a "$summary"
import json, sys
label, best = "", {}
class N(dict):  # a JSON line whose missing or null numbers print as "n/a"
    def __getitem__(self, k):
        v = dict.get(self, k)
        return v if v is not None else Na()
class Na(float):
    def __new__(cls): return float.__new__(cls, "nan")
    def __format__(self, spec): return "n/a"
    def __truediv__(self, other): return self
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("== "):
        label = line[3:].strip() + ": "
    elif line.startswith(("target ", "zerofarm bench: ")):
        print(label + line.strip())
    if not line.startswith("{"):
        continue
    try:
        j = N(json.loads(line))
    except ValueError:
        continue
    kind = j.get("bench")
    if kind in ("bound", "sweep") and "evals_per_s" in j:
        key = (label, kind, j.get("precision"), j.get("depth"))
        if key not in best or j["evals_per_s"] > best[key]["evals_per_s"]:
            best[key] = j
    elif kind == "sweep" and "skipped" in j:
        print(f"{label}sweep {j['variant']}: skipped ({j['skipped']})")
    elif kind == "search_bound" and "leaves_per_s" in j:
        print(f"{label}search alone: {j['leaves_per_s']:.0f} leaves/s at {j['workers']} workers")
    elif kind == "farm" and "evals_per_s" in j:
        print(f"{label}farm, {j['setting']}: {j['evals_per_s']:.0f} leaf evals/s, {j['positions_per_s']:.1f} "
              f"positions/s, batch {j['mean_batch']:.0f}, efficiency {j['efficiency']:.2f} against the "
              f"evaluator at that batch, {j['efficiency_vs_smaller_bound']:.2f} against the smaller bound "
              f"({j['binding_bound']}), evaluator busy {j['evaluator_busy']:.2f}, "
              f"leaf latency p99 {j['latency_p99_us'] / 1000:.1f} ms")
    elif kind in ("farm", "search_bound") and "error" in j:
        print(f"{label}{kind} {j.get('setting', '')}: {j['error']}")
for (lab, kind, precision, depth), j in best.items():
    what = "evaluator alone" if kind == "bound" else "sweep"
    print(f"{lab}{what}, {precision}, depth {depth}: best {j['evals_per_s']:.0f} evals/s at batch {j['batch']}")
EOF
}

# The models of the formats step: the Connect Four net (random, seed 0) as weights
# (.h5, with h5py), TorchScript (.pt) and, with PyTorch 2.5+, an AOTInductor
# package for this step's device (.pt2), into $models.
models=/tmp/zf-gpu/models
make_models() {
  local device=cpu
  [ $on_gpu = 1 ] && device=cuda
  rm -rf "$models" && mkdir -p "$models" || return 1
  (cd tools && bounded "$py" - "$models" "$device" "${netc4[1]}" "${netc4[3]}") <<'EOF'
import os, sys, time
import torch
import zf_weights_torch as zw
out, device, blocks, filters = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.manual_seed(0)
net = zw.ZeroNet.for_game("connect4", blocks, filters)
try:
    zw.save_zerofarm_weights(net, os.path.join(out, "c4.h5"), "connect4", 0)
    print("c4.h5: the built-in net's weights")
except ImportError as e:
    print(f"c4.h5: not written ({e}); the built-in net runs random weights of the same shape")
t = time.time()
zw.save_torchscript(net, os.path.join(out, "c4.pt"), "connect4", 0)
print(f"c4.pt: TorchScript, {time.time() - t:.1f} s")
if hasattr(getattr(torch, "_inductor", None), "aoti_compile_and_package"):
    t = time.time()
    zw.save_aoti(net, os.path.join(out, "c4.pt2"), "connect4", 0, 1024, device)
    print(f"c4.pt2: AOTInductor for {device}, {time.time() - t:.1f} s")
else:
    print(f"c4.pt2: not made: PyTorch {torch.__version__} has no AOTInductor packages (2.5+)")
EOF
}
models_pid="" models_t0=0
models_start() {
  if [ $dry = 1 ]; then
    py_check "the models' helpers (tools/zf_weights_torch.py)" \
      'import zf_weights_torch as zw; zw.ZeroNet.for_game; zw.save_zerofarm_weights; zw.save_torchscript; zw.save_aoti'
    return
  fi
  own_dir /tmp/zf-gpu || return 1
  models_t0=$(date +%s)
  step_end=$(( models_t0 + $(budget_of models) ))
  make_models >"$results/models.log" 2>&1 &
  models_pid=$!
  echo "== models in the background (log: models.log; budget $(budget_of models) s)"
}
models_wait() {
  [ -n "$models_pid" ] || return 0
  local rc
  wait "$models_pid"
  rc=$?
  models_pid=""
  if [ $rc = 0 ]; then note "PASS models, made beside the tests ($(( $(date +%s) - models_t0 )) s of $(budget_of models))"
  else note "FAIL models (exit $rc; see models.log)"; failed_steps+="models"$'\n'
  fi
  sed 's/^/  /' "$results/models.log" | grep -E '^  c4\.' | tee -a "$summary"
}

# Connect Four 6x64: the evaluator alone, the search alone, the farm against the
# smaller of them, and scaling, in one bench (its parts interleaved).
measure_c4() {
  zf bench --game connect4 "${netc4[@]}" --precision "$prec" "${common[@]}" --parts bound,search,farm,scaling \
    --scaling-workers "$scaling"
}
# The evaluator alone at every batch size in every precision, eager and as graphs.
measure_sweep() {
  [ $on_gpu = 1 ] || not_here "sweep: TF32, fp16 and CUDA graphs"
  zf bench --game connect4 "${netc4[@]}" "${common[@]}" --parts sweep --sweep-batches "$sweep_b"
}
# Go 9x9 10x128: the two bounds and the farm.
measure_go() {
  zf bench --game go "${netgo[@]}" --precision "$prec" "${common[@]}" --parts bound,search,farm
}
# The built-in net (.h5, else random weights of its shape) against the same net as
# TorchScript and as an AOTInductor package, fp32: .h5, .pt, .pt2, .h5.
measure_formats() {
  local f net rc=0
  for f in h5 pt pt2 h5; do
    net=(--weights "$models/c4.$f")
    if [ $dry = 0 ] && [ ! -f "$models/c4.$f" ]; then
      case $f in
        h5) net=("${netc4[@]}") ;;
        *) note "  NOT RUN formats: .$f (no $models/c4.$f: see models.log)"; not_run=$(( not_run + 1 )); continue ;;
      esac
    fi
    echo "== .$f"
    zf bench --game connect4 --precision fp32 "${common[@]}" --parts bound,farm --bound-batches "$few_b" \
      "${net[@]}" || rc=1
  done
  return $rc
}
# --eval-depth 1 against 2 (two batches in flight on two streams): 1, 2, 2, 1.
measure_depth() {
  local d rc=0
  [ $on_gpu = 1 ] || not_here "depth: the overlap of two batches (a CPU evaluator has none)"
  for d in 1 2 2 1; do
    echo "== --eval-depth $d"
    zf bench --game connect4 "${netc4[@]}" --precision "$prec" "${common[@]}" --parts bound,farm \
      --bound-batches "$few_b" --eval-depth "$d" || rc=1
  done
  return $rc
}
# measurement NAME: its step, then its figures into the summary.
measurement() {
  local log=$results/bench-$1.log
  step "measure $1" "$log" "$(budget_of "$1")" "measure_$1"
  local rc=$?
  [ $dry = 0 ] && [ -f "$log" ] || return $rc
  bench_figures "$log"
  if [ $rc = 0 ] && grep -q '^{.*"error":' "$log"; then  # the bench went on past a farm that failed
    note "FAIL measure $1: a farm or bound of it failed (the \"error\" lines of $(basename "$log"))"
    failed_steps+="measure $1"$'\n'
    rc=1
  fi
  return $rc
}
measurements() {
  measurement c4
  measurement sweep
  measurement go
  models_wait
  measurement formats
  measurement depth
}

# ---- the run ------------------------------------------------------------------------

# --dry: every step's command lines, for the GPU's sizes and the rehearsal's; nothing runs.
dry_run() {
  local sizes
  build >/dev/null || { note "  dry: FAIL: $build/zerofarm or zerofarm-torch is not built"; return 1; }
  gpu_tests || { note "  dry: FAIL: the build's [gpu] cases cannot be listed (a test binary not built?)"
    dry_failures=$(( dry_failures + 1 )); }
  unit_tests
  models_start
  workers=14  # the GPU machine's 16 cores
  for sizes in gpu cpu; do
    set_sizes $sizes
    echo "== dry: the $sizes sizes"
    measure_c4
    measure_sweep
    measure_go
    measure_formats
    measure_depth
  done
  note "gpu_check --dry: $(grep -c '^dry: ok' "$results/dry.log") command lines and helpers parse," \
    "$dry_failures failed"
}
if [ $dry = 1 ]; then
  dry_run >"$results/dry.log" 2>&1
  rc=$?
  cat "$summary"
  [ $rc = 0 ] && [ $dry_failures = 0 ] && { echo "gpu_check --dry: PASS"; exit 0; }
  grep -E 'FAIL|not built|cannot' "$results/dry.log" | sort -u | head -20
  echo "gpu_check --dry: FAIL"
  exit 1
fi

machine >"$results/machine.txt" 2>&1
cat "$results/machine.txt"
sampler_start
if [ -n "$debs" ] || [ -n "$prefix" ]; then
  if [ -z "$prefix" ]; then
    prefix=/tmp/zf-gpu-prefix
    own_dir "$prefix" || exit 1
  fi
  mkdir -p "$prefix" && prefix=$(cd "$prefix" && pwd)
  if [ -n "$debs" ]; then
    step "prefix: unpack $(ls "$debs"/*.deb | wc -l) .debs into $prefix" "$results/build.log" "$(budget_of prefix)" unpack
  fi
  if [ $rehearse = 1 ]; then note "  the rehearsal's build uses this machine's libraries, not the prefix"
  else use_prefix
  fi
fi
if [ $prefix_only = 1 ]; then
  printf 'cmake arguments:'; printf ' %q' "${cmake_args[@]}"; echo
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  [ -z "$failed_steps" ] && exit 0 || exit 1
fi
[ $rehearse = 1 ] && set_sizes cpu || set_sizes gpu
[ $rehearse = 1 ] && not_here "the CUDA build (-DZF_REQUIRE_CUDA=ON): this build has the LibTorch CMake finds"
if step "build ($([ $rehearse = 1 ] && echo "${torch:-default}" || echo "$torch, CUDA") LibTorch, $jobs jobs)" \
  "$results/build.log" "$(budget_of build)" build; then
  [ $bench = 1 ] && models_start
  [ $gpu = 1 ] && step "[gpu] tests" "$results/gpu-tests.log" "$(budget_of gpu)" gpu_tests
  [ $unit = 1 ] && step "eval and io unit tests (CPU) against this LibTorch" "$results/unit-tests.log" \
    "$(budget_of unit)" unit_tests
  [ $bench = 1 ] && measurements
  models_wait
  [ -n "$layouts" ] && step "farm layouts: $layouts evaluator(s) on the GPU" "$results/farm-layouts.log" 0 farm_layouts
  [ -n "$net_sizes" ] && step "net sizes: $net_sizes on the GPU" "$results/net-sizes.log" 0 net_sizes_step
  if [ -n "$loop_minutes" ] && ! loop_may_run; then
    note "SKIP loop: an earlier step failed (a broken GPU path would spend the loop's device time for nothing)"
  elif [ -n "$loop_minutes" ]; then
    step "loop --recipe $loop_recipe on the GPU, $loop_minutes minutes" "$results/loop.log" 0 loop_gpu
  fi
fi
sampler_stop
note "total $(( $(date +%s) - started )) s of the $budget s budget; results in $results"
if [ $rehearse = 1 ]; then
  case "$(status)" in
    0) note "gpu_check: REHEARSAL PASS (every step run passed; $not_run GPU parts not run: no GPU${partial:+; left out: ${partial#; }}; this proves the script, not the GPU)" ;;
    *) note "gpu_check: REHEARSAL FAIL" ;;
  esac
  exit "$(status)"
fi
case "$(status)" in
  0) note "gpu_check: PASS" ;;
  3) note "gpu_check: PARTIAL (every step run passed, but left out: ${partial#; })" ;;
  *) note "gpu_check: FAIL" ;;
esac
exit "$(status)"
