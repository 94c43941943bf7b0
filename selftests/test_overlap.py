"""Work that overlaps the rest of a run: batches sent while Hypothesis draws, the Hypothesis-driven
modules in child processes (``sidecar``), and set-up started while the suite is being collected.

Each keeps the verdict of the serial run (``test_parallel`` compares whole runs); these tests pin
the mechanisms: what overlaps, what a child process reports, and what never starts early.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from pathlib import Path

import pytest
from schemathesis import GenerationMode

from devtools import run_suite
from petstore_contract.core.records import Exchange, Finding, Mismatch, Note, Undecided, Violation
from petstore_contract.judging import generated
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.reference.variants import REFERENCE
from petstore_contract.run import Run, RunSettings
from petstore_contract.run.sidecar import Sidecar, children_for, decode, encode, usable_cores
from petstore_contract.transport import Batch, TargetProblem

KEY = "overlap-selftest-key-81c3f2"
QUICK = ("--contract-profile", "quick")
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


# -- what a job in a child process raised, as data ------------------------------------------------------

OUTCOMES = [
    pytest.param(None, None, id="passed"),
    pytest.param(Violation(FINDING), lambda e: e.findings == (FINDING,), id="violation"),
    pytest.param(
        ExceptionGroup("hypothesis", [Violation(FINDING)]), lambda e: e.findings == (FINDING,), id="grouped-violation"
    ),
    pytest.param(
        Undecided(Note(("stateful.round-trip",), "budget", "run budget spent")),
        lambda e: e.note == Note(("stateful.round-trip",), "budget", "run budget spent"),
        id="undecided",
    ),
    pytest.param(
        TargetProblem("GET http://127.0.0.1:1/v1/pets: timed out", kind="target", exchange=EXCHANGE),
        lambda e: (e.message, e.kind, e.exchange) == ("GET http://127.0.0.1:1/v1/pets: timed out", "target", EXCHANGE),
        id="target-problem",
    ),
    pytest.param(pytest.skip.Exception("not selected"), lambda e: str(e) == "not selected", id="skipped"),
    pytest.param(
        Mismatch("a Pet", "a string", EXCHANGE),
        lambda e: (e.expected, e.observed, e.exchange) == ("a Pet", "a string", EXCHANGE),
        id="mismatch",
    ),
    pytest.param(
        ValueError("petId\nsecond line"),
        lambda e: isinstance(e, RuntimeError) and str(e) == "ValueError: petId",
        id="suite-error",
    ),
]


@pytest.mark.parametrize(("raised", "same"), OUTCOMES)
def test_outcome_survives_the_trip_as_json(raised: BaseException | None, same) -> None:
    back = decode(json.loads(json.dumps(encode(raised))))
    if raised is None:
        assert back is None
        return
    kind = RuntimeError if isinstance(raised, ValueError) else type(getattr(raised, "exceptions", [raised])[0])
    assert isinstance(back, kind) and same(back), (raised, back)


# -- the child process ---------------------------------------------------------------------------------

MODULE = Path(__file__).resolve().parents[1] / "tests" / "test_stateful.py"


def _settings(tmp_path: Path, **changed: object) -> dict[str, object]:
    settings: dict[str, object] = {"target_name": "t", "base_url": "http://127.0.0.1:9/v1", "key_env": "NO_KEY"}
    return {**settings, "read_only": False, "shared_dir": str(tmp_path), **changed}


def test_a_child_that_dies_is_one_line_not_a_hang(tmp_path: Path) -> None:
    sidecar = Sidecar(MODULE, _settings(tmp_path, no_such_setting=1), redact=str)  # the child refuses it
    try:
        with pytest.raises(RuntimeError) as caught:
            sidecar.raise_outcome("test_create_read_list_sequences")
    finally:
        sidecar.stop()
    message = str(caught.value)
    expected = "the child process running test_stateful.py exited with code 4 before it finished: ERROR: unusable run"
    assert message.startswith(expected), message
    assert "\n" not in message and "no_such_setting" in message


def test_a_child_exits_when_its_parent_goes(tmp_path: Path) -> None:
    sidecar = Sidecar(MODULE, _settings(tmp_path), redact=str)
    time.sleep(0.5)
    assert sidecar.process.poll() is None  # collecting, then waiting to hear what was selected
    assert sidecar.process.stdin is not None
    sidecar.process.stdin.close()  # what the parent's death does to the pipe
    assert sidecar.process.wait(timeout=60) == 3


# A child process per walk, near the target or far from it (the layout no longer depends on one
# request's time); --contract-concurrency 1 and --contract-child-processes none run them inline.
PLACES = {
    "far-two-children": (0.04, ("--contract-concurrency", "16"), "test_stateful.py in 2 child processes"),
    "near-two-children": (0.0, ("--contract-concurrency", "16"), "test_stateful.py in 2 child processes"),
    "serial-inline": (0.04, ("--contract-concurrency", "1"), "none"),
    "opted-out-inline": (0.04, ("--contract-child-processes", "none"), "none"),
}

CHILDREN = [
    pytest.param(2, 2, 2, id="a-child-per-walk"),
    pytest.param(2, 8, 2, id="many-cores-still-one-per-walk"),
    pytest.param(2, 1, 0, id="one-core-inline"),
]


@pytest.mark.parametrize(("wanted", "cores", "expected"), CHILDREN)
def test_children_for_cores(wanted: int, cores: int, expected: int) -> None:
    assert children_for(wanted, cores) == expected


def test_usable_cores_counts_this_process_affinity() -> None:
    assert 1 <= usable_cores() <= (os.cpu_count() or 1)


@pytest.mark.parametrize("place", PLACES)
def test_stateful_finding_is_the_same_from_the_child(place: str) -> None:
    """A fault that only the sequences see: the same clause and evidence, run in a child or inline."""
    latency, options, children = PLACES[place]
    variant = dataclasses.replace(REFERENCE, latency_seconds=latency)
    with BackgroundServer(build_app(KEY, variant, fault="create_ascii_names")) as server:
        run = run_suite(server.base_url, KEY, "-k", "stateful", *QUICK, *options, timeout=300)
    assert run.exit_code == 1, run.output[-3000:]
    assert run.summary["child_processes"] == children
    assert run.violated() == {"stateful.round-trip"}
    # Each walk (in a child of its own, or inline) finds it.
    walks = {f"tests/test_stateful.py::test_create_read_list_sequences[walk-{n}]" for n in (1, 2)}
    assert {f["test"] for f in run.findings()} == walks
    finding = run.findings()[0]
    assert finding["exchange"]["method"] in ("POST", "GET") and "?" in finding["observed"]
    assert KEY not in run.output and KEY not in json.dumps(run.summary)
    assert run.count("requests") > 0 and run.count("writes") > 0  # the child's requests are counted


# -- nothing starts early where nothing may run --------------------------------------------------------


@pytest.mark.parametrize(
    "selection",
    [("--collect-only",), ("-k", "no_test_has_this_name"), ("-m", "no_such_marker")],
    ids=["collect-only", "keyword-selects-none", "marker-selects-none"],
)
def test_no_write_when_no_test_runs(selection: tuple[str, ...]) -> None:
    with BackgroundServer(build_app(KEY)) as server:
        run_suite(server.base_url, KEY, *selection, *QUICK, timeout=300)
        time.sleep(0.3)  # a child process that had started would write now
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
