"""Time to a verdict at real network distance: the contract suite, Schemathesis' CLI and the floor.

    python benchmarks/bench.py                  # every scenario; target rows median of 3; writes results.md
    python benchmarks/bench.py --quick          # every target row once, fewer side rows; a few minutes
    python benchmarks/bench.py --smoke          # one row in seconds (quick profile, 0 ms); prints, writes --out only
    python benchmarks/bench.py --help

Every row meets a fresh reference server (a uvicorn thread of this process on 127.0.0.1, a fresh
random key, an empty store) that answers each request ``--latencies`` ms late (the server's
``latency_seconds``: the distance is the server's, on purpose; nothing here sleeps). Requests and
writes (requests other than GET/HEAD/OPTIONS) are counted at that server.

- ``suite``: ``pytest tests --base-url URL --contract-profile default --contract-concurrency N`` through
  ``devtools.run_suite`` (key in PETSTORE_API_KEY), serially (N = 1) and at the default (16);
  ``suite -n 2`` adds pytest-xdist. ``suite (embedded)`` gives no ``--base-url``: the suite starts its
  own reference. The wall time is the whole process: start-up, collection, requests, reports.
- ``schemathesis``: ``schemathesis --config-file spec/schemathesis.toml run spec/openapi.yaml --url URL
  --workers W --seed S -H "Authorization: Bearer KEY"`` in an empty directory, for each ``--st-workers``.
- ``floor``: the very requests the suite sent in the same repeat's default-concurrency run (recorded
  at the server by an ASGI middleware: method, raw path, query, headers, body, status, arrival and end
  time), replayed against a fresh server of the same latency by a bare scheduler over keep-alive
  ``requests.Session`` connections, one per thread of a pool as large as the suite's concurrency (16),
  in another process. Its time is the replay's, first send to last answer (no start-up).

Dependency model of the floor replay.  Request B waits for an earlier request A only when
(1) A had answered before B arrived in the suite's own run (the suite did not need the order of
requests it had in flight together), and (2) A created an animal (a 2xx POST /pets) and B lists the
animals (GET /pets) or reads that animal (GET /pets/{its id}): POSTs before the reads that follow
them.  Rejected writes change nothing and wait for nothing; creates wait for nothing; every other pair
commutes.  Ready requests start in recorded order as soon as a connection is free; ids in paths are
mapped to the ids the replay server handed out.  ``floor, lists keep their order`` adds: a create waits
for the lists, and the reads of the id it hands out, that answered before it arrived (so every answer
is one the suite could have seen: the suite's own ordering constraints, not only the data's).

Each run waits until other processes use < 10 % of the CPUs (``--no-wait``: not), and the report
gives their share during every run (from /proc/stat minus this process tree's rusage).
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import hashlib
import heapq
import json
import os
import platform
import re
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from petstore_contract.reference import REFERENCE, VARIANTS, BackgroundServer, build_app
from petstore_contract.reference.variants import Variant
from petstore_contract.run import DEFAULT_CONCURRENCY
from petstore_contract.run.profiles import DEFAULT_SEED

# The launcher is a development tool of the checkout (devtools/, not installed): import it from here.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from devtools import run_suite

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "spec" / "openapi.yaml"
PROJECT_TOML = ROOT / "spec" / "schemathesis.toml"
RESULTS = ROOT / "benchmarks" / "results.md"
KEY_ENV = "PETSTORE_API_KEY"
RUN_TIMEOUT = 1800.0
REQUEST_TIMEOUT = 30.0
LOOPBACK = ("127.0.0.1", "::1", "localhost")
WRITE_METHODS_EXCLUDED = ("GET", "HEAD", "OPTIONS")
NOT_REPLAYED = {"host", "content-length", "connection", "keep-alive", "transfer-encoding"}
PET_PATH = re.compile(r"^(.*/pets/)([^/?]+)$")
VERDICT_NAMES = {0: "conformant", 1: "not conformant", 6: "inconclusive"}
TARGETS = {0: None, 20: 10.0, 100: 30.0}  # latency ms -> the ceiling for the default gate
EMBEDDED_TARGET = 5.0
FLOOR_FACTOR = 2.0


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def require_loopback(base_url: str) -> None:
    if urlsplit(base_url).hostname not in LOOPBACK:
        raise ValueError(f"the benchmark only talks to loopback servers, not {base_url}")


# -- recording at the server ----------------------------------------------------------------------


@dataclass
class Exchange:
    """One request as the server saw it, and what it answered."""

    method: str
    raw_path: str  # as sent, percent-encoding kept, /v1 included
    query: str
    headers: list[tuple[str, str]]
    body: bytes
    start: float  # time.monotonic() at arrival (before the server's latency)
    end: float = 0.0  # after the last byte of the answer was handed to the server
    status: int = 0
    created_id: int | None = None  # the id a 2xx POST /pets answered

    @property
    def is_write(self) -> bool:
        return self.method not in WRITE_METHODS_EXCLUDED

    @property
    def creates(self) -> bool:
        return self.method == "POST" and 200 <= self.status < 300 and self.created_id is not None

    @property
    def lists(self) -> bool:
        return self.method == "GET" and self.raw_path.rstrip("/").endswith("/pets")

    def pet_id(self) -> str | None:
        if self.method != "GET":
            return None
        found = PET_PATH.match(self.raw_path)
        return found.group(2) if found else None

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["body"] = base64.b64encode(self.body).decode("ascii")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Exchange:
        data = {**data, "body": base64.b64decode(data["body"]), "headers": [tuple(h) for h in data["headers"]]}
        return cls(**data)


class Recorder:
    """ASGI middleware around a Pet Store app: every HTTP request, in order of arrival."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        arrived = time.monotonic()
        messages, body = [], b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        raw = scope.get("raw_path") or (scope.get("root_path", "") + scope["path"]).encode()
        exchange = Exchange(
            method=scope["method"],
            raw_path=raw.decode("latin-1"),
            query=scope.get("query_string", b"").decode("latin-1"),
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])],
            body=body,
            start=arrived,
        )
        self.exchanges.append(exchange)
        pending = iter(messages)
        answer = bytearray()

        async def replayed_receive() -> Any:
            for message in pending:
                return message
            return await receive()

        async def watched_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body" and exchange.method == "POST":
                answer.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, replayed_receive, watched_send)
        finally:
            exchange.end = time.monotonic()
            if exchange.method == "POST" and 200 <= exchange.status < 300:
                exchange.created_id = _answered_id(bytes(answer))


def _answered_id(body: bytes) -> int | None:
    try:
        value = json.loads(body).get("id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class Server:
    """A fresh reference server (optionally recorded) in a thread of this process."""

    key: str
    app: Any
    recorder: Recorder | None
    base_url: str = ""

    @property
    def requests(self) -> int:
        return int(self.app.state.store.request_count)

    @property
    def writes(self) -> int:
        return int(self.app.state.store.write_count)


@contextmanager
def serve(variant: Variant, record: bool = False, key: str | None = None) -> Iterator[Server]:
    key = key or "bench-" + secrets.token_urlsafe(18)
    app = build_app(key, variant)
    recorder = Recorder(app) if record else None
    server = Server(key, app, recorder)
    background = BackgroundServer(recorder or app).start()  # type: ignore[arg-type]
    try:
        server.base_url = background.base_url
        yield server
    finally:
        background.stop()


def with_latency(ms: float) -> Variant:
    return dataclasses.replace(REFERENCE, name=f"reference+{ms:g}ms", latency_seconds=ms / 1000)


# -- the floor: replay what the suite sent ------------------------------------------------------


def dependencies(exchanges: Sequence[Exchange], strict: bool = False) -> list[list[int]]:
    """For each request, the earlier requests it must wait for (see the module's docstring).

    ``strict``: also a create waits for the lists, and the reads of the id it hands out, that
    answered before it arrived (the suite saw the store without it)."""
    created_at = {str(e.created_id): i for i, e in enumerate(exchanges) if e.creates}
    needs: list[list[int]] = [[] for _ in exchanges]
    creates = [i for i, e in enumerate(exchanges) if e.creates]
    lists = [i for i, e in enumerate(exchanges) if e.lists]
    reads_of: dict[str, list[int]] = defaultdict(list)  # pet id -> reads of it
    for i, e in enumerate(exchanges):
        pet = e.pet_id()
        if pet is not None:
            reads_of[pet].append(i)
    for b, later in enumerate(exchanges):
        if later.lists:
            needs[b] += [a for a in creates if a < b and exchanges[a].end <= later.start]
        elif later.creates and strict:
            needs[b] += [a for a in lists if a < b and exchanges[a].end <= later.start]
            needs[b] += [a for a in reads_of[str(later.created_id)] if a < b and exchanges[a].end <= later.start]
        pet = later.pet_id()
        a = created_at.get(pet) if pet is not None else None
        if a is not None and a < b and exchanges[a].end <= later.start:
            needs[b].append(a)
    return needs


def longest_chain(needs: Sequence[Sequence[int]]) -> int:
    """Requests on the longest dependency chain: no replay can take fewer round trips."""
    depth: list[int] = []
    for deps in needs:
        depth.append(1 + max((depth[a] for a in deps), default=0))
    return max(depth, default=0)


@dataclass(frozen=True)
class Replay:
    seconds: float
    requests: int
    writes: int
    same_status: int
    chain: int
    differences: list[str]  # the first requests answered otherwise than in the suite's run


def replay(
    base_url: str,
    exchanges: Sequence[Exchange],
    concurrency: int,
    strict: bool = False,
    timeout: float = REQUEST_TIMEOUT,
) -> Replay:
    """The recorded requests against ``base_url`` (same key), as concurrent as their dependencies allow."""
    require_loopback(base_url)
    parts = urlsplit(base_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    needs = dependencies(exchanges, strict)
    waiting = [len(set(deps)) for deps in needs]
    dependents: dict[int, list[int]] = defaultdict(list)
    for b, deps in enumerate(needs):
        for a in set(deps):
            dependents[a].append(b)
    ids: dict[str, str] = {}  # recorded id -> the replay server's
    statuses = [0] * len(exchanges)
    local = threading.local()
    sessions: list[requests.Session] = []

    def session() -> requests.Session:
        if not hasattr(local, "session"):
            local.session = requests.Session()
            local.session.headers.clear()  # only the recorded headers go out
            sessions.append(local.session)
        return local.session

    def send(i: int) -> None:
        exchange = exchanges[i]
        path = exchange.raw_path
        pet = exchange.pet_id()
        if pet is not None and pet in ids:
            path = path[: -len(pet)] + ids[pet]
        url = origin + path + (f"?{exchange.query}" if exchange.query else "")
        headers: dict[str, str] = {}
        for name, value in exchange.headers:
            if name.lower() not in NOT_REPLAYED:
                headers[name] = f"{headers[name]}, {value}" if name in headers else value
        own = session()
        prepared = own.prepare_request(
            requests.Request(exchange.method, url, headers=headers, data=exchange.body or None)
        )
        prepared.url = url  # exactly as recorded, not re-quoted
        answer = own.send(prepared, timeout=timeout, allow_redirects=False)
        statuses[i] = answer.status_code
        if exchange.creates:
            new = _answered_id(answer.content)
            if new is not None:
                ids[str(exchange.created_id)] = str(new)

    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    in_flight: dict[Future[None], int] = {}
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        started = time.perf_counter()
        while ready or in_flight:
            while ready and len(in_flight) < concurrency:
                i = heapq.heappop(ready)
                in_flight[pool.submit(send, i)] = i
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                i = in_flight.pop(future)
                future.result()
                for b in dependents[i]:
                    waiting[b] -= 1
                    if waiting[b] == 0:
                        heapq.heappush(ready, b)
        seconds = time.perf_counter() - started
    for own in sessions:
        own.close()
    pairs = list(zip(statuses, exchanges, strict=True))
    same = sum(s == e.status for s, e in pairs)
    differences = [f"{e.method} {e.raw_path[:60]}: {e.status} then {s}" for s, e in pairs if s != e.status][:3]
    writes = sum(e.is_write for e in exchanges)
    return Replay(seconds, len(exchanges), writes, same, longest_chain(needs), differences)


def replay_in_process(
    base_url: str, key: str, exchanges: Sequence[Exchange], concurrency: int, strict: bool = False
) -> Replay:
    """The replay in its own interpreter (no GIL shared with the server), like the suite and the CLI."""
    with tempfile.TemporaryDirectory(prefix="petstore-bench-floor-") as tmp:
        recording = Path(tmp) / "recording.json"
        document = {"base_url": base_url, "concurrency": concurrency, "strict": strict}
        document["exchanges"] = [e.to_json() for e in exchanges]
        recording.write_text(json.dumps(document), encoding="utf-8")
        command = [sys.executable, str(Path(__file__).resolve()), "--replay-worker", str(recording)]
        env = {**os.environ, KEY_ENV: key}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the floor replay failed: {done.stderr[-800:]}")
        return Replay(**json.loads(done.stdout))


def replay_worker(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    exchanges = [Exchange.from_json(e) for e in document["exchanges"]]
    print(
        json.dumps(
            dataclasses.asdict(replay(document["base_url"], exchanges, document["concurrency"], document["strict"]))
        )
    )
    return 0


def floor_loop(base_url: str, key: str, count: int, timeout: float = 10.0) -> float:
    """``count`` keep-alive GET /pets?limit=5 on one session, one at a time; the seconds they took.

    Not a measurement any more (the floor replays the suite's own requests); kept as a cheap
    liveness check of a server for ``selftests/test_benchmark_smoke.py``."""
    require_loopback(base_url)
    headers = {"Authorization": f"Bearer {key}"}
    with requests.Session() as session:
        started = time.perf_counter()
        for _ in range(count):
            answer = session.get(f"{base_url}/pets", params={"limit": 5}, headers=headers, timeout=timeout)
            if answer.status_code != 200:
                raise RuntimeError(f"the floor loop got {answer.status_code} from {base_url}")
        return time.perf_counter() - started


# -- the measurements -------------------------------------------------------------------------------


@dataclass
class Measurement:
    scenario: str
    latency_ms: float
    setting: str  # concurrency / workers
    seconds: float
    requests: int
    writes: int
    verdict: str
    exit_code: int
    notes: str = ""
    summary: dict[str, Any] = field(default_factory=dict)
    profile: Profile | None = None
    slowest: list[str] = field(default_factory=list)  # pytest --durations lines
    others_cpu: float = 0.0  # share of the machine's CPUs other processes used during the run
    load: float = 0.0  # 1-minute load average when the run started
    tree: str = ""  # tree_fingerprint() when the run started: the suite version measured
    chain: int = 0  # floor rows: requests on the longest dependency chain


@dataclass(frozen=True)
class Profile:
    """Where a suite run's wall time went, from the server's recording."""

    wall: float
    before_first: float  # process start to the first request: interpreter, pytest, collection
    after_last: float  # last answer to process exit: verdict and reports
    busy: float  # some request in flight at the server
    idle: float  # between the first and the last request, nothing in flight: the client working
    mean_in_flight: float  # over the busy time
    chain: tuple[int, int]  # requests on the longest dependency chain: floor, strict floor
    timeline: tuple[float, ...]  # mean requests in flight in each second of the run


def profile_of(exchanges: Sequence[Exchange], started: float, ended: float) -> Profile | None:
    if not exchanges:
        return None
    spans = sorted((e.start, e.end) for e in exchanges)
    busy, edge = 0.0, spans[0][0]
    for start, end in spans:
        if end > edge:
            busy += end - max(start, edge)
            edge = end
    first, last = spans[0][0], max(end for _, end in spans)
    in_flight = sum(end - start for start, end in spans) / busy if busy else 0.0
    chain = longest_chain(dependencies(exchanges)), longest_chain(dependencies(exchanges, strict=True))
    seconds = max(1, int(ended - started + 0.999))
    timeline = [0.0] * seconds
    for start, end in spans:  # the share of each second a request spent in flight, summed
        for second in range(int(start - started), min(seconds, int(end - started) + 1)):
            timeline[second] += max(0.0, min(end, started + second + 1) - max(start, started + second))
    idle = (last - first) - busy
    return Profile(ended - started, first - started, ended - last, busy, idle, in_flight, chain, tuple(timeline))


DURATION = re.compile(r"^(\d+\.\d+)s (call|setup|teardown)\s+tests/(\S+)$")


def slowest_tests(output: str, count: int = 8) -> list[str]:
    found = [m.groups() for m in map(DURATION.match, output.splitlines()) if m]
    return [f"{seconds} s {phase} {name}" for seconds, phase, name in found[:count]]


Recording = tuple[str, list[Exchange]]  # the key, and the requests in order of arrival


def verdict_of(exit_code: int, summary: dict[str, Any]) -> str:
    return str(summary.get("verdict") or f"no verdict (exit {exit_code})")


def run_suite_row(
    scenario: str, latency_ms: float, variant: Variant | None, args: Sequence[str], setting: str, record: bool = False
) -> tuple[Measurement, Recording]:
    """One suite process; against a fresh server of ``variant`` (None: the suite's embedded reference)."""
    args = [*args, "--durations=8", "--durations-min=0.3"]
    if variant is None:
        key = "bench-" + secrets.token_urlsafe(18)
        run = run_suite(None, key, *args, timeout=RUN_TIMEOUT)
        summary = run.summary
        row = Measurement(
            scenario,
            latency_ms,
            setting,
            run.seconds,
            run.count("requests"),
            run.count("writes"),
            verdict_of(run.exit_code, summary),
            run.exit_code,
            "counted by the suite",
            summary,
        )
        row.slowest = slowest_tests(run.output)
        _check(row, run.output)
        return row, (key, [])
    with serve(variant, record=record) as server:
        started = time.monotonic()
        run = run_suite(server.base_url, server.key, *args, timeout=RUN_TIMEOUT)
        ended = time.monotonic()
    exchanges = server.recorder.exchanges if server.recorder else []
    summary = run.summary
    notes = []
    counted = (summary.get("requests"), summary.get("writes"))
    if summary and counted != (server.requests, server.writes):
        notes.append(f"the suite counted {counted[0]} requests, {counted[1]} writes")
    if summary.get("throttled"):
        notes.append(f"throttled {summary['throttled']}, waited {summary.get('throttle_wait_s', 0)} s")
    row = Measurement(
        scenario,
        latency_ms,
        setting,
        run.seconds,
        server.requests,
        server.writes,
        verdict_of(run.exit_code, summary),
        run.exit_code,
        "; ".join(notes),
        summary,
        profile_of(exchanges, started, ended),
    )
    row.slowest = slowest_tests(run.output)
    _check(row, run.output)
    return row, (server.key, exchanges)


def _check(row: Measurement, output: str) -> None:
    log(
        f"{row.scenario} @ {row.latency_ms:g} ms [{row.setting}]: {row.seconds:.1f} s, {row.requests} requests, "
        f"{row.writes} writes, {row.verdict}" + (f" ({row.notes})" if row.notes else "")
    )
    if not row.summary:
        log(f"  no summary.json; the suite said: {output[-1500:]}")


def schemathesis_executable() -> str:
    beside = Path(sys.executable).parent / "schemathesis"  # the venv's, like the suite's interpreter
    return str(beside) if beside.exists() else shutil.which("schemathesis") or "schemathesis"


def run_schemathesis_row(latency_ms: float, workers: str, seed: int) -> Measurement:
    with serve(with_latency(latency_ms)) as server, tempfile.TemporaryDirectory(prefix="petstore-bench-st-") as tmp:
        command = [schemathesis_executable(), "--config-file", str(PROJECT_TOML), "run", str(SPEC)]
        command += ["--url", server.base_url, "--workers", workers, "--seed", str(seed)]
        command += ["-H", f"Authorization: Bearer {server.key}"]
        started = time.monotonic()
        done = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
        seconds = time.monotonic() - started
    verdict = f"{'passed' if done.returncode == 0 else 'failed'} (exit {done.returncode})"
    setting = f"--workers {workers}" + (f" (= {os.cpu_count()})" if workers == "auto" else "")
    row = Measurement(
        "schemathesis CLI", latency_ms, setting, seconds, server.requests, server.writes, verdict, done.returncode
    )
    log(f"schemathesis @ {latency_ms:g} ms [{setting}]: {seconds:.1f} s, {row.requests} requests, {verdict}")
    if done.returncode not in (0, 1):
        log(f"  schemathesis said: {(done.stdout + done.stderr)[-1500:]}")
    return row


FLOOR, STRICT_FLOOR = "floor (keep-alive replay)", "floor, lists keep their order"


def run_floor_row(latency_ms: float, recording: Recording, concurrency: int, strict: bool = False) -> Measurement:
    key, exchanges = recording
    with serve(with_latency(latency_ms), key=key) as server:
        result = replay_in_process(server.base_url, server.key, exchanges, concurrency, strict)
    notes = f"same status as in the suite's run: {result.same_status}/{result.requests}"
    if result.differences:
        notes += f" (e.g. {', '.join(result.differences)})"
    row = Measurement(
        STRICT_FLOOR if strict else FLOOR,
        latency_ms,
        f"{concurrency} connections",
        result.seconds,
        server.requests,
        server.writes,
        "-",
        0,
        notes,
    )
    row.chain = result.chain
    log(
        f"{row.scenario} @ {latency_ms:g} ms [{concurrency}]: {result.seconds:.2f} s, {row.requests} requests "
        f"({notes}; longest dependency chain {result.chain})"
    )
    return row


# -- the plan ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    latencies: tuple[float, ...]
    repeats: int  # target rows: embedded, default concurrency, floor
    side_repeats: int  # serial, schemathesis, -n 2, throttling
    st_workers: tuple[str, ...]
    serial_latencies: tuple[float, ...]
    profile: str
    seed: int
    smoke: bool = False


DEFAULT, XDIST = str(DEFAULT_CONCURRENCY), f"{DEFAULT_CONCURRENCY} x 2 workers"


def machine_cpu_seconds() -> float:
    """Busy CPU time of the whole machine, all cores (Linux /proc/stat; 0 elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """This process and every finished (waited-for) descendant: suites, their xdist workers, CLIs, replays."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass
class Guard:
    """Before each run, wait until other processes leave the CPUs alone; after it, say how much they took."""

    wait: bool
    max_wait: float = 3600.0
    threshold: float = 0.10  # others' share of the machine that still counts as quiet
    disturbed: float = 0.25  # others' share during a run that makes it worth repeating
    retries: int = 3

    def others_share(self, seconds: float) -> float:
        machine, own, started = machine_cpu_seconds(), own_cpu_seconds(), time.monotonic()
        time.sleep(seconds)  # sampling the machine's idleness between runs, not simulating work
        elapsed = time.monotonic() - started
        return max(0.0, machine_cpu_seconds() - machine - (own_cpu_seconds() - own)) / (elapsed * cores())

    def until_quiet(self) -> None:
        if not self.wait:
            return
        started = time.monotonic()
        said = -60.0
        while (share := self.others_share(3.0)) > self.threshold and time.monotonic() < started + self.max_wait:
            if time.monotonic() - said >= 60:
                log(f"other processes use {share:.0%} of the CPUs (load {load_average()}): waiting")
                said = time.monotonic()
        if time.monotonic() - started > 5:
            log(f"waited {time.monotonic() - started:.0f} s for quiet CPUs (others now {share:.0%})")

    def run(self, measure: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``measure(*args)``; again (up to ``retries`` times) when others took over ``disturbed`` of the CPUs."""
        for attempt in range(1 + (self.retries if self.wait else 0)):
            self.until_quiet()
            load, tree = os.getloadavg()[0], tree_fingerprint()
            machine, own, started = machine_cpu_seconds(), own_cpu_seconds(), time.monotonic()
            result = measure(*args, **kwargs)
            elapsed = time.monotonic() - started
            others = max(0.0, machine_cpu_seconds() - machine - (own_cpu_seconds() - own)) / (elapsed * cores())
            row = result[0] if isinstance(result, tuple) else result
            row.others_cpu, row.load, row.tree = others, load, tree
            if others > 0.05:
                log(f"  other processes used {others:.0%} of the CPUs during that run")
            if others <= self.disturbed:
                break
            if attempt < self.retries and self.wait:
                log("  disturbed: measuring it again")
        return result


def measure_all(plan: Plan, guard: Guard) -> list[Measurement]:
    rows: list[Measurement] = []
    if plan.smoke:
        quick = ["--contract-profile", "quick"]
        row, recording = guard.run(run_suite_row, "suite (quick profile)", 0, with_latency(0), quick, DEFAULT, True)
        floor = run_floor_row(0, recording, DEFAULT_CONCURRENCY)
        row.notes = "; ".join(filter(None, [row.notes, f"its floor replay: {floor.seconds:.2f} s ({floor.notes})"]))
        return [row]
    gate = ["--contract-profile", plan.profile, "--contract-concurrency", DEFAULT]
    serial = ["--contract-profile", plan.profile, "--contract-concurrency", "1"]
    for _ in range(plan.repeats):
        rows.append(guard.run(run_suite_row, "suite (embedded reference)", 0, None, gate, DEFAULT)[0])
    for latency in plan.latencies:
        server = with_latency(latency)
        for _ in range(plan.repeats):
            row, recording = guard.run(run_suite_row, "suite", latency, server, gate, DEFAULT, True)
            rows.append(row)
            for strict in (False, True):
                rows.append(guard.run(run_floor_row, latency, recording, DEFAULT_CONCURRENCY, strict))
        for _ in range(plan.side_repeats if latency in plan.serial_latencies else 0):
            rows.append(guard.run(run_suite_row, "suite", latency, server, serial, "1", True)[0])
        if latency == 0:  # right after the 0 ms serial and default runs: writes compared on one suite version
            rows += side_rows(plan, guard, gate)
        for workers in plan.st_workers:
            for _ in range(plan.side_repeats):
                rows.append(guard.run(run_schemathesis_row, latency, workers, plan.seed))
    if 0 not in plan.latencies:
        rows += side_rows(plan, guard, gate)
    return rows


def side_rows(plan: Plan, guard: Guard, gate: list[str]) -> list[Measurement]:
    """-n 2 (writes) and the throttling server, both at 0 ms."""
    rows = []
    xdist = [*gate, "-n", "2"]
    for _ in range(plan.side_repeats):
        rows.append(guard.run(run_suite_row, "suite -n 2 (xdist)", 0, with_latency(0), xdist, XDIST)[0])
    throttling = VARIANTS["throttling"]
    for _ in range(plan.side_repeats):
        rows.append(guard.run(run_suite_row, "suite vs throttling server", 0, throttling, gate, DEFAULT)[0])
    return rows


# -- the report -------------------------------------------------------------------------------------


@dataclass
class Row:
    scenario: str
    latency_ms: float
    setting: str
    runs: list[Measurement]

    @property
    def seconds(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def requests(self) -> int:
        return round(statistics.median(r.requests for r in self.runs))

    @property
    def writes(self) -> int:
        return round(statistics.median(r.writes for r in self.runs))

    def spread(self) -> str:
        if len(self.runs) == 1:
            return f"{self.seconds:.2f}"
        times = [r.seconds for r in self.runs]
        return f"{self.seconds:.2f} ({min(times):.2f}-{max(times):.2f})"

    def counts(self, attribute: str) -> str:
        values = sorted({getattr(r, attribute) for r in self.runs})
        return "/".join(str(v) for v in values)

    def verdicts(self) -> str:
        return " / ".join(dict.fromkeys(r.verdict for r in self.runs))

    def median_run(self) -> Measurement:
        return sorted(self.runs, key=lambda r: r.seconds)[(len(self.runs) - 1) // 2]


def group(measurements: Sequence[Measurement]) -> list[Row]:
    rows: dict[tuple[str, float, str], Row] = {}
    for m in measurements:
        rows.setdefault(
            (m.scenario, m.latency_ms, m.setting), Row(m.scenario, m.latency_ms, m.setting, [])
        ).runs.append(m)
    return list(rows.values())


def find(rows: Sequence[Row], scenario: str, latency: float, setting: str | None = None) -> Row | None:
    return next(
        (r for r in rows if r.scenario == scenario and r.latency_ms == latency and setting in (None, r.setting)), None
    )


def best_schemathesis(rows: Sequence[Row], latency: float) -> Row | None:
    candidates = [r for r in rows if r.scenario == "schemathesis CLI" and r.latency_ms == latency]
    return min(candidates, key=lambda r: r.seconds, default=None)


def table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| scenario | latency | concurrency / workers | runs | wall s, median (min-max) | requests | writes "
        "| verdict | notes |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    best = {id(best_schemathesis(rows, r.latency_ms)) for r in rows}
    for row in rows:
        notes = "; ".join(dict.fromkeys(r.notes for r in row.runs if r.notes))
        if row.scenario in (FLOOR, STRICT_FLOOR):
            notes += f"; longest dependency chain {row.counts('chain')}"
        if len({m.tree for r in rows for m in r.runs}) > 1:
            notes += ("; " if notes else "") + f"suite version {row.counts('tree')}"
        others = max(r.others_cpu for r in row.runs)
        if others > 0.05:
            notes += ("; " if notes else "") + f"other processes took up to {others:.0%} of the CPUs"
        if row.scenario == "schemathesis CLI" and id(row) in best:
            notes = "**its best setting at this latency**" + (f"; {notes}" if notes else "")
        cells = [
            row.scenario,
            f"{row.latency_ms:g} ms",
            row.setting,
            str(len(row.runs)),
            row.spread(),
            row.counts("requests"),
            row.counts("writes"),
            row.verdicts(),
            notes,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def profile_table(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| run | wall s | before the first request | requests in flight (busy) | nothing in flight between "
        "requests | after the last answer | mean in flight while busy "
        "| longest dependency chain: floor / lists keep their order |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        run = row.median_run()
        p = run.profile
        if p is None:
            continue
        chain = " / ".join(
            f"{n} ({n * row.latency_ms / 1000:.2f} s of latency)" if row.latency_ms else str(n) for n in p.chain
        )
        cells = [
            f"{row.scenario} @ {row.latency_ms:g} ms, {row.setting}",
            f"{p.wall:.2f}",
            f"{p.before_first:.2f}",
            f"{p.busy:.2f}",
            f"{p.idle:.2f}",
            f"{p.after_last:.2f}",
            f"{p.mean_in_flight:.1f}",
            chain,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Requests in flight at the server, mean over each second of the run (median run of each row):", ""]
    for row in rows:
        p = row.median_run().profile
        if p is not None:
            lines.append(
                f"- {row.scenario} @ {row.latency_ms:g} ms, {row.setting}: `{' '.join(_level(x) for x in p.timeline)}`"
            )
    slow = [row for row in rows if row.median_run().slowest]
    if slow:
        lines += ["", "Slowest tests (pytest `--durations`, median run of each row):", ""]
        for row in slow:
            tests = "; ".join(row.median_run().slowest)
            lines.append(f"- {row.scenario} @ {row.latency_ms:g} ms, {row.setting}: {tests}")
    return lines


def _level(in_flight: float) -> str:
    return f"{in_flight:.1f}" if in_flight < 9.95 else f"{in_flight:.0f}"


def goal(text: str, met: bool | None, detail: str) -> str:
    state = "not measured" if met is None else ("met" if met else "not met")
    return f"- {text}: **{state}** ({detail})"


def goals(rows: Sequence[Row]) -> list[str]:
    lines = []
    embedded = find(rows, "suite (embedded reference)", 0)
    if embedded:
        lines.append(
            goal(
                f"default gate on the embedded reference ≤ {EMBEDDED_TARGET:g} s",
                embedded.seconds <= EMBEDDED_TARGET,
                f"median {embedded.seconds:.2f} s",
            )
        )
    for latency, ceiling in TARGETS.items():
        row = find(rows, "suite", latency, str(DEFAULT_CONCURRENCY))
        if ceiling is not None and row:
            lines.append(
                goal(
                    f"default gate at {latency} ms per request ≤ {ceiling:g} s",
                    row.seconds <= ceiling,
                    f"median {row.seconds:.2f} s",
                )
            )
    suite, floor = find(rows, "suite", 100, str(DEFAULT_CONCURRENCY)), find(rows, FLOOR, 100)
    if suite and floor:
        ratio = suite.seconds / floor.seconds
        detail = f"{suite.seconds:.2f} s vs floor {floor.seconds:.2f} s: {ratio:.2f}x"
        strict = find(rows, STRICT_FLOOR, 100)
        if strict:
            detail += f"; {suite.seconds / strict.seconds:.2f}x of the floor whose lists keep their order"
            detail += f" ({strict.seconds:.2f} s)"
        lines.append(
            goal(
                f"within {FLOOR_FACTOR:g}x of the floor at 100 ms",
                ratio <= FLOOR_FACTOR,
                detail,
            )
        )
    serial, default, xdist = (
        find(rows, s, 0, c)
        for s, c in (("suite", "1"), ("suite", str(DEFAULT_CONCURRENCY)), ("suite -n 2 (xdist)", None))
    )
    if default and xdist:
        detail = f"writes {xdist.counts('writes')} with -n 2 vs {default.counts('writes')} without"
        detail += f" and {serial.counts('writes')} serial" if serial else ""
        versions = {r.tree for r in xdist.runs}
        same = [r.writes for r in default.runs if r.tree in versions]  # the same suite version only
        if not same:
            detail += " (measured on different suite versions)"
        grows = max(r.writes for r in xdist.runs) > max(same or [r.writes for r in default.runs])
        lines.append(goal("writes per run do not grow with -n 2", not grows, detail))
    throttled = find(rows, "suite vs throttling server", 0)
    if throttled:
        codes = {r.exit_code for r in throttled.runs}
        counts = ", ".join(
            f"{r.summary.get('throttled', '?')} throttled, {r.summary.get('throttle_wait_s', '?')} s"
            f" waited, {r.seconds:.1f} s"
            for r in throttled.runs
        )
        lines.append(
            goal(
                "a throttling server gets a conformant verdict (exit 0)",
                codes == {0},
                f"{throttled.verdicts()}; {counts}",
            )
        )
    for latency in sorted({r.latency_ms for r in rows if r.scenario == "schemathesis CLI"}):
        best, mine = best_schemathesis(rows, latency), find(rows, "suite", latency, str(DEFAULT_CONCURRENCY))
        if best and mine:
            lines.append(
                f"- side by side at {latency:g} ms: suite {mine.seconds:.2f} s ({mine.requests} requests) vs "
                f"Schemathesis at its best ({best.setting}) {best.seconds:.2f} s ({best.requests} requests, "
                f"{best.verdicts()})"
            )
    return lines


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def machine(load_before: str, measurements: Sequence[Measurement], waited: bool) -> list[str]:
    packages = ("schemathesis", "hypothesis", "pytest", "pytest-xdist", "requests", "uvicorn", "starlette")
    versions = ", ".join(f"{p} {version(p)}" for p in packages)
    changed = [line for line in _git("status", "--porcelain", "src", "tests").splitlines() if line.strip()]
    tree = f" plus uncommitted changes to {len(changed)} files in src/ and tests/" if changed else ""
    trees = list(dict.fromkeys(m.tree for m in measurements if m.tree))
    if len(trees) > 1:
        tree += f"; **the suite changed during the benchmark**: versions {', '.join(trees)} (rows say which)"
    elif trees:
        tree += f" (fingerprint {trees[0]}, the same for every run)"
    lines = [
        f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; suite measured: the working tree, commit "
        f"{_git('rev-parse', '--short', 'HEAD')}{tree}",
        f"- machine: {platform.platform()}, {cores()} usable cores ({os.cpu_count()} in total), "
        f"{platform.processor() or platform.machine()}",
        f"- load average (1, 5, 15 min): {load_before} when the benchmark started, {load_average()} at its end",
    ]
    if measurements:
        loads, shares = [m.load for m in measurements], [m.others_cpu for m in measurements]
        lines.append(
            ("- each run started once other processes used < 10% of the CPUs; " if waited else "- ")
            + "1-minute load average at the start "
            f"of a run (this benchmark's own previous run included): median {statistics.median(loads):.2f}, "
            f"at most {max(loads):.2f}; other processes' share of the CPUs during a run: median "
            f"{statistics.median(shares):.0%}, at most {max(shares):.0%}"
        )
    lines.append(f"- Python {platform.python_version()} ({platform.python_implementation()}); {versions}")
    return lines


def tree_fingerprint() -> str:
    """The suite under measurement: HEAD and the uncommitted changes to src/ and tests/ (others edit them)."""
    digest = hashlib.sha1(_git("rev-parse", "HEAD").encode(), usedforsecurity=False)
    digest.update(_git("diff", "HEAD", "--", "src", "tests").encode())
    return digest.hexdigest()[:10]


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip()


def render(argv: Sequence[str], plan: Plan, measurements: Sequence[Measurement], load: str) -> str:
    rows = group(measurements)
    command = " ".join(["python benchmarks/bench.py", *argv])
    lines = ["# Benchmark: time to a verdict at real network distance", "", f"`{command}`", ""]
    lines += [*machine(load, measurements, not plan.smoke), "", "## Results", "", *table(rows)]
    if not plan.smoke:
        lines += ["", "## Targets", "", *goals(rows)]
    profiled = [r for r in rows if r.median_run().profile is not None or r.median_run().slowest]
    if profiled:
        lines += ["", "## Where the suite's wall time goes (the median run of each row, seconds)", ""]
        lines += [*profile_table(profiled), "", PROFILE_NOTE]
    lines += ["", NOTES.format(seed=plan.seed, concurrency=DEFAULT_CONCURRENCY)]
    return "\n".join(lines) + "\n"


PROFILE_NOTE = (
    "From the server's recording: *before the first request* is the suite process starting (interpreter, "
    "pytest, plugin, collection); *busy* is time with at least one request at the server (its latency "
    "included); *nothing in flight* is time between the first and last request when the server had nothing "
    "to do (the client computing, generating, judging); *after the last answer* is the verdict and the "
    "reports. The longest dependency chain (the floor's model) times the latency is what no client can beat."
)

NOTES = (
    "Notes: each run meets a fresh server (empty store, fresh key) in a thread of the benchmark's process; the "
    "latency is the server's (`latency_seconds`, an `asyncio.sleep` before every answer). Requests and writes "
    "are counted at that server (writes: methods other than GET/HEAD/OPTIONS), except the embedded reference, "
    "counted by the suite (`summary.json`). Suite rows use `--contract-profile default` (the gate); "
    "`concurrency` is `--contract-concurrency N` (default {concurrency}). The verdict is `summary.json`'s; "
    "Schemathesis' is its exit code, with the project's `spec/schemathesis.toml`, `--seed {seed}`, the key by `-H`. "
    "The floor replays, in another process, the requests recorded in the same repeat's default-concurrency "
    "suite run, over {concurrency} keep-alive `requests.Session` connections, with the dependency model of "
    "`bench.py`'s docstring; its time is the replay's only (no start-up). Wall times are medians of the runs; "
    "requests and writes list every distinct value seen."
)


# -- command line ---------------------------------------------------------------------------------


def numbers(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x.strip())


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick",
        action="store_true",
        help="target rows once, Schemathesis at --workers 8 only, serial only at 0 ms (a few minutes)",
    )
    mode.add_argument(
        "--smoke",
        action="store_true",
        help="one row in a few seconds: the suite (quick profile) "
        "at 0 ms and a replay of its requests; writes a report only with --out",
    )
    parser.add_argument("--repeats", type=int, default=3, help="runs of each target row (default 3)")
    parser.add_argument(
        "--side-repeats",
        type=int,
        default=1,
        help="runs of each side row: serial, Schemathesis, -n 2, throttling (default 1)",
    )
    parser.add_argument(
        "--latencies",
        type=numbers,
        default=(0.0, 20.0, 100.0),
        metavar="MS,MS",
        help="server latencies in ms (default 0,20,100)",
    )
    parser.add_argument(
        "--serial-latencies",
        type=numbers,
        default=None,
        metavar="MS,MS",
        help="latencies with a serial (--contract-concurrency 1) row (default: all)",
    )
    parser.add_argument(
        "--st-workers",
        default="1,auto,4,8",
        metavar="W,W",
        help="Schemathesis --workers values (default 1,auto,4,8; empty: no Schemathesis)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"Schemathesis' --seed (default {DEFAULT_SEED})")
    parser.add_argument(
        "--out",
        "--output",
        dest="out",
        type=Path,
        default=None,
        help="Markdown report (default benchmarks/results.md; --smoke: none)",
    )
    parser.add_argument(
        "--wait-for-load",
        type=float,
        default=None,
        metavar="LOAD",
        help="first wait (up to 30 min) until the 1-minute load average is below LOAD",
    )
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="start each run at once (default: wait until other processes use < 10%% of the CPUs; --smoke never waits)",
    )
    parser.add_argument(
        "--max-wait", type=float, default=3600.0, metavar="S", help="longest wait for quiet before a run (default 3600)"
    )
    parser.add_argument("--replay-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.repeats, args.side_repeats, args.st_workers = 1, 1, "8"
        args.serial_latencies = args.serial_latencies or (0.0,)
    if not (1 <= args.repeats <= 20 and 1 <= args.side_repeats <= 20):
        parser.error("--repeats and --side-repeats must be 1-20")
    if args.out is None and not args.smoke:
        args.out = RESULTS
    return args


def make_plan(args: argparse.Namespace) -> Plan:
    return Plan(
        latencies=args.latencies,
        repeats=args.repeats,
        side_repeats=args.side_repeats,
        st_workers=tuple(w.strip() for w in args.st_workers.split(",") if w.strip()),
        serial_latencies=args.latencies if args.serial_latencies is None else args.serial_latencies,
        profile="default",
        seed=args.seed,
        smoke=args.smoke,
    )


def wait_for_load(limit: float, timeout: float = 1800.0, sleep: Callable[[float], None] = time.sleep) -> None:
    deadline = time.monotonic() + timeout
    while os.getloadavg()[0] >= limit and time.monotonic() < deadline:
        log(f"load {load_average()}: waiting for < {limit:g}")
        sleep(30)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse(argv)
    if args.replay_worker:
        return replay_worker(args.replay_worker)
    if args.wait_for_load is not None:
        wait_for_load(args.wait_for_load)
    started, load = time.monotonic(), load_average()
    plan = make_plan(args)
    measurements = measure_all(plan, Guard(wait=not (args.smoke or args.no_wait), max_wait=args.max_wait))
    report = render(argv, plan, measurements, load)
    report += f"\nbenchmark wall time: {time.monotonic() - started:.0f} s\n"
    if args.out:
        args.out.write_text(report, encoding="utf-8")
    print(report)
    crashed = [m for m in measurements if m.scenario.startswith("suite") and not m.summary]
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
