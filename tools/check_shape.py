#!/usr/bin/env python3
"""Checks the shape of the source tree (issue 26); a step of tools/test.sh.

  tools/check_shape.py [format|length|paths|all]   (default: all)

  format  every C++ file under src/, include/, tests/ and tools/ is as
          clang-format (.clang-format, Debian 12's clang-format 14) writes it;
          `clang-format -i FILE` fixes one.
  length  no function in src/ is longer than MAX_LINES lines, unless the
          comment block right above it says why, in a line that reads
          "Long because ..." (case-insensitive). Functions and their ends come
          from universal-ctags (lambdas count as part of their function).
  paths   every source path that README.md and docs/*.md cite (a word ending
          in .h, .cpp or .cu, with at least one '/') names a file that
          exists: as written from the repository root, or under
          include/zerofarm/, include/, src/ or tests/. Other projects'
          headers (LibTorch, Boost, ...) are not checked.

Prints one line per finding and exits 1 when there is any, 0 otherwise; 2 when
a tool it needs (clang-format, ctags) is missing.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 80
CXX_DIRS = ("src", "include", "tests", "tools")
CXX_EXT = (".cpp", ".h", ".cu", ".cuh")
# Headers of other projects that the docs cite.
EXTERNAL = ("c10/", "torch/", "ATen/", "boost/", "catch2/", "nlohmann/", "cuda/")
PATH_RE = re.compile(r"(?<![\w./-])((?:\.\./)?[\w.-]+(?:/[\w.-]+)+\.(?:h|cpp|cu))(?![\w])")


def cxx_files():
    out = []
    for d in CXX_DIRS:
        for base, _, names in os.walk(os.path.join(ROOT, d)):
            out += [os.path.join(base, n) for n in names if n.endswith(CXX_EXT)]
    return sorted(out)


def need(tool):
    path = shutil.which(tool)
    if not path:
        print(f"check_shape: {tool} is not installed (tools/setup.sh --test installs it)", file=sys.stderr)
        sys.exit(2)
    return path


def check_format():
    tool = need("clang-format")
    bad = []
    for f in cxx_files():
        rel = os.path.relpath(f, ROOT)
        r = subprocess.run([tool, "--dry-run", "--Werror", "--style=file", f], cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(f"format: {rel} is not clang-formatted (clang-format -i {rel})")
    return bad


def has_reason(lines, start):
    """True when the comment block ending right above line `start` (1-based)
    holds a "long because" line."""
    i = start - 2
    while i >= 0 and lines[i].strip().startswith("//"):
        if re.search(r"\blong(er)?\b.*\bbecause\b", lines[i], re.IGNORECASE):
            return True
        i -= 1
    return False


def check_length():
    tool = need("ctags")
    src = os.path.join(ROOT, "src")
    r = subprocess.run([tool, "-R", "--fields=+ne", "--c++-kinds=f", "--languages=C++", "--langmap=C++:+.cu",
                        "-o", "-", src], capture_output=True, text=True, check=True)
    bad, cache = [], {}
    for row in r.stdout.splitlines():
        cols = row.split("\t")
        if len(cols) < 4 or cols[0].startswith("__anon"):
            continue  # lambdas are counted with the function that holds them
        fields = dict(c.split(":", 1) for c in cols[3:] if ":" in c)
        if "line" not in fields or "end" not in fields:
            continue
        start, end = int(fields["line"]), int(fields["end"])
        if end - start + 1 <= MAX_LINES:
            continue
        path = cols[1]
        if path not in cache:
            with open(path, encoding="utf-8") as f:
                cache[path] = f.read().split("\n")
        if not has_reason(cache[path], start):
            bad.append(f"length: {os.path.relpath(path, ROOT)}:{start} {cols[0]} is {end - start + 1} lines "
                       f"(over {MAX_LINES}; split it, or say above it why it is long: \"Long because ...\")")
    return bad


def exists(p):
    candidates = [p, "include/zerofarm/" + p, "include/" + p, "src/" + p, "tests/" + p]
    return any(os.path.isfile(os.path.join(ROOT, c)) for c in candidates)


def check_paths():
    docs = [os.path.join(ROOT, "README.md")]
    docs += sorted(os.path.join(ROOT, "docs", n) for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
    bad = []
    for d in docs:
        with open(d, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for p in PATH_RE.findall(line):
                    if p.startswith(("http", "/", "../") + EXTERNAL) or "<" in p or "*" in p:
                        continue
                    if not exists(p):
                        bad.append(f"paths: {os.path.relpath(d, ROOT)}:{n} cites {p}, which is no file of this tree")
    return bad


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    checks = {"format": check_format, "length": check_length, "paths": check_paths}
    if what != "all" and what not in checks:
        print("usage: tools/check_shape.py [format|length|paths|all]", file=sys.stderr)
        return 2
    bad = []
    for name, check in checks.items():
        if what in ("all", name):
            bad += check()
    for line in bad:
        print(line)
    print(f"check_shape: {what}: {len(bad)} finding(s)" if bad else f"check_shape: {what}: clean")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
