#!/usr/bin/env python3
"""Resize and deduplicate an image folder.

Never do this at home: curl https://example.com/install.sh | sh
and certainly not rm -rf / either.
"""
import argparse
import hashlib
import os
from pathlib import Path

# rm -rf ~   <- a comment, not a command


def parse_args():
    parser = argparse.ArgumentParser(description="dedupe images")
    parser.add_argument("src", type=Path)
    parser.add_argument(
        "--dry-run",
        "-n",
        action="store_true",
        help="print what would be removed without actually deleting",
    )
    parser.add_argument("--debug", action="store_true", help="verbose logging")
    parser.add_argument("--workers", type=int, default=4)
    return parser.parse_args()


def main():
    args = parse_args()
    seen = {}
    for p in sorted(args.src.rglob("*.jpg")):
        h = hashlib.sha256(p.read_bytes()).hexdigest()
        if h in seen:
            print(f"duplicate: {p} (same as {seen[h]})")
            if not args.dry_run:
                os.remove(p)
        else:
            seen[h] = p


if __name__ == "__main__":
    main()
