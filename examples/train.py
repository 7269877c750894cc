#!/usr/bin/env python3
"""A tiny, dependency-free training job for trying runbox.

It fits a linear model with mini-batch SGD on synthetic data and reports
progress the way runbox understands it: `##PROGRESS## {json}` lines on stdout
(the contract any script can use), plus Keras-style epoch lines. With a
learning rate that is far too high (--lr 50) the loss diverges and the job
fails the way real training jobs do.
"""
import argparse
import json
import math
import random
import sys
import time


def readable(x):
    """A loss people can read: 0.0123, or 3.142e+302 once it diverges
    (a fixed-point format would print hundreds of digits)."""
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.3e}"
    return f"{x:.4f}"


def progress(**fields):
    print("##PROGRESS## " + json.dumps(fields), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=20, help="batches per epoch")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--delay", type=float, default=0.05, help="seconds per step")
    p.add_argument("--dry-run", action="store_true", help="one step, then exit (smoke test)")
    args = p.parse_args()

    rng = random.Random(0)
    true_w = [rng.uniform(-2, 2) for _ in range(8)]
    data = []
    for _ in range(args.steps * 16):
        x = [rng.gauss(0, 1) for _ in true_w]
        data.append((x, sum(a * b for a, b in zip(true_w, x)) + rng.gauss(0, 0.1)))
    w = [0.0] * len(true_w)

    total = args.epochs * args.steps
    step = 0
    print(f"training on {len(data)} samples, {args.epochs} epochs", flush=True)
    for epoch in range(1, args.epochs + 1):
        print(f"Epoch {epoch}/{args.epochs}", flush=True)
        for b in range(args.steps):
            batch = data[b * 16:(b + 1) * 16]
            grad = [0.0] * len(w)
            loss = 0.0
            for x, y in batch:
                err = sum(a * c for a, c in zip(w, x)) - y
                loss += err * err / len(batch)
                for i, xi in enumerate(x):
                    grad[i] += 2 * err * xi / len(batch)
            if math.isnan(loss) or math.isinf(loss):
                raise FloatingPointError(
                    f"Loss is {loss} at epoch {epoch} step {step}: training diverged")
            w = [wi - args.lr * g for wi, g in zip(w, grad)]
            step += 1
            progress(step=step, total=total, epoch=epoch, epoch_total=args.epochs,
                     phase="train", loss=float(f"{loss:.6g}"))
            if args.dry_run:
                print("dry run: one step done", flush=True)
                return 0
            time.sleep(args.delay)
        print(f"{args.steps}/{args.steps} - loss: {readable(loss)}", flush=True)
    print(f"done: final loss {readable(loss)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
