"""What the run knows about a 5xx (``judging.flicker``): the service's answer, or the deployment's.

Pure tests over records as ``reask`` marks them: a 5xx the same GET did not get again is set aside
(its clause undecided, blocking: the run inconclusive with one line), a reproduced one stands, and a
5xx to a write, which cannot be asked again, goes with the others only where the run showed the
deployment flickering.
"""

from __future__ import annotations

import pytest

from petstore_contract.core.records import (
    DEPLOYMENT,
    INCONCLUSIVE,
    NOT_CONFORMANT,
    NOT_REASKED,
    REPRODUCED,
    SEEN_ONCE,
    UNDECIDED,
    VIOLATED,
    Exchange,
    Finding,
    TestRecord,
)
from petstore_contract.judging import flicker
from petstore_contract.judging.verdict import clause_results, decide

URL = "http://127.0.0.1:9/v1"
GATEWAY = "<html><head><title>502 Bad Gateway</title></head></html>"


def found(clause: str, status: int, repeat: str, method: str = "GET", path: str = "/pets") -> Finding:
    exchange = Exchange(method, URL + path, (), None, status, (("Retry-After", ""),), GATEWAY, len(GATEWAY))
    return Finding(clause, "401 with an Error body", f"HTTP {status}", exchange, "t::x", repeat=repeat)


def record(nodeid: str, *findings: Finding) -> TestRecord:
    clauses = tuple(dict.fromkeys(f.clause for f in findings))
    return TestRecord(nodeid, clauses, VIOLATED, dict.fromkeys(clauses, VIOLATED), list(findings))


def verdict(records: list[TestRecord], problems: list[str]) -> str:
    rows = clause_results(records)
    return decide(rows, facts={}, problems=problems, records=records, warnings=[]).verdict


def test_a_5xx_seen_once_is_set_aside_and_the_run_inconclusive() -> None:
    records = [record("t::auth", found("auth.invalid", 502, SEEN_ONCE)), record("t::ok")]
    aside = flicker.set_aside(records)
    assert aside.problem == (
        "the deployment answered 502 to 1 request that answered as documented when asked again: "
        "a deploy or a gateway? rerun"
    )
    auth = aside.records[0]
    assert auth.findings == [] and auth.judged == {"auth.invalid": UNDECIDED} and auth.outcome == UNDECIDED
    assert auth.notes[0].kind == DEPLOYMENT and "502" in auth.notes[0].reason
    assert verdict(aside.records, [aside.problem]) == INCONCLUSIVE


def test_a_reproduced_5xx_stands_and_so_does_every_other() -> None:
    records = [
        record("t::a", found("orders.available", 500, REPRODUCED, path="/store/orders")),
        record("t::b", found("auth.invalid", 502, SEEN_ONCE)),
    ]
    aside = flicker.set_aside(records)
    assert aside.problem == "" and aside.records == records
    assert verdict(aside.records, []) == NOT_CONFORMANT


@pytest.mark.parametrize("repeat", [SEEN_ONCE, NOT_REASKED, REPRODUCED])
def test_a_finding_that_is_no_5xx_keeps_its_judgement(repeat: str) -> None:
    records = [record("t::a", found("list.shape", 200, repeat)), record("t::b", found("auth.invalid", 502, SEEN_ONCE))]
    aside = flicker.set_aside(records)
    assert aside.records[0] == records[0] and aside.records[1].findings == []
    assert verdict(aside.records, [aside.problem]) == NOT_CONFORMANT


def test_a_5xx_to_a_write_stands_unless_the_deployment_was_seen_flickering() -> None:
    post = found("create.created", 500, NOT_REASKED, method="POST")
    alone = flicker.set_aside([record("t::post", post)])
    assert alone.problem == "" and alone.records[0].findings == [post]
    flickering = flicker.set_aside([record("t::post", post), record("t::get", found("list.shape", 502, SEEN_ONCE))])
    assert [r.findings for r in flickering.records] == [[], []]
    assert flickering.problem.startswith("the deployment answered 500 and 502 to 1 request")
    assert "(and to 1 write, whose outcome is unknown)" in flickering.problem


def test_a_throttling_503_is_never_a_finding_to_set_aside() -> None:
    throttled = Finding(
        "responses.documented",
        "a documented status",
        "HTTP 503",
        Exchange("GET", URL + "/pets", (), None, 503, (("Retry-After", "1"),)),
        "t::x",
        repeat=SEEN_ONCE,
    )
    aside = flicker.set_aside([record("t::a", throttled)])
    assert aside.problem == "" and aside.records[0].findings == [throttled]
