#!/usr/bin/env python3
"""A GTP engine that breaks, for the `zerofarm match` tests (tests/integration/match_test.cpp).

usage: fake_gtp_engine.py MODE [PIDFILE]
It answers the setup commands (name, version, boardsize, clear_board, komi, play) like an engine,
then on its first genmove it breaks as MODE says:
  hang     never answers (and first starts a child, `sleep`, in its process group, writing the
           child's pid to PIDFILE: the test checks the whole group was killed)
  crash    exits with status 3
  illegal  answers the last move played to it (an occupied point), or a1 when there is none
  nogtp    answers a line that is not GTP ("hello")
  good     plays nothing itself: resigns (a well-behaved engine, for the counts)
"""
import sys
import time

mode = sys.argv[1]
last_play = "a1"
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    cmd = words[0]
    if cmd == "quit":
        print("=\n", flush=True)
        break
    if cmd == "play" and len(words) == 3:
        last_play = words[2]
    if cmd == "name":
        print("= fake-" + mode + "\n", flush=True)
    elif cmd != "genmove":
        print("=\n", flush=True)
    elif mode == "hang":
        import subprocess
        child = subprocess.Popen(["sleep", "1000"])
        if len(sys.argv) > 2:
            with open(sys.argv[2], "a") as f:
                f.write("%d\n" % child.pid)
        while True:
            time.sleep(1000)
    elif mode == "crash":
        sys.exit(3)
    elif mode == "illegal":
        print("= " + last_play + "\n", flush=True)
    elif mode == "nogtp":
        print("hello", flush=True)
    else:
        print("= resign\n", flush=True)
