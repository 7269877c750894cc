"""runbox from Python: run commands through the runbox daemon (limits,
isolation, live progress, failure codes) with the standard library only.

    import runbox
    r = runbox.run(["python3", "train.py"], timeout=600, memory="4g")
    print(r.exit_code, r.stdout, r.failure)

    sw = runbox.sweep(["python3", "train.py", "--lr", "{lr}"], params={"lr": [0.1, 0.01]}, parallel=2)
    sw.wait(); print(runbox.compare(sweep=sw, sort="best:loss").rows)

    run = runbox.submit(["python3", "train.py", "--lr", "0.1"], labels={"exp": "lr"})
    for stream, text in run.logs(follow=True):
        print(stream, text, end="")

The daemon is reached over its unix socket (API v1) and started on demand
with the `runbox` binary, as the CLI does. Errors are runbox.NotFound,
runbox.BadRequest, runbox.DaemonUnavailable (runbox.VersionMismatch when
the daemon speaks another API version), all runbox.RunboxError.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ._client import Client, Command, Plan, Run, Sweep, build_request, default_client
from ._errors import (Ambiguous, BadRequest, DaemonUnavailable, DiskFull, NotFound, RunboxError,
                      VersionMismatch, WaitTimeout)
from ._transport import API_VERSION
from ._types import (Analysis, Change, Comparison, CompareRow, Diff, Exit, Experience, Failure, Metrics,
                     MetricSeries, MetricSummary, Progress, Recommendation, Record, Result, Risk, RunInfo,
                     SinceWorked, SweepMember, SweepStatus)
from ._version import BINARY_VERSION, __version__

__all__ = [
    "API_VERSION", "Ambiguous", "Analysis", "BINARY_VERSION", "BadRequest", "Change", "Client", "CompareRow",
    "Comparison", "DaemonUnavailable", "Diff", "DiskFull", "Exit", "Experience", "Failure", "MetricSeries",
    "MetricSummary", "Metrics", "NotFound", "Plan", "Progress", "Recommendation", "Record", "Result", "Risk",
    "Run", "RunInfo", "RunboxError", "SinceWorked", "Sweep", "SweepMember", "SweepStatus", "VersionMismatch",
    "WaitTimeout", "__version__", "analyze", "compare", "diff", "plan", "run", "runs", "stream", "submit",
    "sweep", "sweeps",
]


def run(cmd: Command, **kw: Any) -> Result:
    """Run cmd under runbox and wait for it to end; return its Result
    (run_id, exit_code, stdout, stderr, setup_stdout, setup_stderr,
    elapsed, timed_out, state, failure, progress, metrics).

    cmd is a list of arguments, or a string run by the shell. Keyword
    arguments (all optional):

    sandbox     "process", "docker", "slurm" or "auto" (the daemon picks)
    image       container image (docker)
    workdir     the workspace (default: the current directory)
    env         {name: value} set on top of this process's environment
    clean_env   start from an empty environment (env_allow= names to keep)
    stdin       bytes or str fed to the command, or a pathlib.Path to a file
    setup       shell command(s) run first in the same workspace; their
                output comes back apart (setup_stdout, setup_stderr)
    assets      paths (or (src, dst) pairs) copied into the workspace
    timeout     seconds; the whole process tree is ended after it and the
                result has timed_out=True
    grace       seconds between SIGTERM and SIGKILL when stopping
    memory      a limit: bytes, or "512m", "4g"
    cpus, pids  limits
    isolate     "none", "net", "fs" or "full" (process sandbox)
    network, gpus, read_only_root, pull, rw, allow_risk, stall_timeout
    name, labels  to find the run again (runbox.runs(label=...))
    after       a run (Run, Result, id, run number) or a list of them:
                start once they have succeeded (cancelled if one fails)
    after_any   with after=: start however they end
    snapshot    True: run a copy of the workspace taken now; False: the
                workspace as it is; None: the daemon's default (a copy
                for sweep members and runs with after=)

    A non-zero exit is not an exception: look at exit_code and failure.
    KeyboardInterrupt during run() stops the run (as subprocess.run kills
    its child); use submit() for a run that outlives the call."""
    return default_client().run(cmd, **kw)


def stream(cmd: Command, **kw: Any) -> Iterator[Tuple[str, Any]]:
    """Run cmd (arguments as run()) and yield what happens as it happens:
    ("run", RunInfo) first, then ("stdout" | "stderr" | "setup-stdout" |
    "setup-stderr", text) as output arrives, ("progress", Progress) as it
    changes, and last ("result", Result). Dropping the iterator before the
    end (or KeyboardInterrupt) stops the run."""
    return default_client().stream(cmd, **kw)


def submit(cmd: Command, **kw: Any) -> Run:
    """Start cmd under runbox and return its Run at once (arguments as
    run()). The run goes on without this process: Run.wait(), .logs(),
    .status(), .stop(), .progress, .metrics(), .retry()."""
    return default_client().submit(cmd, **kw)


def plan(cmd: Command, **kw: Any) -> Plan:
    """Ask what runbox would do with cmd and why, without running it: the
    Plan's risks, recommendations, smoke_supported, experience (similar
    past runs); Plan.execute() runs it. Arguments as run(), plus
    script_path= and task_description=."""
    return default_client().plan(cmd, **kw)


def runs(state: Union[str, Sequence[str], None] = None, label: Union[str, Mapping[str, str], None] = None,
         limit: Optional[int] = None, parent: Optional[str] = None, since: Optional[float] = None) -> List[Run]:
    """Runs, newest first: state= one state or several ("running",
    "failed", ...), label= "key=value", "key" or a dict, limit= at most so
    many (0 or None: all, as the CLI's -n 0), parent= retries of that run,
    since= created within so many seconds."""
    return default_client().runs(state=state, label=label, limit=limit, parent=parent, since=since)


def analyze(text_or_path: Union[str, bytes, "os.PathLike[str]"], exit_code: Optional[int] = None) -> Analysis:
    """What runbox's plugins make of a log, exactly as of a live run's
    output: its failure (code, message, suggestions, evidence) and
    progress. text_or_path is the log's text, or a path to a saved log;
    exit_code is how the command ended (default: unknown, assumed failed).
    Runs `runbox analyze` (the binary must be installed)."""
    return default_client().analyze(text_or_path, exit_code=exit_code)


def sweep(cmd: Command, *, params: Optional[Mapping[str, Sequence[Any]]] = None,
          params_file: Union[str, "os.PathLike[str]", None] = None, parallel: Optional[int] = None,
          max_failures: Optional[int] = None, name: Optional[str] = None, **kw: Any) -> Sweep:
    """Start one run of cmd per parameter set and return the Sweep at once
    (as `runbox sweep`). "{NAME}" in cmd is replaced with each set's value
    of NAME, and each run gets RUNBOX_PARAM_NAME in its environment.

    params       {name: [values]}: the sweep is their grid (the first name
                 varies slowest); a str as it is, True/False as true/false,
                 numbers with str(), dicts and lists as compact JSON;
                 None or an empty value is a BadRequest
    params_file  or a .jsonl (one object per line) or .csv (a header row
                 of names) file of sets, one per run; values as the CLI
                 reads them (JSON text as written, null empty)
    parallel     at most so many runs at once (default: the daemon's limit)
    max_failures after so many failed runs, cancel those not yet started
    name         the sweep's name (and its runs')
    yes          allow more than 10000 runs

    Other keyword arguments as runbox.run's (sandbox=, timeout=, env=,
    labels=, ...), for every run. Sweep.status(), .wait(), .stop(),
    .runs(), .compare()."""
    return default_client().sweep(cmd, params=params, params_file=params_file, parallel=parallel,
                                  max_failures=max_failures, name=name, **kw)


def sweeps() -> List[Sweep]:
    """Sweeps, newest first (`runbox sweep ls`)."""
    return default_client().sweeps()


def compare(runs: Optional[Sequence[Union[str, Run, RunInfo]]] = None, *, sweep: Union[str, Sweep, None] = None,
            label: Union[str, Mapping[str, str], None] = None, all_params: bool = False,
            sort: Optional[str] = None, filter: Optional[Mapping[str, Any]] = None,
            goals: Optional[Mapping[str, str]] = None, limit: Optional[int] = None,
            offset: Optional[int] = None) -> Comparison:
    """Runs side by side (`runbox compare`): the runs named (Run handles,
    ids, prefixes, @last), a sweep's members, and/or the runs with label=
    "key=value" (or a dict; all must match). Each row has the run's params
    (its --name value arguments, as recorded), each metric's last and best
    value, its duration and how it ended (state, exit_code, failure_code).

    all_params   every parameter column, not only those that differ
    sort         best:METRIC, last:METRIC, param:NAME, duration, created or
                 state; a leading - reverses (default: the first metric's
                 best)
    filter       {param: value}: keep only the runs with it
    goals        {metric: "min" | "max"} (loss-like names are min and
                 accuracy-like ones max unless told)
    limit, offset  a page of the rows (Comparison.total counts them all)"""
    return default_client().compare(runs, sweep=sweep, label=label, all_params=all_params, sort=sort,
                                    filter=filter, goals=goals, limit=limit, offset=offset)


def diff(a: Union[str, Run, RunInfo], b: Union[str, Run, RunInfo]) -> Diff:
    """What differs from run a to run b (`runbox diff`): a Diff of Change
    (kind, name, a, b, detail) -- command, param, env, code, package,
    interpreter, image, host, limits, sandbox, outcome; Diff.of("param")
    picks one kind, str(change) reads as one line."""
    return default_client().diff(a, b)
