"""A harness loop: 100 generated snippets, each with a timeout.

    python3 python/examples/harness_100.py

The snippets stand in for model-generated code: most work, some raise,
some import what is not installed, some never end. Eight at a time go
through runbox (each in its own run, no network, 256 MiB); every one comes
back with its exit code, output, timed_out and a failure code.
"""

import collections
import random
from concurrent.futures import ThreadPoolExecutor

import runbox

rng = random.Random(7)
kinds = ["ok", "ok", "ok", "raise", "import", "loop"]
snippets = []
for i in range(100):
    kind = rng.choice(kinds)
    code = {
        "ok": "print(sum(range(%d)))" % i,
        "raise": "raise ValueError('bad input %d')" % i,
        "import": "import not_installed_%d" % i,
        "loop": "while True: pass",
    }[kind]
    snippets.append((kind, code))


def evaluate(snippet):
    kind, code = snippet
    r = runbox.run(["python3", "-c", code], timeout=2, memory="256m", isolate="net",
                   sandbox="process", labels={"harness": "demo", "kind": kind})
    return kind, r


with ThreadPoolExecutor(8) as pool:
    results = list(pool.map(evaluate, snippets))

table = collections.Counter()
for kind, r in results:
    table[(kind, "timed_out" if r.timed_out else r.state, r.failure.code if r.failure else "-")] += 1
print("%-7s %-10s %-20s %s" % ("kind", "state", "failure", "count"))
for (kind, state, code), n in sorted(table.items()):
    print("%-7s %-10s %-20s %d" % (kind, state, code, n))
slowest = max(results, key=lambda kr: kr[1].elapsed)[1]
print("slowest: %.2fs (%s, timed_out=%s)" % (slowest.elapsed, slowest.run_id, slowest.timed_out))
