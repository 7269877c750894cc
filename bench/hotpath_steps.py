#!/usr/bin/env python3
"""Per-step medians of `runbox run --sandbox process -- true` from a
`perf script -F comm,tid,time,event,trace` of the tracepoints that
bench/hotpath.sh records: where each run's milliseconds go, between
points every build has (no trace code in runbox).

usage: hotpath_steps.py PERF_SCRIPT_OUTPUT [label]
"""
import statistics
import sys

STEPS = [
    ("exec", "connect", "client: exec, Go start, parse, dial"),
    ("connect", "accept", "connect -> daemon accepts"),
    ("accept", "sync1", "daemon: request, admission, queued spec, run record"),
    ("sync1", "sync1e", "fdatasync #1 (the submission)"),
    ("sync1e", "clone", "ack; hand-off; supervisor: claim, files, cgroup"),
    ("clone", "trueexec", "fork + exec of the command"),
    ("trueexec", "exit", "`true` runs (its own loader)"),
    ("exit", "sync2", "reap, log closed, exit notice, daemon stores"),
    ("sync2", "sync2e", "fdatasync #2 (the end)"),
    ("sync2e", "cexit", "final frame -> client exits"),
]


def parse(path):
    runs, cur = [], None
    for line in open(path):
        p = line.split()
        if len(p) < 4:
            continue
        comm, t, ev = p[0], float(p[2].rstrip(":")), p[3]
        if "sched_process_exec" in ev and comm == "runbox":
            cur = {"exec": t}
            runs.append(cur)
            continue
        if cur is None:
            continue

        def first(k):
            cur.setdefault(k, t)

        if "sys_enter_connect" in ev and comm == "runbox" and "accept" not in cur:
            first("connect")
        elif "sys_exit_accept4" in ev and comm == "runboxd" and "connect" in cur:
            first("accept")
        elif "sys_enter_fdatasync" in ev and comm == "runboxd":
            if "accept" in cur and "sync1" not in cur:
                cur["sync1"] = t
            elif "exit" in cur:
                first("sync2")
        elif "sys_exit_fdatasync" in ev and comm == "runboxd":
            if "sync1" in cur and "sync1e" not in cur:
                cur["sync1e"] = t
            elif "sync2" in cur:
                first("sync2e")
        elif "sys_enter_clone3" in ev and comm == "runbox" and "sync1e" in cur:
            first("clone")
        elif "sched_process_exec" in ev and comm == "true":
            first("trueexec")
        elif "sched_process_exit" in ev and comm == "true":
            first("exit")
        elif "sys_enter_exit_group" in ev and comm == "runbox" and "sync2e" in cur:
            first("cexit")
    return [r for r in runs[2:] if all(k in r for k in ("exec", "cexit", "sync2e"))]


def main():
    runs = parse(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    print(f"{label}: {len(runs)} runs")
    for a, b, what in STEPS:
        d = [(r[b] - r[a]) * 1e3 for r in runs if a in r and b in r]
        if d:
            print(f"  {what:<55} {statistics.median(d):6.2f} ms")
    tot = [(r["cexit"] - r["exec"]) * 1e3 for r in runs]
    if tot:
        print(f"  {'client exec -> client exit':<55} {statistics.median(tot):6.2f} ms")


if __name__ == "__main__":
    main()
