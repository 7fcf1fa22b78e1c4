"""How often self-play played a move other than its search's most visited one, before and from ply 20.

    /usr/bin/python3 late_moves.py RUN [RUN ...]

Reads each run's last 20 shards (RUN/shards/vm/shard-*.h5). A position's
policy target is its search's visit distribution; the move played is
games/moves at the position's ply. Prints, for plies from 20 on and before
20, the share of positions whose played move has fewer visits than the most
visited, and for those from 20 on how much the root value fell across the
move (the mover's root value plus the next position's, which is the
opponent's).
"""
import glob
import sys

import h5py
import numpy as np

for run in sys.argv[1:]:
    late = nonbest = early = early_nonbest = 0
    drops = []
    for path in sorted(glob.glob(run + "/shards/vm/shard-*.h5"))[-20:]:
        with h5py.File(path, "r") as h:
            policy = h["positions/policy"][:]
            ply = h["positions/ply"][:]
            root = h["positions/root_value"][:]
            moves = h["games/moves"][:]
            offset = h["games/moves_offset"][:]
            count = h["games/position_count"][:]
        row = 0  # a game's positions are consecutive rows, in the games' order
        for g, n in enumerate(count):
            game_moves = moves[offset[g] : offset[g + 1]]
            for k in range(n):
                i = row + k
                if ply[i] >= len(game_moves):
                    continue
                other = policy[i][game_moves[ply[i]]] < policy[i].max()  # ties with the most visited count as it
                if ply[i] >= 20:
                    late += 1
                    nonbest += other
                    if other and k + 1 < n:
                        drops.append(root[i] + root[i + 1])
                else:
                    early += 1
                    early_nonbest += other
            row += n
    d = np.array(drops)
    lost = (f"root value lost across those moves: mean {d.mean():.3f}, more than 0.2 on {100 * np.mean(d > 0.2):.1f} %"
            if len(d) else "no such move")
    print(f"{run}: plies 20 on: {late} positions, the move played not the most visited {100 * nonbest / late:.1f} %"
          f" ({lost}); plies 0-19: {100 * early_nonbest / early:.1f} %")
