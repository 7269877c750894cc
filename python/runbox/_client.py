"""runbox's calls: run, submit, plan, runs, analyze, sweep, compare, diff,
and the Run, Plan and Sweep handles they return."""

from __future__ import annotations

import base64
import codecs
import csv
import json
import math
import os
import re
import subprocess
import threading
import time
import urllib.parse
from typing import (Any, Dict, Generator, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union)

from ._errors import BadRequest, DaemonUnavailable, NotFound, RunboxError, WaitTimeout
from ._transport import (FRAME_FINAL, FRAME_PROGRESS, FRAME_RUN, INSTALL_HINT, RETRY_BACKOFF,
                         SETUP_STDERR, SETUP_STDOUT, SMOKE_STDERR, SMOKE_STDOUT, STDERR, STDOUT, STREAM_NAMES, Transport, _Broken,
                         env_list, go_duration)
from ._types import (TERMINAL, Analysis, Comparison, Diff, Experience, Failure, Metrics, Progress, Recommendation,
                     Record, Result, Risk, RunInfo, SweepStatus)

PathLike = Union[str, "os.PathLike[str]"]
Command = Union[str, Sequence[str]]
AssetSpec = Union[PathLike, Tuple[PathLike, str]]
RunRef = Union[str, int, "Run", RunInfo, Result]  # a run named in after=

MAX_STDIN = 64 << 20  # as the CLI's --stdin -
OUTPUT_STREAMS = ("stdout", "stderr", "setup-stdout", "setup-stderr")


def _unset(v: Any) -> bool:
    """None, or a number 0: the daemon's default (cpus=0, pids=0)."""
    return v is None or (type(v) in (int, float) and v == 0)


def _positive(key: str, v: Any, want: str) -> float:
    """v as a positive finite number, else BadRequest naming key: a string
    ("5") or a bool reached a comparison and raised TypeError."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise BadRequest("%s %r: want %s" % (key, v, want))
    return float(v)


def _memory_bytes(v: Union[int, str, None]) -> int:
    """512m, 4g, 1.5GiB, or a number of bytes (binary units, as the CLI)."""
    if v is None:
        return 0
    if isinstance(v, int):
        if v <= 0:
            raise BadRequest("memory %r: want a positive size like 512m or 4g" % v)
        return v
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgtp]?)(?:i?b)?\s*", str(v), re.I)
    if not m:
        raise BadRequest("memory %r: want a size like 512m or 4g" % v)
    n = float(m.group(1)) * 1024 ** " kmgtp".index(m.group(2).lower() or " ")
    if n <= 0:
        raise BadRequest("memory %r: want a size like 512m or 4g" % v)
    return int(n)


def build_request(cmd: Optional[Command] = None, *, shell: Optional[bool] = None, sandbox: Optional[str] = None,
                  image: Optional[str] = None, workdir: Optional[PathLike] = None,
                  env: Optional[Mapping[str, str]] = None, clean_env: bool = False,
                  env_allow: Optional[Sequence[str]] = None, stdin: Union[bytes, str, "os.PathLike[str]", None] = None,
                  setup: Union[str, Sequence[str], None] = None, assets: Union[Sequence[AssetSpec], Mapping[str, str], None] = None,
                  timeout: Optional[float] = None, grace: Optional[float] = None,
                  memory: Union[int, str, None] = None, cpus: Optional[float] = None, pids: Optional[int] = None,
                  network: Optional[str] = None, gpus: Optional[str] = None, read_only_root: bool = False,
                  pull: bool = False, isolate: Optional[str] = None, rw: Optional[Sequence[PathLike]] = None,
                  allow_risk: bool = False, name: Optional[str] = None, labels: Optional[Mapping[str, str]] = None,
                  stall_timeout: Optional[float] = None, script_path: Optional[PathLike] = None,
                  task_description: Optional[str] = None, idempotency_key: Optional[str] = None,
                  after: Union[RunRef, Sequence[RunRef], None] = None, after_any: bool = False,
                  snapshot: Optional[bool] = None, _inherit: bool = True) -> Dict[str, Any]:
    """The API's RunRequest for these arguments (see runbox.run)."""
    req: Dict[str, Any] = {"limits": {}}
    if cmd is not None:
        if isinstance(cmd, (str, bytes)):
            cmd = [cmd.decode() if isinstance(cmd, bytes) else cmd]
            if shell is None:
                shell = True  # a string is a shell command, as subprocess's shell=True
        else:
            cmd = [os.fspath(c) for c in cmd]
        if not cmd or not cmd[0]:
            raise BadRequest("no command given")
        req["command"] = cmd
    if shell:
        req["shell"] = True
    if _inherit:
        req["workdir"] = os.path.abspath(os.fspath(workdir)) if workdir is not None else os.getcwd()
        req["client_env"] = env_list(os.environ)
        req["user"] = "%d:%d" % (os.getuid(), os.getgid())
    elif workdir is not None:
        req["workdir"] = os.path.abspath(os.fspath(workdir))
    for key, val in (("sandbox", sandbox), ("image", image), ("network", network), ("gpus", gpus),
                     ("isolate", isolate), ("name", name), ("task_description", task_description),
                     ("idempotency_key", idempotency_key)):
        if val:
            req[key] = val
    if env:
        req["env"] = env_list(_check_env(env))
    if clean_env:
        req["clean_env"] = True
    if env_allow:
        req["env_allow"] = list(env_allow)
    if stdin is not None:
        if isinstance(stdin, os.PathLike):
            p = os.path.abspath(os.fspath(stdin))
            if not os.path.exists(p):
                raise BadRequest("stdin: no file %s" % p)
            req["stdin_file"] = p
        else:
            b = stdin.encode() if isinstance(stdin, str) else bytes(stdin)
            if len(b) > MAX_STDIN:
                raise BadRequest("stdin is over 64 MiB: save it to a file and pass stdin=pathlib.Path(FILE)")
            req["stdin"] = base64.b64encode(b).decode()
    if setup:
        req["setup"] = [setup] if isinstance(setup, str) else list(setup)
    if assets:
        req["assets"] = _assets(assets)
    for key, secs in (("timeout", timeout), ("grace", grace), ("stall_timeout", stall_timeout)):
        if secs is not None:
            req[key] = go_duration(_positive(key, secs, "a number of seconds, e.g. 600"))
    if memory is not None:
        req["limits"]["memory_bytes"] = _memory_bytes(memory)
    if not _unset(cpus):
        req["limits"]["cpus"] = _positive("cpus", cpus, "a number of CPUs, e.g. 1.5")
    if not _unset(pids):
        n = _positive("pids", pids, "a process count, e.g. 512")
        if n != int(n):
            raise BadRequest("pids %r: want a whole process count" % (pids,))
        req["limits"]["pids"] = int(n)
    if read_only_root:
        req["read_only_root"] = True
    if pull:
        req["pull"] = True
    if rw:
        req["rw"] = [os.path.abspath(os.fspath(p)) for p in rw]
    if allow_risk:
        req["allow_risk"] = True
    if labels:
        req["labels"] = {str(k): str(v) for k, v in labels.items()}
    if script_path is not None:
        req["script_path"] = os.path.abspath(os.fspath(script_path))
    deps = _after_list(after)
    if deps:
        req["after"] = deps
    if after_any:
        if not deps:
            raise BadRequest("after_any=True needs after=RUN (the runs to start after)")
        req["after_any"] = True
    if snapshot is not None:
        if not isinstance(snapshot, bool):
            raise BadRequest("snapshot %r: want True, False or None (the default: on for sweep members and runs "
                             "with after=)" % (snapshot,))
        req["snapshot" if snapshot else "no_snapshot"] = True
    return req


def _check_env(env: Mapping[str, str]) -> Mapping[str, str]:
    """env, refused with BadRequest naming the key when a name or a value
    cannot be an environment variable (as the CLI's --env KEY=VALUE: the
    name ends at the first =)."""
    if not isinstance(env, Mapping):
        raise BadRequest("env %r: want a dict {NAME: value}" % (env,))
    for k, v in env.items():
        if not isinstance(k, str) or not k or "=" in k or "\0" in k:
            raise BadRequest("env %r: a name must be a non-empty string without = or NUL" % (k,))
        if not isinstance(v, str):
            raise BadRequest("env %s=%r: want a str value (write str(v), or leave %s out)" % (k, v, k))
        if "\0" in v:
            raise BadRequest("env %s: a value cannot hold a NUL character" % k)
    return env


def _after_list(after: Union["RunRef", Sequence["RunRef"], None]) -> List[str]:
    """The runs named by after= (a Run, RunInfo, Result, id, prefix, run
    number or @last, or a list of those) as the API's strings."""
    if after is None:
        return []
    items = [after] if isinstance(after, (str, int, Run, RunInfo, Result)) else after
    if not isinstance(items, Iterable):
        raise BadRequest("after %r: want a run (Run, id, number) or a list of them" % (after,))
    out: List[str] = []
    for a in items:
        if isinstance(a, (Run, RunInfo)):
            ref = a.id
        elif isinstance(a, Result):
            ref = a.run_id
        elif isinstance(a, int) and not isinstance(a, bool) and a > 0:
            ref = str(a)
        elif isinstance(a, str) and a.strip() and all(p.strip() for p in a.split(",")):
            ref = a.strip()
        else:
            raise BadRequest("after %r: want a run (Run, id, number) or a list of them" % (a,))
        out.append(ref)
    return out


def _assets(assets: Union[Sequence[AssetSpec], Mapping[str, str]]) -> List[Dict[str, str]]:
    pairs: List[Tuple[Any, Any]] = []
    if isinstance(assets, Mapping):
        pairs = list(assets.items())  # src -> dst
    else:
        for a in assets:
            pairs.append(a if isinstance(a, tuple) else (a, None))
    out = []
    for src, dst in pairs:
        p = os.path.abspath(os.fspath(src))
        if not os.path.exists(p):
            raise BadRequest("asset %s: no such file or directory" % src)
        out.append({"src": p, "dst": dst or os.path.basename(p.rstrip("/"))})
    return out


class _Output:
    """Collects a run's output streams, decoded as UTF-8 with replacement
    (a character split across frames is joined)."""

    def __init__(self) -> None:
        self._dec = {s: codecs.getincrementaldecoder("utf-8")("replace") for s in (STDOUT, STDERR, SETUP_STDOUT, SETUP_STDERR)}
        self._parts: Dict[int, List[str]] = {s: [] for s in self._dec}

    def add(self, stream: int, data: bytes) -> str:
        d = self._dec.get(stream)
        if d is None:
            return ""
        text = d.decode(data)
        self._parts[stream].append(text)
        return text

    def flush(self, stream: int) -> str:
        text = self._dec[stream].decode(b"", final=True)
        self._parts[stream].append(text)
        return text

    def text(self, stream: int) -> str:
        self.flush(stream)
        return "".join(self._parts[stream])


def _result(info: RunInfo, out: _Output, progress: Optional[Progress]) -> Result:
    e = info.exit
    elapsed = 0.0
    if e and e.wall_seconds:
        elapsed = e.wall_seconds
    elif info.started_at and info.ended_at:
        elapsed = (info.ended_at - info.started_at).total_seconds()
    progress = info.progress or progress
    return Result(
        run_id=info.id, exit_code=e.code if e else -1,
        stdout=out.text(STDOUT), stderr=out.text(STDERR),
        setup_stdout=out.text(SETUP_STDOUT), setup_stderr=out.text(SETUP_STDERR),
        elapsed=elapsed, timed_out=bool(e and e.timed_out) or info.state == "timed_out",
        state=info.state, failure=info.failure, progress=progress,
        metrics=dict(progress.metrics) if progress else {}, info=info,
    )


class Client:
    """A connection to one runbox daemon (the module's functions use a
    default one). ``home`` and ``socket`` default as the CLI's do
    ($RUNBOX_HOME, $RUNBOX_SOCKET, ...); ``runbox_bin`` is the binary that
    starts a daemon when none answers ($RUNBOX_BIN, else runbox on PATH);
    ``autostart=False`` never starts one."""

    def __init__(self, home: Optional[PathLike] = None, socket: Optional[PathLike] = None,
                 runbox_bin: Optional[PathLike] = None, autostart: bool = True,
                 start_timeout: float = 10.0) -> None:
        self.transport = Transport(
            home=os.fspath(home) if home is not None else None,
            socket_path=os.fspath(socket) if socket is not None else None,
            runbox_bin=os.fspath(runbox_bin) if runbox_bin is not None else None,
            start_timeout=start_timeout, autostart=autostart)

    def close(self) -> None:
        """Close idle connections (a later call opens new ones)."""
        self.transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def health(self) -> Dict[str, Any]:
        """The daemon's health: its version, pid, active and queued runs."""
        return self.transport.call("GET", "/health")  # type: ignore[no-any-return]

    def backends(self) -> Dict[str, Any]:
        """The sandbox backends and which one auto picks now."""
        return self.transport.call("GET", "/backends")  # type: ignore[no-any-return]

    # -- runs --------------------------------------------------------------

    def run(self, cmd: Command, **kw: Any) -> Result:
        """Run cmd and wait for it; see runbox.run."""
        for kind, value in self.stream(cmd, **kw):
            if kind == "result":
                return value  # type: ignore[no-any-return]
        raise RunboxError("the run's stream ended without its result")  # not reached

    def stream(self, cmd: Command, **kw: Any) -> Iterator[Tuple[str, Any]]:
        """Run cmd and yield what happens as it happens; see runbox.stream."""
        req = build_request(cmd, **kw)
        req["attach"] = True
        req.setdefault("idempotency_key", os.urandom(16).hex())
        return self._attach("/runs", req)

    def _attach(self, path: str, req: Dict[str, Any]) -> Iterator[Tuple[str, Any]]:
        out = _Output()
        info: Optional[RunInfo] = None
        progress: Optional[Progress] = None
        final: Optional[RunInfo] = None
        delivered = 0  # output records seen, to resume after
        done = False
        resp = self.transport.stream("POST", path, body=req)
        try:
            try:
                for stream, _, data in resp.frames():
                    if stream == FRAME_RUN:
                        info = RunInfo.from_json(json.loads(data))
                        yield "run", info
                    elif stream == FRAME_PROGRESS:
                        progress = Progress.from_json(json.loads(data))
                        yield "progress", progress
                    elif stream == FRAME_FINAL:
                        final = RunInfo.from_json(json.loads(data))
                    elif stream not in (SMOKE_STDOUT, SMOKE_STDERR):
                        delivered += 1  # as the Go client counts them for skip=
                        text = out.add(stream, data)
                        if text:
                            yield STREAM_NAMES[stream], text
            except _Broken:
                if info is None:
                    raise DaemonUnavailable("the daemon went away before it started the run")
            finally:
                resp.close()
            if final is None:
                if info is None:
                    raise RunboxError("the daemon closed the stream before the run started")
                # The daemon went away mid-stream: the run goes on under its
                # supervisor, so follow it from where the stream broke.
                final = yield from self._resume(info.id, delivered, out)
            done = True
            for stream in (STDOUT, STDERR, SETUP_STDOUT, SETUP_STDERR):
                rest = out.flush(stream)
                if rest:
                    yield STREAM_NAMES[stream], rest
            yield "result", _result(final, out, progress)
        finally:
            # As subprocess.run kills its child: a run() interrupted
            # (KeyboardInterrupt) or a stream() its caller dropped stops the
            # run. A submitted Run's wait() leaves it going.
            if not done and info is not None:
                try:
                    self.stop(info.id, grace=2, wait=False)
                except RunboxError:
                    pass

    def _resume(self, run_id: str, skip: int, out: _Output) -> Generator[Tuple[str, Any], None, RunInfo]:
        last: Optional[BaseException] = None
        for attempt in range(len(RETRY_BACKOFF) + 1):
            if attempt:
                time.sleep(RETRY_BACKOFF[attempt - 1])
            try:
                for stream, _, data in self._frames(run_id, follow=True, skip=skip):
                    skip += 1
                    text = out.add(stream, data)
                    if text:
                        yield STREAM_NAMES[stream], text
                return self.wait(run_id)
            except (DaemonUnavailable, _Broken) as e:
                last = e
        raise DaemonUnavailable("follow run %s: %s" % (run_id, last))

    def submit(self, cmd: Command, **kw: Any) -> "Run":
        """Start cmd and return at once; see runbox.submit."""
        req = build_request(cmd, **kw)
        req.setdefault("idempotency_key", os.urandom(16).hex())
        d = self.transport.call("POST", "/runs", body=req)
        return Run(RunInfo.from_json(d), client=self)

    def get(self, run_id: str) -> RunInfo:
        return RunInfo.from_json(self.transport.call("GET", "/runs/" + _seg(run_id)))

    def stop(self, run_id: str, grace: Optional[float] = None, wait: bool = True,
             timeout: Optional[float] = None) -> RunInfo:
        """Stop a run and (wait=True) wait for it to end; see Run.stop."""
        if grace is not None and grace != 0:
            grace = _positive("grace", grace, "a number of seconds, e.g. 10")
        q = [("grace", go_duration(grace))] if grace else None
        info = RunInfo.from_json(self.transport.call("POST", "/runs/%s/stop" % _seg(run_id), q))
        if not wait or info.state in TERMINAL:
            return info
        return self.wait(info.id, timeout)

    def wait(self, run_id: str, timeout: Optional[float] = None) -> RunInfo:
        """Wait for a run to end. The daemon is asked in long polls of at
        most a minute, so a daemon restart costs one reconnection and a
        KeyboardInterrupt ends the wait at once (the run goes on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            chunk = 60.0
            if deadline is not None:
                chunk = min(chunk, max(deadline - time.monotonic(), 0.001))
            info = RunInfo.from_json(self.transport.call(
                "GET", "/runs/%s/wait" % _seg(run_id), [("timeout", go_duration(chunk))]))
            if info.state in TERMINAL:
                return info
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeout("run %s is still %s after %gs; it goes on" % (info.id, info.state, timeout), run=info)

    def retry(self, run_id: str, **changes: Any) -> "Run":
        """A new run of run_id's command, linked to it; changes override its settings."""
        cmd = changes.pop("cmd", None)
        req = build_request(cmd, _inherit=False, **changes)
        req.setdefault("idempotency_key", os.urandom(16).hex())
        d = self.transport.call("POST", "/runs/%s/retry" % _seg(run_id), body=req)
        return Run(RunInfo.from_json(d), client=self)

    def events(self, run_id: str, after: int = 0) -> List[Dict[str, Any]]:
        """A run's lifecycle events after sequence number after."""
        d = self.transport.call("GET", "/runs/%s/events" % _seg(run_id), [("after", str(after))])
        return list(d.get("events") or [])

    def metrics(self, run_id: str, *names: str) -> Metrics:
        q = [("name", n) for n in names] or None
        return Metrics.from_json(self.transport.call("GET", "/runs/%s/metrics" % _seg(run_id), q))

    def _frames(self, run_id: str, follow: bool = False, skip: int = 0,
                tail: Optional[int] = None) -> Iterator[Tuple[int, int, bytes]]:
        q: List[Tuple[str, str]] = []
        if follow:
            q.append(("follow", "1"))
        if skip:
            q.append(("skip", str(skip)))
        if tail is not None:
            q.append(("tail", str(tail)))
        resp = self.transport.stream("GET", "/runs/%s/logs" % _seg(run_id), q)
        try:
            yield from resp.frames()
        finally:
            resp.close()

    def logs(self, run_id: str, follow: bool = False,
             streams: Iterable[str] = OUTPUT_STREAMS) -> Iterator[Tuple[str, str]]:
        """(stream, text) for each record of a run's log; see Run.logs."""
        want = set(streams)
        bad = want - set(STREAM_NAMES.values())
        if bad:
            raise BadRequest("unknown stream %s (want stdout, stderr, setup-stdout, setup-stderr or meta)" % sorted(bad)[0])
        decoders: Dict[int, Any] = {}
        seen = 0
        attempt = 0
        while True:
            try:
                # Every record is fetched and counted (the filter is ours),
                # so a broken stream resumes exactly after the last one.
                for stream, _, data in self._frames(run_id, follow=follow, skip=seen):
                    seen += 1
                    attempt = 0
                    name = STREAM_NAMES.get(stream, "")
                    if name not in want:
                        continue
                    d = decoders.get(stream)
                    if d is None:
                        d = decoders[stream] = codecs.getincrementaldecoder("utf-8")("replace")
                    text = d.decode(data)
                    if text:
                        yield name, text
                break
            except (_Broken, DaemonUnavailable):
                if not follow or attempt >= len(RETRY_BACKOFF):
                    raise
                time.sleep(RETRY_BACKOFF[attempt])
                attempt += 1
        for stream, d in decoders.items():
            rest = d.decode(b"", final=True)
            if rest:
                yield STREAM_NAMES[stream], rest

    def runs(self, state: Union[str, Sequence[str], None] = None, label: Union[str, Mapping[str, str], None] = None,
             limit: Optional[int] = None, parent: Optional[str] = None, since: Optional[float] = None) -> List["Run"]:
        """Runs, newest first; see runbox.runs."""
        q: List[Tuple[str, str]] = []
        for s in [state] if isinstance(state, str) else (state or []):
            q.append(("state", s))
        if parent:
            q.append(("parent", parent))
        if since is not None:
            t = time.time() - since
            q.append(("since", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%06dZ" % int((t % 1) * 1e6)))
        want = _label_filter(label)
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
                raise BadRequest("limit %r: want a count of runs (0: all, as the CLI's -n 0)" % (limit,))
            limit = limit or None  # 0: every run
            if limit and not want:
                q.append(("limit", str(limit)))
        d = self.transport.call("GET", "/runs", q)
        out = []
        for r in d.get("runs") or []:
            info = RunInfo.from_json(r)
            if want and not all(info.labels.get(k) == v if v is not None else k in info.labels for k, v in want.items()):
                continue
            out.append(Run(info, client=self))
            if limit is not None and len(out) >= limit:
                break
        return out

    # -- sweeps, compare, diff --------------------------------------------

    def sweep(self, cmd: Command, *, params: Optional[Mapping[str, Sequence[Any]]] = None,
              params_file: Optional[PathLike] = None, parallel: Optional[int] = None,
              max_failures: Optional[int] = None, name: Optional[str] = None, yes: bool = False,
              **kw: Any) -> "Sweep":
        """Start a sweep: one run of cmd per parameter set; see runbox.sweep."""
        names, sets = _param_sets(params, params_file)
        req: Dict[str, Any] = {"run": build_request(cmd, name=name, **kw), "param_names": names, "sets": sets,
                               "idempotency_key": os.urandom(16).hex()}
        for key, n in (("parallel", parallel), ("max_failures", max_failures)):
            if n is not None:
                if int(n) < 0:
                    raise BadRequest("%s %r: want a count (0: no limit)" % (key, n))
                if n:
                    req[key] = int(n)
        if name:
            req["name"] = name
        if yes:
            req["yes"] = True
        d = self.transport.call("POST", "/sweeps", body=req)
        st = SweepStatus.from_json(d)
        return Sweep(st, client=self)

    def get_sweep(self, sweep_id: str, sort: Optional[str] = None) -> SweepStatus:
        """A sweep and its members now, sorted by metric sort (best first) when given."""
        q = [("sort", sort)] if sort else None
        return SweepStatus.from_json(self.transport.call("GET", "/sweeps/" + _seg(sweep_id), q))

    def sweeps(self) -> List["Sweep"]:
        """Sweeps, newest first."""
        d = self.transport.call("GET", "/sweeps")
        return [Sweep(SweepStatus.from_json(s), client=self) for s in d.get("sweeps") or []]

    def stop_sweep(self, sweep_id: str) -> SweepStatus:
        return SweepStatus.from_json(self.transport.call("POST", "/sweeps/%s/stop" % _seg(sweep_id)))

    def wait_sweep(self, sweep_id: str, timeout: Optional[float] = None) -> SweepStatus:
        """Wait until every member of the sweep has ended; see Sweep.wait."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.05
        while True:
            st = self.get_sweep(sweep_id)
            if st.done:
                return st
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeout("sweep %s is not done after %gs (%s); it goes on"
                                  % (st.id, timeout, _counts(st)), run=st)
            # Polled (the daemon's /wait has no time limit): each member
            # is a run of seconds or more, so a second's delay is cheap.
            wait = pause if deadline is None else min(pause, max(deadline - time.monotonic(), 0.0))
            time.sleep(wait)
            pause = min(pause * 2, 1.0)

    def compare(self, runs: Optional[Sequence[Union[str, "Run", RunInfo]]] = None, *,
                sweep: Union[str, "Sweep", None] = None, label: Union[str, Mapping[str, str], None] = None,
                all_params: bool = False, sort: Optional[str] = None, filter: Optional[Mapping[str, Any]] = None,
                goals: Optional[Mapping[str, str]] = None, limit: Optional[int] = None,
                offset: Optional[int] = None) -> Comparison:
        """Runs side by side; see runbox.compare."""
        q: List[Tuple[str, str]] = []
        for r in runs or []:
            q.append(("run", r if isinstance(r, str) else r.id))
        if sweep is not None:
            st = self.get_sweep(sweep if isinstance(sweep, str) else sweep.id)
            if not st.runs:
                raise BadRequest("sweep %s has no members yet" % st.id)
            q.extend(("run", m.id) for m in st.runs)
        for k, v in _label_filter(label).items():
            if v is None:
                raise BadRequest("compare label %r: want KEY=VALUE" % k)
            q.append(("label", "%s=%s" % (k, v)))
        if not q:
            raise BadRequest("name runs to compare: runs=[...], sweep= or label=")
        for k, v in (filter or {}).items():
            q.append(("filter", "%s=%s" % (k, v)))
        for k, g in (goals or {}).items():
            q.append(("goal", "%s=%s" % (k, g)))
        if all_params:
            q.append(("all_params", "1"))
        if sort:
            q.append(("sort", sort))
        for key, n in (("limit", limit), ("offset", offset)):
            if n is not None:
                q.append((key, str(int(n))))
        return Comparison.from_json(self.transport.call("GET", "/compare", q))

    def diff(self, a: Union[str, "Run", RunInfo], b: Union[str, "Run", RunInfo]) -> Diff:
        """What differs from run a to run b; see runbox.diff."""
        q = [("a", a if isinstance(a, str) else a.id), ("b", b if isinstance(b, str) else b.id)]
        return Diff.from_json(self.transport.call("GET", "/diff", q))

    # -- plans -------------------------------------------------------------

    def plan(self, cmd: Command, **kw: Any) -> "Plan":
        """Ask what runbox would do with cmd and why; see runbox.plan."""
        req = build_request(cmd, **kw)
        return Plan(self.transport.call("POST", "/plans", body=req), client=self)

    def get_plan(self, plan_id: str) -> "Plan":
        return Plan(self.transport.call("GET", "/plans/" + _seg(plan_id)), client=self)

    # -- analyze -----------------------------------------------------------

    def analyze(self, text_or_path: Union[str, bytes, "os.PathLike[str]"], exit_code: Optional[int] = None) -> Analysis:
        """What runbox's plugins make of a log; see runbox.analyze."""
        exe = self.transport.runbox_bin()
        if not exe:
            raise DaemonUnavailable("runbox.analyze needs the runbox binary and none was found: " + INSTALL_HINT)
        args = [exe, "analyze", "--json"]
        if exit_code is not None:
            args += ["--exit-code", str(int(exit_code))]
        data: Optional[bytes] = None
        if isinstance(text_or_path, os.PathLike) or (
                isinstance(text_or_path, str) and "\n" not in text_or_path and len(text_or_path) < 4096
                and os.path.isfile(text_or_path)):
            p = os.fspath(text_or_path)
            if not os.path.isfile(p):
                raise BadRequest("analyze: no file %s" % p)
            args.append(os.path.abspath(p))
        else:
            data = text_or_path.encode() if isinstance(text_or_path, str) else bytes(text_or_path)  # type: ignore[arg-type]
            args.append("-")
        env = dict(os.environ)
        env["RUNBOX_HOME"] = self.transport.home
        p2 = subprocess.run(args, input=data if data is not None else b"", capture_output=True, env=env)
        if p2.returncode != 0:
            msg = p2.stderr.decode("utf-8", "replace").strip()
            if msg.startswith("runbox: "):
                msg = msg[len("runbox: "):]
            raise RunboxError("runbox analyze: %s" % (msg or "exit status %d" % p2.returncode))
        d = json.loads(p2.stdout)
        return Analysis(failure=Failure.from_json(d.get("failure")), progress=Progress.from_json(d.get("progress")))


def _seg(s: str) -> str:
    if not s or "/" in s or s in (".", ".."):
        raise BadRequest("bad id %r" % s)
    return urllib.parse.quote(s, safe="")


def _param_sets(params: Optional[Mapping[str, Sequence[Any]]],
                params_file: Optional[PathLike]) -> Tuple[List[str], List[Dict[str, str]]]:
    """The sweep's parameter names and sets: the grid of params (the first
    name varies slowest, as the CLI's --param), or the sets of a .jsonl or
    .csv file (as --params-file)."""
    if params and params_file is not None:
        raise BadRequest("give params= or params_file=, not both")
    if params_file is not None:
        return _read_params_file(os.fspath(params_file))
    if not params:
        raise BadRequest("a sweep needs params={NAME: [V1, V2, ...]} or params_file=FILE")
    names: List[str] = []
    values: List[List[str]] = []
    for k, vs in params.items():
        k = str(k).strip()
        if not k:
            raise BadRequest("a sweep parameter needs a name")
        if isinstance(vs, (str, bytes)) or not isinstance(vs, Iterable):
            vs = [vs]  # one value
        got = [_param_value(k, v) for v in vs]
        if not got:
            raise BadRequest("param %s has no values" % k)
        names.append(k)
        values.append(got)
    sets: List[Dict[str, str]] = [{}]
    for k, vals in zip(names, values):
        sets = [dict(s, **{k: v}) for s in sets for v in vals]
        if len(sets) > 10_000_000:
            raise BadRequest("the grid has more than 10000000 members")
    return names, sets


def _param_value(name: str, v: Any) -> str:
    """A value of params= as the text the CLI's --param NAME=V would give:
    a str as it is, True/False as true/false (as a params file writes
    them), a number with str() (0.1, 1e-05), a dict or list as compact
    JSON. None and empty (or blank) text are refused (the CLI takes an
    empty value between commas as one; docs/PYTHON.md says so). Unlike
    --param, other text is not trimmed (a list holds exactly the text
    meant)."""
    if v is None:
        raise BadRequest("param %s: None is not a value (give the text the command should get)" % name)
    if isinstance(v, bool):
        s = "true" if v else "false"  # as JSON writes it (a params file's values)
    elif isinstance(v, (dict, list, tuple)):
        try:
            s = json.dumps(v, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise BadRequest("param %s: %r is not JSON: %s" % (name, v, e)) from None
    elif isinstance(v, bytes):
        s = v.decode()
    else:
        s = str(v)
    if not s.strip():
        raise BadRequest("param %s has an empty value %r: give each value some text" % (name, s))
    return s


class _RawJSON:
    """Reads a .jsonl params file as the CLI does (encoding/json into
    map[string]json.RawMessage): a stream of objects, one set each, however
    they are laid out in lines; a string value is its text, null is empty,
    anything else (numbers, true, nested objects) the JSON text exactly as
    written (1e-3 stays 1e-3, 1.0 stays 1.0)."""

    _ws = re.compile(r"[ \t\n\r]*")

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text = path, text
        self.dec = json.JSONDecoder(parse_constant=self._no_constant)

    @staticmethod
    def _no_constant(c: str) -> Any:
        raise ValueError("%s is not JSON" % c)

    def _skip(self, i: int) -> int:
        return self._ws.match(self.text, i).end()  # type: ignore[union-attr]

    def sets(self) -> List[Dict[str, str]]:
        out: List[Dict[str, str]] = []
        i = self._skip(0)
        while i < len(self.text):
            try:
                obj, i = self._object(i)
            except IndexError:
                raise BadRequest("%s: set %d: unexpected end of JSON input" % (self.path, len(out) + 1)) from None
            except ValueError as e:
                raise BadRequest("%s: set %d: %s" % (self.path, len(out) + 1, e)) from None
            out.append(obj)
            i = self._skip(i)
        return out

    def _object(self, i: int) -> Tuple[Dict[str, str], int]:
        t = self.text
        if t[i] != "{":
            v, _ = self.dec.raw_decode(t, i)
            raise ValueError("a set must be a JSON object, not %s" % type(v).__name__)
        obj: Dict[str, str] = {}
        i = self._skip(i + 1)
        if t[i] == "}":
            return obj, i + 1
        while True:
            if t[i] != '"':
                raise ValueError("want a name in double quotes at char %d" % i)
            key, i = self.dec.raw_decode(t, i)
            i = self._skip(i)
            if t[i] != ":":
                raise ValueError("want : after %r" % key)
            i = self._skip(i + 1)
            v, end = self.dec.raw_decode(t, i)
            obj[key] = v if isinstance(v, str) else "" if v is None else t[i:end]
            i = self._skip(end)
            if t[i] == "}":
                return obj, i + 1
            if t[i] != ",":
                raise ValueError("want , or } at char %d" % i)
            i = self._skip(i + 1)


def _read_params_file(path: str) -> Tuple[List[str], List[Dict[str, str]]]:
    if not os.path.isfile(path):
        raise BadRequest("params_file: no file %s" % path)
    ext = os.path.splitext(path)[1].lower()
    sets: List[Dict[str, str]] = []
    names: List[str] = []
    if ext == ".csv":
        # utf-8-sig: a spreadsheet's byte order mark is not part of the first name.
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
        if len(rows) < 2:
            raise BadRequest("%s: want a header row of names and at least one row of values" % path)
        names = [n.strip() for n in rows[0]]
        for i, row in enumerate(rows[1:], 2):
            if len(row) != len(names):
                raise BadRequest("%s: row %d has %d values for %d names" % (path, i, len(row), len(names)))
            sets.append({n: v.strip() for n, v in zip(names, row)})
        return names, sets
    if ext in (".jsonl", ".ndjson"):
        with open(path, encoding="utf-8-sig") as f:
            sets = _RawJSON(path, f.read()).sets()
        if not sets:
            raise BadRequest("%s: no parameter sets" % path)
        return sorted(sets[0]), sets
    raise BadRequest("%s: want a .jsonl or .csv file" % path)


def _counts(st: SweepStatus) -> str:
    return ", ".join("%d %s" % (n, state) for state, n in sorted(st.counts.items()) if n) or "no members yet"


def _label_filter(label: Union[str, Mapping[str, str], None]) -> Dict[str, Optional[str]]:
    if not label:
        return {}
    if isinstance(label, Mapping):
        return {str(k): str(v) for k, v in label.items()}
    k, sep, v = label.partition("=")
    return {k: v if sep else None}


class Run:
    """A run: a handle on the daemon's record of it. ``Run("01m8...")``
    names an existing one (a unique prefix will do)."""

    def __init__(self, run: Union[str, RunInfo], client: Optional[Client] = None) -> None:
        self._client = client or default_client()
        if isinstance(run, RunInfo):
            self.info: RunInfo = run
            self.id = run.id
        else:
            self.info = self._client.get(run)
            self.id = self.info.id

    def __repr__(self) -> str:
        return "<runbox.Run %s %s>" % (self.id, self.info.state)

    def status(self) -> RunInfo:
        """The run as the daemon sees it now (state, exit, failure, progress)."""
        self.info = self._client.get(self.id)
        return self.info

    @property
    def state(self) -> str:
        return self.status().state

    def wait(self, timeout: Optional[float] = None, output: bool = True) -> Result:
        """Wait for the run to end and return its Result (its output too,
        unless output=False).

        timeout: give up after this many seconds with runbox.WaitTimeout
        (a TimeoutError); the run goes on.

        KeyboardInterrupt (Ctrl-C, a notebook's interrupt) ends the wait,
        not the run: the run keeps going under its supervisor; call stop()
        to end it."""
        self.info = self._client.wait(self.id, timeout)
        out = _Output()
        if output:
            try:
                for stream, _, data in self._client._frames(self.id):
                    out.add(stream, data)
            except NotFound:
                pass  # a run that ended before it had a log (refused while preparing)
        return _result(self.info, out, None)

    def stop(self, grace: Optional[float] = None, wait: bool = True, timeout: Optional[float] = None) -> RunInfo:
        """Stop the run: SIGTERM to its process tree, SIGKILL after grace
        seconds (the run's own grace when None); a queued run is cancelled
        at once. As `runbox stop`, wait for the run to end and return it
        ended (state "cancelled", ...): the SIGKILL after grace bounds the
        wait. timeout: give up after so many seconds with runbox.WaitTimeout
        (the stop goes on); wait=False returns at once, the run still
        stopping (as --no-wait). Stopping an ended run is a no-op."""
        self.info = self._client.stop(self.id, grace, wait=wait, timeout=timeout)
        return self.info

    def logs(self, follow: bool = False, streams: Iterable[str] = OUTPUT_STREAMS) -> Iterator[Tuple[str, str]]:
        """(stream, text) for each record of the run's output, stdout and
        stderr (and setup-stdout, setup-stderr) apart, decoded as UTF-8
        with replacement. follow=True goes on until the run ends. Streamed:
        memory stays bounded however long the log is."""
        return self._client.logs(self.id, follow=follow, streams=streams)

    @property
    def progress(self) -> Optional[Progress]:
        """The run's latest progress (step, total, epoch, metrics, ...)."""
        return self.status().progress

    def metrics(self, *names: str) -> Metrics:
        """The run's metric history (all series, or those named)."""
        return self._client.metrics(self.id, *names)

    def events(self, after: int = 0) -> List[Dict[str, Any]]:
        """The run's lifecycle events (type state, progress, note, failure;
        seq, time, message), after sequence number after."""
        return self._client.events(self.id, after)

    def retry(self, **changes: Any) -> "Run":
        """Start a new run of this run's command linked to it (its parent);
        keyword arguments (as runbox.submit's, cmd= too) change settings."""
        return self._client.retry(self.id, **changes)

    @property
    def record(self) -> Optional[Record]:
        """What ran (command, params, workdir, sandbox, limits, env, code,
        interpreter and packages, image, host), as the daemon recorded it;
        None when it has no record (yet). Read afresh: parts taken after
        the start come in later (Record.complete)."""
        return self.status().record

    def diff(self, other: Union[str, "Run", RunInfo]) -> Diff:
        """What differs from this run to other (runbox.diff(self, other))."""
        return self._client.diff(self, other)

    @property
    def parent(self) -> Optional["Run"]:
        """The run this one retries, or None."""
        pid = self.info.parent_run_id or self.status().parent_run_id
        return Run(pid, client=self._client) if pid else None


class Sweep:
    """A sweep: one run per parameter set, started together (at most
    ``parallel`` at once). ``Sweep("01m9...")`` names an existing one."""

    def __init__(self, sweep: Union[str, SweepStatus], client: Optional[Client] = None) -> None:
        self._client = client or default_client()
        if isinstance(sweep, SweepStatus):
            self.info: SweepStatus = sweep
        else:
            self.info = self._client.get_sweep(sweep)
        self.id = self.info.id

    def __repr__(self) -> str:
        return "<runbox.Sweep %s %d members%s>" % (self.id, self.info.members, " done" if self.info.done else "")

    @property
    def name(self) -> str:
        return self.info.name

    def status(self, sort: Optional[str] = None) -> SweepStatus:
        """The sweep now: counts per state, done, and each member (runs:
        id, params, state, progress, metrics last/best, failure code),
        sorted by metric sort (best first; loss-like names lowest) when
        given, else in grid order."""
        self.info = self._client.get_sweep(self.id, sort)
        return self.info

    def wait(self, timeout: Optional[float] = None) -> SweepStatus:
        """Wait until every member has ended and return the sweep's
        status. timeout: give up after so many seconds with
        runbox.WaitTimeout (the sweep goes on). A member that failed is
        not an exception: look at the members' states and failures.
        KeyboardInterrupt ends the wait, not the sweep; call stop()."""
        self.info = self._client.wait_sweep(self.id, timeout)
        return self.info

    def stop(self) -> SweepStatus:
        """Cancel the members not yet started and stop the running ones."""
        self.info = self._client.stop_sweep(self.id)
        return self.info

    def runs(self) -> List[Run]:
        """The members as Run handles, in grid order."""
        st = self.status()
        return [Run(self._client.get(m.id), client=self._client)
                for m in sorted(st.runs, key=lambda m: m.index)]

    def compare(self, **kw: Any) -> Comparison:
        """The members side by side (runbox.compare(sweep=self, ...))."""
        return self._client.compare(sweep=self, **kw)


class Plan:
    """What runbox would do with a command and why."""

    def __init__(self, d: Mapping[str, Any], client: Optional[Client] = None) -> None:
        self._client = client or default_client()
        self.raw = dict(d)
        self.id: str = d.get("id", "")
        self.command: List[str] = list(d.get("command") or [])
        self.sandbox: str = d.get("sandbox", "")
        self.sandbox_reason: str = d.get("sandbox_reason", "")
        res = d.get("result") or {}
        self.risks: List[Risk] = [Risk(r.get("severity", ""), r.get("code", ""), r.get("message", ""), r.get("evidence", ""))
                                  for r in res.get("risks") or []]
        self.recommendations: Optional[Recommendation] = Recommendation.from_json(res.get("recommendation"))
        smoke = res.get("smoke") or {}
        self.smoke_command: List[str] = list(smoke.get("command") or [])
        self.frameworks: List[str] = list(res.get("frameworks") or [])
        self.notes: List[str] = list(res.get("notes") or [])
        self.experience: Optional[Experience] = Experience.from_json(d.get("experience"))
        self.isolation: Dict[str, Any] = dict(d.get("isolation") or {})

    def __repr__(self) -> str:
        return "<runbox.Plan %s %s risks=%d>" % (self.id, self.command, len(self.risks))

    @property
    def smoke_supported(self) -> bool:
        """Whether the planner found a cheap variant of the command (a
        --dry-run flag, ...) to run first."""
        return bool(self.smoke_command)

    def execute(self, smoke: Optional[bool] = None, timeout: Optional[float] = None, **kw: Any) -> Run:
        """Run the plan. smoke=None runs the smoke command first when the
        plan has one (the full run starts only if it passes); timeout
        overrides the plan's. Other keyword arguments: isolate=, rw=,
        allow_risk=, name=, labels=."""
        if smoke is None:
            smoke = self.smoke_supported
        req = build_request(None, timeout=timeout, **kw)
        del req["workdir"]
        req["plan_id"] = self.id
        if smoke:
            req["smoke"] = True
        req.setdefault("idempotency_key", os.urandom(16).hex())
        d = self._client.transport.call("POST", "/runs", body=req)
        return Run(RunInfo.from_json(d), client=self._client)


_default: Optional[Client] = None
_default_lock = threading.Lock()


def default_client() -> Client:
    """The client the module's functions use (made on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Client()
        return _default
