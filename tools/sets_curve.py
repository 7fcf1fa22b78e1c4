#!/usr/bin/env python3
"""A loop run's curve on every Pons set: the rows of RUN/eval/curve.csv for the
sets the loop does not evaluate itself, from `tools/eval_sets.sh` logs.

    /usr/bin/python3 tools/sets_curve.py CURVE.csv SETS.log [SETS.log ...] > SETS-CURVE.csv

The loop evaluates two sets every 30 minutes (curve.csv); tools/eval_sets.sh
evaluates a checkpoint on all four with the same settings (the network alone
and plain PUCT at 600 simulations, so solver = 0) and logs one JSON line per
set. This prints curve.csv's header and one row per checkpoint and set of the
logs, in curve.csv's columns, with the clocks (hours, cpu_hours) of that
checkpoint's evaluation in CURVE.csv, for tools/plot_learning.py and
tools/curve_table.py. Where CURVE.csv holds the same checkpoint and set, the
two must agree (the evaluation is deterministic): a disagreement, a checkpoint
CURVE.csv never evaluated, or a log without figures ends the tool with one line
and exit 1. Standard library only (and positions_compare.py's CSV reader).
"""
import csv
import json
import sys

import tool_errors  # tools/tool_errors.py: one line on a bad input file

from positions_compare import read_rows

COLUMNS = ["hours", "model_version", "file", "positions", "simulations", "net_error", "mcts_error",
           "net_outcome_error", "mcts_outcome_error", "value_agreement", "cpu_hours", "solver"]
# The figures a sets log and curve.csv must agree on, where both have a row.
FIGURES = ["positions", "simulations", "net_error", "mcts_error", "net_outcome_error",
           "mcts_outcome_error"]


def read_curve(path):
    """curve.csv's plain-PUCT rows and each version's clocks (its first evaluation)."""
    rows = [r for r in read_rows(path, COLUMNS, "loop's curve.csv") if r["solver"] == "0"]
    clocks = {}
    for r in rows:
        clocks.setdefault(int(r["model_version"]), (r["hours"], r["cpu_hours"]))
    return rows, clocks


def read_log(path):
    """The move_error JSON lines of one eval_sets.sh log, as curve.csv rows without clocks."""
    out = []
    try:
        with open(path) as f:
            lines = [line for line in f if line.startswith('{"kind":"move_error"')]
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    for line in lines:
        j = json.loads(line)
        mcts, net = j.get("mcts"), j["network_alone"]
        if not mcts:
            sys.exit(f"{path}: {j['file']} has no MCTS figure (evaluated with --simulations 0?)")
        out.append({"model_version": str(j["model_version"]), "file": j["file"],
                    "positions": str(j["positions"]), "simulations": str(mcts["simulations"]),
                    "net_error": str(net["score_error"]), "mcts_error": str(mcts["score_error"]),
                    "net_outcome_error": str(net["outcome_error"]),
                    "mcts_outcome_error": str(mcts["outcome_error"]),
                    "value_agreement": str(j["value_head"]["value_agreement"]), "solver": "0"})
    if not out:
        sys.exit(f"{path}: no `zerofarm eval` figures (not a tools/eval_sets.sh log?)")
    return out


def check_agrees(row, curve_rows, path):
    for c in curve_rows:
        if (c["model_version"], c["file"], c["simulations"]) != \
                (row["model_version"], row["file"], row["simulations"]):
            continue
        for k in FIGURES:
            if float(c[k]) != float(row[k]):
                sys.exit(f"{path}: v{row['model_version']} {row['file']} {k} {row[k]} differs from "
                         f"the curve's {c[k]}: not the same evaluation")


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: sets_curve.py CURVE.csv SETS.log [SETS.log ...]")
    curve_rows, clocks = read_curve(argv[1])
    w = csv.DictWriter(sys.stdout, COLUMNS, lineterminator="\n")
    w.writeheader()
    rows = []
    for path in argv[2:]:
        for row in read_log(path):
            version = int(row["model_version"])
            if version not in clocks:
                sys.exit(f"{path}: v{version} is not in {argv[1]}: no clock for it")
            check_agrees(row, curve_rows, path)
            row["hours"], row["cpu_hours"] = clocks[version]
            rows.append(row)
    for row in sorted(rows, key=lambda r: (float(r["cpu_hours"]), r["file"])):
        w.writerow(row)
    return 0


if __name__ == "__main__":
    sys.exit(tool_errors.run(main, sys.argv))
