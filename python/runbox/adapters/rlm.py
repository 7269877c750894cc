"""A drop-in for rlm-code's local sandbox runtime, running through runbox.

rlm-code's ``LocalSandboxRuntime.execute(request)`` runs
``[python_executable, code_file]`` with ``subprocess.run`` in
``request.workdir`` with ``request.env``, and returns the return code,
stdout and stderr; a run past ``request.timeout_seconds`` raises
``subprocess.TimeoutExpired``. This class keeps that interface (method,
request and result field names, the timeout exception) and runs the code
under runbox instead, which adds limits (memory=, cpus=, pids=),
isolation (isolate="net" | "fs" | "full", or sandbox="docker"), a kill of
the whole process tree at the timeout, live progress and a failure code
with suggestions on each result.

Switching a harness over is one line::

    # from rlm_code.sandbox.runtimes.local import LocalSandboxRuntime
    from runbox.adapters.rlm import LocalSandboxRuntime

    runtime = LocalSandboxRuntime(memory="2g", isolate="net")
    result = runtime.execute(RuntimeExecutionRequest(
        code_file=Path("/tmp/step.py"), workdir=Path.cwd(), timeout_seconds=60,
        python_executable=Path("python3"), env={"PATH": os.environ["PATH"]}))
    print(result.return_code, result.stdout, result.failure)

Any request object with those attributes works (rlm-code's own class
included); this module's ``RuntimeExecutionRequest`` is there for callers
without rlm-code installed.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional

from .._client import Client, default_client
from .._errors import RunboxError
from .._types import Failure, Progress


@dataclass
class RuntimeExecutionRequest:
    """What to run: ``python_executable code_file`` in ``workdir``."""

    code_file: Path
    workdir: Path = field(default_factory=Path.cwd)
    timeout_seconds: Optional[float] = None
    python_executable: Path = Path("python3")
    env: Optional[Dict[str, str]] = None


@dataclass
class RuntimeExecutionResult:
    """rlm-code's result fields (return_code, stdout, stderr) and what
    runbox adds: the run's id, timed_out, elapsed seconds, failure (code,
    message, suggestions, evidence) and progress."""

    return_code: int
    stdout: str
    stderr: str
    run_id: str = ""
    timed_out: bool = False
    elapsed: float = 0.0
    failure: Optional[Failure] = None
    progress: Optional[Progress] = None


@dataclass
class RuntimeHealth:
    runtime: str
    available: bool
    detail: str


class LocalSandboxRuntime:
    """Executes code through runbox (see the module's doc).

    sandbox defaults to "process" (what the local runtime did: the code
    runs on this host, with the host's interpreter and packages); further
    keyword arguments are runbox.run's (memory=, isolate=, cpus=, labels=,
    ...). raise_on_timeout=False returns a result with timed_out=True
    instead of raising subprocess.TimeoutExpired."""

    name = "runbox"

    def __init__(self, *, sandbox: str = "process", client: Optional[Client] = None,
                 raise_on_timeout: bool = True, **run_kwargs: Any) -> None:
        self._client = client
        self.sandbox = sandbox
        self.raise_on_timeout = raise_on_timeout
        self.run_kwargs = run_kwargs

    @property
    def client(self) -> Client:
        return self._client or default_client()

    def execute(self, request: Any) -> RuntimeExecutionResult:
        """Run ``request.python_executable request.code_file`` under runbox."""
        cmd = [os.fspath(request.python_executable), os.fspath(request.code_file)]
        timeout = getattr(request, "timeout_seconds", None)
        env = getattr(request, "env", None)
        kw: Dict[str, Any] = dict(self.run_kwargs)
        if env is not None:
            # subprocess.run(env=...) replaces the environment; so does this.
            kw.update(env=dict(env), clean_env=True)
        r = self.client.run(cmd, sandbox=self.sandbox, workdir=request.workdir,
                            timeout=timeout or None, **kw)
        if r.timed_out and self.raise_on_timeout:
            e = subprocess.TimeoutExpired(cmd, timeout or 0, output=r.stdout, stderr=r.stderr)
            e.run_id = r.run_id  # type: ignore[attr-defined]
            raise e
        return RuntimeExecutionResult(
            return_code=r.exit_code, stdout=r.stdout, stderr=r.stderr, run_id=r.run_id,
            timed_out=r.timed_out, elapsed=r.elapsed, failure=r.failure, progress=r.progress)

    def health(self) -> RuntimeHealth:
        """Whether a runbox daemon answers (started on demand)."""
        try:
            h = self.client.health()
        except RunboxError as e:
            return RuntimeHealth(self.name, False, e.message)
        return RuntimeHealth(self.name, True, "runbox %s, %d active" % (h.get("version", "?"), h.get("active", 0)))


def detect_runtime_health(client: Optional[Client] = None) -> Dict[str, RuntimeHealth]:
    """{"runbox": RuntimeHealth}, as rlm-code's registry reports its runtimes."""
    return {"runbox": LocalSandboxRuntime(client=client).health()}


RunboxSandboxRuntime = LocalSandboxRuntime

__all__ = ["LocalSandboxRuntime", "RunboxSandboxRuntime", "RuntimeExecutionRequest", "RuntimeExecutionResult",
           "RuntimeHealth", "detect_runtime_health"]
