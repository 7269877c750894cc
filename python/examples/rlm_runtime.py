"""rlm-code's local runtime, switched to runbox in one line.

    python3 python/examples/rlm_runtime.py

Each step of generated code runs under runbox with a memory limit and no
network; a step past its timeout raises subprocess.TimeoutExpired (as the
local runtime does) after runbox has ended its whole process tree.
"""

import os
import subprocess
import tempfile
from pathlib import Path

# from rlm_code.sandbox.runtimes.local import LocalSandboxRuntime
from runbox.adapters.rlm import LocalSandboxRuntime, RuntimeExecutionRequest

runtime = LocalSandboxRuntime(memory="1g", isolate="net")

steps = [
    "print(sum(range(10)))",
    "import json; print(json.dumps({'ok': True}))",
    "import nonexistent_package",
    "while True: pass",
]
work = Path(tempfile.mkdtemp())
for i, code in enumerate(steps):
    f = work / ("step%d.py" % i)
    f.write_text(code + "\n")
    req = RuntimeExecutionRequest(code_file=f, workdir=work, timeout_seconds=2,
                                  python_executable=Path("python3"), env={"PATH": os.environ["PATH"]})
    try:
        res = runtime.execute(req)
    except subprocess.TimeoutExpired as e:
        print("step %d: timed out after %ss (run %s)" % (i, e.timeout, getattr(e, "run_id", "?")))
        continue
    why = " — %s: %s" % (res.failure.code, res.failure.suggestions[0]) if res.failure and res.failure.suggestions else ""
    print("step %d: exit %d %r%s" % (i, res.return_code, res.stdout.strip(), why))
