#!/usr/bin/env python3
"""Build the runbox Python package's wheel with the standard library only
(no setuptools, no pip, no index): a wheel is a zip of the package plus
METADATA, WHEEL and RECORD (PEP 427). `make python-wheel` runs it:

    python3 python/build_wheel.py --binary-version "$(git describe --always --dirty)" --out bin

The wheel's version is the runbox binary's (the Makefile's VERSION, from
git describe) in PEP 440 form: v1.2.3 → 1.2.3, v1.2.3-4-gabc1234 →
1.2.3.post4+gabc1234, a bare commit abc1234 → 0.0.0+gabc1234, -dirty → a
.dirty local label. The zip is reproducible: fixed timestamps, sorted
entries.
"""

from __future__ import annotations

import argparse
import base64
import glob
import hashlib
import os
import re
import subprocess
import sys
import zipfile
from typing import List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "runbox"
SUMMARY = "Run scripts through the runbox daemon from Python: limits, isolation, progress, failure codes"
EPOCH = (1980, 1, 1, 0, 0, 0)


def pep440(describe: str) -> str:
    """git describe's output (or "dev") as a PEP 440 version."""
    d = describe.strip()
    dirty = d.endswith("-dirty")
    if dirty:
        d = d[: -len("-dirty")]
    local: List[str] = []
    # git describe --always without a tag: an abbreviated commit (checked
    # first: 63b7000 would otherwise read as the pre-release 63b7000).
    commit = re.fullmatch(r"[0-9a-f]{7,40}", d)
    m = None if commit else re.fullmatch(r"v?(\d+(?:\.\d+)*)(?:[-.]?(a|b|rc|alpha|beta|pre|preview|c)[-.]?(\d*))?"
                     r"(?:-(\d+)-g([0-9a-f]+))?", d)
    if m:
        version = m.group(1)
        if m.group(2):
            pre = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}.get(m.group(2), m.group(2))
            version += pre + (m.group(3) or "0")
        if m.group(4):
            version += ".post" + m.group(4)
            local.append("g" + m.group(5))
    elif commit:
        version = "0.0.0"
        local.append("g" + d)
    else:
        version = "0.0.0"
        label = re.sub(r"[^A-Za-z0-9]+", ".", d).strip(".").lower()
        if label:
            local.append(label)
    if dirty:
        local.append("dirty")
    return version + ("+" + ".".join(local) if local else "")


def git_describe() -> str:
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=HERE, capture_output=True,
                              text=True, check=True).stdout.strip() or "dev"
    except (OSError, subprocess.CalledProcessError):
        return "dev"


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arcname, digest, len(data))


def package_files(version: str, binary_version: str) -> List[Tuple[str, bytes]]:
    files = []
    root = os.path.join(HERE, NAME)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if not (fn.endswith(".py") or fn == "py.typed"):
                continue
            path = os.path.join(dirpath, fn)
            arc = os.path.relpath(path, HERE).replace(os.sep, "/")
            with open(path, "rb") as f:
                data = f.read()
            if arc == NAME + "/_version.py":
                data = ('"""The package\'s version: the runbox binary\'s it was built with."""\n\n'
                        "__version__ = %r\nBINARY_VERSION = %r\n" % (version, binary_version)).encode()
            files.append((arc, data))
    return files


def metadata(version: str) -> bytes:
    readme = ""
    p = os.path.join(HERE, "README.md")
    if os.path.exists(p):
        with open(p, encoding="utf-8") as f:
            readme = f.read()
    head = [
        "Metadata-Version: 2.1",
        "Name: " + NAME,
        "Version: " + version,
        "Summary: " + SUMMARY,
        "Requires-Python: >=3.9",
        "License: see the runbox repository",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Operating System :: POSIX :: Linux",
        "Classifier: Typing :: Typed",
        "Description-Content-Type: text/markdown",
    ]
    return ("\n".join(head) + "\n\n" + readme).encode()


def build(out_dir: str, binary_version: str) -> str:
    version = pep440(binary_version)
    dist_info = "%s-%s.dist-info" % (NAME, version)
    entries = package_files(version, binary_version)
    entries.append((dist_info + "/METADATA", metadata(version)))
    entries.append((dist_info + "/WHEEL", (
        "Wheel-Version: 1.0\nGenerator: runbox build_wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n").encode()))
    record = "".join(_record_line(a, d) + "\n" for a, d in entries) + dist_info + "/RECORD,,\n"
    entries.append((dist_info + "/RECORD", record.encode()))
    os.makedirs(out_dir, exist_ok=True)
    # One wheel in out_dir, so `pip install bin/runbox-*.whl` names one file.
    for old in glob.glob(os.path.join(out_dir, NAME + "-*.whl")):
        os.remove(old)
    path = os.path.join(out_dir, "%s-%s-py3-none-any.whl" % (NAME, version))
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in entries:
            info = zipfile.ZipInfo(arc, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(tmp, path)
    return path


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description="Build the runbox Python wheel with the standard library only.")
    ap.add_argument("--binary-version", help="the runbox binary's version (default: git describe --always --dirty)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "bin"), help="directory for the wheel")
    ap.add_argument("--print-version", action="store_true", help="print the PEP 440 version and exit")
    a = ap.parse_args(argv)
    bv = a.binary_version or git_describe()
    if a.print_version:
        print(pep440(bv))
        return 0
    print(build(a.out, bv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
