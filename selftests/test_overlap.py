"""Work that overlaps the rest of a run: batches sent while Hypothesis draws, the stateful walks
drawn in the main thread and sent as chains on the run's pool (``walks``), and set-up started while
the suite is being collected; and no process of the run's own making.

Each keeps the verdict of the serial run (``test_parallel`` compares whole runs); these tests pin
the mechanisms: what overlaps, what a walk reports, and what never starts early.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from schemathesis import GenerationMode

from devtools import SuiteRun, run_suite
from devtools.catalog import catalog_app
from gatekit import QUICK
from petstore_contract.core.records import Exchange, Finding, Violation
from petstore_contract.judging import generated
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.reference.variants import REFERENCE
from petstore_contract.run import Run, RunSettings, setup, walks
from petstore_contract.run.setup import Seeded
from petstore_contract.transport import Batch

KEY = "overlap-selftest-key-81c3f2"
PLUGINS = Path(__file__).resolve().parent / "plugins"
EXCHANGE = Exchange("POST", "http://127.0.0.1:1/v1/pets", status=201, response_body='{"id": 1}')
FINDING = Finding("stateful.round-trip", "name 'é'", "name '?'", EXCHANGE, source="generated")


# -- Batch: items go out as they are submitted ---------------------------------------------------------


def test_batch_starts_each_item_when_submitted() -> None:
    started = threading.Event()
    release = threading.Event()

    def work(item: int) -> int:
        if item == 0:
            started.set()
            release.wait(5)
        return item * 10

    batch = Batch(work, workers=4)
    batch.submit(0)
    assert started.wait(5), "the first item did not start before results() was asked for"
    for item in (1, 2, 3):
        batch.submit(item)
    release.set()
    assert batch.results() == [0, 10, 20, 30]  # submission order, whatever order they finished in


def test_batch_raises_the_first_error_after_every_item_ran() -> None:
    ran: list[int] = []

    def work(item: int) -> int:
        ran.append(item)
        if item in (2, 4):
            raise ValueError(f"item {item}")
        return item

    batch = Batch(work, workers=3)
    for item in range(6):
        batch.submit(item)
    with pytest.raises(ValueError, match="item 2") as caught:
        batch.results()
    assert sorted(ran) == list(range(6))
    assert "1 more of 6 items failed too" in caught.value.__notes__


def test_batch_of_one_worker_runs_in_the_submitting_thread_at_once() -> None:
    seen: list[tuple[int, str]] = []
    batch = Batch(lambda item: seen.append((item, threading.current_thread().name)) or item, workers=1)
    batch.submit(7)
    assert seen == [(7, threading.current_thread().name)]  # before results(): today's serial order
    batch.submit(8)
    assert batch.results() == [7, 8]


# -- a generated test asks each distinct request once ---------------------------------------------------


def test_a_generated_test_sends_a_repeated_request_once() -> None:
    app = build_app(KEY)
    with BackgroundServer(app) as server:
        settings = RunSettings(
            target_name="local", base_url=server.base_url, key_env="PETSTORE_API_KEY", read_only=False
        )
        run = Run(settings, KEY)
        try:
            schema = run.cases.schema(GenerationMode.POSITIVE)
            orders = schema["/store/orders"]["GET"]
            pets = schema["/pets"]["GET"]
            in_order = [
                pets.Case(query={"limit": 5, "status": "sold"}),
                pets.Case(query={"status": "sold", "limit": 5}),
            ]
            for _test in range(2):  # each test asks again what the one before asked
                run.cases.defer()
                for case in (orders.Case(), orders.Case(), *in_order, pets.Case(query={"limit": 5, "status": "sold"})):
                    run.cases.call_and_judge(case)
                run.cases.judge_deferred()
            counters = run.guard.counters()
        finally:
            run.close()
    # Per test: orders once, the two query orders (different bytes on the wire) once each.
    assert (app.state.store.request_count, counters["requests"], counters["repeats_not_sent"]) == (6, 6, 4)


def test_a_request_without_the_key_is_not_the_same_as_one_with_it() -> None:
    run = Run(RunSettings("local", "http://127.0.0.1:9/v1", "PETSTORE_API_KEY", read_only=True), KEY)
    try:
        orders = run.cases.schema(GenerationMode.NEGATIVE)["/store/orders"]["GET"]
        with_key = generated.request_fingerprint(
            orders.Case(), run.settings.base_url, {"Authorization": "Bearer " + KEY}
        )
        other_key = generated.request_fingerprint(orders.Case(), run.settings.base_url, {"Authorization": "Bearer x"})
        assert with_key != other_key
        assert KEY not in with_key  # a digest: the key is never kept in the clear
    finally:
        run.close()


# -- the stateful walks: drawn here, sent as chains on the run's pool -------------------------------------


def _local_run(base_url: str = "http://127.0.0.1:9/v1", concurrency: int = 16) -> Run:
    settings = RunSettings("local", base_url, "PETSTORE_API_KEY", read_only=False, concurrency=concurrency)
    return Run(settings, KEY)


def _shape(sequences: list[walks.Sequence]) -> list[list[tuple[str, object]]]:
    return [[(step.kind, step.case.body if step.case is not None else step.of) for step in s] for s in sequences]


def test_the_seed_draws_the_same_sequences() -> None:
    run = _local_run()
    try:
        first, again = (walks.draw_sequences(run, 41, 3, 4) for _ in range(2))
        other = walks.draw_sequences(run, 42, 3, 4)
    finally:
        run.close()
    assert _shape(first) == _shape(again) and _shape(first) != _shape(other)
    for sequence in first:
        assert len(sequence) == 4 and sequence[0].kind == walks.CREATE
        creates = [n for n, step in enumerate(sequence) if step.kind == walks.CREATE]
        # A read or a list follows a create drawn before it in the same sequence.
        assert all(step.of < sum(c < n for c in creates) for n, step in enumerate(sequence) if step.case is None)


def _sent_walk(answered: Callable[[Any, Any], None], concurrency: int = 16) -> tuple[list[object], int]:
    """Two sequences of a create and the read of what it created, against a fresh reference: what each
    chain ended with, and the requests the server saw."""
    app = build_app(KEY)
    with BackgroundServer(app) as server:
        run = _local_run(server.base_url, concurrency)
        try:
            run.start(setup.SET_UP, lambda: SimpleNamespace(seeded=Seeded()))  # set-up of an empty store
            post = run.cases.schema(GenerationMode.POSITIVE)["/pets"]["POST"]
            body = {"name": "walk", "categoryId": 1}
            create = walks.Step(walks.CREATE, post.Case(body=body, media_type="application/json"))
            read = walks.Step(walks.READ, of=0)
            outcomes: list[object] = list(walks.Chains(run, [[create, read], [create, read]], answered).outcomes())
        finally:
            run.close()
    return outcomes, app.state.store.request_count


def _sent(sent: list[str]) -> Callable[[Any, Any], None]:
    return lambda case, response: sent.append(f"{case.method} {case.formatted_path} {response.status_code}")


def test_a_walk_error_reaches_the_test_as_it_was_raised() -> None:
    """Not flattened into a RuntimeError with its first line (the child processes' protocol did that)."""

    def answered(case: Any, response: Any) -> None:
        assert response.status_code == 999, "a bare assert of a check"

    with pytest.raises(AssertionError, match="a bare assert of a check") as caught:
        _sent_walk(answered)
    assert type(caught.value) is AssertionError


def test_a_violation_stops_its_chain_only() -> None:
    def answered(case: Any, response: Any) -> None:
        if response.status_code == 201:
            raise Violation(FINDING)

    outcomes, requests = _sent_walk(answered)
    assert [type(o) for o in outcomes] == [Violation, Violation]
    assert requests == 2  # neither chain read after its violation


def test_each_chain_sends_one_step_at_a_time_and_the_links_follow_the_answers() -> None:
    sent: list[str] = []
    outcomes, requests = _sent_walk(_sent(sent), concurrency=1)
    assert outcomes == [None, None] and requests == 4
    assert sent == ["POST /pets 201", "GET /pets/1 200", "POST /pets 201", "GET /pets/2 200"]


# Started ahead on the run's pool (the controller of a concurrent run), inline at --contract-concurrency 1;
# the retired --contract-child-processes changes nothing.
PLACES = {
    "started-ahead": (0.04, ("--contract-concurrency", "16")),
    "near-started-ahead": (0.0, ("--contract-concurrency", "16")),
    "serial-inline": (0.04, ("--contract-concurrency", "1")),
    "retired-option": (0.04, ("--contract-child-processes", "none")),
}


# Tier 1: started ahead (a run's usual place); tier 2 every place.
@pytest.mark.parametrize(
    "place", [place if place == "started-ahead" else pytest.param(place, marks=pytest.mark.tier_2) for place in PLACES]
)
def test_stateful_finding_is_the_same_wherever_the_walk_runs(place: str) -> None:
    """A fault that only the sequences see: the same clause and evidence, sent ahead or inline."""
    latency, options = PLACES[place]
    variant = dataclasses.replace(REFERENCE, latency_seconds=latency)
    with BackgroundServer(catalog_app(KEY, variant, "create_ascii_names")) as server:
        run = run_suite(server.base_url, KEY, "-k", "stateful", *QUICK, *options, timeout=300)
    assert run.exit_code == 1, run.output[-3000:]
    assert "child_processes" not in run.summary
    assert run.violated() == {"stateful.round-trip"}
    # The walks find it (which of them depends on what the seed draws; each place draws the same).
    walk_tests = {f"tests/test_stateful.py::test_create_read_list_sequences[walk-{n}]" for n in (1, 2)}
    found = {f["test"] for f in run.findings()}
    assert found and found <= walk_tests, found
    finding = run.findings()[0]
    assert finding["exchange"]["method"] in ("POST", "GET") and "?" in finding["observed"]
    assert KEY not in run.output and KEY not in json.dumps(run.summary)
    assert run.count("requests") > 0 and run.count("writes") > 0


# -- no process of the run's own making -------------------------------------------------------------------


def _started_processes(tmp_path: Path, base_url: str | None, key: str | None) -> tuple[SuiteRun, list[str]]:
    """The processes the suite's own code started during a run (another plugin's are left out: pytest-metadata
    runs ``uname -p``)."""
    out = tmp_path / "started.txt"
    path = os.pathsep.join(p for p in (str(PLUGINS), os.environ.get("PYTHONPATH", "")) if p)
    env = {"PYTHONPATH": path, "STARTED_PROCESSES_OUT": str(out)}
    run = run_suite(base_url, key, "-p", "started_processes", *QUICK, env=env, timeout=300)
    lines = out.read_text(encoding="utf-8").splitlines()
    return run, [line for line in lines if not line.endswith(" -")]


@pytest.mark.tier_2
def test_a_run_against_a_target_starts_no_process(tmp_path: Path) -> None:
    """The whole suite against an external (loopback) target: no subprocess, fork, spawn or exec."""
    with BackgroundServer(build_app(KEY)) as server:
        run, started = _started_processes(tmp_path, server.base_url, KEY)
    assert run.verdict == "conformant", run.output[-3000:]
    assert started == [], started


def test_the_embedded_reference_is_the_only_process_a_run_starts(tmp_path: Path) -> None:
    """The same hook sees the one process an embedded run starts: its target (reference/child.py)."""
    run, started = _started_processes(tmp_path, None, None)
    assert run.verdict == "conformant", run.output[-3000:]
    assert started == ["subprocess.Popen petstore_contract.reference.child"]


# -- nothing starts early where nothing may run --------------------------------------------------------


@pytest.mark.parametrize(
    "selection",
    [
        pytest.param(("--collect-only",), marks=pytest.mark.tier_2),
        ("-k", "no_test_has_this_name"),
        pytest.param(("-m", "no_such_marker"), marks=pytest.mark.tier_2),
    ],
    ids=["collect-only", "keyword-selects-none", "marker-selects-none"],
)
def test_no_write_when_no_test_runs(selection: tuple[str, ...]) -> None:
    with BackgroundServer(build_app(KEY)) as server:
        run_suite(server.base_url, KEY, *selection, *QUICK, timeout=300)
        time.sleep(0.3)  # a walk that had started would write now
        listed = server_pets(server)
    assert listed == [], f"{selection}: the run wrote {len(listed)} animals"


def server_pets(server: BackgroundServer) -> list[object]:
    import requests

    answer = requests.get(
        f"{server.base_url}/pets", params={"limit": 100}, headers={"Authorization": f"Bearer {KEY}"}, timeout=10
    )
    pets: list[object] = answer.json()
    return pets


def test_the_run_leaves_no_shared_files(tmp_path: Path) -> None:
    """Set-up results and counters live in a temporary folder of the run's, gone when it ends."""
    with BackgroundServer(build_app(KEY)) as server:
        run = run_suite(server.base_url, KEY, *QUICK, env={"TMPDIR": str(tmp_path)}, timeout=300)
    assert run.exit_code == 0, run.output[-3000:]
    assert run.count("requests") > 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("petstore-run-")] == []
