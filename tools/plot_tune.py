#!/usr/bin/env python3
"""Draws `zerofarm tune`'s ring-size sweep: leaf evals/s and leaf latency
against the ring size (leaf slots per worker), as one PNG.

    /usr/bin/python3 tools/plot_tune.py TUNE.csv OUT.png

TUNE.csv is what `zerofarm tune` writes (columns sweep, value, ring_slots,
evals_per_s, latency_p50_us, latency_p99_us, ...); only the rows of the
`ring_slots` sweep are drawn. Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import sys

import tool_errors  # tools/tool_errors.py: one line on a bad input file

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    with open(argv[1], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["sweep"] == "ring_slots"]
    if not rows:
        print("plot_tune.py: no ring_slots rows in " + argv[1], file=sys.stderr)
        return 1
    rows.sort(key=lambda r: int(r["ring_slots"]))
    x = [int(r["ring_slots"]) for r in rows]
    evals = [float(r["evals_per_s"]) for r in rows]
    p50 = [float(r["latency_p50_us"]) / 1000 for r in rows]
    p99 = [float(r["latency_p99_us"]) / 1000 for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(x, evals, "o-", color="tab:blue", label="leaf evals/s")
    ax.set_xscale("log", base=2)
    ax.set_xticks(x)
    ax.set_xticklabels([str(v) for v in x])
    ax.set_xlabel("ring slots per worker")
    ax.set_ylabel("leaf evaluations / s", color="tab:blue")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(x, p50, "s--", color="tab:red", label="leaf latency p50")
    ax2.plot(x, p99, "^:", color="tab:red", label="leaf latency p99")
    ax2.set_ylabel("leaf latency (ms)", color="tab:red")
    ax2.set_ylim(bottom=0)
    lines = ax.get_lines() + ax2.get_lines()
    ax.legend(lines, [l.get_label() for l in lines], loc="lower right", fontsize=8)
    ax.set_title("zerofarm tune: throughput and leaf latency against ring size")
    fig.tight_layout()
    fig.savefig(argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(tool_errors.run(main, sys.argv))
