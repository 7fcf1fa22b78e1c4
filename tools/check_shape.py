#!/usr/bin/env python3
"""Checks the shape of the source tree (issue 26); a step of tools/test.sh.

  tools/check_shape.py [format|length|paths|commits|prose|all]   (default: all)

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
  commits every commit subject after SUBJECTS_SINCE has at most MAX_SUBJECT
          characters (a checkout without git history says so in a line).
  prose   README.md and docs/*.md read as the current state, in short
          sentences: no sentence over MAX_WORDS words (code blocks aside;
          each table cell, heading and list item counts on its own); every
          docs/*.md opens with a summary of at most SUMMARY_LINES lines (its
          text before the first "## " heading); all of docs/*.md together
          under MAX_DOC_WORDS words; and every number that docs/evidence.md
          states beside a raw file under docs/results/ (in one table row,
          paragraph or list item) appears in that file, dates and code aside.

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
MAX_WORDS = 40  # words a sentence of the docs may have
SUMMARY_LINES = 10  # lines a docs page's opening summary may have
MAX_DOC_WORDS = 25_000  # words of all of docs/*.md
MAX_SUBJECT = 72  # characters of a commit subject (details go in the body)
SUBJECTS_SINCE = "a186fd7"  # older subjects stay as they landed (some are longer)
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


def prose_units(text):
    """(line, text) of each unit of prose in a Markdown text: a paragraph, a
    list item, a heading or a table cell; code blocks and HTML comments left out."""
    units, para, start, fenced = [], [], 0, False

    def flush():
        if para:
            units.append((start, " ".join(para)))
        para.clear()

    lines = text.split("\n")
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced or line.startswith("    ") and not para or not stripped:
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            units += [(n, cell) for cell in stripped.strip("|").split("|")]
            continue
        if re.match(r"(#+ |[-*] |\d+\. )", stripped):
            flush()
        if not para:
            start = n
        para.append(stripped)
    flush()
    return units


def sentences(unit):
    unit = re.sub(r"\]\([^)]*\)", "]", unit)  # a link's target is no words
    return re.split(r"(?<=[.!?])[\"')*`]*\s+(?=[A-Z`*(\[\"0-9])", unit)


def doc_pages():
    docs = os.path.join(ROOT, "docs")
    return sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md"))


def check_prose():
    bad, total = [], 0
    for d in [os.path.join(ROOT, "README.md")] + doc_pages():
        rel = os.path.relpath(d, ROOT)
        with open(d, encoding="utf-8") as f:
            text = f.read()
        for n, unit in prose_units(text):
            for s in sentences(unit):
                words = len(s.split())
                if words > MAX_WORDS:
                    bad.append(f"prose: {rel}:{n} has a sentence of {words} words (over {MAX_WORDS}): "
                               f"{s[:60]}...")
        if rel.startswith("docs"):
            total += len(text.split())
            opening = text.split("\n## ", 1)[0].strip().split("\n")[1:]
            summary = [line for line in opening if line.strip()]
            if not summary or len(summary) > SUMMARY_LINES:
                bad.append(f"prose: {rel} opens with {len(summary)} lines before its first '## ' heading "
                           f"(a summary of 1 to {SUMMARY_LINES} lines)")
    if total >= MAX_DOC_WORDS:
        bad.append(f"prose: docs/*.md hold {total} words (at most {MAX_DOC_WORDS - 1})")
    return bad + check_evidence()


RESULT_RE = re.compile(r"docs/results/[\w./+-]*[\w/]")
NUMBER_RE = re.compile(r"(?<![\w.,-])\d[\d,]*(?:\.\d+)?")


def evidence_units(text):
    """(line, text) of each table row, paragraph and list item of a Markdown text."""
    units = prose_units(text)
    rows = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.lstrip().startswith("|")]
    return [u for u in units if not u[1].lstrip().startswith("|")] + rows


def raw_text(unit):
    """The text of every raw file under docs/results/ that a unit cites; bare
    file names after the first citation are read from its folder."""
    cited = [c for c in RESULT_RE.findall(unit) if not re.search(r"[0-9a-f]{7}:" + re.escape(c), unit)]
    cited = [c for c in cited if os.path.exists(os.path.join(ROOT, c))]
    if not cited:
        return None
    folder = cited[0] if os.path.isdir(os.path.join(ROOT, cited[0])) else os.path.dirname(cited[0])
    cited += [os.path.join(folder, name) for name in re.findall(r"`([\w.-]+\.(?:log|txt|csv|jsonl|md))`", unit)]
    text = ""
    for c in cited:
        path = os.path.join(ROOT, c)
        paths = [path] if os.path.isfile(path) else [os.path.join(b, n) for b, _, ns in os.walk(path) for n in ns]
        for f in paths:
            if os.path.isfile(f):
                with open(f, encoding="utf-8", errors="replace") as h:
                    text += h.read() + "\n"
    return re.sub(r"(?<=\d),(?=\d{3})", "", text)


def check_evidence():
    """Every number docs/evidence.md states beside a raw file appears in it."""
    path = os.path.join(ROOT, "docs", "evidence.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    bad = []
    for n, unit in evidence_units(text):
        raw = raw_text(unit)
        if raw is None:
            continue
        prose = re.sub(r"`[^`]*`", " ", unit)
        prose = re.sub(r"\d{4}-\d\d-\d\d|#\d+", " ", prose)
        for number in NUMBER_RE.findall(prose):
            number = number.rstrip(",").replace(",", "")
            tail = r"(?!\d)" if "." not in number else ""
            if not re.search(r"(?<![\d.])" + re.escape(number) + tail, raw):
                bad.append(f"prose: docs/evidence.md:{n} states {number}, which the raw file it cites does not hold")
    return bad


def check_commits():
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        print("check_shape: commits: not a git checkout, subjects not checked")
        return []
    if git("cat-file", "-e", SUBJECTS_SINCE + "^{commit}").returncode != 0:  # a shallow clone
        print(f"check_shape: commits: {SUBJECTS_SINCE} is not in this clone's history; HEAD's subject only")
        log = git("log", "-1", "--format=%h %s")
    else:
        log = git("log", "--format=%h %s", SUBJECTS_SINCE + "..HEAD")
    return [f"commits: {line.split(' ', 1)[0]}: a subject of {len(line.split(' ', 1)[1])} characters "
            f"(at most {MAX_SUBJECT}; details go in the body)"
            for line in log.stdout.splitlines() if len(line.split(" ", 1)[1]) > MAX_SUBJECT]


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    checks = {"format": check_format, "length": check_length, "paths": check_paths, "commits": check_commits,
              "prose": check_prose}
    if what != "all" and what not in checks:
        print("usage: tools/check_shape.py [format|length|paths|commits|prose|all]", file=sys.stderr)
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
