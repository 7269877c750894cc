#!/usr/bin/env python3
"""Print hyperfine JSON exports as Markdown tables: median, mean ± σ, and
the ratio of each median to the first command's (the baseline).

    python3 bench/summarize.py /tmp/runbox-bench/*.json
"""
import json
import sys


def fmt(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


for path in sys.argv[1:]:
    with open(path) as f:
        results = json.load(f)["results"]
    base = results[0]["median"]
    print(f"\n{path.rsplit('/', 1)[-1]}\n")
    print("| command | median | mean ± σ | runs | median ÷ first |")
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['command']} | {fmt(r['median'])} | {fmt(r['mean'])} ± {fmt(r['stddev'] or 0)} "
              f"| {len(r['times'])} | {r['median'] / base:.2f}× |")
