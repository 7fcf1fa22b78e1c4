"""Tests of tools/catch_cases.py on real Catch2 v2 XML reports
(tests/python/data/catch_reports.txt, each report after a "==> NAME <==" line:
made by a throwaway binary "zf_demo_test" with four [gpu] cases, one report per
case with `-r xml -o`, all.xml all four in one run, cut.xml a report cut short
as by a timeout)."""

import os
import re
import shutil
import tempfile
import unittest

import test_support  # noqa: F401  (puts tools/ on sys.path)
import catch_cases

BUNDLE = os.path.join(test_support.HERE, "data", "catch_reports.txt")
DATA = tempfile.mkdtemp(prefix="zf-catch-")
TOOL = os.path.join(test_support.TOOLS, "catch_cases.py")
NAMES = ["passes, with a comma", "fails", "skips", "aborts"]


def setUpModule():
    """Writes each report of the bundle to DATA/NAME, as catch_cases.py reads files."""
    with open(BUNDLE, encoding="utf-8") as f:
        parts = re.split(r"^==> (\S+) <==\n", f.read(), flags=re.M)[1:]
    for name, text in zip(parts[0::2], parts[1::2]):
        with open(os.path.join(DATA, name), "w", encoding="utf-8") as out:
            out.write(text.rstrip("\n") + "\n")


def tearDownModule():
    shutil.rmtree(DATA, ignore_errors=True)


def report(name):
    return os.path.join(DATA, name + ".xml")


def expected_file(names, binary="zf_demo_test"):
    f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    f.write("".join(f"{binary}\t{n}\n" for n in names))
    f.close()
    return f.name


class CatchCasesTest(unittest.TestCase):
    def test_each_outcome_of_a_report_per_case(self):
        lines, passed = catch_cases.check(
            [("zf_demo_test", n) for n in NAMES], [report(r) for r in ("pass", "fail", "skip", "abort")])
        self.assertEqual(passed, 1)
        self.assertEqual(lines, ["PASS zf_demo_test: passes, with a comma", "FAIL zf_demo_test: fails",
                                 "SKIPPED zf_demo_test: skips", "FAIL zf_demo_test: aborts",
                                 "1 of 4 test cases ran and passed"])

    def test_one_report_of_every_case(self):
        lines, passed = catch_cases.check([("zf_demo_test", n) for n in NAMES], [report("all")])
        self.assertEqual(passed, 1)
        self.assertIn("SKIPPED zf_demo_test: skips", lines)

    def test_a_case_without_a_complete_report_did_not_run(self):
        lines, passed = catch_cases.check([("zf_demo_test", NAMES[0])], [report("cut")])
        self.assertEqual((lines[0], passed), ("NOT RUN zf_demo_test: passes, with a comma", 0))

    def test_the_binary_must_match(self):
        _, passed = catch_cases.check([("zf_other_test", NAMES[0])], [report("pass")])
        self.assertEqual(passed, 0)

    def test_a_case_reported_twice_passes_only_when_both_passed(self):
        with open(report("pass"), encoding="utf-8") as f:
            failed_again = f.read().replace('success="true"', 'success="false"')
        with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
            f.write(failed_again)
        try:
            for order in ([report("pass"), f.name], [f.name, report("pass")]):
                _, passed = catch_cases.check([("zf_demo_test", NAMES[0])], order)
                self.assertEqual(passed, 0)
        finally:
            os.unlink(f.name)

    def test_exit_status(self):
        everything = expected_file(NAMES)
        only_pass = expected_file(NAMES[:1])
        empty = expected_file([])
        try:
            run = test_support.run_tool
            self.assertEqual(run(TOOL, "check", only_pass, report("pass")).returncode, 0)
            failed = run(TOOL, "check", everything, report("all"))
            self.assertEqual(failed.returncode, 1)
            self.assertIn("1 of 4 test cases ran and passed", failed.stdout)
            self.assertEqual(run(TOOL, "check", empty, report("all")).returncode, 1)  # nothing to prove
            self.assertEqual(run(TOOL, "check").returncode, 2)
            self.assertEqual(run(TOOL, "check", "/nonexistent/list").returncode, 2)
        finally:
            for path in (everything, only_pass, empty):
                os.unlink(path)


if __name__ == "__main__":
    unittest.main()
