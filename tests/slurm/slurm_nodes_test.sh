#!/usr/bin/env bash
# Two hosts for real (docs/scale-out.md): a Slurm of two nodes on this machine.
# slurmctld runs in a network namespace of its own with a bridge; each slurmd
# runs in its own network namespace (a veth on that bridge, its own address on
# the test's subnet 10.77.0.0/24, which exists only inside these namespaces),
# its own UTS namespace (hostname zfa or zfb) and its own mount namespace (a
# private tmpfs on /dev/shm and another as its local disk, and the shared run
# directory bind-mounted at the path both nodes use). The root namespace's
# network is not touched.
#
# One job array runs tools/slurm/farm.sbatch on both nodes at once and
# tools/slurm/train.sbatch beside it; the test checks that
#   - each node wrote its own host directory, every shard is valid, game ids
#     are unique and carry their host's index and epoch, and each host's
#     manifest lists exactly its shards;
#   - the trainer started from both hosts' shards;
#   - both nodes' evaluators hot-reloaded its models (shards of model > 0)
#     from their node's local disk (--stage-dir: each model copied once per
#     host start, the copies only on that node);
#   - array task 1, requeued while running, continued its host's shard
#     numbering in epoch 1; every task exited 0.
# NFS: not exported here (no kernel nfsd or exportfs on CI's machine); the
# test says so on one line.
# Skips ("[skipped]", exit 77) only without root, without a cgroup filesystem
# or where network, UTS and mount namespaces cannot be made (a bare chroot).
# It stops what it started, by pid, and deletes its namespaces.
#
# Usage: tests/slurm/slurm_nodes_test.sh PATH/TO/zerofarm   (ctest `slurm-nodes`)
set -uo pipefail

zf=${1:?usage: slurm_nodes_test.sh PATH/TO/zerofarm}
zf=$(cd "$(dirname "$zf")" && pwd)/$(basename "$zf")
src=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
name="slurm-nodes test"

if [ "$(id -u)" -ne 0 ]; then
  echo "[skipped] $name: needs root to make namespaces and start munged, slurmctld and slurmd (uid $(id -u))"
  exit 77
fi
if [ -z "$(ls -A /sys/fs/cgroup 2>/dev/null)" ]; then
  echo "[skipped] $name: no cgroup filesystem at /sys/fs/cgroup, without which Slurm 22.05's slurmd cannot start"
  exit 77
fi
export PATH="$PATH:/usr/sbin:/sbin"
for b in munged slurmctld slurmd sbatch squeue scontrol scancel ip nsenter unshare; do
  command -v "$b" >/dev/null || { echo "FAIL: $b not found: run tools/setup.sh (slurm-wlm, munge, iproute2)" >&2; exit 1; }
done
if ! probe=$(unshare --net --uts --mount true 2>&1); then
  echo "[skipped] $name: no namespaces here (unshare --net --uts --mount: $probe)"
  exit 77
fi

tmp=$(mktemp -d /tmp/zf-slurm2.XXXXXX)
chmod 700 "$tmp"
mkdir -p "$tmp/state" "$tmp/spool/zfa" "$tmp/spool/zfb" "$tmp/log" "$tmp/out" "$tmp/shared" "$tmp/mnt" "$tmp/local"
ns_ctl=zf$$ctl
nodes=(zfa zfb)
declare -A ns addr
ns[zfa]=zf$$a addr[zfa]=10.77.0.2
ns[zfb]=zf$$b addr[zfb]=10.77.0.3
made_ns=()
pids=()
jobs_=""
failed=1

cleanup() {
  local rc=$?
  if [ -n "$jobs_" ]; then
    ctl scancel "${jobs_//,/ }" >/dev/null 2>&1 || true
    for _ in $(seq 1 100); do [ -z "$(ctl squeue -h 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for n in "${made_ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done
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
ctl() { nsenter --net="/run/netns/$ns_ctl" "$@"; }  # a Slurm client, in the controller's network

# ---- the network: a bridge in the controller's namespace, a veth per node -----------
if ! err=$(ip netns add "$ns_ctl" 2>&1); then
  echo "[skipped] $name: cannot make a network namespace (ip netns add: $err)"
  failed=0
  exit 77
fi
made_ns+=("$ns_ctl")
ip -n "$ns_ctl" link set lo up || fail "lo in $ns_ctl"
ip -n "$ns_ctl" link add zfbr type bridge || fail "cannot make a bridge in $ns_ctl"
ip -n "$ns_ctl" addr add 10.77.0.1/24 dev zfbr && ip -n "$ns_ctl" link set zfbr up || fail "bridge address"
for node in "${nodes[@]}"; do
  ip netns add "${ns[$node]}" || fail "ip netns add ${ns[$node]}"
  made_ns+=("${ns[$node]}")
  ip -n "${ns[$node]}" link set lo up &&
    ip -n "$ns_ctl" link add "v$node" type veth peer name eth0 netns "${ns[$node]}" &&
    ip -n "$ns_ctl" link set "v$node" master zfbr up &&
    ip -n "${ns[$node]}" addr add "${addr[$node]}/24" dev eth0 &&
    ip -n "${ns[$node]}" link set eth0 up || fail "cannot wire node $node's namespace"
done
echo "slurm-nodes: namespaces $ns_ctl (10.77.0.1, bridge), ${ns[zfa]} (zfa ${addr[zfa]}), ${ns[zfb]} (zfb ${addr[zfb]})"
if [ -d /proc/fs/nfsd ] && command -v exportfs >/dev/null; then
  echo "slurm-nodes: nfs: skipped: the run directory is shared by bind mounts only (an NFS export is not wired in yet)"
else
  echo "slurm-nodes: nfs: skipped: no kernel NFS server here ($([ -d /proc/fs/nfsd ] || echo 'no /proc/fs/nfsd; ')$(command -v exportfs >/dev/null || echo 'no exportfs'))"
fi

# ---- munge: its own key and socket (a path socket reaches every namespace) ---------
head -c 1024 /dev/urandom > "$tmp/munge.key"
chmod 600 "$tmp/munge.key"
munged --foreground --force --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" \
  --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" --log-file="$tmp/log/munged.log" \
  > "$tmp/log/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge.sock" ] || fail "munged did not create its socket"

# ---- slurm.conf: two nodes of 4 CPUs each (config_overrides: more than this machine has)
cat > "$tmp/slurm.conf" <<EOF
ClusterName=zfnodes
SlurmctldHost=zfctl(10.77.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd-%n.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd-%n.log
SlurmdParameters=config_overrides
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
NodeName=zfa NodeHostname=zfa NodeAddr=${addr[zfa]} CPUs=4 State=UNKNOWN
NodeName=zfb NodeHostname=zfb NodeAddr=${addr[zfb]} CPUs=4 State=UNKNOWN
PartitionName=zf Nodes=zfa,zfb Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf

ctl unshare --uts sh -c 'hostname zfctl && exec slurmctld -D -c -f "$SLURM_CONF"' \
  > "$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
# Each node: its namespaces, its hostname, its /dev/shm, the run directory at $tmp/mnt.
for node in "${nodes[@]}"; do
  nsenter --net="/run/netns/${ns[$node]}" unshare --uts --mount --propagation private sh -c \
    "hostname $node && mount -t tmpfs -o size=256m,mode=1777 zfshm-$node /dev/shm &&
     mount -t tmpfs -o size=64m,mode=0755 zflocal-$node '$tmp/local' && mount --bind '$tmp/shared' '$tmp/mnt' && exec slurmd -D -N $node -f \"\$SLURM_CONF\"" \
    > "$tmp/log/slurmd-$node.out" 2>&1 &
  pids+=($!)
  declare "pid_$node=$!"
done
ready=0
for _ in $(seq 1 150); do
  if [ "$(ctl sinfo -h -N -o '%T' 2>/dev/null | grep -cE '^(idle|mixed|allocated)')" -eq 2 ]; then ready=1; break; fi
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || fail "a daemon (pid $pid) exited at start"; done
  sleep 0.2
done
[ "$ready" -eq 1 ] || fail "the nodes did not come up: $(ctl sinfo -N 2>&1 | tail -n 3)"
for node in "${nodes[@]}"; do
  pid_var=pid_$node
  shm=$(nsenter --target "${!pid_var}" --mount findmnt -n -o SOURCE /dev/shm | tail -n 1)
  uts=$(nsenter --target "${!pid_var}" --uts hostname)
  [ "$shm" = "zfshm-$node" ] && [ "$uts" = "$node" ] || fail "node $node: /dev/shm from '$shm', hostname '$uts'"
done
echo "slurm-nodes: cluster up: $(ctl sinfo -h -N -o '%N %T' | tr '\n' ' ')(own hostnames and /dev/shm)"

# ---- the farm array (one task per node) and the trainer beside it -------------------
run=$tmp/mnt/run       # where the nodes see it
disk=$tmp/shared/run   # where this test reads it
export RUN=$run ZEROFARM=$zf ZF_GPUS=0 ZF_WORKERS=1 ZF_GAME=connect4 ZF_DURATION=0
export ZF_ARGS="--games-per-worker 4 --simulations 8 --blocks 1 --filters 8 --shard-positions 80 --seed 3 --stage-dir $tmp/local/stage"
farm=$(ctl sbatch --parsable --array=0-1 --cpus-per-task=3 --time=10 \
  --output="$tmp/out/farm-%a.log" "$src/tools/slurm/farm.sbatch") || fail "sbatch refused the farm script"
farm=${farm%%;*}
jobs_=$farm
echo "slurm-nodes: submitted farm array $farm (2 tasks, 3 CPUs each: one per node)"

shards() { ls "$disk/shards/$1"/shard-*.h5 2>/dev/null | wc -l; }
# Every wait below ends by $deadline, well within ctest's TIMEOUT (600 s), so
# the cleanup always runs: a test killed by ctest would leave its daemons.
deadline=$((SECONDS + 480))
until_true() {  # SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s
  local secs=$1 what=$2
  local end=$((SECONDS + secs < deadline ? SECONDS + secs : deadline))
  shift 2
  while [ "$SECONDS" -lt "$end" ]; do "$@" && return 0; sleep 0.5; done
  fail "$what: not within $secs s (or the test's 480 s)"
}
both_wrote() { [ "$(shards 0)" -ge 1 ] && [ "$(shards 1)" -ge 1 ]; }
until_true 180 "both hosts write a shard" both_wrote
on=$(ctl squeue -h -j "$farm" -o '%K %N' | sort | tr '\n' ' ')
echo "slurm-nodes: farm tasks running on: $on"
[ "$(ctl squeue -h -j "$farm" -t R -o '%N' | sort -u | wc -l)" -eq 2 ] || fail "the 2 farm tasks do not run on 2 nodes: $on"
started_with=$(($(shards 0) + $(shards 1)))

export ZF_TRAIN_ARGS="--window 1000000 --min-positions 80 --batch 32 --checkpoint-steps 20 --blocks 1 --filters 8 --device cpu --no-status"
train=$(ctl sbatch --parsable --cpus-per-task=1 --gres=none --time=10 --output="$tmp/out/train.log" \
  "$src/tools/slurm/train.sbatch") || fail "sbatch refused the train script"
jobs_="$farm,$train"
echo "slurm-nodes: submitted trainer $train with $started_with shards on disk"

# Both hosts hot-reload a model: one of each host's 3 newest shards played by
# a model version > 0 (the versions only grow; older shards are not read).
reloaded() {
  "$python" - "$disk" "$src/tools" <<'EOF'
import glob, os, sys
sys.path.insert(0, sys.argv[2])
import zf_shards
for h in ("0", "1"):
    newest = sorted(glob.glob(os.path.join(sys.argv[1], "shards", h, "shard-*.h5")))[-3:]
    if not any(zf_shards.read_meta(p)["model_version_max"] > 0 for p in newest):
        sys.exit(1)
EOF
}
until_true 300 "both hosts write a shard of a trained model" reloaded
echo "slurm-nodes: both hosts wrote shards of the trainer's models; models: $(ls "$disk/models" | tr '\n' ' ')"

# ---- task 1 killed while running, requeued: it continues its host's numbering ---------
node1=$(ctl squeue -h -j "${farm}_1" -o '%N')
ctl scontrol requeue "${farm}_1" || fail "scontrol requeue ${farm}_1 refused"
pending() { [ "$(ctl squeue -h -j "${farm}_1" -o '%T')" = PENDING ]; }
until_true 60 "the requeued task 1 is pending" pending
killed_at=$(shards 1)
ctl scontrol update JobId="${farm}_1" StartTime=now || fail "scontrol update StartTime=now refused"
new_shard() { [ "$(cat "$disk/shards/1/epoch" 2>/dev/null)" = 1 ] && [ "$(shards 1)" -gt "$killed_at" ]; }
until_true 180 "the requeued task 1 writes a shard in epoch 1" new_shard
echo "slurm-nodes: task 1 killed on $node1 after $killed_at shards, requeued on $(ctl squeue -h -j "${farm}_1" -o '%N'), continued"

# ---- stop everything as a time limit does; every task exits 0 ------------------------
ctl scancel --signal=TERM --full "$farm" "$train" || fail "scancel --signal=TERM refused"
done_() { [ -z "$(ctl squeue -h -j "$farm,$train" 2>/dev/null)" ]; }
until_true 120 "the jobs end after SIGTERM" done_
codes=$(ctl scontrol -o show job "$farm" | grep -o 'ExitCode=[0-9]*:[0-9]*' | tr '\n' ' ')
[ "$(ctl scontrol -o show job "$farm" | grep -c 'ExitCode=0:0')" -eq 2 ] || fail "farm tasks' exit codes: $codes"
ctl scontrol -o show job "$train" | grep -q 'ExitCode=0:0' ||
  fail "trainer: $(ctl scontrol -o show job "$train" | grep -o 'ExitCode=[0-9:]*')"

# ---- what the hosts left ------------------------------------------------------------
"$python" - "$disk" "$tmp/out" "$started_with" "$src/tools" <<'EOF' || fail "the run is not what the hosts reported"
import os, re, sys
run, out, started_with, tools = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, tools)
import numpy as np
import zf_shards

hosts = sorted(os.listdir(os.path.join(run, "shards")))
assert hosts == ["0", "1"], f"host directories {hosts}"
run_id = open(os.path.join(run, "run_id")).read().strip()
names, all_ids = set(), []
for h in hosts:
    log = open(os.path.join(out, f"farm-{h}.log")).read()
    names |= set(re.findall(r"task " + h + r" on (\S+), restart", log))
    assert re.search(r"loaded model version [1-9]", log), f"host {h}: no evaluator loaded a trained model"
    # --stage-dir: every load from the node's stage, each version copied once per host start.
    loads = re.findall(r"loaded model version \d+ from (\S+)", log)
    assert loads and all("/local/stage/" in p for p in loads), f"host {h}: loads not from the stage: {loads}"
    starts = len(re.findall(r"task " + h + r" on \S+, restart", log))
    copies = re.findall(r"staged model version (\d+):", log)
    assert copies and max(copies.count(v) for v in copies) <= starts, f"host {h}: copies {copies}, {starts} start(s)"
    paths = zf_shards.iter_shards(os.path.join(run, "shards", h))
    want = [f"shard-{i:06d}.h5" for i in range(len(paths))]
    assert [os.path.basename(p) for p in paths] == want, f"host {h}: shard names not contiguous"
    epochs, versions = [], []
    for p in paths:
        problems = zf_shards.check_shard(p)
        assert not problems, f"{p}: {problems}"
        meta = zf_shards.read_meta(p)
        assert meta["run_id"] == run_id and meta["host_id"] == h, f"{p}: run {meta['run_id']} host {meta['host_id']}"
        epochs.append(int(meta.get("epoch", 0)))
        versions.append(int(meta["model_version_max"]))
        ids = zf_shards.load_shard(p)["games/game_id"]
        assert (ids >> np.uint64(48) == int(h)).all(), f"{p}: a game id without its host index"
        assert ((ids >> np.uint64(36)) & np.uint64(0xFFF) == epochs[-1]).all(), f"{p}: game ids not of epoch {epochs[-1]}"
        all_ids.append(ids)
    assert epochs == sorted(epochs), f"host {h}: epochs out of order {epochs}"
    # The writer's manifest lists exactly the shards renamed into place, in order.
    listed = [line.split()[0] for line in open(os.path.join(run, "shards", h, "manifest"))]
    assert listed == want, f"host {h}: the manifest lists {len(listed)} shards, the directory holds {len(want)}"
    assert max(versions) > 0, f"host {h}: no shard of a trained model"
    want_epochs = {0, 1} if h == "1" else {0}
    assert set(epochs) == want_epochs, f"host {h}: epochs {sorted(set(epochs))}, not {sorted(want_epochs)}"
    print(f"host {h}: {len(paths)} shards, epochs {sorted(set(epochs))}, model versions up to {max(versions)}")
assert names == {"zfa", "zfb"}, f"the tasks ran on {names}"
ids = np.concatenate(all_ids)
assert len(np.unique(ids)) == len(ids), f"{len(ids)} game ids, {len(np.unique(ids))} distinct"
print(f"{len(ids)} game ids, all distinct across the 2 hosts; tasks ran on {sorted(names)}")
train = open(os.path.join(out, "train.log")).read()
m = re.search(r"window (\d+) positions in (\d+) shards", train)
assert m, "the trainer logged no window"
assert int(m.group(2)) >= started_with, f"the trainer started on {m.group(2)} shards, {started_with} were there"
print(f"trainer: started on {m.group(2)} shards of both hosts ({started_with} on disk when it was submitted)")
EOF
# Models staged per host: on each node's own disk, none on the shared one.
[ -z "$(ls -A "$tmp/local")" ] || fail "a staged model on the test's side of $tmp/local: $(ls -A "$tmp/local")"
for node in "${nodes[@]}"; do
  pid_var=pid_$node
  staged=$(nsenter --target "${!pid_var}" --mount sh -c "ls '$tmp'/local/stage/*/ 2>/dev/null" | grep -c '^model-')
  [ "$staged" -ge 1 ] || fail "node $node: no model staged on its local disk"
done
echo "slurm-nodes: both nodes' evaluators loaded models staged on their own disk"
"$zf" inspect "$disk" --games 0 > "$tmp/inspect.txt" 2>&1 || { cat "$tmp/inspect.txt" >&2; fail "zerofarm inspect failed"; }
grep -q "^run .*: 2 host(s)" "$tmp/inspect.txt" || { cat "$tmp/inspect.txt" >&2; fail "inspect did not see 2 hosts"; }

failed=0
echo "slurm-nodes: PASS"
