#!/usr/bin/env python3
"""Draws a learning run's curve against AlphaZero.jl's published one (issue #25).

    /usr/bin/python3 tools/plot_learning.py CURVE.csv [CURVE.csv ...] OUT.png
        [--clock cpu_hours|hours] [--simulations N] [--files F1,F2] [--title TEXT]

CURVE.csv is RUN/eval/curve.csv of `zerofarm loop` (columns hours, file,
simulations, net_outcome_error, mcts_outcome_error, cpu_hours, solver, ...),
or rows of the same columns for the sets the loop does not evaluate
(tools/sets_curve.py); several are read as one. For each Pons file in them
(or each of --files), two lines against the run's clock (CPU hours of the
loop's process tree by default; `--clock hours` for its wall-clock hours, the
fair clock on a GPU machine): the share of moves that give the outcome away
with MCTS at N simulations (plain PUCT, solver = 0; N defaults to the
largest in the file), solid, and with the network alone, dashed.
AlphaZero.jl's figures for the same test sets (MCTS-600, per iteration; read
off its plot, ../shared/PEERS.md "Connect Four strength") are drawn as
markers against its iterations on the top axis: its clock (about ten hours
for 15 iterations on an RTX 2070 and a 6-core i5) is not ours, so the two x
axes are not one scale. Issue #25's targets for each drawn file are thin
horizontal lines in its colour (MCTS-600 solid, the network alone dashed).
Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Pons file -> (AlphaZero.jl's name for it, its MCTS-600 outcome error in %
# at iterations 1, 3, 5, 9, 15), from ../shared/PEERS.md.
ALPHAZERO_JL_ITERATIONS = [1, 3, 5, 9, 15]
ALPHAZERO_JL = {
    "Test_L1_R1": ("Beginning-Easy", [3.7, 0.7, 0.0, 0.0, 0.0]),
    "Test_L2_R1": ("Middle-Easy", [1.3, 0.6, 0.1, 0.1, 0.0]),
    "Test_L3_R1": ("End-Easy", [1.0, 0.3, 0.0, 0.0, 0.0]),
    "Test_L1_R2": ("Beginning-Medium", [11.8, 4.7, 2.9, 1.6, 2.2]),
    "Test_L2_R2": ("Middle-Medium", [10.9, 7.4, 3.7, 1.9, 2.7]),
    "Test_L1_R3": ("Beginning-Hard", [35.7, 14.1, 11.0, 6.2, 7.9]),
}
# Pons file -> issue #25's targets in %: MCTS-600 and the network alone.
TARGETS = {"Test_L1_R3": (3.0, 8.0), "Test_L1_R1": (0.2, 3.0), "Test_L2_R1": (0.2, 3.0),
           "Test_L3_R1": (0.2, 3.0)}


def read_curve(paths, simulations):
    rows = []
    for path in paths:
        try:
            with open(path, newline="") as f:
                rows += [r for r in csv.DictReader((line for line in f if not line.startswith("#")))]
        except OSError as e:
            raise SystemExit("plot_learning.py: %s: %s" % (path, e.strerror))
    rows = [r for r in rows if r.get("solver", "0") in ("0", "")]
    if not rows:
        raise SystemExit("plot_learning.py: no rows with solver = 0 in " + " ".join(paths))
    if simulations is None:
        simulations = max(int(r["simulations"]) for r in rows)
    return [r for r in rows if int(r["simulations"]) == simulations], simulations


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("curve", nargs="+")
    p.add_argument("out")
    p.add_argument("--clock", choices=("cpu_hours", "hours"), default="cpu_hours")
    p.add_argument("--simulations", type=int)
    p.add_argument("--files", help="the Pons files to draw, comma-separated (default: all)")
    p.add_argument("--title", default="")
    a = p.parse_args(argv[1:])
    if not a.out.lower().endswith(".png"):  # a forgotten OUT would overwrite the last curve
        p.error(f"OUT must be a .png file, not {a.out!r}")
    rows, sims = read_curve(a.curve, a.simulations)
    files = sorted({r["file"] for r in rows})
    if a.files:
        absent = [f for f in a.files.split(",") if f not in files]
        if absent:
            raise SystemExit("plot_learning.py: no rows of %s at MCTS-%d" % (absent[0], sims))
        files = a.files.split(",")
    fig, ax = plt.subplots(figsize=(9, 5.5))
    top = ax.twiny()
    for i, name in enumerate(files):
        color = "C%d" % i
        # One point per checkpoint: a sets curve repeats the loop's own rows for its two sets.
        seen = {(r[a.clock], r["model_version"]): r for r in rows if r["file"] == name}
        mine = sorted(((float(r[a.clock]), r) for r in seen.values()), key=lambda p: p[0])
        x = [t for t, _ in mine]
        ax.plot(x, [100 * float(r["mcts_outcome_error"]) for _, r in mine], "-o", color=color, ms=3,
                label="%s: MCTS-%d" % (name, sims))
        ax.plot(x, [100 * float(r["net_outcome_error"]) for _, r in mine], "--", color=color,
                label="%s: network alone" % name)
        if name in TARGETS:  # thin lines in the file's colour, one legend entry for all
            for y, style in zip(TARGETS[name], ("-", "--")):
                ax.axhline(y, color=color, ls=style, lw=0.8, alpha=0.45)
        if name in ALPHAZERO_JL:
            jl_name, errors = ALPHAZERO_JL[name]
            top.plot(ALPHAZERO_JL_ITERATIONS, errors, ":s", color=color, ms=6, mfc="none",
                     label="AlphaZero.jl %s, MCTS-600" % jl_name)
    ax.set_xlabel("this run: " + ("CPU hours of the loop's process tree" if a.clock == "cpu_hours"
                                  else "hours (wall clock)"))
    ax.set_ylabel("moves that give the outcome away (%)")
    top.set_xlabel("AlphaZero.jl: iteration (5000 games at 600 simulations; about 10 h for 15 on an RTX 2070)")
    top.set_xlim(0, 16)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    top.set_ylim(ax.get_ylim())
    ax.grid(alpha=0.3)
    if any(name in TARGETS for name in files):
        ax.plot([], [], color="gray", lw=0.8, alpha=0.6, label="issue #25 targets (thin; alone dashed)")
    lines = ax.get_legend_handles_labels()
    jl = top.get_legend_handles_labels()
    ax.legend(lines[0] + jl[0], lines[1] + jl[1], fontsize=8, loc="upper right")
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("plot_learning.py: wrote %s (%d rows, MCTS-%d, clock %s)" % (a.out, len(rows), sims, a.clock))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
