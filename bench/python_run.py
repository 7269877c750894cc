#!/usr/bin/env python3
"""runbox.run(["true"]) from a warm interpreter, side by side.

  make build && python3 bench/python_run.py [-n 200] [--warmup 10]

Three ways to run `true` and have its exit code and output in hand, timed
in this one interpreter, interleaved round by round (A B C, A B C, ...) so
that all three see the same machine load:

  subprocess   subprocess.run(["true"], capture_output=True)
  runbox.run   runbox.run(["true"], sandbox="process") through a warm client
               (the daemon already up, the connection kept alive)
  runbox CLI   subprocess.run(["bin/runbox", "run", "--sandbox", "process",
               "--", "true"], capture_output=True): a process per call

The daemon runs on a home of the benchmark's own (its plugins compiled by
the warm-up), which it stops and removes at the end. Prints median, p10 and
p90 of each, and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
RB = os.path.join(ROOT, "bin", "runbox")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=200, help="rounds (each times all three)")
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    if not os.access(RB, os.X_OK):
        sys.exit("no %s: run `make build` first" % RB)
    home = tempfile.mkdtemp(prefix="rbpy-bench-", dir="/tmp")
    os.environ["RUNBOX_HOME"] = home
    os.environ["RUNBOX_BIN"] = RB
    os.environ.pop("RUNBOX_SOCKET", None)
    import runbox

    def sub() -> None:
        p = subprocess.run(["true"], capture_output=True)
        assert p.returncode == 0

    def lib() -> None:
        r = runbox.run(["true"], sandbox="process")
        assert r.exit_code == 0, r

    def cli() -> None:
        p = subprocess.run([RB, "run", "--sandbox", "process", "--", "true"], capture_output=True)
        assert p.returncode == 0, p.stderr

    ways = [("subprocess.run([\"true\"])", sub), ("runbox.run([\"true\"])", lib),
            ("subprocess.run([\"runbox\",\"run\",\"--\",\"true\"])", cli)]
    try:
        for _ in range(a.warmup):
            for _, f in ways:
                f()
        times = {name: [] for name, _ in ways}
        for _ in range(a.n):
            for name, f in ways:
                t0 = time.perf_counter()
                f()
                times[name].append(time.perf_counter() - t0)
        med = {}
        print("runbox %s, Python %s, %d rounds, load average %.2f"
              % (runbox.Client().health().get("version"), sys.version.split()[0], a.n, os.getloadavg()[0]))
        print("| way | median | p10 | p90 |")
        print("|---|---|---|---|")
        for name, ts in times.items():
            ts.sort()
            med[name] = statistics.median(ts)
            print("| `%s` | %.2f ms | %.2f ms | %.2f ms |" % (
                name, med[name] * 1e3, ts[len(ts) // 10] * 1e3, ts[len(ts) * 9 // 10] * 1e3))
        s, lb, c = (med[n] for n, _ in ways)
        print()
        print("runbox.run ÷ subprocess.run(true): %.2f×" % (lb / s))
        print("runbox.run ÷ runbox CLI:           %.2f×" % (lb / c))
        print("runbox CLI ÷ subprocess.run(true): %.2f×" % (c / s))
    finally:
        try:
            with open(os.path.join(home, "daemon.lock")) as f:
                pid = int(f.read().strip() or 0)
            if pid > 0:
                os.kill(pid, signal.SIGTERM)
                for _ in range(200):
                    os.kill(pid, 0)
                    time.sleep(0.05)
        except (OSError, ValueError):
            pass
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
