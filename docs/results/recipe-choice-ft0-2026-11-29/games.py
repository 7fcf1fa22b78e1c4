import sys, glob, h5py, numpy as np
for run in sys.argv[1:]:
    files = sorted(glob.glob(run + "/shards/vm/shard-*.h5"))
    n = len(files)
    for label, part in (("first half", files[: n // 2]), ("second half", files[n // 2 :])):
        res = []; ln = []
        for f in part:
            with h5py.File(f, "r") as h:
                res.append(h["games/result"][:]); ln.append(h["games/length"][:])
        r = np.concatenate(res); l = np.concatenate(ln)
        print(f"{run} {label} ({len(part)} shards, {len(r)} games): first player won {np.mean(r==0)*100:.1f} %, second {np.mean(r==1)*100:.1f} %, drawn {np.mean(r==-1)*100:.1f} %, mean length {l.mean():.1f} plies")
