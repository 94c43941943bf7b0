"""Read-only runs send no write: ``--contract-read-only`` and the production target's default.

The suite runs through the launcher against a reference server started here; the server counts
every request that is not GET/HEAD/OPTIONS (``store.write_count``), so any POST, from a targeted,
generated or stateful test, fails these tests.  Each run must end ``conformant`` with zero writes
(at the server and in summary.json), and exactly the tests marked ``writes`` must be reported
``not_selected`` (summary.json's counts, and each one's JUnit entry).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from devtools import SuiteRun
from devtools.suitehost import SuiteHost
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app

KEY = "read-only-selftest-key-2a7c55"
NOT_SELECTED = "not selected: read-only run (this test has to POST)"
KEEP = ("summary.json", "junit.xml")
XDIST = ("-n", "2", "-v")  # -v undoes the launcher's -q, so that xdist says it started its workers


@pytest.fixture(scope="module")
def writes_tests() -> set[str]:
    """The node ids of the tests marked ``writes`` in a read-only collection."""
    run = run_hosted(None, None, "--collect-only", "--contract-read-only", "-m", "writes", *QUICK, timeout=120)
    assert run.exit_code == 0, run.output[-3000:]
    found = {line.strip() for line in run.output.splitlines() if line.startswith("tests/") and "::" in line}
    assert len(found) >= 30, run.output[-3000:]
    return found


@pytest.fixture
def reference() -> Iterator[BackgroundServer]:
    """A reference server holding a few animals (a production store is not empty)."""
    with BackgroundServer(build_app(KEY)) as server:
        for index, status in enumerate(("available", "pending", "sold")):
            answer = requests.post(
                f"{server.base_url}/pets",
                json={"name": f"resident-{index}", "categoryId": index, "status": status},
                headers={"Authorization": f"Bearer {KEY}"},
                timeout=10,
            )
            assert answer.status_code == 201
        yield server


def writes(server: BackgroundServer) -> int:
    return int(server.app.state.store.write_count)


def skipped_as_not_selected(run: SuiteRun) -> set[str]:
    root = ET.fromstring(run.reports["junit.xml"])
    return {
        f"{case.get('file')}::{case.get('name')}"
        for case in root.iter("testcase")
        if (skip := case.find("skipped")) is not None and skip.get("message") == NOT_SELECTED
    }


def assert_read_only_conformant(run: SuiteRun, server: BackgroundServer, before: int, writes_tests: set[str]) -> None:
    assert (run.exit_code, run.verdict) == (0, "conformant"), run.output[-3000:]
    assert writes(server) == before, f"{writes(server) - before} writes reached the server"
    assert run.summary["mode"] == "read-only" and run.summary["writes"] == 0
    assert run.summary["tests"]["not_selected"] == len(writes_tests), run.summary["tests"]
    assert skipped_as_not_selected(run) == writes_tests
    assert {"create.created", "stateful.round-trip"} <= run.clauses("not_selected"), "only POST judges them"
    assert len(run.clauses("conforms")) >= 15


def test_read_only_run_sends_no_write(reference: BackgroundServer, writes_tests: set[str]) -> None:
    before = writes(reference)
    run = run_hosted(reference.base_url, KEY, "--contract-read-only", *QUICK, keep=KEEP, timeout=300)
    assert_read_only_conformant(run, reference, before, writes_tests)
    assert reference.app.state.store.request_count > 100, "the generated and targeted GETs did run"
    assert "read.found" in run.clauses("conforms"), "the read tests use an animal the store already lists"


@pytest.mark.tier_2  # tier 1: the flag in one process (above), read-only under -n 2 (the production target, below)
def test_read_only_run_under_xdist_sends_no_write(reference: BackgroundServer, writes_tests: set[str]) -> None:
    before = writes(reference)
    run = run_hosted(reference.base_url, KEY, "--contract-read-only", *XDIST, *QUICK, keep=KEEP, timeout=300)
    assert "created: 2/2 workers" in run.output, "xdist did not start"
    assert_read_only_conformant(run, reference, before, writes_tests)


def test_production_target_is_read_only_by_default(reference: BackgroundServer, writes_tests: set[str]) -> None:
    """No --contract-read-only: the named target's default; -n 2 workers find the key in the target's variable."""
    before = writes(reference)
    env = {
        "PETSTORE_PRODUCTION_API_KEY": KEY,
        "PETSTORE_PRODUCTION_BASE_URL": reference.base_url,
        "PETSTORE_BASE_URL": "",  # would override the target's URL
    }
    run = run_hosted(None, None, "--contract-target", "production", *XDIST, *QUICK, env=env, keep=KEEP, timeout=300)
    assert "created: 2/2 workers" in run.output, "xdist did not start"
    assert_read_only_conformant(run, reference, before, writes_tests)
    assert (run.summary["target"], run.summary["key_env"]) == ("production", "PETSTORE_PRODUCTION_API_KEY")
    assert run.summary["base_url"] == reference.base_url


@pytest.fixture(scope="module")
def empty_store_run() -> tuple[SuiteRun, int]:
    """A read-only run against an empty store: the suite may not create the animals it would judge."""
    with BackgroundServer(build_app(KEY)) as server:
        run = run_hosted(server.base_url, KEY, "--contract-read-only", *QUICK, keep=KEEP, timeout=300)
    return run, writes(server)


def notes(run: SuiteRun, clause: str) -> list[dict[str, Any]]:
    return next(c["notes"] for c in run.summary["clauses"] if c["id"] == clause)


def test_read_only_run_on_an_empty_store_says_so(empty_store_run: tuple[SuiteRun, int]) -> None:
    run, server_writes = empty_store_run
    assert (run.exit_code, run.verdict) == (0, "conformant"), run.output[-3000:]
    assert server_writes == 0 and run.summary["writes"] == 0
    assert "read.found" in run.clauses("undecided")
    assert [note["kind"] for note in notes(run, "read.found")] == ["empty_store"]
    assert "undecided (empty store): read.found" in run.output


def test_an_empty_store_is_never_called_too_large(empty_store_run: tuple[SuiteRun, int]) -> None:
    run, _ = empty_store_run
    too_large = [
        (clause["id"], note["reason"])
        for clause in run.summary["clauses"]
        for note in clause["notes"]
        if note["kind"] == "store_too_large"
    ]
    assert not too_large, too_large


def test_a_read_only_run_says_why_no_post_answer_was_observed(empty_store_run: tuple[SuiteRun, int]) -> None:
    """Its coverage table (``judging/coverage.py``): each POST answer not observed, with why."""
    run, _ = empty_store_run
    found = {(r["operation"], r["status"]): r for r in run.summary["coverage"]["responses"]}
    for status in ("201", "400", "401"):
        assert found[("POST /pets", status)]["why"] == "read-only run: no POST was sent", status
    read = found[("GET /pets/{petId}", "200")]  # an empty store: nothing to read back
    assert not read["observed"] and "read.found undecided" in read["why"]


def test_the_write_counter_sees_a_read_write_run(reference: BackgroundServer) -> None:
    """The control: without --contract-read-only the same kind of selection does POST, and the counter shows it."""
    before = writes(reference)
    run = run_hosted(reference.base_url, KEY, "-m", "writes and not generated", "-k", "test_create", *QUICK)
    assert run.exit_code == 0, run.output[-3000:]
    assert writes(reference) - before == run.summary["writes"] > 0


@pytest.mark.tier_2
def test_a_read_only_run_after_a_read_write_run_in_one_interpreter_sends_no_write(
    reference: BackgroundServer, writes_tests: set[str]
) -> None:
    """Two ``pytest.main`` calls in one process (a suite host, or a user's wrapper): the second run imports
    the suite's test modules afresh, so its generated tests draw from its own schema (found when the
    self-tests moved to suite hosts: a read-only run after a read-write one sent 56 generated POSTs)."""
    host = SuiteHost()
    try:
        first = host.run(reference.base_url, KEY, QUICK, timeout=300)
        assert first.exit_code == 0 and first.summary["writes"] > 0, first.output[-3000:]
        before = writes(reference)
        second = host.run(reference.base_url, KEY, ("--contract-read-only", *QUICK), timeout=300, keep=KEEP)
        assert_read_only_conformant(second, reference, before, writes_tests)
    finally:
        host.close()
