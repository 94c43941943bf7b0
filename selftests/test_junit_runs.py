"""Issue 47: the JUnit XML of real runs agrees with their exit code, under each ``junit_family``.

Faulty servers (a server that answers ``200 []`` to everything, faults of the catalog, a closed port)
and selections (``-k test_orders``, ``-k create``, the whole suite): whenever a run exits 1 the file
has failures + errors >= 1 and a failing testcase for every violated MUST clause, whichever test or
set-up exchange found it; a run that exits 6 has an error; and the file validates against the schema
of the family it was written under (xunit2: junit-10.xsd; xunit1: junit-xunit1.xsd).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from devtools import SuiteRun
from devtools.killmatrix import Scenario, run_scenario
from gatekit import QUICK
from hosted import run_hosted
from netpeers import PeerServer, json_ok
from petstore_contract.reporting import junit_cases

DATA = Path(__file__).resolve().parent / "data"
SCHEMAS = {"xunit2": DATA / "junit-10.xsd", "xunit1": DATA / "junit-xunit1.xsd"}
KEEP = ("summary.json", "junit.xml")
KEY = "junit-runs-selftest-key-5d1e0b"

# (server, selection, family): each family under a not-conformant run, an inconclusive run too.
RUNS = {
    "empty-lists -k test_orders": ("empty-lists", ("-k", "test_orders"), "xunit2"),
    "empty-lists -k create": ("empty-lists", ("-k", "create"), "xunit1"),
    "list_ignores_limit (every test)": ("list_ignores_limit", (), "xunit1"),
    "create_returns_200 -k test_read": ("create_returns_200", ("-k", "test_read"), "xunit2"),  # set-up found it
    "closed-port -k test_orders": ("closed-port", ("-k", "test_orders"), "xunit2"),
}


@contextmanager
def _empty_lists() -> Iterator[str]:
    """A service that answers ``200 []`` to every request (the issue's example)."""
    with PeerServer(json_ok) as peer:
        yield peer.base_url


def _run(server: str, selection: tuple[str, ...], family: str) -> SuiteRun:
    args = (*QUICK, *selection, "-o", f"junit_family={family}")  # the last -o wins over the launcher's

    def runner(base_url: str | None, api_key: str | None, *more: str) -> SuiteRun:
        return run_hosted(base_url, api_key, *more, keep=KEEP, timeout=300)

    if server == "empty-lists":
        with _empty_lists() as url:
            return runner(url, KEY, *args)
    kind = "unjudgeable" if server == "closed-port" else "fault"
    return run_scenario(Scenario(kind, server), args, runner)


@pytest.fixture(scope="module", params=list(RUNS))
def junit_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[SuiteRun, str, Path]:
    server, selection, family = RUNS[request.param]
    run = _run(server, selection, family)
    assert "junit.xml" in run.reports, run.output[-3000:]
    path = tmp_path_factory.mktemp("junit-run") / "junit.xml"
    path.write_text(run.reports["junit.xml"], encoding="utf-8")
    return run, family, path


def test_junit_agrees_with_the_exit_code(junit_run: tuple[SuiteRun, str, Path]) -> None:
    run, _, path = junit_run
    assert run.exit_code in (1, 6), run.output[-3000:]
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    failures = sum(int(s.get("failures", "0")) for s in suites)
    errors = sum(int(s.get("errors", "0")) for s in suites)
    cases = list(root.iter("testcase"))
    # The counters are the testcases' own (a CI view counts either).
    assert failures == sum(1 for c in cases if c.find("failure") is not None)
    assert errors == sum(1 for c in cases if c.find("error") is not None)
    if run.exit_code == 1:
        assert failures + errors >= 1, "the gate is red: so is the test view"
        failing = {
            c.get("name")
            for c in cases
            if c.get("classname") == junit_cases.CLAUSES_CLASS and c.find("failure") is not None
        }
        must = {c["id"] for c in run.summary["clauses"] if c["outcome"] == "violated" and c["level"] == "MUST"}
        assert must and must == failing, (must, failing)
    else:
        verdict = [c for c in cases if c.get("classname") == junit_cases.VERDICT_CLASS]
        assert verdict and verdict[0].find("error") is not None, "an inconclusive run is an error"
        assert errors >= 1


def test_junit_validates_against_its_family(junit_run: tuple[SuiteRun, str, Path]) -> None:
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is a dev dependency (pip install -e '.[dev]')")
    _, family, path = junit_run
    xmlschema.XMLSchema(str(SCHEMAS[family])).validate(str(path))
    properties = [c for c in ET.parse(path).getroot().iter("testcase") if c.find("properties") is not None]
    assert not properties or family == "xunit1", "xunit2 forbids testcase <properties>"
