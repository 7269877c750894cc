"""A learning-rate sweep of a training script, as one notebook cell.

    python3 python/examples/sweep_notebook.py     (from the repository root)

runbox.sweep starts one run per value (at most two at once) and returns;
the cell then watches the sweep, and ends with the comparison: params,
final and best loss, duration, and the failure code of the one that
diverged.
"""

import time

import runbox

sw = runbox.sweep(["python3", "examples/train.py", "--epochs", "2", "--lr", "{lr}"],
                  params={"lr": [0.001, 0.01, 0.05, 0.2, 5000]}, parallel=2,
                  name="lr-demo", timeout=600, memory="1g")

# Watch: one line, refreshed until every member has ended.
while not (st := sw.status()).done:
    print("\r" + "  ".join("lr=%s %s" % (m.params["lr"], m.state) for m in st.runs), end="", flush=True)
    time.sleep(0.5)
print()

c = runbox.compare(sweep=sw, sort="best:loss")
print("%-8s %-10s %-10s %-10s %-6s %s" % ("lr", "state", "last loss", "best loss", "secs", "failure"))
for row in c.rows:
    loss = row.metrics.get("loss")
    print("%-8s %-10s %-10s %-10s %-6.1f %s" % (row.params["lr"], row.state, "%.4g" % loss.last if loss else "-",
                                                "%.4g" % loss.best if loss and loss.best is not None else "-",
                                                row.duration, row.failure_code))

# The one that failed, again with a different setting (linked to it as its parent):
failed = [m for m in st.runs if m.state == "failed"]
if failed:
    retry = runbox.Run(failed[0].id).retry(cmd=["python3", "examples/train.py", "--epochs", "2", "--lr", "0.1"])
    print("retry of lr=%s as lr=0.1: %s" % (failed[0].params["lr"], retry.wait(output=False).state))
    print("what differs:", [str(ch) for ch in runbox.diff(failed[0].id, retry.id).of("param")])
