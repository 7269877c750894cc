"""A real runbox daemon for the tests: bin/runbox (built by `make build`,
or $RUNBOX_TEST_BIN) started on demand by the client itself, on a home of
the tests' own (as the Go tests isolate theirs with RUNBOX_HOME), stopped
and removed when the tests end."""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import tempfile
import time
import unittest
from pathlib import Path
from typing import List, Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))  # the package in this checkout, not an installed one

import runbox  # noqa: E402

BIN = os.environ.get("RUNBOX_TEST_BIN") or str(REPO / "bin" / "runbox")

# Runs in the process sandbox: the host, whatever images Docker has.
P = {"sandbox": "process"}

_homes: List[str] = []
_home: Optional[str] = None


def new_home(copy_cache_from: Optional[str] = None) -> str:
    """A fresh home (short: a unix socket path has ~100 bytes). The
    plugins' compilation cache may be copied in, to spare a cold start."""
    h = tempfile.mkdtemp(prefix="rbpy-", dir="/tmp")
    _homes.append(h)
    if copy_cache_from and os.path.isdir(os.path.join(copy_cache_from, "cache")):
        shutil.copytree(os.path.join(copy_cache_from, "cache"), os.path.join(h, "cache"))
    return h


def home() -> str:
    """The shared home; the module's functions (runbox.run, ...) use it too."""
    global _home
    if _home is None:
        if not os.access(BIN, os.X_OK):
            raise unittest.SkipTest("no %s: run `make build` first" % BIN)
        _home = new_home()
        os.environ.pop("RUNBOX_SOCKET", None)
        os.environ["RUNBOX_HOME"] = _home
        os.environ["RUNBOX_BIN"] = BIN
    return _home


def daemon_pid(h: str) -> int:
    try:
        with open(os.path.join(h, "daemon.lock")) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def gone(pid: int) -> bool:
    """Whether pid has ended (a zombie counts as ended)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.02)
    return gone(pid)


def wait_for(pred, timeout: float = 10.0, what: str = "condition"):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError("timed out after %gs waiting for %s" % (timeout, what))


def stop_daemon(h: str) -> None:
    """End the daemon this test started on home h (by its pid, SIGTERM,
    then SIGKILL)."""
    pid = daemon_pid(h)
    if pid <= 0 or gone(pid):
        return
    os.kill(pid, signal.SIGTERM)
    if not wait_gone(pid, 10):
        os.kill(pid, signal.SIGKILL)
        wait_gone(pid, 5)


@atexit.register
def _cleanup() -> None:
    if runbox._client._default is not None:
        runbox._client._default.close()
        runbox._client._default = None
    for h in _homes:
        stop_daemon(h)
        shutil.rmtree(h, ignore_errors=True)
