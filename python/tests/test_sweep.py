"""runbox.sweep, runbox.compare and runbox.diff against a real daemon
(see support.py)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import unittest

import support
from support import P

import runbox


def setUpModule() -> None:
    support.home()


# A member prints its loss, lr * bs, as a progress line (the plugins read
# it as a metric) and lingers a moment so that parallel= can be seen. The
# params are both --name value arguments (what the record and compare see)
# and RUNBOX_PARAM_* variables (what the script reads).
LOSS = ('echo "##PROGRESS## {\\"step\\": 1, \\"total\\": 1, \\"metrics\\": '
        '{\\"loss\\": $(awk "BEGIN{print $RUNBOX_PARAM_LR*$RUNBOX_PARAM_BS}")}}"; sleep 0.6')
GRID = {"lr": [0.1, 0.3], "bs": [1, 2]}
WANT = [{"lr": "0.1", "bs": "1"}, {"lr": "0.1", "bs": "2"}, {"lr": "0.3", "bs": "1"}, {"lr": "0.3", "bs": "2"}]


def loss_sweep(**kw: object) -> runbox.Sweep:
    return runbox.sweep(["sh", "-c", LOSS, "sh", "--lr", "{lr}", "--bs", "{bs}"], params=GRID, **P, **kw)


class SweepTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # One 2x2 sweep, parallel=2, shared by the tests that read it.
        cls.sw = loss_sweep(parallel=2, name="py-grid")
        cls.max_running = 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = cls.sw.status()
            # Started and not ended: preparing, running, ... (not queued).
            active = sum(n for state, n in st.counts.items() if state != "queued" and state not in runbox._types.TERMINAL)
            cls.max_running = max(cls.max_running, active)
            if st.done:
                break
            time.sleep(0.03)
        cls.final = cls.sw.wait(timeout=60)

    def test_grid_parallel_and_wait(self) -> None:
        st = self.final
        self.assertTrue(st.done)
        self.assertEqual(st.members, 4)
        self.assertEqual(st.name, "py-grid")
        self.assertEqual(st.parallel, 2)
        self.assertEqual(st.param_names, ["lr", "bs"])
        self.assertEqual(st.counts.get("succeeded"), 4, st.counts)
        # parallel=2: never more than two members started at once.
        self.assertLessEqual(self.max_running, 2)
        self.assertGreaterEqual(self.max_running, 1)
        members = sorted(st.runs, key=lambda m: m.index)
        # The grid, first name slowest, as the CLI's --param.
        self.assertEqual([m.params for m in members], WANT)
        for m in members:
            self.assertEqual(m.state, "succeeded")
            self.assertEqual(m.failure, "")
            want = float(m.params["lr"]) * float(m.params["bs"])
            self.assertAlmostEqual(m.metrics["loss"].last, want)
            self.assertAlmostEqual(m.metrics["loss"].best or 0, want)
        # Sorted by a metric, best (lowest loss) first.
        self.assertEqual([m.params for m in self.sw.status(sort="loss").runs][0], {"lr": "0.1", "bs": "1"})

    def test_runs_are_handles_with_their_values(self) -> None:
        runs = self.sw.runs()
        self.assertEqual(len(runs), 4)
        for r, want in zip(runs, WANT):
            self.assertIsInstance(r, runbox.Run)
            self.assertEqual(r.info.state, "succeeded")
            # {NAME} was replaced in the command; the record has the params.
            self.assertEqual(r.info.command[-4:], ["--lr", want["lr"], "--bs", want["bs"]])
            rec = r.record
            self.assertIsNotNone(rec)
            assert rec is not None
            self.assertEqual(rec.params, want)
            self.assertIn("RUNBOX_PARAM_LR=" + want["lr"], rec.env)
            self.assertEqual(rec.sandbox, "process")
            self.assertEqual(r.wait().stdout.count("##PROGRESS##"), 1)

    def test_listed_and_named_again(self) -> None:
        self.assertIn(self.sw.id, [s.id for s in runbox.sweeps()])
        again = runbox.Sweep(self.sw.id[:12])  # a unique prefix will do
        self.assertEqual(again.id, self.sw.id)
        self.assertTrue(again.info.done)

    def test_compare_sorted_by_metric(self) -> None:
        c = runbox.compare(sweep=self.sw, sort="best:loss")
        self.assertEqual(c.total, 4)
        self.assertEqual(sorted(c.params), ["bs", "lr"])
        self.assertIn("loss", c.metrics)
        self.assertEqual(c.goals.get("loss"), "min")  # loss-like: lower is better
        losses = [r.metrics["loss"].last for r in c.rows]
        self.assertEqual(losses, sorted(losses))
        self.assertAlmostEqual(losses[0], 0.1)
        self.assertAlmostEqual(losses[-1], 0.6)
        self.assertEqual(c.rows[0].params, {"lr": "0.1", "bs": "1"})
        for r in c.rows:
            self.assertEqual((r.state, r.exit_code, r.failure_code), ("succeeded", 0, ""))
            self.assertGreater(r.duration, 0.3)  # each member sleeps 0.6 s
        # Reversed, a page of one, a filter, the same via the handle.
        rev = self.sw.compare(sort="-best:loss", limit=1)
        self.assertEqual((len(rev.rows), rev.total), (1, 4))
        self.assertAlmostEqual(rev.rows[0].metrics["loss"].last, 0.6)
        only = runbox.compare(sweep=self.sw, filter={"lr": "0.3"}, sort="param:bs")
        self.assertEqual([r.params["bs"] for r in only.rows], ["1", "2"])
        # Runs named one by one (handles and ids alike).
        rs = self.sw.runs()
        two = runbox.compare([rs[0], rs[3].id], all_params=True)
        self.assertEqual({r.run_id for r in two.rows}, {rs[0].id, rs[3].id})


class SweepStopTest(unittest.TestCase):
    def test_stop_cancels_queued_and_running(self) -> None:
        sw = runbox.sweep(["sleep", "{s}"], params={"s": [30, 31, 32]}, parallel=1, **P)
        support.wait_for(lambda: sw.status().counts.get("running"), 20, "a running member")
        with self.assertRaises(runbox.WaitTimeout):
            sw.wait(timeout=0.2)  # the sweep goes on
        self.assertFalse(sw.status().done)
        t0 = time.monotonic()
        sw.stop()
        st = sw.wait(timeout=20)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertTrue(st.done)
        self.assertEqual(st.counts.get("succeeded", 0), 0, st.counts)
        self.assertEqual(sorted(m.state for m in st.runs), ["cancelled"] * 3, st.counts)

    def test_retried_member_is_its_row(self) -> None:
        sw = runbox.sweep(["sh", "-c", 'test "$FIX" = 1 || test {x} != 2'], params={"x": [1, 2]}, **P)
        failed = [m for m in sw.wait(timeout=30).runs if m.state == "failed"]
        self.assertEqual([(m.index, m.attempt, m.previous) for m in failed], [(1, 1, [])])
        retry = runbox.Run(failed[0].id).retry(env={"FIX": "1"})
        st = sw.wait(timeout=30)  # waits for the retry too
        row = [m for m in st.runs if m.index == 1][0]
        self.assertEqual((row.id, row.state, row.attempt, row.previous), (retry.id, "succeeded", 2, [failed[0].id]))
        self.assertEqual((len(st.runs), st.counts.get("succeeded")), (2, 2))
        self.assertEqual(sorted(r.id for r in sw.runs()), sorted(m.id for m in st.runs))

    def test_params_file_and_bad_input(self) -> None:
        d = tempfile.mkdtemp()
        jl = os.path.join(d, "sets.jsonl")
        with open(jl, "w") as f:
            f.write(json.dumps({"word": "a b"}) + "\n" + json.dumps({"word": 7}) + "\n")
        sw = runbox.sweep(["sh", "-c", "printf '%s|' \"$RUNBOX_PARAM_WORD\"; echo {word}"], params_file=jl, **P)
        st = sw.wait(timeout=30)
        self.assertEqual([m.params for m in sorted(st.runs, key=lambda m: m.index)], [{"word": "a b"}, {"word": "7"}])
        self.assertEqual(sorted(r.wait().stdout for r in sw.runs()), ["7|7\n", "a b|a b\n"])
        csv = os.path.join(d, "sets.csv")
        with open(csv, "w") as f:
            f.write("x,y\n1,2\n")
        self.assertEqual(runbox.sweep(["echo", "{x}{y}"], params_file=csv, **P).wait(timeout=30).runs[0].params,
                         {"x": "1", "y": "2"})
        # The daemon's refusals come back as runbox.BadRequest, with its message.
        with self.assertRaisesRegex(runbox.BadRequest, "no param is called nope"):
            runbox.sweep(["echo", "{nope}"], params={"a": [1]}, **P)
        with self.assertRaises(runbox.BadRequest):
            runbox.sweep(["echo"], **P)  # no params
        with self.assertRaises(runbox.BadRequest):
            runbox.sweep(["echo", "{a}"], params={"a": []}, **P)
        with self.assertRaises(runbox.BadRequest):
            runbox.sweep(["echo", "{a}"], params={"a": [1]}, params_file=csv, **P)
        with self.assertRaises(runbox.NotFound):
            runbox.Sweep("nosuchsweep")


class ParamValuesTest(unittest.TestCase):
    """The members' values are the text the CLI's sweep gives them."""

    def members(self, sw: runbox.Sweep) -> list:
        return [m.params for m in sorted(sw.wait(timeout=30).runs, key=lambda m: m.index)]

    def test_jsonl_values_as_the_cli_reads_them(self) -> None:
        d = tempfile.mkdtemp()
        jl = os.path.join(d, "sets.jsonl")
        # As Go's encoding/json into json.RawMessage: a string is its text,
        # null is empty, anything else the JSON text exactly as written;
        # objects follow one another however they are laid out in lines.
        with open(jl, "w") as f:
            f.write('{"x":1.0,"y":"a","z":1e-3,"u":{"a":1}}\n'
                    '{"x": -0.50, "y": "caf\\u00e9", "z": true, "u": [1, 2]}  {"x":2,"y":"b","z":false,"u":"s"}\n')
        want = [{"x": "1.0", "y": "a", "z": "1e-3", "u": '{"a":1}'},
                {"x": "-0.50", "y": "caf\u00e9", "z": "true", "u": "[1, 2]"},
                {"x": "2", "y": "b", "z": "false", "u": "s"}]
        sw = runbox.sweep(["echo", "{x}"], params_file=jl, **P)
        self.assertEqual(self.members(sw), want)
        self.assertEqual(sw.info.param_names, ["u", "x", "y", "z"])
        # The CLI, given the same file, makes the same members.
        out = subprocess.run([support.BIN, "sweep", "--params-file", jl, "--sandbox", "process", "--", "echo", "{x}"],
                             capture_output=True, text=True, check=True).stdout
        self.assertEqual(self.members(runbox.Sweep(out.split()[0])), want)
        # null is empty, as the CLI reads it (a value the daemon may refuse).
        with open(jl, "w") as f:
            f.write('{"x":null,"y":1}\n')
        self.assertEqual(runbox._client._read_params_file(jl), (["x", "y"], [{"x": "", "y": "1"}]))
        for text in ('{"x":NaN}\n', '[1]\n', '{"x":1}\n{"x":', '{"x" 1}\n'):
            with self.subTest(text=text):
                with open(jl, "w") as f:
                    f.write(text)
                with self.assertRaisesRegex(runbox.BadRequest, "sets.jsonl: set"):
                    runbox.sweep(["echo", "{x}"], params_file=jl, **P)

    def test_csv_with_a_byte_order_mark(self) -> None:
        csv = os.path.join(tempfile.mkdtemp(), "sets.csv")
        with open(csv, "w", encoding="utf-8-sig") as f:  # as a spreadsheet saves it
            f.write("lr,name\n0.1,a\n")
        sw = runbox.sweep(["echo", "{lr}", "{name}"], params_file=csv, **P)
        self.assertEqual(self.members(sw), [{"lr": "0.1", "name": "a"}])
        self.assertEqual(sw.runs()[0].wait().stdout, "0.1 a\n")

    def test_python_values(self) -> None:
        sw = runbox.sweep(["echo", "{v}"], params={"v": [True, 0.001, 1e-5, 3, {"a": 1}, [1, "b"], "a b"]}, **P)
        self.assertEqual([m["v"] for m in self.members(sw)],
                         ["true", "0.001", "1e-05", "3", '{"a":1}', '[1,"b"]', "a b"])
        # None and an empty value are refused, naming the param (the CLI
        # refuses an empty value; a file's null is one).
        for params, says in (({"x": [None]}, "param x: None"), ({"x": ["a", ""]}, "param x has an empty value"),
                             ({"x": [" "]}, "param x has an empty value"), ({"x": None}, "param x: None")):
            with self.subTest(params=params), self.assertRaisesRegex(runbox.BadRequest, says):
                runbox.sweep(["echo", "{x}"], params=params, **P)


class DiffTest(unittest.TestCase):
    def test_diff_of_a_param_and_env(self) -> None:
        a = runbox.run(["sh", "-c", "true", "sh", "--lr", "0.1"], env={"RBPY_SEED": "1"}, **P)
        b = runbox.run(["sh", "-c", "true", "sh", "--lr", "0.2"], env={"RBPY_SEED": "2"}, **P)
        d = runbox.diff(a.run_id, runbox.Run(b.run_id))
        self.assertEqual((d.a, d.b), (a.run_id, b.run_id))
        self.assertTrue(d)
        self.assertEqual([(c.name, c.a, c.b) for c in d.of("param")], [("lr", "0.1", "0.2")])
        self.assertEqual([(c.name, c.a, c.b) for c in d.of("env")], [("RBPY_SEED", "1", "2")])
        self.assertIn("param lr: 0.1 \u2192 0.2", [str(c) for c in d.changes])
        # The same run against itself: nothing of what it was given differs.
        same = runbox.Run(a.run_id).diff(a.run_id)
        self.assertEqual([c for c in same.changes if c.kind in ("param", "env", "command")], [])
        with self.assertRaises(runbox.NotFound):
            runbox.diff(a.run_id, "nosuchrun")

    def test_record_and_since_worked(self) -> None:
        cmd = ["sh", "-c", "exit $RBPY_CODE", "sh", "--tag", "since-worked-%d" % os.getpid()]
        ok = runbox.run(cmd, env={"RBPY_CODE": "0"}, **P)
        bad = runbox.run(cmd, env={"RBPY_CODE": "3"}, **P)
        self.assertEqual((ok.state, bad.state), ("succeeded", "failed"))
        run = runbox.Run(bad.run_id)
        rec = run.record
        assert rec is not None
        self.assertEqual(rec.command, cmd)
        self.assertEqual(rec.params.get("tag"), "since-worked-%d" % os.getpid())
        self.assertIn("RBPY_CODE=3", rec.env)
        # What changed since the same command last worked: the env it was given.
        sw = run.status().since_worked
        self.assertIsNotNone(sw)
        assert sw is not None
        self.assertEqual(sw.run_id, ok.run_id)
        self.assertIn(("env", "RBPY_CODE", "0", "3"), [(c.kind, c.name, c.a, c.b) for c in sw.changes])
        self.assertTrue(sw.summary)

    def test_compare_needs_runs(self) -> None:
        with self.assertRaises(runbox.BadRequest):
            runbox.compare()
        with self.assertRaises(runbox.BadRequest):
            runbox.compare(label="k=v", goals={"loss": "sideways"})


if __name__ == "__main__":
    unittest.main()
