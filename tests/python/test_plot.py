"""tools/plot_metrics.py: PNGs from a synthetic metrics.csv, and its errors."""

import csv
import os
import tempfile
import unittest

import numpy as np

import test_support as zftest

PLOTTER = os.path.join(zftest.TOOLS, "plot_metrics.py")
PNGS = ("throughput.png", "batch.png", "latency.png", "occupancy.png")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

BASE_COLUMNS = ["time_s", "games_total", "positions_total", "leaf_evals_total", "batches_total",
                "games_per_s", "positions_per_s", "leaf_evals_per_s", "mean_batch", "evaluator_busy",
                "latency_p50_us", "latency_p90_us", "latency_p99_us", "restarts_total", "shards_total",
                "bytes_total"]


def synthetic_metrics(rows=30, workers=3, evaluators=2, seed=0):
    """(header, rows) of a plausible metrics.csv."""
    rng = np.random.default_rng(seed)
    header = (BASE_COLUMNS + [f"ring_occupancy_w{w}" for w in range(workers)]
              + [f"leaf_evals_per_s_e{e}" for e in range(evaluators)]
              + [f"batch_hist_{b}" for b in range(16)])
    out = []
    totals = np.zeros(5)
    hist = np.zeros(16)
    for i in range(rows):
        t = 2.0 * (i + 1)
        rates = np.array([5, 150, 9000, 80]) * rng.uniform(0.8, 1.2)
        totals[:4] += rates * 2.0
        hist[rng.integers(3, 9, size=40)] += 1
        lat = np.sort(rng.uniform(200, 5000, 3))
        row = [t, totals[0], totals[1], totals[2], totals[3], rates[0], rates[1], rates[2],
               rates[2] / rates[3], rng.uniform(0.2, 0.9), lat[0], lat[1], lat[2], 0, i // 10,
               1e5 * i]
        row += list(rng.uniform(0, 1, workers))
        row += list(rates[2] / evaluators * rng.uniform(0.9, 1.1, evaluators))
        row += list(hist)
        out.append(row)
    return header, out


def write_csv(path, header, rows, trailing=""):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow([f"{v:g}" for v in r])
        fh.write(trailing)


def run_plotter(*args):
    return zftest.run_tool(PLOTTER, *args)


class PlotMetricsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_plot_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def assertPngs(self, out_dir):
        for name in PNGS:
            path = os.path.join(out_dir, name)
            self.assertTrue(os.path.isfile(path), f"{name} missing")
            self.assertGreater(os.path.getsize(path), 1000, f"{name} is (nearly) empty")
            with open(path, "rb") as fh:
                self.assertEqual(fh.read(8), PNG_SIGNATURE, f"{name} is not a PNG")
        self.assertEqual([f for f in os.listdir(out_dir) if f.endswith(".tmp")], [])

    def test_full_csv_writes_every_png(self):
        header, rows = synthetic_metrics()
        write_csv(os.path.join(self.dir, "metrics.csv"), header, rows)
        p = run_plotter(self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("30 rows", p.stdout)
        self.assertPngs(self.dir)

    def test_manifest_load_csv(self):
        path = os.path.join(self.dir, "manifest-load.csv")
        header = ["elapsed_s", "run_shards", "found_shards", "new_shards", "refresh_ms", "us_per_new_shard",
                  "window_shards"]
        write_csv(path, header, [[i, 244 * i, 244 * i, 244 if i else 0, 20.0, 80.0, 10] for i in range(6)])
        p = run_plotter(path, "--manifest-load")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(self.dir, "manifest-load.png"), "rb") as fh:
            self.assertEqual(fh.read(8), PNG_SIGNATURE)
        p = run_plotter(os.path.join(self.dir, "manifest-load.png.missing"), "--manifest-load")
        self.assertEqual(p.returncode, 1)

    def test_out_dir_and_csv_path(self):
        header, rows = synthetic_metrics(rows=5)
        csv_path = os.path.join(self.dir, "metrics.csv")
        write_csv(csv_path, header, rows)
        out = os.path.join(self.dir, "plots", "nested")
        p = run_plotter(csv_path, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPngs(out)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "throughput.png")))

    def test_many_workers_single_row_and_spaces_in_header(self):
        header, rows = synthetic_metrics(rows=1, workers=32, evaluators=4)
        header = [" " + h for h in header]  # "time_s, games_total, ..." as in the spec's prose
        write_csv(os.path.join(self.dir, "metrics.csv"), header, rows)
        p = run_plotter(self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPngs(self.dir)

    def test_missing_columns_still_write_every_png(self):
        # Only totals: the rates are derived; no latency, occupancy or histogram columns.
        header, rows = synthetic_metrics(rows=10)
        keep = [header.index(c) for c in ("time_s", "games_total", "positions_total", "leaf_evals_total")]
        write_csv(os.path.join(self.dir, "metrics.csv"), [header[i] for i in keep],
                  [[r[i] for i in keep] for r in rows])
        p = run_plotter(self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPngs(self.dir)

    def test_without_time_column(self):
        write_csv(os.path.join(self.dir, "metrics.csv"), ["games_per_s", "mean_batch"],
                  [[1, 2], [3, 4], [5, 6]])
        p = run_plotter(self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertPngs(self.dir)

    def test_partial_last_line_is_skipped(self):
        header, rows = synthetic_metrics(rows=6)
        write_csv(os.path.join(self.dir, "metrics.csv"), header, rows, trailing="14.0,3,9")
        p = run_plotter(self.dir)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("6 rows", p.stdout)
        self.assertIn("skipped 1 malformed row", p.stderr)
        self.assertPngs(self.dir)

    def test_missing_csv_is_one_clear_line(self):
        p = run_plotter(self.dir)
        self.assertNotEqual(p.returncode, 0)
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("metrics.csv: no such file", lines[0])
        self.assertEqual(os.listdir(self.dir), [])

    def test_empty_csv_fails(self):
        path = os.path.join(self.dir, "metrics.csv")
        open(path, "w").close()
        p = run_plotter(self.dir)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("empty", p.stderr)

    def test_header_only_csv_fails(self):
        header, _ = synthetic_metrics(rows=0)
        write_csv(os.path.join(self.dir, "metrics.csv"), header, [])
        p = run_plotter(self.dir)
        self.assertNotEqual(p.returncode, 0)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("no data rows", p.stderr)


if __name__ == "__main__":
    unittest.main()
