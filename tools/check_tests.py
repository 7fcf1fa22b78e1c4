#!/usr/bin/python3
"""Keeps the test suite honest (issue "Evidence"); tools/test.sh runs it.

  check_tests.py discovery BUILD
      Every Catch test of every test executable in BUILD has exactly one CTest
      entry, and every entry's filter selects exactly that one test: the
      number of tests each executable lists equals the number of CTest entries
      for it (a name with ';' would make two entries that match nothing), each
      entry's filter lists exactly its own name, and each carries `-w NoTests`
      (so an entry that matches no test fails instead of passing). Every
      hidden test ([.tag]) belongs to one of HIDDEN_HOMES, where it runs.

  check_tests.py skips BUILD JUNIT_XML...
      Lists every test CTest reported as skipped, with the reason it printed
      ("[skipped] REASON", tests/support/skip.h), and fails if any was skipped
      outside the allowed list (allowed_skip()): tests that need a GPU where
      gpu_probe() finds none (no /dev/nvidia<N> device node, and no GPU in
      `nvidia-smi -L`; the probe's finding is printed with the skip), the
      Slurm test where there is no cgroup filesystem, the PID-namespace test
      where `unshare --pid --mount-proc` cannot run (a chroot), the status-line test
      where no pseudo-terminal can be opened, and the CUDA compile
      check when the user turned it off (ZF_CUDA_CHECK=0) or its packages
      cannot be fetched. A skipped test whose output shows a failed check
      (Catch's "FAILED:", "[skip refused]") fails the command too. A skip is
      an exit status of 77 (CTest's SKIP_RETURN_CODE), never a matched line:
      discovery fails on any entry with a SKIP_REGULAR_EXPRESSION, which would
      count a crash after a printed "[skipped]" as a skip.

Exit status: 0 all good, 1 a check failed (each problem on its own line), 2 usage.
"""
import glob
import json
import os
import shutil
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

# Hidden Catch tags and where the tests that carry them run.
HIDDEN_HOMES = {
    "long": "tools/test.sh --long",
    "solver-40": "tools/test.sh --long",
    "solver-full": "tools/test.sh --long-all",
}


def allowed_skip(name, labels, reason, run=""):
    """Why a skip is allowed where CI runs, or None when it is not. `run`: the
    JUnit file's name (asan-unit.xml, ...)."""
    if any(label == "gpu" or label.endswith("-gpu") for label in labels):
        present, seen = gpu_probe()
        return None if present else f"needs a GPU, and the probe found none ({seen})"
    no_cgroup = not os.path.isdir("/sys/fs/cgroup") or not os.listdir("/sys/fs/cgroup")
    if name in ("slurm", "slurm-nodes") and "no cgroup filesystem" in reason and no_cgroup:
        return "no cgroup filesystem here"
    no_ns = "no namespaces here" in reason or "cannot make a network namespace" in reason
    if name == "slurm-nodes" and no_ns and not netns_works():
        return "no network, UTS and mount namespaces here (a chroot)"
    if "another PID namespace" in name and "unshare" in reason and not unshare_works():
        return "unshare --pid --mount-proc cannot run here (a chroot, or not root)"
    if "status line" in name and "no pseudo-terminal" in reason and not pty_works():
        return "no pseudo-terminals here (a chroot without /dev/pts)"
    if "KeepFreedMemory" in name and "AddressSanitizer" in reason and run.startswith("asan"):
        return "AddressSanitizer's allocator is not glibc's malloc (the plain build runs it)"
    if name == "cuda_compile" and "ZF_CUDA_CHECK=0" in reason:
        return "CUDA compile check turned off by the user"
    if name == "cuda_compile" and re.search(r"apt-get (update|download)\b.*failed", reason):
        return "the CUDA headers could not be fetched"
    return None


def gpu_probe():
    """(whether this machine has an NVIDIA GPU, what the probe saw)."""
    devices = sorted(glob.glob("/dev/nvidia[0-9]*"))
    if devices:
        return True, "device nodes " + " ".join(devices)
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "no /dev/nvidia[0-9]*, no nvidia-smi"
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    gpus = [line for line in out.splitlines() if line.startswith("GPU ")]
    if gpus:
        return True, f"nvidia-smi -L lists {len(gpus)} GPU(s)"
    return False, "no /dev/nvidia[0-9]*, nvidia-smi -L lists no GPU"


def pty_works():
    """Whether this machine can open a pseudo-terminal."""
    try:
        master, slave = os.openpty()
    except OSError:
        return False
    os.close(master)
    os.close(slave)
    return True


def netns_works():
    """Whether this machine can start a process in new network, UTS and mount namespaces."""
    probe = ["unshare", "--net", "--uts", "--mount", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def unshare_works():
    """Whether this machine can start a process in new PID and mount namespaces."""
    probe = ["unshare", "--pid", "--fork", "--mount-proc", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def ctest_tests(build):
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
    tests = []
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = props.get("LABELS", [])
        tests.append({"name": t["name"], "command": t.get("command", []),
                      "labels": labels if isinstance(labels, list) else [labels],
                      "skip_regex": "SKIP_REGULAR_EXPRESSION" in props})
    return tests


def list_names(exe, *spec):
    p = subprocess.run([exe, *spec, "--list-test-names-only"], capture_output=True, text=True)
    return [line for line in p.stdout.splitlines() if line.strip()]


def check_discovery(build):
    problems = []
    by_exe = {}
    for t in ctest_tests(build):
        if t["skip_regex"]:
            problems.append(f"{t['name']}: skips by SKIP_REGULAR_EXPRESSION (a crash after the line would "
                            "read as a skip): use SKIP_RETURN_CODE 77")
        cmd = t["command"]
        if cmd and re.search(r"/zf_\w+_test$", cmd[0]):
            by_exe.setdefault(cmd[0], []).append(t)
    if not by_exe:
        return ["no Catch test executables found in " + build]

    def entry_problem(names, t):
        cmd = t["command"]
        if cmd[2:4] != ["-w", "NoTests"]:
            return f"{t['name']}: its command lacks -w NoTests"
        # The filter is the name with ',', '[' and ']' escaped (CatchAddTests):
        # Catch then matches exactly that name, and nothing else.
        spec = cmd[1]
        unescaped = re.sub(r"\\([,\[\]])", r"\1", spec)
        bare = re.sub(r"\\[,\[\]]", "", spec)
        # The CTest name is "MODULE:" (or "MODULE: ") + the Catch name.
        own = re.sub(r"^[\w-]+: ?", "", t["name"])
        if spec.startswith("-"):  # the test binary reads it as an option and runs nothing
            return f"{t['name']}: its filter {spec!r} begins with '-'"
        if (unescaped != own or unescaped not in names or re.search(r'[,\[\]"]', bare)
                or spec.startswith(("~", "*", "exclude:")) or spec.endswith("*")):
            return f"{t['name']}: its filter {spec!r} does not select exactly that test"
        return None

    total = 0
    for exe, entries in sorted(by_exe.items()):
        listed = list_names(exe)
        total += len(listed)
        name = os.path.basename(exe)
        if len(listed) != len(entries):
            problems.append(f"{name}: lists {len(listed)} tests, CTest has {len(entries)} entries")
        for bad in (n for n in listed if ";" in n or n != n.strip()):
            problems.append(f"{name}: test name {bad!r} has ';' or outer spaces")
        problems += [p for p in (entry_problem(set(listed), t) for t in entries) if p]
        hidden = set(list_names(exe, "[.]"))
        homed = set()
        for tag in HIDDEN_HOMES if hidden else []:
            homed |= set(list_names(exe, f"[{tag}]"))
        for orphan in sorted(hidden - homed):
            problems.append(f"{name}: hidden test {orphan!r} has no home in HIDDEN_HOMES")
    print(f"check_tests: {len(by_exe)} executables, {total} Catch tests, "
          f"{sum(len(e) for e in by_exe.values())} CTest entries")
    return problems


def check_skips(build, junit_files):
    labels = {t["name"]: t["labels"] for t in ctest_tests(build)}
    skipped, problems = [], []
    missing = [p for p in junit_files if not os.path.isfile(p)]
    if missing:  # e.g. the shell's literal *.xml when no test run wrote one: nothing was checked
        return [f"no JUnit file {p}: the test runs wrote no results to check" for p in missing]
    for path in junit_files:
        for case in ET.parse(path).getroot().iter("testcase"):
            if case.get("status") not in ("notrun", "skipped") and case.find("skipped") is None:
                continue
            name = case.get("name", "")
            out = case.findtext("system-out") or ""
            m = re.search(r"\[skipped\]\s*(.*)", out)
            reason = m.group(1).strip() if m else "(no reason printed)"
            why = allowed_skip(name, labels.get(name, []), reason, os.path.basename(path))
            skipped.append((os.path.basename(os.path.dirname(path)) or path, name, reason, why))
            if why is None:
                problems.append(f"skipped where it must run: {name}: {reason}")
            # A failed check is never a skip (tests/support/skip.h refuses the
            # skip; this catches any other way a failure could read as one).
            if re.search(r"FAILED:|\[skip refused\]|^test cases:.*\bfailed\b", out, re.M):
                problems.append(f"a failed check reported as a skip: {name}")
    print(f"check_tests: {len(skipped)} skipped test(s)")
    for run, name, reason, why in skipped:
        print(f"  [{'allowed: ' + why if why else 'NOT ALLOWED'}] {name}: {reason}")
    return problems


def main(argv):
    if len(argv) >= 2 and argv[0] == "discovery":
        problems = check_discovery(argv[1])
    elif len(argv) >= 3 and argv[0] == "skips":
        problems = check_skips(argv[1], argv[2:])
    else:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    for p in problems:
        print("check_tests: FAIL: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
