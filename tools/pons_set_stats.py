#!/usr/bin/env python3
"""How Pons-format test sets are made up, one line each: stones on the board,
the exact outcome for the side to move, and the plies the game has left with
perfect play. For comparing the sets `zerofarm eval --make-set` makes with
Pons's own files of the same kind (docs/training.md, "Sets made here").

    tools/pons_set_stats.py FILE...

Scores are Pons's: positive when the side to move wins, 22 - k for a win
with its k-th stone; negative when it loses; 0 for a draw.
"""

import statistics
import sys

import tool_errors  # tools/tool_errors.py: one line on a bad input file


def plies_left(stones, score):
    """Plies from a position of `stones` stones and Pons score `score` to the
    game's end with perfect play: to the winning stone, or to ply 42."""
    if score == 0:
        return 42 - stones
    k = 22 - abs(score)
    winner = stones % 2 if score > 0 else 1 - stones % 2
    return (2 * k - 1 if winner == 0 else 2 * k) - stones


def read(path):
    rows = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2 or not fields[0].isdigit():
                sys.exit(f"{path}:{n}: expected 'moves score', got {line.strip()!r}")
            rows.append((len(fields[0]), int(fields[1])))
    if not rows:
        sys.exit(f"{path}: no positions")
    return rows


def summary(path):
    rows = read(path)
    stones = [s for s, _ in rows]
    left = [plies_left(s, score) for s, score in rows]
    wins = sum(1 for _, score in rows if score > 0)
    draws = sum(1 for _, score in rows if score == 0)
    return (f"{path}: {len(rows)} positions; stones {min(stones)}-{max(stones)}, mean "
            f"{statistics.mean(stones):.1f} (sd {statistics.pstdev(stones):.1f}); side to move "
            f"wins/draws/loses {wins}/{draws}/{len(rows) - wins - draws}; plies left "
            f"{min(left)}-{max(left)}, mean {statistics.mean(left):.1f}, 4 or fewer "
            f"{sum(1 for x in left if x <= 4)}")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__.strip())
    for path in argv[1:]:
        print(summary(path))


if __name__ == "__main__":
    tool_errors.run(main, sys.argv)
