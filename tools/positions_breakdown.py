#!/usr/bin/env python3
"""Where a network gives the outcome away: a `zerofarm eval --positions-csv` file
broken down by the position's exact score, its plies played, and how many of its
moves keep the outcome (docs/learning.md, "Where v1337 gives Test_L1_R3 away").

    tools/positions_breakdown.py POSITIONS.csv [FILE]    (FILE: only rows of that Pons file)

A Pons score s > 0 is a win for the side to move with its s-th last stone (s = 1: with
its very last one, decided at the end of the board); 0 is a draw; s < 0 a loss (nothing to
give away).
"""
import sys
from collections import defaultdict

from positions_compare import read_rows

# The columns this tool reads (the file has more).
COLUMNS = ("file", "moves", "score", "rating", "net_verdict", "mcts_verdict")


def table(title, rows, key, label=str):
    groups = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    print(f"{title:>14}  positions  network gives away  MCTS gives away")
    for k in sorted(groups):
        g = groups[k]
        net = sum(r["net_verdict"] == "0" for r in g)
        mcts = [r for r in g if r["mcts_verdict"]]
        lost = sum(r["mcts_verdict"] == "0" for r in mcts)
        m = f"{lost:4d} ({100 * lost / len(mcts):5.1f} %)" if mcts else "   -"
        print(f"{label(k):>14}  {len(g):9d}  {net:6d} ({100 * net / len(g):5.1f} %)  {m}")
    print()


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: tools/positions_breakdown.py POSITIONS.csv [FILE]")
    rows = read_rows(sys.argv[1], COLUMNS)
    if len(sys.argv) == 3:
        rows = [r for r in rows if r["file"] == sys.argv[2]]
    if not rows:
        sys.exit(f"{sys.argv[1]}: no positions")
    print(f"{len(rows)} positions of {', '.join(sorted({r['file'] for r in rows}))}\n")
    table("exact score", rows, lambda r: int(r["score"]))
    table("plies played", rows, lambda r: len(r["moves"]) // 4 * 4, lambda k: f"{k}-{k + 3}")
    table("keep outcome", rows, lambda r: sum(c in "12" for c in r["rating"]), lambda k: f"{k} of moves")


if __name__ == "__main__":
    main()
