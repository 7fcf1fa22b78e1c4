#!/usr/bin/env python3
"""How much of a test set self-play reaches, and how the network does on what it reaches.

    coverage.py RUN MODEL_VERSION POSITIONS_CSV [--window 500000] [--plies 14]

The window: the newest shards of RUN (by shard index) whose model_version_max
is at most MODEL_VERSION, whole shards, until they hold --window positions
(the trainer's window when that model was written, near enough). Positions
are compared as boards, a board and its mirror image as one.

Prints, for the window:
  - the share of its rows whose board occurs more than once in it, by ply;
and for each test set in POSITIONS_CSV (tools/eval_sets.sh's positions-*.csv):
  - the share of its positions whose board occurs in the window (any game,
    any ply up to --plies);
  - for those and for the rest, the share of moves by verdict, MCTS-600 and
    the network alone (0: gives away the outcome, 1: keeps it but not the
    exact score, 2: the exact score's best).
Needs h5py and numpy.
"""
import argparse
import collections
import csv
import glob
import os

import h5py
import numpy as np


def board_key(moves):
    """Connect Four board after `moves` (0-based columns), mirror-canonical."""
    cols = [[] for _ in range(7)]
    for i, c in enumerate(moves):
        cols[c].append(1 + i % 2)
    k = tuple(tuple(col) for col in cols)
    return min(k, k[::-1])


def window_shards(run, version, positions):
    shards = []
    for path in glob.glob(os.path.join(run, 'shards', '*', '*.h5')):
        with h5py.File(path, 'r') as f:
            if int(f.attrs['model_version_max']) <= version:
                shards.append((int(f.attrs['shard_index']), path, int(f.attrs['positions'])))
    shards.sort(reverse=True)
    out, total = [], 0
    for _, path, n in shards:
        if total >= positions:
            break
        out.append(path)
        total += n
    return sorted(out)


def read_window(paths, plies):
    """Board counts over rows (by ply) and over every game prefix up to `plies`."""
    row_keys, row_plies, prefixes = [], [], collections.Counter()
    for path in paths:
        with h5py.File(path, 'r') as f:
            moves, offset = f['games/moves'][:], f['games/moves_offset'][:]
            first, count = f['games/first_position'][:], f['games/position_count'][:]
            ply = f['positions/ply'][:]
        for g in range(len(offset) - 1):
            ms = [int(m) for m in moves[offset[g]:offset[g + 1]]]
            for p in range(min(len(ms), plies) + 1):
                prefixes[board_key(ms[:p])] += 1
            for r in range(first[g], first[g] + count[g]):
                row_keys.append(board_key(ms[:ply[r]]))
                row_plies.append(int(ply[r]))
    return row_keys, np.array(row_plies), prefixes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('run')
    ap.add_argument('model_version', type=int)
    ap.add_argument('positions_csv')
    ap.add_argument('--window', type=int, default=500000)
    ap.add_argument('--plies', type=int, default=14)
    a = ap.parse_args()
    paths = window_shards(a.run, a.model_version, a.window)
    row_keys, row_plies, prefixes = read_window(paths, a.plies)
    counts = collections.Counter(row_keys)
    copies = np.array([counts[k] for k in row_keys])
    print(f'window: {len(paths)} shards, {os.path.basename(paths[0])} to {os.path.basename(paths[-1])}, '
          f'{len(row_keys)} rows, {len(counts)} distinct boards '
          f'({(1 - len(counts) / len(row_keys)) * 100:.1f} % of rows repeat a board before them)')
    for lo, hi in [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 12), (12, 16), (16, 20), (20, 43)]:
        s = (row_plies >= lo) & (row_plies < hi)
        if s.any():
            print(f'  plies {lo:2d}-{hi - 1:2d}: {s.mean() * 100:4.1f} % of rows, mean copies of their board '
                  f'{copies[s].mean():8.1f}, {(copies[s] > 1).mean() * 100:5.1f} % occur more than once')
    rows = list(csv.DictReader(open(a.positions_csv)))
    for name in sorted({r['file'] for r in rows}):
        mine = [r for r in rows if r['file'] == name]
        seen = [prefixes[board_key([int(c) - 1 for c in r['moves']])] > 0 for r in mine]
        print(f'{name}: {len(mine)} positions, {np.mean(seen) * 100:.1f} % of them in the window')
        for col, label in [('mcts_verdict', 'MCTS-600'), ('net_verdict', 'network alone')]:
            for want, what in [(True, 'in the window'), (False, 'not in it')]:
                sub = [r[col] for r, s in zip(mine, seen) if s == want]
                if not sub:
                    continue
                c = collections.Counter(sub)
                shares = ', '.join(f'{v}: {c[v] / len(sub) * 100:5.1f} %' for v in '012')
                print(f'  {label:13s} {what:13s} ({len(sub):4d}): {shares}')


if __name__ == '__main__':
    main()
