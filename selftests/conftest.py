"""Shared fixtures of the project's own tests."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from petstore_contract.killmatrix import Outcomes, render, run_catalog

ROOT = Path(__file__).resolve().parents[1]
MATRIX_KEY = pytest.StashKey[str]()


@pytest.fixture(scope="session")
def catalog(pytestconfig: pytest.Config) -> Outcomes:
    """The contract suite run against every fault and compliant variant (once per session)."""
    started = time.monotonic()
    outcomes = run_catalog()
    matrix = render(outcomes) + f"\n\nself-test wall time: {time.monotonic() - started:.0f} s"
    pytestconfig.stash[MATRIX_KEY] = matrix
    (ROOT / "reports").mkdir(exist_ok=True)
    (ROOT / "reports" / "kill-matrix.md").write_text(matrix + "\n", encoding="utf-8")
    return outcomes


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    matrix = config.stash.get(MATRIX_KEY, None)
    if matrix:
        terminalreporter.section("kill matrix (fault -> tests that caught it) and scores")
        terminalreporter.write_line(matrix)
