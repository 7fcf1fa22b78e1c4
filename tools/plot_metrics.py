#!/usr/bin/env python3
"""Plots a zerofarm run's metrics.csv as PNG files (matplotlib, Agg backend).

    plot_metrics.py RUN_DIR [--out DIR]
    plot_metrics.py --manifest-load CSV [--out DIR]   # zerofarm bench --manifest-load's rows

Reads RUN_DIR/metrics.csv, or the one host's RUN_DIR/shards/HOST/metrics.csv
of a run with one host (RUN_DIR may also be a host directory or the CSV file
itself; a run of several hosts has one metrics.csv per host: name one) and
writes into DIR (default: RUN_DIR):

    throughput.png  games/s, positions/s and leaf evals/s over time (per evaluator too)
    batch.png       mean batch size over time, and the histogram of batch sizes
    latency.png     leaf latency p50 / p90 / p99 over time
    occupancy.png   ring occupancy of every worker, and the evaluators' busy share

metrics.csv (written by the supervisor): a header row, then one row every few
seconds. Columns: time_s, games_total, positions_total, leaf_evals_total,
batches_total, games_per_s, positions_per_s, leaf_evals_per_s, mean_batch,
evaluator_busy, latency_p50_us, latency_p90_us, latency_p99_us,
restarts_total, shards_total, bytes_total; per worker ring_occupancy_wN
(0..1); per evaluator leaf_evals_per_s_eN; batch_hist_0 .. batch_hist_15
(batches with size in [2^b, 2^(b+1)) since the start).

Robust to what a live or older run leaves: missing columns give a "no data"
panel (a rate missing but its *_total present is derived from the totals),
rows that are short, long or unparsable (a line still being written) are
skipped with a warning, and every PNG is written whatever is missing. Exits
1 with one line on stderr if metrics.csv is missing or has no data rows.
"""

import argparse
import csv
import glob
import os
import re
import sys
import warnings

import numpy as np

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PLOTS = ("throughput.png", "batch.png", "latency.png", "occupancy.png")
MANY_WORKERS = 8  # above this, occupancy is drawn as mean and min..max band


class MetricsError(Exception):
    pass


def metrics_path(run_dir):
    """The metrics.csv of RUN_DIR: the file itself, DIR/metrics.csv, or the
    only DIR/shards/*/metrics.csv (one per host since runs have hosts)."""
    if os.path.isfile(run_dir):
        return run_dir
    direct = os.path.join(run_dir, "metrics.csv")
    if os.path.isfile(direct):
        return direct
    hosts = sorted(glob.glob(os.path.join(glob.escape(run_dir), "shards", "*", "metrics.csv")))
    if len(hosts) > 1:
        raise MetricsError(f"{run_dir} has {len(hosts)} hosts, each with its own metrics.csv: "
                           f"name one, e.g. {hosts[0]}")
    return hosts[0] if hosts else direct


def read_metrics(path):
    """metrics.csv as a dict column -> float64 array (NaN for an empty cell).
    Raises MetricsError if the file is missing, empty or has no data rows."""
    if not os.path.isfile(path):
        raise MetricsError(f"{path}: no such file")
    with open(path, newline="") as fh:
        rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
    if not rows:
        raise MetricsError(f"{path}: empty file (no header, no data rows)")
    header = [h.strip() for h in rows[0]]
    data, skipped = [], 0
    for r in rows[1:]:
        if len(r) != len(header):
            skipped += 1
            continue
        try:
            data.append([float(c) if c.strip() not in ("", "nan", "NaN") else np.nan for c in r])
        except ValueError:
            skipped += 1
    if skipped:
        print(f"plot_metrics: {path}: skipped {skipped} malformed row(s)", file=sys.stderr)
    if not data:
        raise MetricsError(f"{path}: no data rows (only a header)")
    table = np.array(data, dtype=np.float64)
    return {name: table[:, i] for i, name in enumerate(header)}


def _numbered(cols, prefix):
    """[(n, array)] of the columns PREFIX<n>, sorted by n."""
    found = []
    for name, values in cols.items():
        m = re.fullmatch(re.escape(prefix) + r"(\d+)", name)
        if m:
            found.append((int(m.group(1)), values))
    return sorted(found, key=lambda t: t[0])


def _rate(cols, t, rate_name, total_name):
    """(values, label suffix): the rate column, else one derived from the total."""
    if rate_name in cols and np.isfinite(cols[rate_name]).any():
        return cols[rate_name], ""
    if total_name in cols and len(t) > 1:
        dt = np.diff(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(dt > 0, np.diff(cols[total_name]) / dt, np.nan)
        return np.concatenate(([np.nan], r)), f" (from {total_name})"
    return None, ""


def _no_data(ax, what):
    ax.text(0.5, 0.5, f"no data: {what}", ha="center", va="center", transform=ax.transAxes,
            color="gray")


def _line(ax, t, values, **kw):
    marker = "o" if len(t) < 3 else None  # a line of one point is invisible
    ax.plot(t, values, marker=marker, markersize=3, **kw)


def _save(fig, path):
    tmp = path + ".tmp"
    fig.savefig(tmp, format="png", dpi=100)
    plt.close(fig)
    os.replace(tmp, path)  # a watcher never sees a half-written PNG


def plot_throughput(cols, t, xlabel, path):
    fig, axes = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    for ax, (rate, total, title) in zip(axes, (
            ("games_per_s", "games_total", "games/s"),
            ("positions_per_s", "positions_total", "positions/s"),
            ("leaf_evals_per_s", "leaf_evals_total", "leaf evals/s"))):
        values, note = _rate(cols, t, rate, total)
        per_eval = _numbered(cols, "leaf_evals_per_s_e") if rate == "leaf_evals_per_s" else []
        if values is None and not per_eval:
            _no_data(ax, f"{rate} / {total}")
        if values is not None:
            _line(ax, t, values, label="total" if per_eval else None, color="C0")
        for n, v in per_eval:
            _line(ax, t, v, label=f"evaluator {n}", linestyle="--", linewidth=1)
        if per_eval:
            ax.legend(fontsize="small", ncol=min(4, len(per_eval) + 1))
        ax.set_ylabel(title + note)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0].set_title("throughput")
    axes[-1].set_xlabel(xlabel)
    fig.tight_layout()
    _save(fig, path)


def plot_batch(cols, t, xlabel, path):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    if "mean_batch" in cols:
        _line(ax1, t, cols["mean_batch"])
        ax1.set_ylim(bottom=0)
    else:
        _no_data(ax1, "mean_batch")
    ax1.set_title("mean batch size")
    ax1.set_xlabel(xlabel)
    ax1.set_ylabel("leaves per network call")
    ax1.grid(alpha=0.3)

    hist = _numbered(cols, "batch_hist_")
    if hist:
        counts = np.array([v[-1] if np.isfinite(v[-1]) else 0 for _, v in hist])
        used = np.flatnonzero(counts)
        keep = (used[-1] + 2) if used.size else 1  # drop the empty buckets above the largest batch
        hist, counts = hist[:keep], counts[:keep]
        buckets = [b for b, _ in hist]
        labels = [str(2 ** b) if b == 0 else f"{2 ** b}-{2 ** (b + 1) - 1}" for b in buckets]
        ax2.bar(range(len(buckets)), counts, color="C1")
        ax2.set_xticks(range(len(buckets)))
        ax2.set_xticklabels(labels, rotation=45, ha="right", fontsize="small")
        ax2.set_title(f"batch sizes since the start ({int(counts.sum())} batches)")
        ax2.set_xlabel("batch size")
        ax2.set_ylabel("batches")
    else:
        _no_data(ax2, "batch_hist_* columns")
        ax2.set_title("batch sizes")
    ax2.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    _save(fig, path)


def plot_latency(cols, t, xlabel, path):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    drawn = []
    for q in ("p50", "p90", "p99"):
        name = f"latency_{q}_us"
        if name in cols:
            _line(ax, t, cols[name], label=q)
            drawn.append(cols[name])
    if drawn:
        ax.legend()
        v = np.concatenate(drawn)
        v = v[np.isfinite(v) & (v > 0)]
        if v.size and v.max() / v.min() > 20:
            ax.set_yscale("log")
        else:
            ax.set_ylim(bottom=0)
    else:
        _no_data(ax, "latency_p50_us / p90 / p99")
    ax.set_title("leaf latency")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("microseconds")
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    _save(fig, path)


def plot_occupancy(cols, t, xlabel, path):
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    rings = _numbered(cols, "ring_occupancy_w")
    if not rings:
        _no_data(ax1, "ring_occupancy_w* columns")
    elif len(rings) <= MANY_WORKERS:
        for n, v in rings:
            _line(ax1, t, v, label=f"worker {n}")
        ax1.legend(fontsize="small", ncol=4)
    else:
        m = np.vstack([v for _, v in rings])
        with warnings.catch_warnings():  # all-NaN columns
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, mean, hi = np.nanmin(m, 0), np.nanmean(m, 0), np.nanmax(m, 0)
        ax1.fill_between(t, lo, hi, alpha=0.3, label=f"min..max of {len(rings)} workers")
        _line(ax1, t, mean, label="mean")
        ax1.legend(fontsize="small")
    ax1.set_ylim(0, 1.05)
    ax1.set_ylabel("ring occupancy")
    ax1.set_title("ring occupancy per worker")
    ax1.grid(alpha=0.3)

    if "evaluator_busy" in cols:
        busy = cols["evaluator_busy"]
        _line(ax2, t, busy, color="C3")
        top = np.nanmax(busy) if np.isfinite(busy).any() else 1.0
        ax2.set_ylim(0, max(1.05, top * 1.05))
    else:
        _no_data(ax2, "evaluator_busy")
    ax2.set_ylabel("busy share")
    ax2.set_title("evaluator busy share")
    ax2.set_xlabel(xlabel)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)


def plot_run(run_dir, out=None):
    """Reads the metrics and writes every PNG; returns (rows, written paths)."""
    csv_path = metrics_path(run_dir)
    cols = read_metrics(csv_path)
    rows = len(next(iter(cols.values())))
    if out is None:
        out = os.path.dirname(csv_path) or "."
    os.makedirs(out, exist_ok=True)
    if "time_s" in cols and np.isfinite(cols["time_s"]).all():
        t, xlabel = cols["time_s"], "time (s)"
    else:
        t, xlabel = np.arange(rows, dtype=np.float64), "row"
    written = []
    for name, fn in zip(PLOTS, (plot_throughput, plot_batch, plot_latency, plot_occupancy)):
        path = os.path.join(out, name)
        fn(cols, t, xlabel, path)
        written.append(path)
    return rows, written


def plot_manifest_load(csv_path, out=None):
    """manifest-load.png from `zerofarm bench --manifest-load`'s CSV: the
    trainer's time per new shard, and per refresh, against the run's size
    (flat: finding new shards costs O(new shards)). Returns (rows, path)."""
    cols = read_metrics(csv_path)
    for need in ("run_shards", "new_shards", "refresh_ms", "us_per_new_shard"):
        if need not in cols:
            raise MetricsError(f"{csv_path}: no column {need}: not a manifest-load CSV")
    path = os.path.join(out or os.path.dirname(csv_path) or ".", "manifest-load.png")
    x, found = cols["run_shards"], cols["new_shards"] > 0
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax1.plot(x[found], cols["us_per_new_shard"][found], ".", markersize=3)
    ax1.set_ylabel("us per new shard")
    ax1.set_ylim(bottom=0)
    ax2.plot(x, cols["refresh_ms"], ".", markersize=3)
    ax2.set_ylabel("refresh (ms)")
    ax2.set_ylim(bottom=0)
    ax2.set_xlabel("shards in the run")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle("trainer finding its next window (zerofarm bench --manifest-load)")
    fig.tight_layout()
    _save(fig, path)
    return len(x), path


def main(argv=None):
    parser = argparse.ArgumentParser(description="Plot a zerofarm run's metrics.csv as PNG files.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="run directory holding metrics.csv (or the CSV)")
    parser.add_argument("--out", metavar="DIR", help="where the PNGs go (default: RUN_DIR)")
    parser.add_argument("--manifest-load", action="store_true",
                        help="RUN_DIR is the CSV of zerofarm bench --manifest-load: write manifest-load.png")
    args = parser.parse_args(argv)
    try:
        if args.manifest_load:
            rows, path = plot_manifest_load(args.run_dir, args.out)
            written = [path]
        else:
            rows, written = plot_run(args.run_dir, args.out)
    except MetricsError as e:
        print(f"plot_metrics: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"plot_metrics: {e}", file=sys.stderr)
        return 1
    print(f"plot_metrics: {rows} rows -> {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
