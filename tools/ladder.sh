#!/usr/bin/env bash
# Measures the newest checkpoints of a run against an outside engine ladder
# with `zerofarm match` (docs/match.md, docs/learning.md "Othello and Go").
#
#   tools/ladder.sh RUN GAME [CHECKPOINTS]    GAME: othello (gtp-rhino) or go (GNU Go, 9x9)
#
# For each of RUN's newest CHECKPOINTS (default 1) models, each ladder level
# and each search size it plays ZF_LADDER_GAMES games (default 20) into
# RUN/ladder/model-V/ENGINE-LEVEL-sSIMS/ and appends the match's JSON line, with
# "model", "version", "level", "sims" and "run_cpu_hours" (RUN/eval/loop-cpu-seconds.txt
# when it was measured: the run's CPU hours so far) added, to RUN/ladder/ladder.jsonl.
# A measurement already there is skipped, so the script resumes. Settings:
#   ZF_LADDER_LEVELS   engine levels (othello: "1 2 3", go: "0 1 2")
#   ZF_LADDER_SIMS     simulations per move, one match each (default "64 1"; 1 = about the network alone)
#   ZF_LADDER_GAMES    games per match (default 20)
#   ZF_LADDER_KOMI     Go komi (default 7)
#   ZF_BIN             the zerofarm binary (default build/zerofarm)
# Exit: 0 done; 2 a bad argument; 1 a match that failed (its output kept).
set -euo pipefail
usage() { echo "usage: $0 RUN othello|go [CHECKPOINTS]" >&2; exit 2; }
[ $# -ge 2 ] && [ $# -le 3 ] || usage
run=${1%/} game=$2 count=${3:-1}
[[ $count =~ ^[1-9][0-9]*$ ]] || usage
[ -d "$run/models" ] || { echo "ladder: $run/models: no such directory" >&2; exit 2; }
bin=${ZF_BIN:-build/zerofarm}
games=${ZF_LADDER_GAMES:-20}
sims_list=${ZF_LADDER_SIMS:-64 1}
engine_path() { command -v "$1" 2>/dev/null || { [ -x "/usr/games/$1" ] && echo "/usr/games/$1"; } || true; }
case "$game" in
  othello)
    engine=$(engine_path gtp-rhino) levels=${ZF_LADDER_LEVELS:-1 2 3} name=rhino
    extra=() ;;
  go | go9)
    game=go engine=$(engine_path gnugo) levels=${ZF_LADDER_LEVELS:-0 1 2} name=gnugo
    extra=(--komi "${ZF_LADDER_KOMI:-7}") ;;
  *) usage ;;
esac
[ -n "$engine" ] || { echo "ladder: no $name engine found (tools/setup.sh --test installs gnugo and grhino)" >&2; exit 2; }
engine_args() {  # LEVEL -> the engine's command line
  if [ "$name" = rhino ]; then echo "$engine --level $1"
  else echo "$engine --mode gtp --level $1 --chinese-rules --capture-all-dead"; fi
}

mkdir -p "$run/ladder"
out_jsonl=$run/ladder/ladder.jsonl
touch "$out_jsonl"
cpu_file=$run/eval/loop-cpu-seconds.txt
models=$(ls "$run/models" | grep -E '^model-[0-9]+\.h5$' | sed -E 's/^model-([0-9]+)\.h5$/\1/' | sort -n | tail -n "$count")
[ -n "$models" ] || { echo "ladder: $run/models holds no model-N.h5" >&2; exit 2; }
for v in $models; do
  for level in $levels; do
    for sims in $sims_list; do
      key="\"version\": $v, \"level\": $level, \"sims\": $sims}"
      if grep -qF "$key" "$out_jsonl"; then continue; fi
      dir=$run/ladder/model-$v/$name-$level-s$sims
      rm -rf "$dir.partial" && mkdir -p "$(dirname "$dir")"
      cpu=null
      [ -f "$cpu_file" ] && cpu=$(awk '{printf "%.3f", $1 / 3600}' "$cpu_file")
      echo "ladder: model-$v against $name level $level, $sims simulations, $games games" >&2
      "$bin" match --game "$game" --weights "$run/models/model-$v.h5" --simulations "$sims" \
        --games "$games" --engine "$(engine_args "$level")" --out "$dir.partial" "${extra[@]}" \
        > "$run/ladder/last.out" || { echo "ladder: the match failed; see $dir.partial" >&2; exit 1; }
      mv "$dir.partial" "$dir"
      python3 - "$dir/match.json" "$v" "$level" "$sims" "$cpu" >> "$out_jsonl" <<'PY'
import json, sys
path, v, level, sims, cpu = sys.argv[1:]
j = json.load(open(path))
j["out"] = path.rsplit("/", 1)[0]
j.update({"model": "model-%s.h5" % v, "run_cpu_hours": None if cpu == "null" else float(cpu)})
j.update({"version": int(v), "level": int(level), "sims": int(sims)})
print(json.dumps(j))
PY
      tail -n 1 "$out_jsonl"
    done
  done
done
