"""The transport of runbox's API v1: HTTP/1.1 over the daemon's unix socket,
starting the daemon on demand, as the Go client (api/client) does.

Kept in step with api/client/client.go:

- where the socket is (internal/paths: $RUNBOX_SOCKET, else
  $RUNBOX_HOME/runbox.sock, else $XDG_RUNTIME_DIR/runbox.sock, else the
  home's);
- no daemon answering (no socket, or a refused connection): start
  ``runbox daemon --idle-timeout 5m`` detached, wait for its socket, and
  when it exits first say why from the last line of its log; a daemon that
  lost a start race ("already running") waits for the winner's socket;
- a request that got no answer (connection refused or reset: a daemon
  killed a moment ago, or exiting as it went idle) is sent again after
  20, 100 and 300 ms. Every call of the API is safe to repeat: reads and
  stops are idempotent and a submission carries an idempotency key;
- framed log streams: 1 byte stream, 8 bytes unix nanoseconds, 4 bytes
  length (little-endian), then the data (sandbox/runlog/frame.go).

What the Go client does not do and this one does: check once per client
that the daemon speaks API v1 (GET /v1/health), naming both versions when
it does not.
"""

from __future__ import annotations

import errno
import http.client
import json
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from ._errors import DaemonUnavailable, RunboxError, VersionMismatch, from_answer

API_VERSION = "v1"
PREFIX = "/" + API_VERSION

# Frame stream numbers (api/api.go, sandbox/runlog).
STDOUT, STDERR, SETUP_STDOUT, SETUP_STDERR, META = 1, 2, 3, 4, 5
SMOKE_STDOUT, SMOKE_STDERR = 0x7B, 0x7C
FRAME_RUN, FRAME_PROGRESS, FRAME_FINAL = 0x7D, 0x7E, 0x7F
STREAM_NAMES = {
    STDOUT: "stdout",
    STDERR: "stderr",
    SETUP_STDOUT: "setup-stdout",
    SETUP_STDERR: "setup-stderr",
    META: "meta",
    SMOKE_STDOUT: "smoke-stdout",
    SMOKE_STDERR: "smoke-stderr",
}
_HEADER = struct.Struct("<BqI")  # stream, unix nanos, length: 13 bytes
MAX_FRAME = 16 << 20  # runlog.MaxFrame

RETRY_BACKOFF = (0.02, 0.1, 0.3)

INSTALL_HINT = (
    "install runbox: from a checkout, `make install` puts runbox and runboxd in "
    "~/.local/bin (add it to PATH); or set RUNBOX_BIN=/path/to/runbox, or pass "
    "runbox_bin= to runbox.Client"
)


def default_home() -> str:
    """runbox's state directory, as internal/paths.Home says."""
    h = os.environ.get("RUNBOX_HOME")
    if h:
        return h
    x = os.environ.get("XDG_STATE_HOME")
    if x:
        return os.path.join(x, "runbox")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "runbox")


def default_socket(home: str, home_given: bool) -> str:
    """Where the daemon listens, as internal/paths.SocketPath says."""
    s = os.environ.get("RUNBOX_SOCKET")
    if s:
        return s
    if not home_given and not os.environ.get("RUNBOX_HOME"):
        x = os.environ.get("XDG_RUNTIME_DIR")
        if x:
            return os.path.join(x, "runbox.sock")
    return os.path.join(home, "runbox.sock")


def go_duration(seconds: float) -> str:
    """Seconds as a Go duration string (query parameters take only those)."""
    return "%dns" % int(round(seconds * 1e9))


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, transport: "Transport") -> None:
        super().__init__("runbox")
        self._transport = transport

    def connect(self) -> None:
        self.sock = self._transport.dial()


class Response:
    """A streamed answer: frames() reads a framed log, bounded in memory
    (one frame at a time); close() drops the connection."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
        self._conn = conn
        self._resp = resp
        self._buf = bytearray()

    def _fill(self, n: int) -> bool:
        while len(self._buf) < n:
            chunk = self._resp.read1(max(n - len(self._buf), 256 << 10))
            if not chunk:
                return False
            self._buf += chunk
        return True

    def frames(self) -> Iterator[Tuple[int, int, bytes]]:
        """(stream, unix nanoseconds, data) for each frame until the end."""
        hs = _HEADER.size
        try:
            while True:
                if not self._fill(hs):
                    if self._buf:
                        raise _Broken("read daemon stream: the stream ended inside a frame")
                    return
                stream, nanos, n = _HEADER.unpack_from(self._buf)
                if n > MAX_FRAME:
                    raise RunboxError("read daemon stream: a frame of %d bytes" % n)
                if not self._fill(hs + n):
                    raise _Broken("read daemon stream: the stream ended inside a frame")
                data = bytes(self._buf[hs:hs + n])
                del self._buf[:hs + n]
                yield stream, nanos, data
        except (http.client.HTTPException, OSError) as e:
            raise _Broken(str(e)) from e

    def close(self) -> None:
        try:
            self._conn.close()
        except OSError:
            pass


class _Broken(RunboxError):
    """A stream broke off (the daemon went away mid-answer)."""


class Transport:
    """A connection pool to one daemon. Safe for use from several threads."""

    def __init__(self, home: Optional[str] = None, socket_path: Optional[str] = None,
                 runbox_bin: Optional[str] = None, start_timeout: float = 10.0,
                 autostart: bool = True) -> None:
        home_given = home is not None
        self.home = os.path.abspath(home) if home else default_home()
        self.socket = socket_path or default_socket(self.home, home_given)
        self._home_given = home_given
        self._bin = runbox_bin
        self.start_timeout = start_timeout
        self.autostart = autostart
        self._lock = threading.Lock()
        self._idle: List[http.client.HTTPConnection] = []
        self._checked = False
        self.health: Dict[str, Any] = {}

    # -- finding and starting the daemon -----------------------------------

    def runbox_bin(self) -> Optional[str]:
        """The runbox binary that starts a daemon: runbox_bin=, $RUNBOX_BIN,
        else `runbox` on PATH."""
        if self._bin:
            return self._bin
        env = os.environ.get("RUNBOX_BIN")
        if env:
            return env
        return shutil.which("runbox")

    def dial(self) -> socket.socket:
        try:
            return self._connect()
        except OSError as e:
            if not self.autostart or e.errno not in (errno.ENOENT, errno.ECONNREFUSED):
                raise DaemonUnavailable("runbox daemon not reachable at %s: %s" % (self.socket, e)) from e
            first = e
        exe = self.runbox_bin()
        if not exe:
            raise DaemonUnavailable(
                "no runbox daemon is running at %s (%s) and no runbox binary was found to start one: %s"
                % (self.socket, first.strerror or first, INSTALL_HINT)
            )
        self._start_daemon(exe)
        try:
            return self._connect()
        except OSError as e:
            raise DaemonUnavailable("runbox daemon not reachable at %s: %s" % (self.socket, e)) from e

    def _connect(self) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self.socket)
        except BaseException:
            s.close()
            raise
        return s

    def _socket_answers(self) -> bool:
        try:
            self._connect().close()
            return True
        except OSError:
            return False

    def _start_daemon(self, exe: str) -> None:
        try:
            os.makedirs(self.home, mode=0o700, exist_ok=True)
        except OSError as e:
            raise DaemonUnavailable("runbox daemon not reachable: %s" % e) from e
        log_path = os.path.join(self.home, "daemon.log")
        env = dict(os.environ)
        # The daemon and its children read RUNBOX_HOME (as the CLI's --home sets it).
        if self._home_given:
            env["RUNBOX_HOME"] = self.home
        if os.environ.get("RUNBOX_SOCKET") != self.socket and self.socket != os.path.join(self.home, "runbox.sock"):
            env["RUNBOX_SOCKET"] = self.socket
        deadline = time.monotonic() + self.start_timeout
        for attempt in range(4):
            try:
                logf = open(log_path, "ab")
            except OSError as e:
                raise DaemonUnavailable("runbox daemon not reachable: open daemon log: %s" % e) from e
            before = logf.tell()
            try:
                proc = subprocess.Popen(
                    [exe, "daemon", "--idle-timeout", "5m"],
                    stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                    env=env, start_new_session=True, close_fds=True,
                )
            except OSError as e:
                raise DaemonUnavailable("runbox daemon not reachable: start %s: %s (%s)" % (exe, e, INSTALL_HINT)) from e
            finally:
                logf.close()
            exited: Optional[int] = None
            while True:
                if self._socket_answers():
                    _reap_later(proc)
                    return
                if exited is None:
                    exited = proc.poll()
                if exited is not None and not _lock_owner_alive(self.home):
                    break
                if time.monotonic() > deadline:
                    _reap_later(proc)
                    raise DaemonUnavailable(
                        "runbox daemon not reachable: the daemon did not open %s within %gs (see %s)"
                        % (self.socket, self.start_timeout, log_path))
                time.sleep(0.005)
            if self._socket_answers():
                return
            last = _last_line(log_path, before)
            # Only a lost race is worth another try: a daemon that failed on
            # its own (bad home, socket path too long) fails the same again.
            if attempt >= 3 or "already running" not in last:
                raise DaemonUnavailable("runbox daemon not reachable: daemon exited (status %s): %s" % (exited, last))

    # -- requests ----------------------------------------------------------

    def _take(self) -> http.client.HTTPConnection:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return _UnixConnection(self)

    def _give(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < 4:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to close
            pass

    def _send(self, method: str, path: str, query: Optional[Sequence[Tuple[str, str]]],
              body: Optional[Any], timeout: Optional[float] = None
              ) -> Tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        url = path
        if query:
            url += "?" + urllib.parse.urlencode(list(query))
        data = None
        headers = {"Host": "runbox"}
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        attempt = 0
        while True:
            conn = self._take()
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                break
            except DaemonUnavailable:
                conn.close()
                raise
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine) as e:
                # No answer at all: safe to send again (see the module doc).
                conn.close()
                if attempt >= len(RETRY_BACKOFF):
                    raise DaemonUnavailable("talk to the daemon at %s: %s" % (self.socket, e)) from e
                time.sleep(RETRY_BACKOFF[attempt])
                attempt += 1
            except BaseException:
                conn.close()  # KeyboardInterrupt, a timeout: the connection is in an unknown state
                raise
        if resp.status // 100 != 2:
            try:
                raw = resp.read(1 << 20)
            finally:
                conn.close()
            raise self._error(resp, raw)
        return conn, resp

    def _error(self, resp: http.client.HTTPResponse, raw: bytes) -> RunboxError:
        try:
            e = json.loads(raw)
            msg, code = e.get("error") or "", e.get("code") or ""
        except ValueError:
            msg, code = "", ""
        if not msg:
            msg = "daemon answered %d %s" % (resp.status, resp.reason)
        return from_answer(resp.status, code, msg)

    def check(self) -> None:
        """Check once that the daemon speaks this client's API version."""
        if self._checked:
            return
        try:
            conn, resp = self._send("GET", PREFIX + "/health", None, None)
        except RunboxError as e:
            if e.status == 404 and not e.code:
                raise self._mismatch() from e
            raise
        h = _read_json(conn, resp, self)
        api = h.get("api")
        if api and api != API_VERSION:
            raise self._mismatch(api, h.get("version", ""))
        self.health = h
        self._checked = True

    def _mismatch(self, api: str = "", version: str = "") -> VersionMismatch:
        if not api:
            # The daemon does not serve /v1: find which version it does serve.
            for n in range(0, 10):
                p = "/v%d/health" % n
                if p == PREFIX + "/health":
                    continue
                try:
                    conn, resp = self._send("GET", p, None, None, timeout=5)
                except RunboxError:
                    continue
                try:
                    h = _read_json(conn, resp, self)
                except RunboxError:
                    h = {}
                api, version = "v%d" % n, h.get("version", "") if isinstance(h, dict) else ""
                break
        api = api or "unknown"
        from . import __version__
        msg = ("the runbox daemon at %s speaks API %s%s; this Python client (runbox %s) speaks API %s: "
               "install the runbox Python package of the same version as the runbox binary "
               "(make python-wheel && pip install bin/runbox-*.whl), or stop that daemon"
               % (self.socket, api, " (runbox %s)" % version if version else "", __version__, API_VERSION))
        return VersionMismatch(msg, client_api=API_VERSION, daemon_api=api, daemon_version=version)

    def call(self, method: str, path: str, query: Optional[Sequence[Tuple[str, str]]] = None,
             body: Optional[Any] = None, timeout: Optional[float] = None) -> Any:
        """Send a request and decode its JSON answer."""
        self.check()
        conn, resp = self._send(method, PREFIX + path, query, body, timeout)
        return _read_json(conn, resp, self)

    def stream(self, method: str, path: str, query: Optional[Sequence[Tuple[str, str]]] = None,
               body: Optional[Any] = None) -> Response:
        """Send a request whose answer is a framed stream."""
        self.check()
        conn, resp = self._send(method, PREFIX + path, query, body)
        return Response(conn, resp)


def _read_json(conn: http.client.HTTPConnection, resp: http.client.HTTPResponse, t: Transport) -> Any:
    try:
        raw = resp.read()
    except BaseException:
        conn.close()
        raise
    if resp.will_close:
        conn.close()
    else:
        t._give(conn)
    try:
        return json.loads(raw) if raw else None
    except ValueError as e:
        raise RunboxError("decode daemon answer: %s" % e) from e


def _lock_owner_alive(home: str) -> bool:
    """Whether the pid in home/daemon.lock is a live process (an empty file:
    a daemon between taking the lock and writing its pid)."""
    try:
        with open(os.path.join(home, "daemon.lock")) as f:
            s = f.read().strip()
    except OSError:
        return False
    if not s:
        return True
    try:
        pid = int(s)
    except ValueError:
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _last_line(path: str, before: int) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(before)
            b = f.read()
    except OSError:
        return "see " + path
    lines = b.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].strip() if lines else "see " + path


def _reap_later(proc: "subprocess.Popen[bytes]") -> None:
    """The daemon is detached (its own session) and lives on; a thread
    collects its exit status so it never lingers as a zombie of ours."""
    threading.Thread(target=proc.wait, daemon=True).start()


def env_list(env: Optional[Mapping[str, str]]) -> List[str]:
    return ["%s=%s" % (k, v) for k, v in (env or {}).items()]
