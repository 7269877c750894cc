"""A learning-rate sweep of a training script, as one notebook cell.

    python3 python/examples/sweep_notebook.py     (from the repository root)

Each configuration is a run of its own (submit returns at once; the daemon
queues what does not fit); the cell then watches them, and ends with a
table: state, final loss, failure code for the ones that diverged.
"""

import time

import runbox

lrs = [0.001, 0.01, 0.05, 0.2, 5000]
runs = {lr: runbox.submit(["python3", "examples/train.py", "--epochs", "2", "--lr", str(lr)],
                          name="sweep-lr-%g" % lr, labels={"sweep": "lr-demo", "lr": str(lr)},
                          timeout=600, memory="1g")
        for lr in lrs}

# Watch: one line per run, refreshed until all have ended.
while True:
    infos = {lr: r.status() for lr, r in runs.items()}
    line = "  ".join("lr=%g %s %s" % (lr, i.state, "%d/%d" % (i.progress.step, i.progress.total) if i.progress else "")
                     for lr, i in infos.items())
    print("\r" + line, end="", flush=True)
    if all(i.done for i in infos.values()):
        break
    time.sleep(0.5)
print()

print("%-8s %-10s %-10s %s" % ("lr", "state", "last loss", "failure"))
for lr, r in runs.items():
    res = r.wait(output=False)
    loss = r.metrics("loss").series.get("loss")
    last = "%.4g" % loss.value[-1] if loss and loss.value else "-"
    print("%-8g %-10s %-10s %s" % (lr, res.state, last, res.failure.code if res.failure else ""))

best = min((lr for lr in runs if runs[lr].info.state == "succeeded"),
           key=lambda lr: runs[lr].metrics("loss").series["loss"].value[-1])
print("best lr:", best)
# A failed one again, with a different setting (linked to it as its parent):
retry = runs[5000].retry(cmd=["python3", "examples/train.py", "--epochs", "2", "--lr", "0.1"])
print("retry of lr=5000 as lr=0.1:", retry.wait(output=False).state, "parent", retry.parent.id if retry.parent else None)
