"""One unanswered request of a table leaves its own row undecided; the table's other rows are judged.

The reference server behind a middleware that never answers one request of a table (the malformed
id ``abc`` of GET /pets/{petId}, and the probe of the unknown id -1): the run is inconclusive (the
target did not answer), the row's test alone is undecided and names the request, every other row
of both tables is judged, and a fault in another row of the same table is still a violation.
"""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

import pytest

from devtools import SuiteRun
from devtools.killmatrix import suite_errors
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer, build_app

KEY = "per-row-key-0123456789"
# A breaker wide enough that the rows left unanswered do not stop the run (that is test_hostile's).
ARGS = (
    "--contract-profile",
    "quick",
    "--contract-request-timeout",
    "1",
    "--contract-circuit-breaker",
    "99",
)
SILENT = ("/v1/pets/abc", "/v1/pets/-1")
MALFORMED = "test_malformed_id_is_never_a_server_error"


@dataclass
class Silent:
    """ASGI middleware: no answer to a request for one of ``paths`` (the client gives up first); a 500
    to ``broken`` when given; every other request is the reference's."""

    app: Any
    broken: str = ""

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] in SILENT:
            await asyncio.sleep(4)  # longer than --contract-request-timeout: the request goes unanswered
            return
        if scope["type"] == "http" and scope["path"] == self.broken:
            await send({"type": "http.response.start", "status": 500, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"broken"})
            return
        await self.app(scope, receive, send)


def _run(broken: str = "") -> tuple[SuiteRun, dict[str, str]]:
    with BackgroundServer(Silent(build_app(KEY), broken)) as server:  # type: ignore[arg-type]
        run = run_hosted(server.base_url, KEY, *ARGS, timeout=300, keep=("summary.json", "junit.xml"))
    return run, _outcomes(run.reports.get("junit.xml", "<testsuite/>"))


def _outcomes(junit: str) -> dict[str, str]:
    """Test name -> passed, or not (failure, error, skipped), from pytest's JUnit file of the run."""
    outcomes = {}
    for case in ET.fromstring(junit).iter("testcase"):
        kinds = {child.tag for child in case}
        outcomes[case.get("name", "")] = next((k for k in ("failure", "error", "skipped") if k in kinds), "passed")
    return outcomes


def _clause(run: SuiteRun, cid: str) -> dict[str, Any]:
    return next(c for c in run.summary["clauses"] if c["id"] == cid)


def test_an_unanswered_row_is_undecided_alone() -> None:
    run, outcomes = _run()
    assert suite_errors(run) == 0, run.output[-3000:]
    assert run.verdict == "inconclusive", (run.verdict, run.summary["reason"])
    malformed = {name: o for name, o in outcomes.items() if name.startswith(MALFORMED)}
    assert malformed[f"{MALFORMED}[abc]"] != "passed", malformed
    assert [o for name, o in malformed.items() if not name.endswith("[abc]")] == ["passed"] * 7, malformed
    # The probes' table: the unanswered probe is undecided, the others (404s) decide the clause.
    not_found = _clause(run, "read.not-found")
    assert not_found["outcome"] == "undecided" and not_found["exchanges"] >= 3, not_found
    assert all("/pets/-1" in note["reason"] for note in not_found["notes"]), not_found["notes"]
    documented = _clause(run, "responses.documented")
    assert documented["exchanges"] >= 7 and any("/pets/abc" in n["reason"] for n in documented["notes"]), documented


@pytest.mark.tier_2  # tier 1: the unanswered row above, judged alone
def test_a_fault_in_another_row_of_the_table_is_still_a_violation() -> None:
    run, outcomes = _run(broken="/v1/pets/1.5")
    assert suite_errors(run) == 0, run.output[-3000:]
    assert run.verdict == "not_conformant" and "responses.documented" in run.violated(), run.summary["reason"]
    urls = {f["exchange"]["url"] for f in run.findings() if f["clause"] == "responses.documented" and f["exchange"]}
    assert urls and all(url.endswith("/pets/1.5") for url in urls), urls
    others = [o for name, o in outcomes.items() if name.startswith(MALFORMED) and name[-5:] not in ("[abc]", "[1.5]")]
    assert others == ["passed"] * 6, outcomes
