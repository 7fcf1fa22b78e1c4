#!/usr/bin/env python3
"""Which of the expected Catch2 test cases ran and passed (tools/gpu_check.sh).

    catch_cases.py check EXPECTED REPORT...

EXPECTED: one line per test case, "BINARY<TAB>TEST NAME" (BINARY the test
executable's file name; gpu_check.sh writes it from each binary's
--list-test-names-only). REPORT: Catch2 XML reports (`-r xml -o FILE`), any
number of cases each. A case passes only when a complete report holds it with
OverallResult success="true" and no "[skipped]" message (tests/support/skip.h).
A report cut short (a crash, a timeout) is unreadable: its cases did not run.

Prints one line per expected case (PASS, FAIL, SKIPPED, NOT RUN), then
"N of M test cases ran and passed". Exit 0 when N == M > 0, 1 otherwise,
2 on a usage error or an unreadable EXPECTED.
"""

import os
import sys
import xml.etree.ElementTree as ET


def read_expected(path):
    """[(binary, name)] of EXPECTED, in order; blank lines ignored."""
    cases = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            binary, sep, name = line.partition("\t")
            if not sep or not binary or not name:
                raise ValueError(f"{path}:{number}: not 'BINARY<TAB>TEST NAME'")
            cases.append((binary, name))
    return cases


def case_outcome(case):
    """PASS, FAIL or SKIPPED for one <TestCase> element."""
    for element in case.iter():
        if element is not case and element.tag in ("Warning", "Info") and "[skipped]" in "".join(element.itertext()):
            return "SKIPPED"
    result = case.find("OverallResult")
    if result is None:
        return "FAIL"
    return "PASS" if result.get("success") == "true" else "FAIL"


def read_report(path):
    """{(binary, name): outcome} of one XML report; {} when it is unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return {}
    if root.tag != "Catch":
        return {}
    binary = os.path.basename(root.get("name", ""))
    return {(binary, case.get("name")): case_outcome(case) for case in root.iter("TestCase")}


def check(expected, reports):
    """(lines, passed): one line per expected case and how many passed."""
    seen = {}
    for path in reports:
        for key, outcome in read_report(path).items():
            # A case reported twice passes only when every report of it passed.
            if seen.get(key, "PASS") == "PASS":
                seen[key] = outcome
    lines, passed = [], 0
    for binary, name in expected:
        outcome = seen.get((binary, name), "NOT RUN")
        passed += outcome == "PASS"
        lines.append(f"{outcome} {binary}: {name}")
    lines.append(f"{passed} of {len(expected)} test cases ran and passed")
    return lines, passed


def main(argv):
    if len(argv) < 3 or argv[1] != "check":
        print("usage: catch_cases.py check EXPECTED REPORT...", file=sys.stderr)
        return 2
    try:
        expected = read_expected(argv[2])
    except (OSError, ValueError, UnicodeDecodeError) as e:
        print(f"catch_cases: {e}", file=sys.stderr)
        return 2
    lines, passed = check(expected, argv[3:])
    print("\n".join(lines))
    return 0 if expected and passed == len(expected) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
