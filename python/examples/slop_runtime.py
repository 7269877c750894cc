"""slop-code-bench's local runtime, switched to runbox in one line.

    python3 python/examples/slop_runtime.py

A workspace gets a setup command once, then each test case runs with its
stdin and a timeout; one case streams its output, stdout and stderr apart.
"""

import tempfile

# from slop_code.execution.local_runtime import LocalRuntime
from runbox.adapters.slop import LocalRuntime

work = tempfile.mkdtemp()
with open(work + "/solution.py", "w") as f:
    f.write("import sys\n"
            "a, b = map(int, sys.stdin.read().split())\n"
            "print(a + b)\n"
            "print('debug: added', file=sys.stderr)\n")

rt = LocalRuntime.spawn(environment=None, working_dir=work, setup_command="python3 -c 'print(\"setup ok\")'",
                        memory="512m")
print("setup said:", rt.setup_result.setup_stdout.strip() if rt.setup_result else None)
try:
    for stdin, want in [("1 2\n", "3"), ("40 2\n", "42")]:
        res = rt.execute("python3 solution.py", env={}, stdin=stdin, timeout=5)
        print("case %r: %s (exit %d, %.2fs)" % (stdin.strip(), "pass" if res.stdout.strip() == want else "FAIL",
                                                res.exit_code, res.elapsed))
    res = rt.execute("python3 -c 'while True: pass'", env={}, stdin=None, timeout=1)
    print("spinning case: timed_out=%s exit=%d failure=%s" % (res.timed_out, res.exit_code,
                                                              res.failure.code if res.failure else None))
    for ev in rt.stream("sh -c 'echo out; echo err >&2; echo more'", env={}, stdin=None, timeout=5):
        print("event", ev.kind, repr(ev.text) if ev.result is None else ev.result.exit_code)
finally:
    rt.cleanup()
