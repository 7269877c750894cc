"""A drop-in for slop-code-bench's local runtime, running through runbox.

slop-code-bench's ``LocalRuntime`` (a ``SubmissionRuntime``) runs each
command as a host subprocess in a workspace: ``spawn()`` makes one and runs
the environment's setup commands; ``execute(command, env, stdin, timeout)``
returns a ``RuntimeResult`` (exit_code, stdout, stderr, setup_stdout,
setup_stderr, elapsed, timed_out); ``stream(...)`` yields ``RuntimeEvent``
objects (kind "stdout" / "stderr" with text, then "finished" with the
result); ``poll()``, ``kill()``, ``wait()`` and ``cleanup()`` manage the
current process. This class keeps those names, arguments and fields, and
runs each command as a runbox run: limits, isolation, a timeout that ends
the whole process tree, progress and a failure code on each result.

Switching a harness over is one line::

    # from slop_code.execution.local_runtime import LocalRuntime
    from runbox.adapters.slop import LocalRuntime

    rt = LocalRuntime.spawn(environment=spec, working_dir=workspace, setup_command="pip install -e .")
    res = rt.execute("python main.py", env={}, stdin="3 4\\n", timeout=10)
    print(res.exit_code, res.timed_out, res.stdout, res.failure)
    for ev in rt.stream("python main.py --verbose", env={}, stdin=None, timeout=10):
        print(ev.kind, ev.text or ev.result)
    rt.cleanup()

``environment`` may be slop-code's own spec (its ``get_full_env`` and
``get_setup_commands`` are used when present) or None. Differences, by
design: stdin for ``stream()`` is refused as in the original; a timed-out
``execute()`` reports exit_code -1 as the original does (runbox's own
status is on ``result.runbox_exit_code``).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from .._client import Client, Run, default_client
from .._errors import RunboxError, WaitTimeout
from .._types import Failure, Result

Command = Union[str, Sequence[str]]
Stdin = Union[str, List[str], None]


class SolutionRuntimeError(RuntimeError):
    """The runtime has no process (none started, or cleaned up), or a
    process would not end."""


@dataclass
class RuntimeResult:
    """slop-code's result fields, plus the run's id and failure."""

    exit_code: int
    stdout: str
    stderr: str
    setup_stdout: str
    setup_stderr: str
    elapsed: float
    timed_out: bool
    run_id: str = ""
    failure: Optional[Failure] = None
    runbox_exit_code: Optional[int] = None


@dataclass
class RuntimeEvent:
    """kind "stdout" or "stderr" with text, or "finished" with result."""

    kind: str
    text: Optional[str] = None
    result: Optional[RuntimeResult] = None


def _to_result(r: Result) -> RuntimeResult:
    return RuntimeResult(
        exit_code=-1 if r.timed_out else r.exit_code, stdout=r.stdout, stderr=r.stderr,
        setup_stdout=r.setup_stdout, setup_stderr=r.setup_stderr, elapsed=r.elapsed,
        timed_out=r.timed_out, run_id=r.run_id, failure=r.failure, runbox_exit_code=r.exit_code)


def _argv(command: Command) -> List[str]:
    return list(command) if not isinstance(command, str) else shlex.split(command)


class LocalRuntime:
    """A SubmissionRuntime whose commands run under runbox (see the
    module's doc). sandbox defaults to "process" (the host, as the local
    runtime); other keyword arguments are runbox.run's (memory=,
    isolate=, cpus=, labels=, ...)."""

    def __init__(self, environment: Any = None, working_dir: Union[str, "os.PathLike[str]"] = ".",
                 static_assets: Optional[Mapping[str, Any]] = None, ports: Optional[Mapping[int, int]] = None,
                 mounts: Optional[Mapping[str, Any]] = None, env_vars: Optional[Mapping[str, str]] = None,
                 setup_command: Optional[str] = None, *, is_evaluation: bool = False,
                 sandbox: str = "process", client: Optional[Client] = None, **run_kwargs: Any) -> None:
        self.spec = environment
        self.cwd = Path(working_dir)
        self._static_assets = dict(static_assets or {})
        self._ports = dict(ports or {})
        self._mounts = dict(mounts or {})
        self._env_vars = dict(env_vars or {})
        self._setup_command = setup_command
        self._is_evaluation = is_evaluation
        self._client = client
        self.sandbox = sandbox
        self.run_kwargs = run_kwargs
        self._run: Optional[Run] = None
        self._run_id: Optional[str] = None
        self._closed = False
        self.setup_result: Optional[RuntimeResult] = None

    @property
    def client(self) -> Client:
        return self._client or default_client()

    @classmethod
    def spawn(cls, environment: Any = None, working_dir: Union[str, "os.PathLike[str]"] = ".",
              static_assets: Optional[Mapping[str, Any]] = None, ports: Optional[Mapping[int, int]] = None,
              mounts: Optional[Mapping[str, Any]] = None, env_vars: Optional[Mapping[str, str]] = None,
              setup_command: Optional[str] = None, *, is_evaluation: bool = False,
              disable_setup: bool = False, **runtime_kwargs: Any) -> "LocalRuntime":
        """Make a runtime and run the environment's setup commands (and
        setup_command) once, in its workspace, as one runbox run whose
        output stays apart: ``runtime.setup_result``. A failing setup
        raises SolutionRuntimeError."""
        rt = cls(environment, working_dir, static_assets, ports, mounts, env_vars, setup_command,
                 is_evaluation=is_evaluation, **runtime_kwargs)
        cmds: List[str] = []
        if environment is not None and hasattr(environment, "get_setup_commands"):
            cmds = list(environment.get_setup_commands(is_evaluation))
        if setup_command:
            cmds.append(setup_command)
        if cmds and not disable_setup:
            r = rt.client.run(["true"], setup=cmds, **rt._kwargs({}, None, None))
            rt.setup_result = _to_result(r)
            if r.state != "succeeded":
                raise SolutionRuntimeError("setup failed (%s, run %s): %s" % (
                    r.failure.code if r.failure else r.state, r.run_id, (r.setup_stderr or r.setup_stdout)[-2000:]))
        return rt

    # -- what each command runs with ---------------------------------------

    def _assets(self) -> List[Tuple[str, str]]:
        out = []
        for name, a in self._static_assets.items():
            src = getattr(a, "absolute_path", a)
            dst = getattr(a, "save_path", None) or name
            out.append((os.fspath(src), Path(dst).as_posix()))
        return out

    def _kwargs(self, env: Optional[Mapping[str, str]], stdin: Stdin, timeout: Optional[float]) -> Dict[str, Any]:
        kw: Dict[str, Any] = dict(self.run_kwargs)
        kw.update(sandbox=self.sandbox, workdir=self.cwd)
        if self.spec is not None and hasattr(self.spec, "get_full_env"):
            # The spec resolves the whole environment, as Popen(env=...) took it.
            full = dict(self.spec.get_full_env(dict(env or {})))
            full.update(self._env_vars)
            kw.update(env=full, clean_env=True)
        else:
            merged = dict(self._env_vars)
            merged.update(env or {})
            if merged:
                kw["env"] = merged
        if stdin is not None:
            kw["stdin"] = "".join(stdin) if isinstance(stdin, list) else stdin
        if timeout:
            kw["timeout"] = timeout
        assets = self._assets()
        if assets:
            kw["assets"] = assets
        return kw

    def _before(self) -> None:
        """One process at a time: wait (10 s) for the previous command, or
        end it and refuse."""
        if self._closed:
            raise SolutionRuntimeError("runtime was cleaned up")
        if self._run_id is None:
            return
        try:
            self.client.wait(self._run_id, timeout=10)
        except WaitTimeout as e:
            self.kill()
            raise SolutionRuntimeError("Process is still running") from e

    # -- SubmissionRuntime -------------------------------------------------

    def execute(self, command: Command, env: Optional[Mapping[str, str]] = None, stdin: Stdin = None,
                timeout: Optional[float] = None) -> RuntimeResult:
        """Run command (a string is split as by a shell, not run by one)
        with stdin, wait for it (ended after timeout seconds:
        timed_out=True, exit_code -1) and return its RuntimeResult."""
        result: Optional[RuntimeResult] = None
        for ev in self._events(command, env, stdin, timeout):
            if ev.kind == "finished":
                result = ev.result
        assert result is not None
        return result

    def stream(self, command: Command, env: Optional[Mapping[str, str]] = None, stdin: Stdin = None,
               timeout: Optional[float] = None) -> Iterator[RuntimeEvent]:
        """Run command and yield RuntimeEvents as output arrives, stdout
        and stderr apart, then one "finished" event with the result. stdin
        is not supported here (as in the original): use execute()."""
        if stdin is not None:
            raise ValueError("stdin is not supported for stream(). Use execute() instead.")
        return self._events(command, env, None, timeout)

    def _events(self, command: Command, env: Optional[Mapping[str, str]], stdin: Stdin,
                timeout: Optional[float]) -> Iterator[RuntimeEvent]:
        self._before()
        argv = _argv(command)
        for kind, value in self.client.stream(argv, **self._kwargs(env, stdin, timeout)):
            if kind == "run":
                self._run_id = value.id
                self._run = Run(value, client=self.client)
            elif kind in ("stdout", "stderr"):
                yield RuntimeEvent(kind=kind, text=value)
            elif kind == "result":
                yield RuntimeEvent(kind="finished", result=_to_result(value))

    @property
    def process(self) -> Run:
        """The current command's runbox Run."""
        if self._run is None:
            raise SolutionRuntimeError("Process not running")
        return self._run

    def poll(self) -> Optional[int]:
        """The current command's exit code, or None while it runs."""
        info = self.process.status()
        if not info.done:
            return None
        return info.exit_code if info.exit_code is not None else -1

    def kill(self) -> None:
        """Kill the current command's whole process tree (SIGKILL) and
        wait until it is gone."""
        run = self.process
        try:
            run.stop(grace=0.001, timeout=10)
        except WaitTimeout as e:
            raise SolutionRuntimeError("run %s did not end after a kill" % run.id) from e

    def wait(self, timeout: Optional[float] = None) -> int:
        """Wait for the current command; its exit code."""
        info = self.client.wait(self.process.id, timeout=timeout)
        return info.exit_code if info.exit_code is not None else -1

    def cleanup(self) -> None:
        """End any command still running; the runtime takes no more."""
        if self._run is not None:
            try:
                if not self._run.status().done:
                    self.kill()
            except RunboxError:
                pass
        self._closed = True


RunboxRuntime = LocalRuntime

__all__ = ["LocalRuntime", "RunboxRuntime", "RuntimeEvent", "RuntimeResult", "SolutionRuntimeError"]
