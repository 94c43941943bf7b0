"""The fixtures of the contract suite: the run, its API, the judge, set-up's outcome
(``petstore_contract.run.setup``).

They live here, not in the plugin, so that another project's session in the same environment sees
none of them (``selftests/test_unrelated_session.py``).  The run is the plugin's
(``petstore_contract.plugin``); set-up starts in the background as soon as the session knows the
selection (``petstore_contract.plugin.session``).
"""

from __future__ import annotations

import pytest

from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.judging.expect import Judge, judge_of
from petstore_contract.plugin import run_of
from petstore_contract.run import Run
from petstore_contract.run.api import Api, Row
from petstore_contract.run.setup import Grid, Seeded, SetUp, set_up_of


@pytest.fixture(scope="session")
def run(pytestconfig: pytest.Config) -> Run:
    return run_of(pytestconfig)


@pytest.fixture(scope="session")
def api(run: Run) -> Api:
    return run.api


@pytest.fixture(scope="session")
def read_only(run: Run) -> bool:
    return run.read_only


@pytest.fixture
def judge(request: pytest.FixtureRequest) -> Judge:
    """Judges each clause of a test on its own (see ``expect``); the plugin reads it after the test."""
    return judge_of(request.node)


@pytest.fixture(scope="session")
def set_up(run: Run) -> SetUp:
    return set_up_of(run)


@pytest.fixture(scope="session")
def seeded(set_up: SetUp) -> Seeded:
    return set_up.seeded


@pytest.fixture(scope="session")
def grid(set_up: SetUp) -> Grid:
    return set_up.grid


@pytest.fixture(scope="session")
def reads(set_up: SetUp) -> list[tuple[JsonObject, Row]]:
    return set_up.reads


@pytest.fixture(autouse=True)
def set_up_first(request: pytest.FixtureRequest) -> None:
    """Set-up before any test (see ``setup.set_up``).  A generated test starts drawing at
    once: its cases wait for set-up before they are sent (``GeneratedCases.hold_cases_until``)."""
    run: Run = request.getfixturevalue("run")
    drawing_first = request.node.get_closest_marker("deferred") is not None and run.cases.cases_held
    if not drawing_first:
        request.getfixturevalue("set_up")
