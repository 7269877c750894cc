#!/usr/bin/env python3
"""The baseline a user would otherwise write: run a command with
subprocess.run, capture its output to a log file, record the result as JSON.

    python3 bench/harness.py LOGDIR -- CMD [ARGS...]
"""
import json
import os
import subprocess
import sys
import time


def main():
    logdir = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    os.makedirs(logdir, exist_ok=True)
    start = time.time()
    with open(os.path.join(logdir, "stdout.log"), "wb") as out, \
            open(os.path.join(logdir, "stderr.log"), "wb") as err:
        p = subprocess.run(cmd, stdout=out, stderr=err)
    with open(os.path.join(logdir, "result.json"), "w") as f:
        json.dump({"cmd": cmd, "code": p.returncode, "seconds": time.time() - start}, f)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
