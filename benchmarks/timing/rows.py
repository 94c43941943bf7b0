"""One measured row: a suite run, a Schemathesis CLI run or a floor replay, against a fresh server."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.timing.common import PROJECT_TOML, RUN_TIMEOUT, SPEC, log
from benchmarks.timing.floor import dependencies, longest_chain, replay_in_process
from benchmarks.timing.recording import Exchange, serve, with_latency
from devtools import run_suite
from petstore_contract.reference.variants import Variant


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
    cpu: float = 0.0  # user+sys CPU seconds of the run's processes (the command's and their children's)
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
