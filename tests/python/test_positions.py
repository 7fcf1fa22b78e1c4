"""tools/positions_compare.py and tools/positions_breakdown.py on synthetic
`zerofarm eval --positions-csv` files whose counts are known."""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

import test_support as zftest

import positions_compare

COMPARE = os.path.join(zftest.TOOLS, "positions_compare.py")
BREAKDOWN = os.path.join(zftest.TOOLS, "positions_breakdown.py")
COLUMNS = ["file", "moves", "score", "rating", "net_move", "net_verdict", "net_value", "mcts_move",
           "mcts_verdict", "mcts_value"]


def write_csv(path, verdicts, moves=None):
    """verdicts: [(net_verdict, mcts_verdict)] for positions 1..n of Test_X
    (their move strings `moves`, else all different)."""
    moves = moves or [str(1000 + i) for i in range(len(verdicts))]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for m, (net, mcts) in zip(moves, verdicts):
            w.writerow(["Test_X", m, "1", "2100000", "1", net, "0.1", "1", mcts, "0.2"])


class PositionsCompareTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def run_tool(self, *args):
        return subprocess.run([sys.executable, COMPARE, *args], capture_output=True, text=True)

    def test_counts_positions_where_only_one_errs(self):
        # Network: A gives 3 away that B keeps, B gives 1 away that A keeps, both give 1 away.
        a = [("0", "2")] * 3 + [("2", "2")] + [("0", "0")] + [("2", "2")] * 5
        b = [("2", "2")] * 3 + [("0", "1")] + [("0", "0")] + [("2", "2")] * 5
        pa, pb = os.path.join(self.dir.name, "a.csv"), os.path.join(self.dir.name, "b.csv")
        write_csv(pa, a)
        write_csv(pb, b)
        r = self.run_tool(pa, pb)
        self.assertEqual(r.returncode, 0, r.stderr)
        net_away = [l for l in r.stdout.splitlines() if l.split()[:2] == ["net", "gives"]][0].split()
        # net  gives the outcome away  40.0%  20.0%  3  1  p
        self.assertEqual(net_away[5:9], ["40.0%", "20.0%", "3", "1"])
        self.assertAlmostEqual(float(net_away[9]), 0.625)  # 2 x P(X <= 1), X ~ Bin(4, 1/2) = 2 x 5/16
        mcts_opt = [l for l in r.stdout.splitlines() if l.split()[:2] == ["mcts", "not"]][0].split()
        # MCTS not optimal: A 1 (the shared 0), B 2 (the 1 and the 0): B only 1.
        self.assertEqual(mcts_opt[3:7], ["10.0%", "20.0%", "0", "1"])

    def test_a_position_held_twice_counts_twice(self):
        # The same line twice: A errs on its first copy only, B on neither.
        pa, pb = os.path.join(self.dir.name, "a.csv"), os.path.join(self.dir.name, "b.csv")
        write_csv(pa, [("0", "2"), ("2", "2"), ("2", "2")], moves=["44", "44", "45"])
        write_csv(pb, [("2", "2")] * 3, moves=["44", "44", "45"])
        r = self.run_tool(pa, pb)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("3 positions"), r.stdout)
        net_away = [l for l in r.stdout.splitlines() if l.split()[:2] == ["net", "gives"]][0].split()
        self.assertEqual(net_away[5:9], ["33.3%", "0.0%", "1", "0"])

    def test_sign_test_is_exact(self):
        self.assertEqual(positions_compare.sign_test(0, 0), 1.0)
        self.assertAlmostEqual(positions_compare.sign_test(0, 6), 2 / 64)
        self.assertAlmostEqual(positions_compare.sign_test(6, 0), 2 / 64)
        self.assertEqual(positions_compare.sign_test(5, 5), 1.0)

    def test_different_positions_are_refused(self):
        pa, pb = os.path.join(self.dir.name, "a.csv"), os.path.join(self.dir.name, "b.csv")
        write_csv(pa, [("2", "2")] * 3)
        write_csv(pb, [("2", "2")] * 4)
        r = self.run_tool(pa, pb)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("different positions", r.stderr)

    def test_breakdown_reads_the_same_file(self):
        pa = os.path.join(self.dir.name, "a.csv")
        write_csv(pa, [("0", "2")] * 3 + [("2", "0")])
        r = subprocess.run([sys.executable, BREAKDOWN, pa], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("3 ( 75.0 %)", r.stdout)

    def test_bad_files_get_one_line(self):
        # A missing file, a file of other columns, and bytes that are not text: each tool says so in
        # one line on stderr, exits 1, and prints no traceback.
        other = os.path.join(self.dir.name, "other.csv")
        with open(other, "w") as f:
            f.write("a,b\n1,2\n")
        binary = os.path.join(self.dir.name, "binary.csv")
        with open(binary, "wb") as f:
            f.write(b"\xff\xfe\x00\x01")
        cases = [(os.path.join(self.dir.name, "absent.csv"), "No such file"),
                 (other, "not a `zerofarm eval --positions-csv` file (no column file)"),
                 (binary, "cannot read")]
        for tool in (COMPARE, BREAKDOWN):
            for path, said in cases:
                args = [path, path] if tool == COMPARE else [path]
                r = subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)
                self.assertEqual(r.returncode, 1, (tool, path, r.stderr))
                self.assertIn(said, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertNotIn("Traceback", r.stderr)


if __name__ == "__main__":
    unittest.main()
