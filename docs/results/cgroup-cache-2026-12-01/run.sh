#!/usr/bin/env bash
# The evaluation cache's auto size inside a memory cgroup (docs/search.md): a farm
# started in a v1 memory cgroup limited to 512 MiB, then the same farm outside it,
# each run's resolved eval_cache from its config.txt; then that the cache's kind of
# mapping is not bound by /dev/shm's size. Root, a v1 memory controller
# at /sys/fs/cgroup/memory (this machine's; a v2 host would use memory.max).
#   docs/results/cgroup-cache-2026-12-01/run.sh BUILD > result.txt
set -euo pipefail
zf=$1/zerofarm cg=/sys/fs/cgroup/memory/zf-cache-check out=$(mktemp -d)
farm="run --game connect4 --workers 1 --simulations 8 --blocks 1 --filters 8 --duration 3 --no-status"
echo "date: $(date -u +%FT%TZ)  host: $(uname -n)  cpu: $(lscpu | sed -n 's/^Model name: *//p')  load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "MemAvailable: $(grep MemAvailable /proc/meminfo | tr -s ' ' | cut -d' ' -f2-)"
mkdir -p "$cg"
echo $((512 << 20)) > "$cg/memory.limit_in_bytes"
echo "in $cg, memory.limit_in_bytes $(cat "$cg/memory.limit_in_bytes"):"
sh -c "echo \$\$ > $cg/cgroup.procs; exec $zf $farm --out $out/in" > "$out/in.log" 2>&1
grep eval_cache "$out"/in/shards/*/config.txt
echo "memory.max_usage_in_bytes $(cat "$cg/memory.max_usage_in_bytes")"
rmdir "$cg"
echo "outside it:"
$zf $farm --out "$out/out" > "$out/out.log" 2>&1
grep eval_cache "$out"/out/shards/*/config.txt
rm -rf "$out"
echo "an anonymous MAP_SHARED mapping of 64 MiB, every page written, under a 1 MiB /dev/shm:"
unshare -m sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm && df -h /dev/shm | tail -1 && /usr/bin/python3 -c "
import mmap
m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
for i in range(0, 64 << 20, 4096): m[i] = 1
print(\"written: 64 MiB\")"'
