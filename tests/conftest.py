"""The fixtures of the contract suite: set-up's outcome (``petstore_contract.run.setup``).

The run, its API and the judge come from the plugin (``petstore_contract.plugin``); set-up starts
in the background as soon as the session knows the selection (``petstore_contract.plugin.session``).
"""

from __future__ import annotations

from typing import Any

import pytest

from petstore_contract.run import Run
from petstore_contract.run.api import Row
from petstore_contract.run.setup import Grid, Prepared, Seeded, prepared_of


@pytest.fixture(scope="session")
def prepared(run: Run) -> Prepared:
    return prepared_of(run)


@pytest.fixture(scope="session")
def seeded(prepared: Prepared) -> Seeded:
    return prepared.seeded


@pytest.fixture(scope="session")
def grid(prepared: Prepared) -> Grid:
    return prepared.grid


@pytest.fixture(scope="session")
def reads(prepared: Prepared) -> list[tuple[dict[str, Any], Row]]:
    return prepared.reads


@pytest.fixture(autouse=True)
def set_up(request: pytest.FixtureRequest) -> None:
    """Set-up before any test (see ``preparation.prepare``).  A generated test starts drawing at
    once: its cases wait for set-up before they are sent (``GeneratedCases.hold_cases_until``)."""
    run: Run = request.getfixturevalue("run")
    drawing_first = request.node.get_closest_marker("deferred") is not None and run.cases.cases_held
    if not drawing_first:
        request.getfixturevalue("prepared")
