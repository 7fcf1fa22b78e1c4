#!/usr/bin/env python3
"""Prints a learning run's curve as the Markdown table of docs/learning.md.

    python3 tools/curve_table.py CURVE.csv [--files Test_L2_R1,Test_L1_R1] [--clock cpu_hours|hours]

CURVE.csv is RUN/eval/curve.csv of `zerofarm loop`. One row per evaluated
checkpoint (its clock, its version), then for each file the network alone and
MCTS (plain PUCT, solver = 0, the most simulations in the file): move error by
exact score, in brackets the share of moves that give the outcome away. A cell
is empty where the file was not evaluated at that checkpoint. Standard library
only, so the docs' tables can be remade from the committed CSV anywhere.
"""
import argparse
import csv
import sys

import tool_errors  # tools/tool_errors.py: one line on a bad input file


def pct(x):
    return f"{100 * float(x):.1f} %"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("curve")
    ap.add_argument("--files", default="Test_L2_R1,Test_L1_R1")
    ap.add_argument("--clock", default="cpu_hours", choices=["cpu_hours", "hours"])
    a = ap.parse_args()
    files = a.files.split(",")
    with open(a.curve, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("solver", "0") == "0"]
    sims = max(int(r["simulations"]) for r in rows)
    cells = {}  # (clock, version) -> file -> row
    for r in rows:
        if int(r["simulations"]) == sims:
            cells.setdefault((float(r[a.clock]), int(r["model_version"])), {})[r["file"]] = r
    clock = "CPU hours" if a.clock == "cpu_hours" else "hours"
    head = [clock, "model"] + [f"{f} {w}" for f in files for w in ("network", f"MCTS-{sims}")]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (hours, version), by_file in sorted(cells.items()):
        line = [f"{hours:.2f}", f"v{version}"]
        for name in files:
            r = by_file.get(name)
            line += (
                [f"{pct(r['net_error'])} ({pct(r['net_outcome_error'])})",
                 f"{pct(r['mcts_error'])} ({pct(r['mcts_outcome_error'])})"] if r else ["", ""])
        print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    tool_errors.run(main)
