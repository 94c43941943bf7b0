"""Coverage: each documented answer and each documented value of GET /pets' parameters, asked and seen.

End to end (quick profile, the whole suite): the reference shows every documented answer; a server
that answers 400 where the document says 404, on a store too large to see whole, leaves 404 *not
observed* with why (a read-only run's why: ``test_read_only.py``, on its run).  Then the tally's rules on
requests made by hand, and the merge of two processes' tallies (an id handed out in one process and
read in another).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests

from devtools import SuiteRun
from gatekit import KEY, QUICK, served
from hosted import run_hosted
from petstore_contract.core.redaction import Redactor
from petstore_contract.judging import coverage
from petstore_contract.reporting import summary_json
from petstore_contract.transport import Observed, RunGuard
from petstore_contract.transport.answers import seen_answer

KEEP = ("summary.json", "summary.md", "report.html")


def rows(run: SuiteRun) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["operation"], r["status"]): r for r in run.summary["coverage"]["responses"]}


def test_the_reference_shows_every_documented_answer() -> None:
    with served() as base_url:
        run = run_hosted(base_url, KEY, *QUICK, keep=KEEP, timeout=300)
    assert run.verdict == "conformant", run.output[-2000:]
    jsonschema.Draft202012Validator(summary_json.schema()).validate(run.summary)
    found = rows(run)
    assert set(found) == {(op, s) for op, statuses in coverage.DOCUMENTED.items() for s in statuses}
    assert all(r["observed"] and r["asked"] > 0 for r in found.values()), found
    assert found[("GET /store/orders", "not shown")]["answers_to_those_asked"] == {
        "200": found[("GET /store/orders", "not shown")]["asked"]
    }
    parameters = run.summary["coverage"]["parameters"]
    assert [(p["parameter"], p["value"]) for p in parameters] == list(coverage.PARAMETER_ROWS)
    assert all(p["observed"] for p in parameters) and run.summary["coverage"]["not_observed"] == []
    assert "coverage: 10 of 10 documented answers observed, 8 of 8" in run.output
    assert "<h2>Coverage</h2>" in run.reports["report.html"]


def test_a_documented_answer_never_seen_is_not_observed_with_why() -> None:
    with served("--fault", "read_unknown_400", "--preload", "400") as base_url:
        run = run_hosted(base_url, KEY, *QUICK, keep=KEEP, timeout=300)
    row = rows(run)[("GET /pets/{petId}", "404")]
    assert not row["observed"] and row["answered"] == 0 and row["asked"] > 0
    assert row["why"].startswith(f"asked {row['asked']} times; the target answered 400 \u00d7")
    assert row["answers_to_those_asked"]["400"] >= row["asked"] - 2  # a random id may exist on a big store
    line = f"GET /pets/{{petId}} 404: {row['why']}"
    assert run.summary["coverage"]["not_observed"] == [line]
    assert f"not observed: {line}"[:200] in run.output
    assert "**Not observed:**" in run.reports["summary.md"] and "not observed</span>" in run.reports["report.html"]


# -- the tally's rules, request by request -------------------------------------------------------------

VALID = {"Authorization": f"Bearer {KEY}"}
BASE = "http://127.0.0.1:1/v1"


def seen(
    method: str,
    path: str,
    status: int,
    *,
    headers: dict[str, str] | None = None,
    body: Any = None,
    answer: Any = None,
    at: float = 0.0,
) -> Observed:
    data = json.dumps(body).encode() if body is not None else None
    request = requests.Request(method, BASE + path, headers=VALID if headers is None else headers, data=data)
    content = json.dumps(answer).encode() if answer is not None else b""
    prepared = request.prepare()
    answered = seen_answer(Redactor(KEY, "PETSTORE_API_KEY"), prepared, status, (), content)
    return Observed(prepared, at or time.time(), 0.01, answer=answered)


INTENTS = [
    (seen("GET", "/pets?limit=1", 200), "GET /pets|200|200"),
    (seen("GET", "/pets?limit=101", 400), "GET /pets|other|400"),
    (seen("GET", "/pets?status=lost", 400), "GET /pets|other|400"),
    (seen("GET", "/pets", 401, headers={}), "GET /pets|401|401"),
    (seen("GET", "/pets", 200, headers={"Authorization": f"bearer {KEY}"}), "GET /pets|200|200"),
    (seen("GET", "/pets", 200, headers={"Authorization": f"Bearer {KEY}x"}), "GET /pets|401|200"),
    (seen("POST", "/pets", 201, body={"name": "a", "categoryId": 1, "status": "sold"}), "POST /pets|201|201"),
    (seen("POST", "/pets", 400, body={"name": "a"}), "POST /pets|400|400"),
    (seen("POST", "/pets", 400, body={"name": "a", "categoryId": True}), "POST /pets|400|400"),
    (seen("POST", "/pets", 400, body=[1]), "POST /pets|400|400"),
    (seen("GET", "/pets/abc", 404), "GET /pets/{petId}|other|404"),
    (seen("GET", "/store/orders", 200), "GET /store/orders|not shown|200"),
    (seen("GET", "/store/orders", 401, headers={"X-API-Key": KEY}), "GET /store/orders|401|401"),
]


@pytest.mark.parametrize(("observed", "key"), INTENTS, ids=[key for _, key in INTENTS])
def test_what_a_request_was_meant_to_produce(observed: Observed, key: str) -> None:
    tally = coverage.Tally(KEY)
    tally(observed)
    assert tally.to_dict()["answers"] == {key: 1}


def test_reads_are_judged_once_every_process_is_merged(tmp_path: Path) -> None:
    """An id created in one process and read afterwards in another is meant to be found; an id read
    before anyone handed it out is meant to be unknown, whatever it answered."""
    creator, reader = coverage.Tally(KEY), coverage.Tally(KEY)
    start = time.time()
    reader(seen("GET", "/pets/7", 404, at=start))  # asked before it existed
    creator(
        seen("POST", "/pets", 201, body={"name": "a", "categoryId": 1}, answer={"id": 7, "name": "a"}, at=start + 1)
    )
    reader(seen("GET", "/pets/7", 200, at=start + 2))
    reader(seen("GET", "/pets?limit=5", 200, answer=[{"id": 9, "name": "b", "categoryId": 2}], at=start + 3))
    reader(seen("GET", "/pets/9", 200, at=start + 4))
    for name, tally in (("gw0", creator), ("gw1", reader)):
        guard = RunGuard()
        guard.tallies["coverage"] = tally.to_dict
        guard.write_counters(tmp_path / f"counters-{name}.json")
    merged = coverage.merge(tmp_path).answers
    assert merged["GET /pets/{petId}|404|404"] == 1 and merged["GET /pets/{petId}|200|200"] == 2
    report = coverage.report(coverage.merge(tmp_path), [], read_only=False)
    found = {(r["operation"], r["status"]): r for r in report["responses"]}
    assert found[("GET /pets/{petId}", "404")]["observed"] and found[("GET /pets/{petId}", "200")]["asked"] == 2
    assert found[("GET /pets", "401")]["why"].startswith("the run sent no request meant to produce it")
