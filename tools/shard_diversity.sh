#!/usr/bin/env bash
# How varied a run's self-play games are: per shard, the games, how many distinct
# openings (first 4/8/12/20 plies) they have, and their results. Collapsed
# self-play shows as few distinct openings and many draws (docs/learning.md, "Choices").
#
#   tools/shard_diversity.sh SHARD.h5 ...      (ZEROFARM=build/zerofarm by default)
set -euo pipefail
zf=${ZEROFARM:-build/zerofarm}
[ $# -ge 1 ] || { echo "usage: $0 SHARD.h5 ..." >&2; exit 2; }
echo "shard,models,games,distinct4,distinct8,distinct12,distinct20,first_wins,second_wins,draws"
for f in "$@"; do
  out=$("$zf" inspect --games 1000000 "$f")
  models=$(head -1 <<<"$out" | sed -n 's/.*model versions \([0-9.]*\),.*/\1/p')
  moves=$(awk '$1 == "moves:" {print $2}' <<<"$out")
  games=$(wc -l <<<"$moves")
  row="$(basename "$f"),$models,$games"
  for k in 4 8 12 20; do row+=",$(cut -c1-$k <<<"$moves" | sort -u | wc -l)"; done
  for r in 1-0 0-1 draw; do row+=",$(grep -c "plies  $r\$" <<<"$out" || true)"; done
  echo "$row"
done
