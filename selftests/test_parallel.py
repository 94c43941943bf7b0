"""Parallel and repeatable: neither ``-n 2`` nor ``--contract-concurrency 1`` changes a clause's outcome, one
seed sends the same requests (in a process of its own as in a suite host that ran another run first: the
suite loads every module of its own before it draws, ``petstore_contract/plugin/loaded.py``), and parallel
runs do not write more.

Each run meets a fresh reference server (so that runs cannot see each other's animals) wrapped in
an ASGI middleware that records every request line; runs are shared by the tests of this module.
Names the suite gives its animals carry the run (``contract-<seed>-<run id>-<tag>-<pid>-<n>``):
seed, run id and process are normalised before requests are compared.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import petstore_contract
from devtools import SuiteRun, run_suite
from devtools.catalog import catalog_app
from devtools.launcher import with_plugins
from devtools.suitehost import SuiteHost
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer
from petstore_contract.run.profiles import DEFAULT_SEED

KEY = "parallel-selftest-key-4d9b0e"
# Two faults of different areas: a list clause, and a create clause that every read-write set-up needs.
SCENARIOS = {"reference": None, "list_ignores_limit": "list_ignores_limit", "create_returns_200": "create_returns_200"}
# The serial verdict, and clauses it must find violated (the fault's own).
VERDICTS = {"reference": ("conformant", set()), "list_ignores_limit": ("not_conformant", {"list.limit.honoured"})}
VERDICTS["create_returns_200"] = ("not_conformant", {"create.created"})
# Tier 2 (each observation is a run in each mode; in tier 1, test_stop_signals.py, test_read_only.py and
# test_pipeline.py run the suite under xdist).
PARAMS = [pytest.param(s, marks=pytest.mark.tier_2) for s in SCENARIOS]
SERIAL, XDIST, ONE = "one process", "-n 2", "--contract-concurrency 1"  # SERIAL: no xdist, default concurrency
MODES = {
    SERIAL: (),
    XDIST: ("-n", "2", "-v"),  # -v undoes the launcher's -q, so that xdist says it started its workers
    ONE: ("--contract-concurrency", "1"),
}

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class RequestLog:
    """ASGI wrapper: records method, path, query and body of every request, then serves it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lines: list[str] = []

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while not messages or messages[-1].get("more_body", False):
            messages.append(await receive())
        body = b"".join(m.get("body", b"") for m in messages)
        query = scope["query_string"].decode()
        self.lines.append(f"{scope['method']} {scope['path']}?{query} {body.decode('utf-8', 'replace')}")

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


@dataclass(frozen=True)
class Observed:
    run: SuiteRun
    requests: tuple[str, ...]  # as the server received them, names normalised
    writes: int  # counted by the server

    def outcomes(self) -> dict[str, str]:
        return {clause["id"]: clause["outcome"] for clause in self.run.summary["clauses"]}


def normalised(line: str, seed: int, run_id: str) -> str:
    line = line.replace(f"pc-{run_id}-", "pc-RUN-")
    return re.sub(r"-\d+-\d+(?=\")", "-PID-N", line)  # a name's process and counter


@cache
def observe(scenario: str, mode: str, *extra: str) -> Observed:
    """The suite (quick profile) against a fresh server; each combination runs once per session."""
    app = catalog_app(KEY, fault=SCENARIOS[scenario])
    logged = RequestLog(app)
    with BackgroundServer(logged) as server:  # type: ignore[arg-type]
        run = run_hosted(server.base_url, KEY, *QUICK, *MODES[mode], *extra, timeout=300)
    assert run.summary, run.output[-3000:]
    if mode == XDIST:
        assert "created: 2/2 workers" in run.output, "xdist did not start"
    lines = tuple(normalised(line, run.summary["seed"], run.summary["run_id"]) for line in logged.lines)
    return Observed(run, lines, int(app.state.store.write_count))


def difference(first: tuple[str, ...], second: tuple[str, ...]) -> list[str]:
    """A few request lines one run sent and the other did not (for the failure message)."""
    a, b = Counter(first), Counter(second)
    return [f"- {line}" for line in list(a - b)[:5]] + [f"+ {line}" for line in list(b - a)[:5]]


def observe_all(*runs: tuple[str, ...]) -> list[Observed]:
    """Several observations, two at a time (the -n 2 run beside the two single-process ones)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda run: observe(*run), runs))


@pytest.mark.parametrize("scenario", PARAMS)
def test_clause_outcomes_do_not_depend_on_parallelism(scenario: str) -> None:
    parallel, serial, one = observe_all((scenario, XDIST), (scenario, SERIAL), (scenario, ONE))
    verdict, violated = VERDICTS[scenario]
    assert serial.run.verdict == verdict and violated <= serial.run.violated(), serial.run.output[-3000:]
    for other in (parallel, one):
        differ = {
            clause: (outcome, other.outcomes().get(clause))
            for clause, outcome in serial.outcomes().items()
            if other.outcomes().get(clause) != outcome
        }
        assert not differ and other.outcomes().keys() == serial.outcomes().keys(), differ
        assert (other.run.exit_code, other.run.verdict) == (serial.run.exit_code, serial.run.verdict)


@pytest.mark.parametrize("scenario", PARAMS)
def test_writes_are_counted_and_do_not_grow_one_at_a_time(scenario: str) -> None:
    serial, one = observe(scenario, SERIAL), observe(scenario, ONE)
    for observed in (serial, one):
        assert observed.run.summary["writes"] == observed.writes > 0, "summary.json counts what the server saw"
    assert one.writes == serial.writes


@pytest.mark.parametrize("scenario", PARAMS)
def test_writes_do_not_grow_with_xdist(scenario: str) -> None:
    serial, parallel = observe(scenario, SERIAL), observe(scenario, XDIST)
    assert parallel.run.summary["writes"] == parallel.writes, "summary.json counts every worker's writes"
    assert parallel.writes <= serial.writes, f"-n 2 wrote {parallel.writes}, a serial run {serial.writes}"


@pytest.mark.tier_2
def test_same_seed_sends_the_same_requests() -> None:
    first, second, other = observe_all(
        ("reference", ONE),
        ("reference", ONE, "--contract-seed", str(DEFAULT_SEED)),
        ("reference", ONE, "--contract-seed", "4243"),
    )
    assert first.run.summary["seed"] == second.run.summary["seed"] == DEFAULT_SEED
    assert first.run.summary["run_id"] != second.run.summary["run_id"]
    assert Counter(first.requests) == Counter(second.requests), difference(first.requests, second.requests)
    assert Counter(other.requests) != Counter(first.requests), "another seed must send other requests"


@pytest.mark.tier_2
def test_concurrency_changes_only_the_numbers_the_server_hands_out() -> None:
    """At the default concurrency the stateful sequences reuse ids (and values drawn from them) that
    depend on how concurrent POSTs interleave; every request is otherwise the one a serial run sends."""
    default, one = observe("reference", SERIAL), observe("reference", ONE)

    def shape(lines: tuple[str, ...]) -> Counter[str]:
        return Counter(re.sub(r"-?\d+", "#", line) for line in lines)

    assert len(default.requests) == len(one.requests)
    assert shape(default.requests) == shape(one.requests), difference(
        tuple(shape(default.requests).elements()), tuple(shape(one.requests).elements())
    )


def test_a_contract_run_has_every_module_of_the_suite_loaded_before_it_draws(tmp_path: Path) -> None:
    """The mechanism of the test below, in a run of its own that only collects: once configured, before
    set-up or any test draws, the run has loaded every module of the suite but its ``__main__``."""
    out = tmp_path / "loaded.txt"
    env = with_plugins({"LOADED_MODULES_OUT": str(out)})
    run = run_suite(None, None, *QUICK, "--collect-only", "-p", "loaded_modules", env=env, timeout=120)
    assert run.exit_code == 0, run.output[-3000:]
    package = Path(petstore_contract.__file__).parent
    every = {str(f) for f in package.rglob("*.py") if f.name != "__main__.py"}
    assert every - set(out.read_text(encoding="utf-8").splitlines()) == set()


@pytest.mark.tier_2
def test_one_seed_draws_alike_in_a_process_of_its_own_and_in_a_host_that_ran_another_run() -> None:
    """Hypothesis draws some strings and numbers from the constants of the process's local modules
    (``petstore_contract/plugin/loaded.py``): a host that ran an embedded run first (the reference
    server's modules loaded) and holds modules of its own still draws what a fresh process draws."""
    host = SuiteHost()
    try:
        earlier = host.run(None, None, (*QUICK, "-m", "not generated"), timeout=300)
        assert earlier.verdict == "conformant", earlier.output[-3000:]
        fresh, hosted = (
            _logged(lambda url: run_suite(url, KEY, *QUICK, *MODES[ONE], timeout=300)),
            _logged(lambda url: host.run(url, KEY, (*QUICK, *MODES[ONE]), timeout=300)),
        )
    finally:
        host.close()
    assert Counter(fresh) == Counter(hosted), difference(fresh, hosted)


def _logged(run_against: Callable[[str], SuiteRun]) -> tuple[str, ...]:
    """The requests of one run against a fresh reference server, names normalised."""
    logged = RequestLog(catalog_app(KEY, fault=None))
    with BackgroundServer(logged) as server:  # type: ignore[arg-type]
        run = run_against(server.base_url)
    assert run.verdict == "conformant", run.output[-3000:]
    return tuple(normalised(line, run.summary["seed"], run.summary["run_id"]) for line in logged.lines)
