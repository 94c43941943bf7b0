"""Shared fixtures of the project's own tests."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from blind_scores import BlindScenario, run_blind_catalog
from blind_scores import score_lines as blind_score_lines
from devtools.killmatrix import Scenario, render, run_catalog
from devtools.launcher import SuiteRun

ROOT = Path(__file__).resolve().parents[1]
MATRIX_KEY = pytest.StashKey[str]()
BLIND_KEY = pytest.StashKey[str]()
# Suite runs side by side in the catalog; each run is mostly Python work, so a little over the cores.
PARALLEL = int(os.environ.get("PETSTORE_SELFTEST_PARALLEL", "3"))


@pytest.fixture(scope="session")
def catalog(pytestconfig: pytest.Config) -> dict[Scenario, SuiteRun]:
    """The contract suite against every fault, variant and unjudgeable target (once per session)."""
    started = time.monotonic()
    results = run_catalog(parallel=PARALLEL)
    matrix = render(results) + f"\n\nself-test wall time: {time.monotonic() - started:.0f} s"
    pytestconfig.stash[MATRIX_KEY] = matrix
    (ROOT / "reports").mkdir(exist_ok=True)
    (ROOT / "reports" / "kill-matrix.md").write_text(matrix + "\n", encoding="utf-8")
    return results


@pytest.fixture(scope="session")
def blind_catalog(pytestconfig: pytest.Config) -> dict[BlindScenario, SuiteRun]:
    """The contract suite against every server of the blind catalog (once per session)."""
    started = time.monotonic()
    results = run_blind_catalog(parallel=PARALLEL)
    lines = [*blind_score_lines(results), f"blind catalog wall time: {time.monotonic() - started:.0f} s"]
    pytestconfig.stash[BLIND_KEY] = "\n".join(lines)
    return results


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    matrix = config.stash.get(MATRIX_KEY, None)
    if matrix:
        terminalreporter.section("kill matrix (scenario -> verdict, violated clauses, collateral) and scores")
        terminalreporter.write_line(matrix)
    blind = config.stash.get(BLIND_KEY, None)
    if blind:
        terminalreporter.section("blind catalog (servers written from the document alone), scored on its own")
        terminalreporter.write_line(blind)
