"""Finding, starting and checking the daemon: no daemon and no binary, a
daemon of another API version, a daemon killed under a client."""

from __future__ import annotations

import http.server
import json
import os
import signal
import socketserver
import tempfile
import threading
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Tuple

import support
from support import BIN, P

import runbox


def setUpModule() -> None:
    support.home()


class NoDaemonTest(unittest.TestCase):
    def setUp(self) -> None:
        saved = {k: os.environ.get(k) for k in ("RUNBOX_BIN", "PATH")}

        def restore() -> None:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        self.addCleanup(restore)
        os.environ.pop("RUNBOX_BIN", None)
        os.environ["PATH"] = tempfile.mkdtemp()  # no runbox on it

    def test_no_daemon_and_no_binary_says_how_to_install(self) -> None:
        c = runbox.Client(home=support.new_home())
        with self.assertRaises(runbox.DaemonUnavailable) as cm:
            c.run(["true"])
        msg = str(cm.exception)
        self.assertIn("no runbox daemon is running", msg)
        self.assertIn("make install", msg)
        self.assertIn("RUNBOX_BIN", msg)
        self.assertIsInstance(cm.exception, ConnectionError)
        with self.assertRaises(runbox.DaemonUnavailable) as cm2:
            c.analyze("some log")
        self.assertIn("make install", str(cm2.exception))

    def test_autostart_off(self) -> None:
        c = runbox.Client(home=support.new_home(), runbox_bin=BIN, autostart=False)
        with self.assertRaises(runbox.DaemonUnavailable):
            c.health()
        self.assertFalse(os.path.exists(os.path.join(c.transport.home, "daemon.lock")))


class _FakeDaemon(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def fake_daemon(routes: Dict[str, Tuple[int, bytes, str]]) -> str:
    """A stand-in daemon: a daemon of another API version cannot be
    provoked for real (no such runbox binary exists yet), so this serves
    the routes given and the mux's plain-text 404 for the rest."""

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            code, body, ctype = routes.get(self.path.split("?")[0], (404, b"404 page not found\n", "text/plain"))
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    path = os.path.join(support.new_home(), "fake.sock")
    srv = _FakeDaemon(path, H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return path


class VersionTest(unittest.TestCase):
    def test_daemon_of_another_api_version_is_refused(self) -> None:
        health = json.dumps({"version": "9.9.9", "pid": 1}).encode()
        sock = fake_daemon({"/v2/health": (200, health, "application/json")})
        c = runbox.Client(socket=sock, autostart=False)
        with self.assertRaises(runbox.VersionMismatch) as cm:
            c.run(["true"])
        e = cm.exception
        self.assertEqual((e.client_api, e.daemon_api, e.daemon_version), ("v1", "v2", "9.9.9"))
        self.assertIn("API v2", str(e))
        self.assertIn("API v1", str(e))
        self.assertIsInstance(e, runbox.DaemonUnavailable)

    def test_daemon_that_names_another_version(self) -> None:
        health = json.dumps({"version": "2.0.0", "api": "v3"}).encode()
        sock = fake_daemon({"/v1/health": (200, health, "application/json")})
        with self.assertRaises(runbox.VersionMismatch) as cm:
            runbox.Client(socket=sock, autostart=False).runs()
        self.assertEqual(cm.exception.daemon_api, "v3")

    def test_daemon_of_unknown_version(self) -> None:
        sock = fake_daemon({})
        with self.assertRaises(runbox.VersionMismatch) as cm:
            runbox.Client(socket=sock, autostart=False).health()
        self.assertEqual(cm.exception.daemon_api, "unknown")

    def test_real_daemon_matches(self) -> None:
        h = runbox.Client().health()
        self.assertIn("version", h)
        self.assertEqual(h["home"], support.home())


class RestartTest(unittest.TestCase):
    """A daemon killed under a client: the next call starts another, and a
    run() in flight follows its run through the new daemon to its end."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.home = support.new_home(copy_cache_from=support.home())
        cls.c = runbox.Client(home=cls.home, runbox_bin=BIN)
        cls.c.health()  # no daemon there yet: the client starts one

    def kill_daemon(self) -> None:
        pid = support.daemon_pid(self.home)
        self.assertGreater(pid, 0)
        os.kill(pid, signal.SIGKILL)
        self.assertTrue(support.wait_gone(pid))

    def test_starts_on_demand_and_again_after_kill(self) -> None:
        # setUpClass's first call found no daemon on this fresh home.
        self.assertTrue(os.path.exists(os.path.join(self.home, "runbox.sock")))
        self.assertFalse(support.gone(support.daemon_pid(self.home)))
        self.assertEqual(self.c.run(["echo", "one"], **P).stdout, "one\n")
        first = support.daemon_pid(self.home)
        self.kill_daemon()
        self.assertEqual(self.c.run(["echo", "two"], **P).stdout, "two\n")
        self.assertNotEqual(support.daemon_pid(self.home), first)

    def test_run_follows_through_a_daemon_restart(self) -> None:
        out: Dict[str, runbox.Result] = {}
        t = threading.Thread(target=lambda: out.setdefault("r", self.c.run(
            ["sh", "-c", "echo before; sleep 2; echo after"], labels={"case": "restart"}, **P)))
        t.start()
        support.wait_for(lambda: self.c.runs(label="case=restart", state="running"), what="running")
        self.kill_daemon()
        t.join(60)
        self.assertFalse(t.is_alive())
        r = out["r"]
        self.assertEqual((r.state, r.stdout), ("succeeded", "before\nafter\n"), r)

    def test_concurrent_calls_share_one_client(self) -> None:
        def one(i: int) -> str:
            return self.c.run(["echo", str(i)], **P).stdout

        with ThreadPoolExecutor(8) as ex:
            self.assertEqual(list(ex.map(one, range(24))), ["%d\n" % i for i in range(24)])


if __name__ == "__main__":
    unittest.main()
