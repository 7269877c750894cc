#!/usr/bin/env python3
"""Submission-to-first-output latency on a Slurm cluster, side by side.

  make build && python3 bench/slurm_latency.py [-n 20] [--poll 0.1]

For each round, alternating so both see the same cluster load:
  plain   sbatch --parsable --wrap 'echo hi', then poll `squeue -h -j ID -o %T`
          every --poll seconds until the job has left the queue (or shows
          COMPLETED), then read the output file: the output is in hand.
  runbox  `runbox run --sandbox slurm -- echo hi` (attached, warm daemon):
          the time until its first stdout byte.
Prints median, p10 and p90 of each, and the ratio of the medians.
"""
import argparse, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RB = os.path.join(ROOT, "bin", "runbox")


def plain(work, poll):
    out = os.path.join(work, "plain-%j.out")
    t0 = time.monotonic()
    jid = subprocess.run(["sbatch", "--parsable", "-o", out, "--wrap", "echo hi"],
                         check=True, capture_output=True, text=True).stdout.strip().split(";")[0]
    path = out.replace("%j", jid)
    while True:
        st = subprocess.run(["squeue", "-h", "-j", jid, "-o", "%T"], capture_output=True, text=True).stdout.strip()
        if st in ("", "COMPLETED") and os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                f.read()
            return time.monotonic() - t0
        time.sleep(poll)


def runbox(env):
    t0 = time.monotonic()
    p = subprocess.Popen([RB, "run", "--sandbox", "slurm", "--", "echo", "hi"], stdout=subprocess.PIPE, env=env)
    p.stdout.read(1)
    t = time.monotonic() - t0
    p.stdout.read()
    if p.wait() != 0:
        sys.exit("runbox run failed")
    return t


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--poll", type=float, default=0.1)
    a = ap.parse_args()
    home = tempfile.mkdtemp(prefix="rbslurm", dir="/tmp")
    work = tempfile.mkdtemp(prefix="rbslurmw", dir="/tmp")
    env = dict(os.environ, RUNBOX_HOME=home, RUNBOX_NO_DOCKER="1")
    try:
        runbox(env)  # warm the daemon
        plain(work, a.poll)
        res = {"plain": [], "runbox": []}
        for _ in range(a.n):
            res["plain"].append(plain(work, a.poll))
            res["runbox"].append(runbox(env))
        for k, v in res.items():
            print(f"{k:7s} median {statistics.median(v)*1000:7.1f} ms  p10 {pct(v, .1)*1000:7.1f} ms  p90 {pct(v, .9)*1000:7.1f} ms  (n={len(v)})")
        print(f"runbox/plain median ratio {statistics.median(res['runbox'])/statistics.median(res['plain']):.2f}")
    finally:
        lock = os.path.join(home, "daemon.lock")
        if os.path.exists(lock):
            try:
                os.kill(int(open(lock).read().strip()), 15)
            except (ValueError, ProcessLookupError):
                pass
        time.sleep(0.5)
        subprocess.run(["rm", "-rf", home, work])


if __name__ == "__main__":
    main()
