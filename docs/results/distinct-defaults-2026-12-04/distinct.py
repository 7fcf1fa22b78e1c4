import glob, sys, h5py
seqs = []
for p in sorted(glob.glob(sys.argv[1] + "/shards/*/*.h5")):
    with h5py.File(p, "r") as f:
        off = f["games/moves_offset"][()]; mv = f["games/moves"][()]
        for i in range(len(off) - 1):
            seqs.append(mv[off[i]:off[i + 1]].tobytes())
print(f"{len(seqs)} games, {len(set(seqs))} distinct ({100.0*len(set(seqs))/max(1,len(seqs)):.2f}%)")
