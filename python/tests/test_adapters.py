"""The drop-in adapters against a real daemon: the behaviour the seeds
describe for rlm-code's LocalSandboxRuntime and slop-code-bench's
LocalRuntime (timeout → timed_out, stdin, setup output apart, streaming
demultiplexed, kill of a running command leaves no process)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from dataclasses import dataclass
from typing import Dict, List, Optional

import support

from runbox.adapters import rlm, slop


def setUpModule() -> None:
    support.home()


# A command that records its own pid and its child's, then waits on the
# child: killing it must end both.
TREE = "echo $$ > pids; sleep 60 & echo $! >> pids; wait"


def read_pids(d: pathlib.Path) -> List[int]:
    try:
        lines = (d / "pids").read_text().split()
    except OSError:
        return []
    return [int(x) for x in lines] if len(lines) == 2 else []


class SlopBehaviourTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = pathlib.Path(tempfile.mkdtemp())
        self.rt = slop.LocalRuntime.spawn(environment=None, working_dir=self.ws)
        self.addCleanup(self.rt.cleanup)

    def test_execute_result_fields(self) -> None:
        r = self.rt.execute("sh -c 'echo out; echo err >&2; exit 4'", env={}, stdin=None, timeout=10)
        self.assertEqual((r.exit_code, r.stdout, r.stderr, r.timed_out), (4, "out\n", "err\n", False))
        self.assertEqual((r.setup_stdout, r.setup_stderr), ("", ""))
        self.assertGreater(r.elapsed, 0)
        self.assertTrue(r.run_id)
        self.assertEqual(r.failure.code if r.failure else None, "NONZERO_EXIT")
        # The command runs in the workspace, with the env given on top.
        r = self.rt.execute(["sh", "-c", "pwd; echo $GREETING"], env={"GREETING": "hi"}, stdin=None, timeout=10)
        self.assertEqual(r.stdout.split(), [os.path.realpath(self.ws), "hi"])

    def test_stdin(self) -> None:
        self.assertEqual(self.rt.execute("cat", env={}, stdin="line 1\nline 2\n", timeout=10).stdout, "line 1\nline 2\n")
        self.assertEqual(self.rt.execute("cat", env={}, stdin=["a", "b", "c"], timeout=10).stdout, "abc")
        self.assertEqual(self.rt.execute("cat", env={}, stdin=None, timeout=10).stdout, "")

    def test_timeout_sets_timed_out(self) -> None:
        t0 = time.monotonic()
        r = self.rt.execute("sh -c 'echo partial; sleep 30'", env={}, stdin=None, timeout=0.5)
        self.assertLess(time.monotonic() - t0, 15)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.exit_code, -1)  # as the original reports a timeout
        self.assertEqual(r.stdout, "partial\n")
        self.assertEqual(r.failure.code if r.failure else None, "TIMEOUT")

    def test_timeout_leaves_no_process(self) -> None:
        r = self.rt.execute(["sh", "-c", TREE], env={}, stdin=None, timeout=1)
        self.assertTrue(r.timed_out)
        pids = read_pids(self.ws)
        self.assertEqual(len(pids), 2)
        for pid in pids:
            self.assertTrue(support.wait_gone(pid), "pid %d still running after the timeout" % pid)

    def test_setup_output_apart(self) -> None:
        @dataclass
        class Spec:  # slop-code's environment spec, as far as the runtime uses it
            def get_setup_commands(self, is_evaluation: bool) -> List[str]:
                return ["echo from-spec > spec.txt", "echo SPEC-SETUP"]

            def get_full_env(self, env: Dict[str, str]) -> Dict[str, str]:
                return dict({"PATH": os.environ["PATH"], "FROM_SPEC": "1"}, **env)

        rt = slop.LocalRuntime.spawn(environment=Spec(), working_dir=self.ws,
                                     setup_command="echo EXTRA-SETUP; echo setup-err >&2")
        self.addCleanup(rt.cleanup)
        assert rt.setup_result is not None
        self.assertEqual(rt.setup_result.setup_stdout, "SPEC-SETUP\nEXTRA-SETUP\n")
        self.assertEqual(rt.setup_result.setup_stderr, "setup-err\n")
        r = rt.execute("sh -c 'cat spec.txt; echo $FROM_SPEC ${HOME:-nohome}'", env={}, stdin=None, timeout=10)
        self.assertEqual(r.stdout, "from-spec\n1 nohome\n")  # setup ran once, first; the spec's env is the whole env
        self.assertNotIn("SETUP", r.stdout + r.stderr)
        with self.assertRaises(slop.SolutionRuntimeError):
            slop.LocalRuntime.spawn(working_dir=self.ws, setup_command="echo broken >&2; exit 3")
        skipped = slop.LocalRuntime.spawn(working_dir=self.ws, setup_command="exit 3", disable_setup=True)
        self.assertIsNone(skipped.setup_result)

    def test_stream_demultiplexed(self) -> None:
        cmd = ["sh", "-c", "echo o1; echo e1 >&2; sleep 0.2; echo o2; echo e2 >&2"]
        events = list(self.rt.stream(cmd, env={}, stdin=None, timeout=10))
        self.assertEqual(events[-1].kind, "finished")
        self.assertEqual({e.kind for e in events[:-1]}, {"stdout", "stderr"})
        self.assertEqual("".join(e.text or "" for e in events if e.kind == "stdout"), "o1\no2\n")
        self.assertEqual("".join(e.text or "" for e in events if e.kind == "stderr"), "e1\ne2\n")
        res = events[-1].result
        assert res is not None
        self.assertEqual((res.exit_code, res.stdout, res.stderr), (0, "o1\no2\n", "e1\ne2\n"))
        # Events come as output does, not at the end.
        it = self.rt.stream(["sh", "-c", "echo first; sleep 2; echo second"], env={}, stdin=None, timeout=10)
        t0 = time.monotonic()
        first = next(iter(it))
        self.assertEqual((first.kind, first.text), ("stdout", "first\n"))
        self.assertLess(time.monotonic() - t0, 1.8)
        self.assertEqual([e.kind for e in it][-1], "finished")
        with self.assertRaises(ValueError):
            list(self.rt.stream("cat", env={}, stdin="x", timeout=10))

    def test_stream_timeout(self) -> None:
        events = list(self.rt.stream("sleep 30", env={}, stdin=None, timeout=0.5))
        assert events[-1].result is not None
        self.assertTrue(events[-1].result.timed_out)

    def test_kill_leaves_no_process(self) -> None:
        with self.assertRaises(slop.SolutionRuntimeError):
            self.rt.poll()  # no command yet
        done: Dict[str, slop.RuntimeResult] = {}
        t = threading.Thread(target=lambda: done.setdefault("r", self.rt.execute(
            ["sh", "-c", TREE], env={}, stdin=None, timeout=None)))
        t.start()
        pids = support.wait_for(lambda: read_pids(self.ws), what="the pids file")
        self.assertIsNone(self.rt.poll())  # running
        self.rt.kill()
        for pid in pids:
            self.assertTrue(support.wait_gone(pid), "pid %d still running after kill()" % pid)
        self.assertIsNotNone(self.rt.poll())
        t.join(15)
        self.assertFalse(t.is_alive())
        self.assertEqual(done["r"].failure.code if done["r"].failure else None, "CANCELLED")
        self.assertNotEqual(self.rt.wait(), 0)

    def test_cleanup_ends_the_running_command(self) -> None:
        it = self.rt.stream(["sh", "-c", "echo go; " + TREE], env={}, stdin=None, timeout=None)
        self.assertEqual(next(iter(it)).text, "go\n")
        pids = support.wait_for(lambda: read_pids(self.ws), what="the pids file")
        self.rt.cleanup()
        for pid in pids:
            self.assertTrue(support.wait_gone(pid), "pid %d still running after cleanup()" % pid)
        with self.assertRaises(slop.SolutionRuntimeError):
            self.rt.execute("true", env={}, stdin=None, timeout=5)

    def test_static_assets(self) -> None:
        @dataclass
        class Asset:  # slop-code's ResolvedStaticAsset
            name: str
            absolute_path: pathlib.Path
            save_path: pathlib.Path

        src = pathlib.Path(tempfile.mkdtemp()) / "input.csv"
        src.write_text("a,b\n")
        rt = slop.LocalRuntime.spawn(working_dir=self.ws, static_assets={
            "data": Asset("data", src, pathlib.Path("data/input.csv"))})
        self.addCleanup(rt.cleanup)
        self.assertEqual(rt.execute("cat data/input.csv", env={}, stdin=None, timeout=10).stdout, "a,b\n")

    def test_bad_output_is_replaced(self) -> None:
        r = self.rt.execute(["printf", "\\377ok"], env={}, stdin=None, timeout=10)
        self.assertEqual(r.stdout, "\ufffdok")


class RlmBehaviourTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = pathlib.Path(tempfile.mkdtemp())
        self.rt = rlm.LocalSandboxRuntime()

    def request(self, code: str, timeout: Optional[float] = 10, env: Optional[Dict[str, str]] = None) -> rlm.RuntimeExecutionRequest:
        f = self.ws / "step.py"
        f.write_text(code)
        return rlm.RuntimeExecutionRequest(code_file=pathlib.Path("step.py"), workdir=self.ws, timeout_seconds=timeout,
                                           python_executable=pathlib.Path(sys.executable),
                                           env=env if env is not None else {"PATH": os.environ["PATH"]})

    def test_execute_result_fields(self) -> None:
        r = self.rt.execute(self.request("import os, sys\nprint(os.getcwd())\nprint('oops', file=sys.stderr)\nsys.exit(2)\n"))
        self.assertEqual(r.return_code, 2)
        self.assertEqual(r.stdout, os.path.realpath(self.ws) + "\n")
        self.assertEqual(r.stderr, "oops\n")
        self.assertFalse(r.timed_out)
        self.assertTrue(r.run_id)
        self.assertIsNotNone(r.failure)
        self.assertEqual(self.rt.name, "runbox")

    def test_env_is_the_requests(self) -> None:
        os.environ["RUNBOX_PY_NOT_PASSED"] = "leak"
        self.addCleanup(os.environ.pop, "RUNBOX_PY_NOT_PASSED")
        r = self.rt.execute(self.request("import os\nprint(os.environ.get('RUNBOX_PY_NOT_PASSED'), os.environ.get('MINE'))\n",
                                         env={"PATH": os.environ["PATH"], "MINE": "set"}))
        self.assertEqual(r.stdout, "None set\n")

    def test_failure_code(self) -> None:
        r = self.rt.execute(self.request("import no_such_module_here\n"))
        self.assertEqual(r.return_code, 1)
        self.assertEqual(r.failure.code if r.failure else None, "MODULE_NOT_FOUND")

    def test_timeout_raises_like_subprocess_and_leaves_no_process(self) -> None:
        code = ("import subprocess, time\n"
                "child = subprocess.Popen(['sleep', '60'])\n"
                "open('pids', 'w').write('%d\\n%d\\n' % (__import__('os').getpid(), child.pid))\n"
                "print('started', flush=True)\n"
                "time.sleep(60)\n")
        with self.assertRaises(subprocess.TimeoutExpired) as cm:
            self.rt.execute(self.request(code, timeout=1.5))
        self.assertEqual(cm.exception.timeout, 1.5)
        self.assertEqual(cm.exception.output, "started\n")
        self.assertTrue(getattr(cm.exception, "run_id", ""))
        pids = read_pids(self.ws)
        self.assertEqual(len(pids), 2)
        for pid in pids:
            self.assertTrue(support.wait_gone(pid), "pid %d still running after the timeout" % pid)
        soft = rlm.LocalSandboxRuntime(raise_on_timeout=False).execute(self.request("import time; time.sleep(30)", timeout=0.5))
        self.assertTrue(soft.timed_out)
        self.assertEqual(soft.failure.code if soft.failure else None, "TIMEOUT")

    def test_limits_pass_through(self) -> None:
        r = rlm.LocalSandboxRuntime(memory="64m", labels={"harness": "rlm"}).execute(self.request("print('ok')"))
        self.assertEqual(r.stdout, "ok\n")
        import runbox
        self.assertEqual(runbox.Run(r.run_id).status().raw["spec"]["limits"]["memory_bytes"], 64 << 20)

    def test_health(self) -> None:
        h = rlm.detect_runtime_health()["runbox"]
        self.assertTrue(h.available, h.detail)


if __name__ == "__main__":
    unittest.main()
