"""tools/sets_curve.py and tools/plot_learning.py on a synthetic loop curve and
synthetic tools/eval_sets.sh logs: the rows, the clocks, the checks, the PNG."""

import csv
import json
import os
import tempfile
import unittest

import test_support as zftest

SETS_CURVE = os.path.join(zftest.TOOLS, "sets_curve.py")
PLOT = os.path.join(zftest.TOOLS, "plot_learning.py")
COLUMNS = ["hours", "model_version", "file", "positions", "simulations", "net_error", "mcts_error",
           "net_outcome_error", "mcts_outcome_error", "value_agreement", "cpu_hours", "solver"]


def curve_row(hours, version, name, net_outcome, mcts_outcome, cpu_hours):
    return [hours, version, name, 1000, 600, 0.15, 0.07, net_outcome, mcts_outcome, 0.8, cpu_hours, 0]


def json_line(version, name, net_outcome, mcts_outcome, mcts=True):
    j = {"kind": "move_error", "weights": "m.h5", "model_version": version, "file": name,
         "positions": 1000, "network_alone": {"score_error": 0.15, "outcome_error": net_outcome},
         "value_head": {"value_agreement": 0.8}}
    if mcts:
        j["mcts"] = {"simulations": 600, "score_error": 0.07, "outcome_error": mcts_outcome}
    return json.dumps(j, separators=(",", ":"))


run = zftest.run_tool


class LearningToolsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="zf_learning_")
        self.dir = self.tmp.name
        self.curve = self.path("curve.csv")
        with open(self.curve, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            w.writerow(curve_row(0.5, 10, "Test_L1_R1", 0.03, 0.005, 1.0))
            w.writerow(curve_row(0.5, 10, "Test_L2_R1", 0.02, 0.001, 1.0))
            w.writerow(curve_row(1.5, 30, "Test_L1_R1", 0.01, 0.002, 3.0))
            w.writerow(curve_row(1.5, 30, "Test_L2_R1", 0.01, 0.0, 3.0))

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def log(self, name, lines):
        with open(self.path(name), "w") as f:
            f.write("zerofarm eval: a human line\n" + "\n".join(lines) + "\n")
        return self.path(name)

    def sets_log(self, version, l1r3, agree=True):
        return self.log("sets-v%d.log" % version, [
            json_line(version, "Test_L1_R3", *l1r3),
            json_line(version, "Test_L1_R1", 0.03 if agree else 0.09, 0.005)])

    def test_rows_get_the_curves_clocks_in_its_columns(self):
        r = run(SETS_CURVE, self.curve, self.sets_log(30, (0.07, 0.02)), self.sets_log(10, (0.11, 0.05)))
        # v30's Test_L1_R1 differs from the curve's (0.01): refused, see the next test.
        self.assertEqual(r.returncode, 1)
        with open(self.path("sets-v30.log"), "w") as f:
            f.write(json_line(30, "Test_L1_R3", 0.07, 0.02) + "\n")
        r = run(SETS_CURVE, self.curve, self.path("sets-v30.log"), self.sets_log(10, (0.11, 0.05)))
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = list(csv.DictReader(r.stdout.splitlines()))
        self.assertEqual(list(rows[0].keys()), COLUMNS)
        self.assertEqual([(x["model_version"], x["file"], x["cpu_hours"], x["hours"]) for x in rows],
                         [("10", "Test_L1_R1", "1.0", "0.5"), ("10", "Test_L1_R3", "1.0", "0.5"),
                          ("30", "Test_L1_R3", "3.0", "1.5")])
        self.assertEqual(float(rows[1]["mcts_outcome_error"]), 0.05)
        self.assertEqual(rows[1]["solver"], "0")

    def test_a_log_that_disagrees_with_the_curve_is_one_line(self):
        r = run(SETS_CURVE, self.curve, self.sets_log(10, (0.11, 0.05), agree=False))
        self.assertEqual(r.returncode, 1)
        self.assertIn("v10 Test_L1_R1 net_outcome_error 0.09 differs from the curve's 0.03", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)

    def test_a_checkpoint_the_curve_lacks_or_a_log_without_figures_is_one_line(self):
        r = run(SETS_CURVE, self.curve, self.log("v20.log", [json_line(20, "Test_L1_R3", 0.1, 0.04)]))
        self.assertEqual((r.returncode, r.stderr.strip()), (1, self.path("v20.log") +
                         ": v20 is not in %s: no clock for it" % self.curve))
        r = run(SETS_CURVE, self.curve, self.log("empty.log", ["zerofarm eval: no JSON"]))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no `zerofarm eval` figures", r.stderr)
        r = run(SETS_CURVE, self.curve, self.log("s0.log", [json_line(10, "Test_L1_R3", 0.1, 0, False)]))
        self.assertEqual(r.returncode, 1)
        self.assertIn("has no MCTS figure", r.stderr)
        r = run(SETS_CURVE, self.path("absent.csv"), self.path("sets-v10.log"))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)

    def test_plot_of_a_curve_and_its_sets_curve_is_a_png(self):
        sets = self.path("sets-curve.csv")
        r = run(SETS_CURVE, self.curve, self.log("v10.log", [json_line(10, "Test_L1_R3", 0.1, 0.04)]))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(sets, "w") as f:
            f.write(r.stdout)
        out = self.path("curve.png")
        r = run(PLOT, self.curve, sets, out, "--files", "Test_L1_R3,Test_L1_R1", "--title", "t")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(5 rows, MCTS-600, clock cpu_hours)", r.stdout)
        with open(out, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(out), 10000)

    def test_plot_refuses_a_file_without_rows_and_a_missing_csv_in_one_line(self):
        r = run(PLOT, self.curve, self.path("x.png"), "--files", "Test_L1_R3")
        self.assertEqual((r.returncode, r.stderr.strip()), (1, "plot_learning.py: no rows of Test_L1_R3 at MCTS-600"))
        r = run(PLOT, self.path("absent.csv"), self.path("x.png"))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertFalse(os.path.exists(self.path("x.png")))


if __name__ == "__main__":
    unittest.main()


PONS_STATS = os.path.join(zftest.TOOLS, "pons_set_stats.py")


class PonsSetStatsTest(unittest.TestCase):
    def test_a_small_set_is_summed_up_and_a_bad_line_is_one_error(self):
        with tempfile.TemporaryDirectory(prefix="zf_pons_") as d:
            good = os.path.join(d, "set")
            with open(good, "w") as f:
                # "4455" scores 18 (a win with the side to move's 4th stone, ply 7: 3 plies left);
                # "44455554221" -15 (the first player's 7th stone, ply 13: 2 left); a draw at 20 stones.
                f.write("4455 18\n44455554221 -15\n44444433333322222211 0\n")
            r = run(PONS_STATS, good)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("3 positions; stones 4-20", r.stdout)
            self.assertIn("wins/draws/loses 1/1/1; plies left 2-22", r.stdout)
            self.assertIn("4 or fewer 2", r.stdout)
            bad = os.path.join(d, "bad")
            with open(bad, "w") as f:
                f.write("4455 18\n4455\n")
            r = run(PONS_STATS, bad)
            self.assertNotEqual(r.returncode, 0)
            self.assertEqual(r.stderr.strip().count("\n"), 0, r.stderr)
            self.assertIn("bad:2: expected 'moves score'", r.stderr)
