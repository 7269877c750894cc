"""The exceptions runbox raises. Each carries the daemon's own message."""

from __future__ import annotations

from typing import Optional


class RunboxError(Exception):
    """Base of every runbox error: ``message`` is the daemon's (or the
    client's) one-line explanation, ``code`` the API error code
    (``not_found``, ``bad_request``, ...) and ``status`` the HTTP status,
    when the daemon answered."""

    def __init__(self, message: str, *, code: str = "", status: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


class NotFound(RunboxError, LookupError):
    """The run or plan does not exist."""


class BadRequest(RunboxError, ValueError):
    """The daemon refused the request: a bad argument, or an action the
    run's state does not allow (retrying a running run, ...)."""


class Ambiguous(BadRequest):
    """A run id prefix matches more than one run."""


class DiskFull(RunboxError):
    """The daemon's disk is full."""


class DaemonUnavailable(RunboxError, ConnectionError):
    """No daemon answered and none could be started (or it is shutting
    down)."""


class VersionMismatch(DaemonUnavailable):
    """The daemon speaks another version of the API than this client.

    ``client_api`` and ``daemon_api`` name both (``"v1"``, ``"v2"``, or
    ``"unknown"`` when the daemon did not say); ``daemon_version`` is the
    daemon binary's version when it said."""

    def __init__(self, message: str, *, client_api: str, daemon_api: str,
                 daemon_version: str = "") -> None:
        super().__init__(message, code="version_mismatch")
        self.client_api = client_api
        self.daemon_api = daemon_api
        self.daemon_version = daemon_version


class WaitTimeout(RunboxError, TimeoutError):
    """``Run.wait(timeout=...)`` gave up; the run goes on. ``run`` is its
    last known state."""

    def __init__(self, message: str, run: Optional[object] = None) -> None:
        super().__init__(message, code="wait_timeout")
        self.run = run


def from_answer(status: int, code: str, message: str) -> RunboxError:
    """The exception for a daemon's error answer."""
    cls = {
        "not_found": NotFound,
        "ambiguous": Ambiguous,
        "bad_request": BadRequest,
        "disk_full": DiskFull,
        "unavailable": DaemonUnavailable,
    }.get(code)
    if cls is None:
        if status == 404:
            cls = NotFound
        elif status == 400:
            cls = BadRequest
        else:
            cls = RunboxError
    return cls(message, code=code, status=status)
