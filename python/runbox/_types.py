"""The API's answers as Python values (api/*.go), read leniently: a field
the daemon adds later is ignored, a field it leaves out takes its zero."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional

TERMINAL = frozenset({"succeeded", "failed", "timed_out", "cancelled", "lost"})


def parse_time(s: Optional[str]) -> Optional[datetime]:
    """An RFC 3339 time from the daemon (nanoseconds cut to microseconds)."""
    if not s or s.startswith("0001-01-01"):
        return None
    t = s.replace("Z", "+00:00")
    # Python < 3.11 reads at most 6 fractional digits.
    if "." in t:
        head, rest = t.split(".", 1)
        i = 0
        while i < len(rest) and rest[i].isdigit():
            i += 1
        t = head + "." + (rest[:i] + "000000")[:6] + rest[i:]
    try:
        d = datetime.fromisoformat(t)
    except ValueError:
        return None
    return d if d.tzinfo else d.replace(tzinfo=timezone.utc)


def parse_duration(v: Any) -> float:
    """A Go duration ("1m30s", "250ms") or a number of seconds, in seconds."""
    if v is None or v == "":
        return 0.0
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v)
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    total, num, i, sign = 0.0, "", 0, 1.0
    if s and s[0] in "+-":
        sign = -1.0 if s[0] == "-" else 1.0
        s = s[1:]
    while i < len(s):
        c = s[i]
        if c.isdigit() or c == ".":
            num += c
            i += 1
            continue
        j = i
        while j < len(s) and not (s[j].isdigit() or s[j] == "."):
            j += 1
        unit = s[i:j]
        if unit not in units or not num:
            return 0.0
        total += float(num) * units[unit]
        num, i = "", j
    return sign * total


def metric_value(v: Any) -> float:
    """A metric value: a number, or "NaN", "Infinity", "-Infinity" (null: NaN)."""
    if v is None:
        return math.nan
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, math.nan)
    return float(v)


@dataclass
class Failure:
    """Why a run failed and what to do next (exactly one failure code)."""

    code: str
    message: str
    suggestions: List[str] = field(default_factory=list)
    evidence: List[str] = field(default_factory=list)
    retryable: bool = False
    confidence: float = 0.0
    details: Dict[str, str] = field(default_factory=dict)
    plugin: str = ""

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Failure"]:
        if not d:
            return None
        return cls(
            code=d.get("code", ""), message=d.get("message", ""),
            suggestions=list(d.get("suggestions") or []), evidence=list(d.get("evidence") or []),
            retryable=bool(d.get("retryable")), confidence=float(d.get("confidence") or 0),
            details=dict(d.get("details") or {}), plugin=d.get("plugin", ""),
        )


@dataclass
class Progress:
    """A run's latest progress, as its output showed it."""

    step: int = 0
    total: int = 0
    percentage: float = 0.0
    phase: str = ""
    epoch: int = 0
    epoch_total: int = 0
    eta_seconds: float = 0.0
    rate: float = 0.0
    rate_unit: str = ""
    metrics: Dict[str, float] = field(default_factory=dict)
    message: str = ""
    source: str = ""

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Progress"]:
        if not d:
            return None
        return cls(
            step=int(d.get("step") or 0), total=int(d.get("total") or 0),
            percentage=float(d.get("percentage") or 0), phase=d.get("phase", ""),
            epoch=int(d.get("epoch") or 0), epoch_total=int(d.get("epoch_total") or 0),
            eta_seconds=float(d.get("eta_seconds") or 0), rate=float(d.get("rate") or 0),
            rate_unit=d.get("rate_unit", ""),
            metrics={k: metric_value(v) for k, v in (d.get("metrics") or {}).items()},
            message=d.get("message", ""), source=d.get("source", ""),
        )


@dataclass
class Exit:
    """How a run's process ended."""

    code: int
    signal: str = ""
    oom_killed: bool = False
    timed_out: bool = False
    cancelled: bool = False
    setup_failed: bool = False
    error: str = ""
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_rss_bytes: int = 0

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Exit"]:
        if not d:
            return None
        u = d.get("usage") or {}
        return cls(
            code=int(d.get("code") or 0), signal=d.get("signal", ""),
            oom_killed=bool(d.get("oom_killed")), timed_out=bool(d.get("timed_out")),
            cancelled=bool(d.get("cancelled")), setup_failed=bool(d.get("setup_failed")),
            error=d.get("error", ""), wall_seconds=float(u.get("wall_seconds") or 0),
            cpu_seconds=float(u.get("cpu_seconds") or 0), peak_rss_bytes=int(u.get("peak_rss_bytes") or 0),
        )


@dataclass
class RunInfo:
    """A run as the daemon last described it (api.Run)."""

    id: str
    state: str
    #: the run's number ("42"), as `runbox ls` and the daemon's messages
    #: name it ("dependency 42 failed", "runbox logs 42")
    short_id: str = ""
    attempt: int = 1
    parent_run_id: str = ""
    plan_id: str = ""
    sandbox: str = ""
    sandbox_reason: str = ""
    command: List[str] = field(default_factory=list)
    workdir: str = ""
    name: str = ""
    labels: Dict[str, str] = field(default_factory=dict)
    created_at: Optional[datetime] = None
    started_at: Optional[datetime] = None
    ended_at: Optional[datetime] = None
    exit: Optional[Exit] = None
    failure: Optional[Failure] = None
    progress: Optional[Progress] = None
    reason: str = ""
    record: Optional["Record"] = field(default=None, repr=False)
    since_worked: Optional["SinceWorked"] = field(default=None, repr=False)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        """Whether the run has ended for good."""
        return self.state in TERMINAL

    @property
    def exit_code(self) -> Optional[int]:
        return self.exit.code if self.exit else None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "RunInfo":
        spec = d.get("spec") or {}
        return cls(
            id=d.get("id", ""), state=d.get("state", ""), short_id=d.get("short_id", ""),
            attempt=int(d.get("attempt") or 1),
            parent_run_id=d.get("parent_run_id", ""), plan_id=d.get("plan_id", ""),
            sandbox=d.get("sandbox", ""), sandbox_reason=d.get("sandbox_reason", ""),
            command=list(spec.get("command") or []), workdir=spec.get("workdir", ""),
            name=d.get("name", ""), labels=dict(d.get("labels") or {}),
            created_at=parse_time(d.get("created_at")), started_at=parse_time(d.get("started_at")),
            ended_at=parse_time(d.get("ended_at")), exit=Exit.from_json(d.get("exit")),
            failure=Failure.from_json(d.get("failure")), progress=Progress.from_json(d.get("progress")),
            reason=d.get("reason", ""), record=Record.from_json(d.get("record")),
            since_worked=SinceWorked.from_json(d.get("since_worked")), raw=dict(d),
        )


@dataclass
class Result:
    """A finished run, with its output (runbox.run's answer).

    ``exit_code`` is the process's exit status (128+n when signal n ended
    it; -1 when it never started); ``timed_out`` says runbox's timeout
    ended it; ``failure`` says why it failed and what to do next;
    ``metrics`` are the latest metric values its output showed (the whole
    history is ``runbox.Run(result.run_id).metrics()``)."""

    run_id: str
    exit_code: int
    stdout: str
    stderr: str
    setup_stdout: str
    setup_stderr: str
    elapsed: float
    timed_out: bool
    state: str
    failure: Optional[Failure]
    progress: Optional[Progress]
    metrics: Dict[str, float]
    info: RunInfo = field(repr=False)

    @property
    def ok(self) -> bool:
        return self.state == "succeeded"


@dataclass
class MetricSeries:
    """One metric's history, in columns (downsampled for long runs: each
    point is a bucket of ``span`` samples with its last value, min, max)."""

    name: str
    step: List[int]
    time: List[float]
    value: List[float]
    min: List[Optional[float]]
    max: List[Optional[float]]
    total: int = 0
    span: int = 1


@dataclass
class Metrics:
    """A run's metric history (GET /v1/runs/{id}/metrics)."""

    run_id: str
    state: str
    names: List[str]
    series: Dict[str, MetricSeries]
    dropped: int = 0

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Metrics":
        series = {}
        for s in d.get("series") or []:
            series[s["name"]] = MetricSeries(
                name=s["name"], step=[int(x) for x in s.get("step") or []],
                time=[float(x) for x in s.get("time") or []],
                value=[metric_value(x) for x in s.get("value") or []],
                min=[None if x is None else float(x) for x in s.get("min") or []],
                max=[None if x is None else float(x) for x in s.get("max") or []],
                total=int(s.get("total") or 0), span=int(s.get("span") or 1),
            )
        return cls(run_id=d.get("run_id", ""), state=d.get("state", ""),
                   names=list(d.get("names") or []), series=series, dropped=int(d.get("dropped") or 0))


@dataclass
class Risk:
    severity: str
    code: str
    message: str
    evidence: str = ""


@dataclass
class Recommendation:
    """How the planner suggests running the command; each value has its reason."""

    sandbox: str = ""
    sandbox_reason: str = ""
    image: str = ""
    image_reason: str = ""
    timeout_seconds: int = 0
    timeout_reason: str = ""
    memory_bytes: int = 0
    memory_reason: str = ""
    network: str = ""
    network_reason: str = ""
    gpus: str = ""
    gpus_reason: str = ""

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Recommendation"]:
        if not d:
            return None
        names = cls.__dataclass_fields__  # type: ignore[attr-defined]
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass
class Experience:
    """What similar past runs did."""

    runs: int = 0
    succeeded: int = 0
    failed: int = 0
    failure_codes: Dict[str, int] = field(default_factory=dict)
    median_duration_seconds: float = 0.0
    max_peak_rss_bytes: int = 0
    last_failure: Optional[Failure] = None

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Experience"]:
        if not d:
            return None
        return cls(
            runs=int(d.get("runs") or 0), succeeded=int(d.get("succeeded") or 0),
            failed=int(d.get("failed") or 0), failure_codes=dict(d.get("failure_codes") or {}),
            median_duration_seconds=float(d.get("median_duration_seconds") or 0),
            max_peak_rss_bytes=int(d.get("max_peak_rss_bytes") or 0),
            last_failure=Failure.from_json(d.get("last_failure")),
        )


@dataclass
class Analysis:
    """What runbox's plugins make of a log (runbox analyze)."""

    failure: Optional[Failure]
    progress: Optional[Progress]


# -- sweeps, comparisons, diffs and the record (api/sweep.go, api/record.go) --


@dataclass
class MetricSummary:
    """A metric's last value in a run and its best (the lowest for a
    metric to minimise, the highest for one to maximise; None when the
    goal is unknown)."""

    last: float
    best: Optional[float] = None

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> "MetricSummary":
        d = d or {}
        best = d.get("best")
        return cls(last=metric_value(d.get("last")), best=None if best is None else metric_value(best))


@dataclass
class SweepMember:
    """One member of a sweep: its params, state, latest metrics and, when
    it failed, its failure code."""

    id: str
    index: int
    params: Dict[str, str]
    state: str
    short_id: str = ""
    reason: str = ""
    progress: Optional[float] = None  # percent
    metrics: Dict[str, MetricSummary] = field(default_factory=dict)
    failure: str = ""  # failure code
    started_at: Optional[datetime] = None
    ended_at: Optional[datetime] = None
    # The row is the member's latest attempt: attempt is its number (1
    # until the member is retried), previous the earlier attempts' ids.
    attempt: int = 1
    previous: List[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return self.state in TERMINAL

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SweepMember":
        p = d.get("progress")
        return cls(
            id=d.get("id", ""), index=int(d.get("index") or 0), params=dict(d.get("params") or {}),
            state=d.get("state", ""), short_id=d.get("short_id", ""), reason=d.get("reason", ""),
            progress=None if p is None else float(p),
            metrics={k: MetricSummary.from_json(v) for k, v in (d.get("metrics") or {}).items()},
            failure=d.get("failure", ""), started_at=parse_time(d.get("started_at")),
            ended_at=parse_time(d.get("ended_at")), attempt=int(d.get("attempt") or 1),
            previous=list(d.get("previous") or []),
        )


@dataclass
class SweepStatus:
    """A sweep as the daemon sees it now (api.Sweep): ``members`` is how
    many it has, ``counts`` how many are in each state, ``runs`` each
    member (SweepMember); ``done`` once every member has ended."""

    id: str
    name: str
    command: List[str]
    param_names: List[str]
    parallel: int
    max_failures: int
    created_at: Optional[datetime]
    stopped: str
    members: int
    counts: Dict[str, int]
    done: bool
    runs: List[SweepMember]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "SweepStatus":
        return cls(
            id=d.get("id", ""), name=d.get("name", ""), command=list(d.get("command") or []),
            param_names=list(d.get("param_names") or []), parallel=int(d.get("parallel") or 0),
            max_failures=int(d.get("max_failures") or 0), created_at=parse_time(d.get("created_at")),
            stopped=d.get("stopped", ""), members=int(d.get("members") or 0),
            counts={str(k): int(v) for k, v in (d.get("counts") or {}).items()}, done=bool(d.get("done")),
            runs=[SweepMember.from_json(r) for r in d.get("runs") or []], raw=dict(d),
        )


@dataclass
class CompareRow:
    """One run of a comparison: its params (the command's --name value
    arguments, as recorded), each metric's last and best value, how long
    it ran and how it ended."""

    run_id: str
    state: str
    short_id: str = ""
    name: str = ""
    exit_code: Optional[int] = None
    failure_code: str = ""
    created_at: Optional[datetime] = None
    duration: float = 0.0  # seconds
    params: Dict[str, str] = field(default_factory=dict)
    metrics: Dict[str, MetricSummary] = field(default_factory=dict)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "CompareRow":
        ec = d.get("exit_code")
        return cls(
            run_id=d.get("run_id", ""), state=d.get("state", ""), short_id=d.get("short_id", ""),
            name=d.get("name", ""), exit_code=None if ec is None else int(ec),
            failure_code=d.get("failure_code", ""), created_at=parse_time(d.get("created_at")),
            duration=float(d.get("duration_seconds") or 0), params=dict(d.get("params") or {}),
            metrics={k: MetricSummary.from_json(v) for k, v in (d.get("metrics") or {}).items()},
        )


@dataclass
class Comparison:
    """Runs side by side (GET /v1/compare): ``params`` are the parameter
    columns (those that differ, or all with all_params=True), ``metrics``
    the metric columns, ``goals`` min or max per metric, ``rows`` one per
    run in ``sort`` order; ``total`` runs matched, of which this page
    starts at ``offset``."""

    params: List[str]
    metrics: List[str]
    goals: Dict[str, str]
    rows: List[CompareRow]
    total: int = 0
    offset: int = 0
    sort: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Comparison":
        return cls(
            params=list(d.get("params") or []), metrics=list(d.get("metrics") or []),
            goals=dict(d.get("goals") or {}), rows=[CompareRow.from_json(r) for r in d.get("rows") or []],
            total=int(d.get("total") or 0), offset=int(d.get("offset") or 0), sort=d.get("sort", ""),
        )


@dataclass
class Change:
    """One thing that differs between two runs. ``kind`` is command,
    param, env, code, script, package, interpreter, image, host, gpu,
    limits, sandbox or outcome; ``a`` and ``b`` its value in each run."""

    kind: str
    name: str = ""
    a: str = ""
    b: str = ""
    detail: str = ""
    patch_a: str = ""
    patch_b: str = ""

    def __str__(self) -> str:
        what = self.kind + (" " + self.name if self.name else "")
        if not self.a and self.b:
            s = "%s: added %s" % (what, self.b)
        elif self.a and not self.b:
            s = "%s: removed (was %s)" % (what, self.a)
        elif self.a or self.b:
            s = "%s: %s \u2192 %s" % (what, self.a, self.b)
        else:
            s = what
        return s + (" (%s)" % self.detail if self.detail else "")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Change":
        return cls(kind=d.get("kind", ""), name=d.get("name", ""), a=d.get("a", ""), b=d.get("b", ""),
                   detail=d.get("detail", ""), patch_a=d.get("patch_a", ""), patch_b=d.get("patch_b", ""))


@dataclass
class Diff:
    """What differs from run ``a`` to run ``b`` (GET /v1/diff); ``notes``
    say what could not be compared (a run without a record)."""

    a: str
    b: str
    changes: List[Change]
    a_short_id: str = ""
    b_short_id: str = ""
    notes: List[str] = field(default_factory=list)

    def of(self, kind: str) -> List[Change]:
        """The changes of one kind ("param", "env", ...)."""
        return [c for c in self.changes if c.kind == kind]

    def __bool__(self) -> bool:
        return bool(self.changes)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Diff":
        return cls(a=d.get("a", ""), b=d.get("b", ""), changes=[Change.from_json(c) for c in d.get("changes") or []],
                   a_short_id=d.get("a_short_id", ""), b_short_id=d.get("b_short_id", ""),
                   notes=list(d.get("notes") or []))


@dataclass
class Record:
    """What ran (the daemon's record of a run): its command and params,
    workdir, sandbox, limits, the environment it was given (secret values
    redacted) and the names it inherited; ``code`` (git state), ``script``,
    ``interpreter`` (and packages), ``image``, ``host`` as the daemon wrote
    them (dicts); ``notes`` say what could not be recorded. ``complete``
    is set once the parts taken after the start are in."""

    command: List[str]
    params: Dict[str, str]
    workdir: str
    sandbox: str
    complete: bool = False
    isolate: str = ""
    limits: Dict[str, Any] = field(default_factory=dict)
    env: List[str] = field(default_factory=list)
    env_names: List[str] = field(default_factory=list, repr=False)
    code: Optional[Dict[str, Any]] = field(default=None, repr=False)
    script: Optional[Dict[str, Any]] = None
    interpreter: Optional[Dict[str, Any]] = None
    image: Optional[Dict[str, Any]] = None
    host: Optional[Dict[str, Any]] = None
    taken_at: Optional[datetime] = None
    notes: List[str] = field(default_factory=list)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["Record"]:
        if not d:
            return None

        def part(k: str) -> Optional[Dict[str, Any]]:
            v = d.get(k)  # type: ignore[union-attr]
            return dict(v) if v else None

        return cls(
            command=list(d.get("command") or []), params=dict(d.get("params") or {}),
            workdir=d.get("workdir", ""), sandbox=d.get("sandbox", ""), complete=bool(d.get("complete")),
            isolate=d.get("isolate", ""), limits=dict(d.get("limits") or {}), env=list(d.get("env") or []),
            env_names=list(d.get("env_names") or []), code=part("code"), script=part("script"),
            interpreter=part("interpreter"), image=part("image"), host=part("host"),
            taken_at=parse_time(d.get("taken_at")), notes=list(d.get("notes") or []), raw=dict(d),
        )


@dataclass
class SinceWorked:
    """For a failed run: what changed since the last run of the same
    command that succeeded (``run_id``), most suspect first; ``summary``
    is the short list to read."""

    run_id: str
    changes: List[Change]
    summary: List[str]
    short_id: str = ""

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional["SinceWorked"]:
        if not d:
            return None
        return cls(run_id=d.get("run_id", ""), changes=[Change.from_json(c) for c in d.get("changes") or []],
                   summary=list(d.get("summary") or []), short_id=d.get("short_id", ""))
