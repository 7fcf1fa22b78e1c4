#!/usr/bin/env python3
"""sampled.py SHARD...: per ply, the share of rows whose game later (or there) played a move that was
not its search's best (policy share below the largest): the rows --bootstrap-sampled retargets."""
import sys, h5py, numpy as np
by_ply = {}
for path in sys.argv[1:]:
    with h5py.File(path, 'r') as f:
        pol = f['/positions/policy'][:]; ply = f['/positions/ply'][:]
        first = f['/games/first_position'][:]; count = f['/games/position_count'][:]
        moves = f['/games/moves'][:]; off = f['/games/moves_offset'][:]; length = f['/games/length'][:]
        for g in range(len(first)):
            rows = list(range(first[g], first[g] + count[g]))
            rows.sort(key=lambda r: -ply[r])
            seen = False
            for r in rows:
                p = ply[r]
                if p < length[g]:
                    mv = moves[off[g] + p]
                    if pol[r][mv] < pol[r].max(): seen = True
                b = by_ply.setdefault(int(p), [0, 0]); b[0] += seen; b[1] += 1
print("ply,rows,share")
for p in sorted(by_ply):
    s, n = by_ply[p]
    print(f"{p},{n},{s / n:.3f}")
