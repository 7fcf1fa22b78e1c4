#!/usr/bin/env python3
"""Two networks on the same positions, compared position by position: two
`zerofarm eval --positions-csv` files of the same Pons files (docs/training.md).

    tools/positions_compare.py A.csv B.csv [FILE]    (FILE: only rows of that Pons file)

For each chooser (the network alone, MCTS) and each error (gives the outcome away:
verdict 0; not an optimal move: verdict below 2) it prints both rates and the positions
where only one of the two errs, with the exact two-sided sign test (McNemar) on those:
the chance of a split at least that uneven if neither network were better. A paired
test sees differences that two rates' standard errors (about 0.7 points at 5 % of 1000
positions) hide, because most positions are right or wrong for both.
"""
import csv
import sys
from collections import Counter
from math import comb

# The columns this tool reads (the file has more).
COLUMNS = ("file", "moves", "net_verdict", "mcts_verdict")


def sign_test(a_only, b_only):
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def read_rows(path, columns, what="`zerofarm eval --positions-csv` file"):
    """The rows of a CSV file (by default a `zerofarm eval --positions-csv` one), which
    must hold `columns`; a file missing, unreadable or of other columns ends the tool
    with one line."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                sys.exit(f"{path}: not a {what} (no column {missing[0]})")
            return list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}")


def read(path, only):
    """{(file, moves, k): row}; k counts earlier rows of the same line, so a
    position a file holds twice counts twice, as `zerofarm eval` counts it."""
    rows, seen = {}, Counter()
    for r in read_rows(path, COLUMNS):
        if only is None or r["file"] == only:
            line = (r["file"], r["moves"])
            rows[line + (seen[line],)] = r
            seen[line] += 1
    return rows


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: tools/positions_compare.py A.csv B.csv [FILE]")
    only = sys.argv[3] if len(sys.argv) == 4 else None
    a, b = read(sys.argv[1], only), read(sys.argv[2], only)
    if set(a) != set(b):
        sys.exit(f"the two files hold different positions ({len(a)} and {len(b)}; "
                 f"{len(set(a) ^ set(b))} in one only)")
    if not a:
        sys.exit("no positions")
    errors = {"gives the outcome away": lambda v: v == "0", "not optimal": lambda v: v in ("0", "1")}
    print(f"{len(a)} positions; A = {sys.argv[1]}, B = {sys.argv[2]}")
    print(f"{'chooser':>8}  {'error':<22}  {'A':>7}  {'B':>7}  A only  B only  sign test p")
    for chooser in ("net", "mcts"):
        keys = [k for k in a if a[k][f"{chooser}_verdict"] and b[k][f"{chooser}_verdict"]]
        if not keys:
            continue
        for name, err in errors.items():
            ea = [err(a[k][f"{chooser}_verdict"]) for k in keys]
            eb = [err(b[k][f"{chooser}_verdict"]) for k in keys]
            a_only = sum(x and not y for x, y in zip(ea, eb))
            b_only = sum(y and not x for x, y in zip(ea, eb))
            print(f"{chooser:>8}  {name:<22}  {100 * sum(ea) / len(keys):6.1f}%  "
                  f"{100 * sum(eb) / len(keys):6.1f}%  {a_only:6d}  {b_only:6d}  "
                  f"{sign_test(a_only, b_only):11.3f}")


if __name__ == "__main__":
    main()
