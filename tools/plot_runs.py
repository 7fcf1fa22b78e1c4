#!/usr/bin/env python3
"""Several learning runs on one Pons file, side by side (issue #25).

    /usr/bin/python3 tools/plot_runs.py OUT.png LABEL=CURVE.csv [LABEL=CURVE.csv ...]
                                        [--file Test_L1_R3] [--clock hours|cpu_hours]
                                        [--checkpoint-steps 300] [--title TEXT]

Each CURVE.csv is RUN/eval/curve.csv of `zerofarm loop`. Two panels: the share of
moves that give the outcome away on --file against the run's clock (wall-clock
minutes, or CPU hours of its process tree), and against trainer steps (the
checkpoint's version x --checkpoint-steps, the recipe's 300). Solid: plain PUCT at
the file's largest simulation count; dashed: the network alone. Each run's own
clock: runs on two machines (or two lent GPUs) are not one measurement, so read
the panels as where each run was, not as a ratio. Needs matplotlib.
"""
import argparse
import csv
import sys

import tool_errors  # tools/tool_errors.py: one line on a bad input file

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(path, pons_file):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    rows = [r for r in rows if r["file"] == pons_file and r.get("solver", "0") in ("0", "")]
    if not rows:
        raise SystemExit("plot_runs.py: no rows of %s with solver = 0 in %s" % (pons_file, path))
    sims = max(int(r["simulations"]) for r in rows)
    return sorted((r for r in rows if int(r["simulations"]) == sims), key=lambda r: float(r["hours"])), sims


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("out")
    p.add_argument("runs", nargs="+", metavar="LABEL=CURVE.csv")
    p.add_argument("--file", default="Test_L1_R3")
    p.add_argument("--clock", choices=("hours", "cpu_hours"), default="hours")
    p.add_argument("--checkpoint-steps", type=int, default=300)
    p.add_argument("--title", default="")
    a = p.parse_args(argv[1:])
    fig, (by_clock, by_steps) = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True)
    for i, spec in enumerate(a.runs):
        label, _, path = spec.partition("=")
        if not path:
            raise SystemExit("plot_runs.py: %r is not LABEL=CURVE.csv" % spec)
        rows, sims = read_rows(path, a.file)
        clock = [float(r[a.clock]) * (60 if a.clock == "hours" else 1) for r in rows]
        steps = [int(r["model_version"]) * a.checkpoint_steps / 1000 for r in rows]
        for ax, x in ((by_clock, clock), (by_steps, steps)):
            ax.plot(x, [100 * float(r["mcts_outcome_error"]) for r in rows], "-o", ms=3, color="C%d" % i,
                    label="%s: MCTS-%d" % (label, sims))
            ax.plot(x, [100 * float(r["net_outcome_error"]) for r in rows], "--", color="C%d" % i,
                    label="%s: network alone" % label)
    by_clock.set_xlabel("minutes (wall clock)" if a.clock == "hours" else "CPU hours of the loop's process tree")
    by_steps.set_xlabel("trainer steps (thousands)")
    by_clock.set_ylabel("%s: moves that give the outcome away (%%)" % a.file)
    for ax in (by_clock, by_steps):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    by_steps.legend(fontsize=8, loc="upper right")
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("plot_runs.py: wrote %s (%d runs, %s)" % (a.out, len(a.runs), a.file))
    return 0


if __name__ == "__main__":
    sys.exit(tool_errors.run(main, sys.argv))
