"""The floor: the very requests a suite run sent, replayed as concurrently as their dependencies allow
(the model is in bench.py's docstring)."""

from __future__ import annotations

import dataclasses
import heapq
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import requests

from benchmarks.timing.common import BENCH, RUN_TIMEOUT
from benchmarks.timing.recording import Exchange, answered_id

REQUEST_TIMEOUT = 30.0
LOOPBACK = ("127.0.0.1", "::1", "localhost")
KEY_ENV = "PETSTORE_API_KEY"
NOT_REPLAYED = {"host", "content-length", "connection", "keep-alive", "transfer-encoding"}


def require_loopback(base_url: str) -> None:
    if urlsplit(base_url).hostname not in LOOPBACK:
        raise ValueError(f"the benchmark only talks to loopback servers, not {base_url}")


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
        own: requests.Session = local.session
        return own

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
            new = answered_id(answer.content)
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
        command = [sys.executable, str(BENCH), "--replay-worker", str(recording)]
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
