#!/usr/bin/env bash
# The scale-out path on a real Slurm (docs/scale-out.md): starts a one-node
# cluster of this machine in a temporary directory (munged, slurmctld,
# slurmd; non-default ports, its own munge key and socket), submits
# tools/slurm/farm.sbatch as a 3-task job array of short Connect Four farms
# into one run directory, waits, and checks what the hosts left:
#   - 3 host directories RUN/shards/0..2 and one RUN/run_id;
#   - every shard opens and is valid (tools/zf_shards.py check_shard);
#   - game ids are unique across the hosts and carry their host's index;
#   - each host's shards hold exactly the games its supervisor reported
#     finished and written, and every task exited 0;
#   - `zerofarm inspect RUN` sees the 3 hosts.
# It stops the daemons it started, by pid, whatever happens. Installs nothing:
# tools/setup.sh --test installs slurm-wlm and munge. Needs root (the daemons run as
# root); otherwise prints "[skipped]" and exits 77 (ctest: skipped).
#
# Usage: tests/slurm/slurm_test.sh PATH/TO/zerofarm      (ctest test `slurm`)
set -uo pipefail

zf=${1:?usage: slurm_test.sh PATH/TO/zerofarm}
zf=$(cd "$(dirname "$zf")" && pwd)/$(basename "$zf")
src=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
tasks=3
games=12

if [ "$(id -u)" -ne 0 ]; then
  echo "[skipped] slurm test: needs root to start munged, slurmctld and slurmd (uid $(id -u))"
  exit 77
fi
# Debian 12's slurmd (22.05) initialises its cgroup plugin whatever the
# proctrack and task plugins are, and cannot start without a cgroup
# filesystem (a bare chroot has none); later Slurm has CgroupPlugin=disabled.
if [ -z "$(ls -A /sys/fs/cgroup 2>/dev/null)" ]; then
  echo "[skipped] slurm test: no cgroup filesystem at /sys/fs/cgroup, without which Slurm 22.05's slurmd cannot start"
  exit 77
fi
export PATH="$PATH:/usr/sbin:/sbin"
for b in munged slurmctld slurmd sbatch squeue scontrol scancel; do
  command -v "$b" >/dev/null || { echo "FAIL: $b not found: run tools/setup.sh --test (slurm-wlm, munge)" >&2; exit 1; }
done

tmp=$(mktemp -d /tmp/zf-slurm.XXXXXX)
chmod 700 "$tmp"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/out"
pids=()
job=""
failed=1

cleanup() {
  local rc=$?
  if [ -n "$job" ]; then
    scancel "$job" >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  # Newest first: slurmd, slurmctld, munged.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$failed" -ne 0 ]; then
    echo "---- daemon logs and job output ($tmp)" >&2
    for f in "$tmp"/log/* "$tmp"/out/*.log; do
      [ -f "$f" ] && { echo "== $f" >&2; tail -n 25 "$f" >&2; }
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# Ports: two non-default ones, from this test's pid, so two test runs (or a
# real Slurm on 6817/6818) do not clash.
base=$((20000 + ($$ % 2000) * 2))
host=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)
cpus=$(nproc)

# ---- munge: its own key and socket --------------------------------------------
head -c 1024 /dev/urandom > "$tmp/munge.key"
chmod 600 "$tmp/munge.key"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
  --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" --log-file="$tmp/log/munged.log" \
  > "$tmp/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge.sock" ] || fail "munged did not create its socket"

# ---- slurm.conf: one node (this machine), no cgroups, no accounting -------------
cat > "$tmp/slurm.conf" <<EOF
ClusterName=zftest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
InactiveLimit=0
KillWait=10
MinJobAge=600
NodeName=zfnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=zf Nodes=zfnode Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf

slurmctld -D -c -f "$SLURM_CONF" > "$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N zfnode -f "$SLURM_CONF" > "$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 1 100); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then ready=1; break; fi
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a Slurm daemon (pid $pid) exited at start"; done
  sleep 0.2
done
[ "$ready" -eq 1 ] || fail "the node did not come up: $(sinfo -N 2>&1 | tail -n 2)"
echo "slurm: cluster up (ports $base, $((base + 1))), node zfnode with $cpus CPUs"

# ---- the job array: tools/slurm/farm.sbatch, 3 hosts ---------------------------
run=$tmp/run
export RUN=$run ZEROFARM=$zf ZF_GPUS=0 ZF_WORKERS=1 ZF_GAME=connect4
export ZF_ARGS="--games $games --games-per-worker 4 --simulations 8 --blocks 1 --filters 8 --shard-positions 80 --seed 3"
job=$(sbatch --parsable --array=0-$((tasks - 1)) --cpus-per-task=1 --time=5 \
  --output="$tmp/out/farm-%a.log" "$src/tools/slurm/farm.sbatch") || fail "sbatch refused the farm script"
job=${job%%;*}
echo "slurm: submitted job array $job ($tasks tasks)"
for _ in $(seq 1 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.2
done
wait_job() {  # JOB SECONDS: until squeue no longer lists JOB
  for _ in $(seq 1 $(($2 * 5))); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  fail "job $1 did not finish in $2 s"
}
wait_job "$job" 120
echo "slurm: job array $job done"

# Every task exited 0 (scontrol keeps finished jobs for MinJobAge seconds).
codes=$(scontrol -o show job "$job" | grep -o 'ExitCode=[0-9]*:[0-9]*' | sort | uniq -c | tr -s ' \n' ' ')
echo "slurm: exit codes:$codes"
[ "$(scontrol -o show job "$job" | grep -c 'ExitCode=0:0')" -eq "$tasks" ] || fail "not every task exited 0:$codes"

# ---- what the hosts left ----------------------------------------------------------
for i in $(seq 0 $((tasks - 1))); do
  grep -q "^zerofarm run: " "$tmp/out/farm-$i.log" || fail "task $i printed no summary"
done
"$python" - "$run" "$tmp/out" "$tasks" "$games" "$src/tools" <<'EOF' || fail "the run's shards are not what the hosts reported"
import os, re, sys
run, out, tasks, games, tools = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, tools)
import numpy as np
import zf_shards

hosts = sorted(d for d in os.listdir(os.path.join(run, "shards")))
assert hosts == [str(i) for i in range(tasks)], f"host directories {hosts}"
run_id = open(os.path.join(run, "run_id")).read().strip()
counts = zf_shards.host_counts(run)
all_ids = []
for h in hosts:
    log = open(os.path.join(out, f"farm-{h}.log")).read()
    m = re.search(r"(\d+) games finished, (\d+) written in (\d+) shards", log)
    assert m, f"host {h}: no summary line in its log"
    finished, written, shards = map(int, m.groups())
    paths = zf_shards.iter_shards(os.path.join(run, "shards", h))
    for p in paths:
        problems = zf_shards.check_shard(p)
        assert not problems, f"{p}: {problems}"
        meta = zf_shards.read_meta(p)
        assert meta["run_id"] == run_id and meta["host_id"] == h, f"{p}: run {meta['run_id']} host {meta['host_id']}"
    ids = np.concatenate([zf_shards.load_shard(p)["games/game_id"] for p in paths])
    assert (ids >> np.uint64(48) == int(h)).all(), f"host {h}: a game id without its host index"
    all_ids.append(ids)
    print(f"host {h}: {len(paths)} shards, {len(ids)} games in them; it reported {finished} finished, "
          f"{written} written in {shards} shards")
    assert finished == games and written == finished == len(ids) == counts[h]["games"], f"host {h}"
    assert shards == len(paths), f"host {h}: {shards} shards reported, {len(paths)} on disk"
ids = np.concatenate(all_ids)
assert len(np.unique(ids)) == len(ids) == tasks * games, f"{len(ids)} game ids, {len(np.unique(ids))} distinct"
print(f"{len(ids)} game ids, all distinct across {tasks} hosts")
EOF
"$zf" inspect "$run" --games 0 > "$tmp/inspect.txt" 2>&1 || { cat "$tmp/inspect.txt" >&2; fail "zerofarm inspect failed"; }
grep -q "^run .*: $tasks host(s)" "$tmp/inspect.txt" || { cat "$tmp/inspect.txt" >&2; fail "inspect did not see $tasks hosts"; }
grep "^host \|^total" "$tmp/inspect.txt"

# ---- a requeued task continues its host's shard numbering ---------------------------
before=$(ls "$run/shards/0"/*.h5 | sort)
first_new=$(printf 'shard-%06d.h5' "$(ls "$run/shards/0"/*.h5 | wc -l)")
scontrol requeue "${job}_0" || fail "scontrol requeue ${job}_0 refused"
# Slurm holds a requeued job back (BeginTime = now + a while); start it now.
scontrol update JobId="${job}_0" StartTime=now || fail "scontrol update StartTime=now refused"
wait_job "$job" 60
after=$(ls "$run/shards/0"/*.h5 | sort)
[ "$(echo "$after" | head -n "$(echo "$before" | wc -l)")" = "$before" ] || fail "the requeued task changed host 0's shards"
[ -f "$run/shards/0/$first_new" ] || fail "the requeued task did not continue at $first_new: $(ls "$run/shards/0")"
[ "$(cat "$run/shards/0/epoch")" = 1 ] || fail "host 0's epoch is $(cat "$run/shards/0/epoch") after one requeue, not 1"
echo "slurm: requeued task 0 continued at $first_new (epoch 1)"

# ---- SIGTERM to every process of a job (as preemption sends it) ---------------------
export ZF_ARGS="--games-per-worker 4 --simulations 8 --blocks 1 --filters 8 --shard-positions 80 --seed 4"
term=$(sbatch --parsable --array=7 --cpus-per-task=1 --time=5 --output="$tmp/out/farm-%a.log" \
  "$src/tools/slurm/farm.sbatch") || fail "sbatch refused the farm script"
term=${term%%;*}
job="$job,$term"
for _ in $(seq 1 300); do
  [ "$(ls "$run/shards/7"/*.h5 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.2
done
[ "$(ls "$run/shards/7"/*.h5 2>/dev/null | wc -l)" -ge 2 ] || fail "task 7 wrote no shards in 60 s"
scancel --full --signal=TERM "$term" || fail "scancel --signal=TERM refused"
wait_job "$term" 60
scontrol -o show job "$term" | grep -q 'ExitCode=0:0' ||
  fail "task 7 did not exit 0 after SIGTERM: $(scontrol -o show job "$term" | grep -o 'JobState=[A-Z]* .*ExitCode=[0-9:]*')"
"$python" - "$run" "$tmp/out/farm-7.log" "$src/tools" <<'EOF' || fail "task 7's shards are not what it reported"
import re, sys
run, log, tools = sys.argv[1:]
sys.path.insert(0, tools)
import zf_shards
m = re.search(r"signal Terminated after .*?(\d+) games finished, (\d+) written", open(log).read())
assert m, "no summary after SIGTERM"
finished, written = map(int, m.groups())
on_disk = zf_shards.host_counts(run)["7"]["games"]
print(f"host 7 after SIGTERM: {finished} finished, {written} written, {on_disk} in its shards")
assert finished == written == on_disk > 0
EOF

failed=0
echo "slurm: PASS"
