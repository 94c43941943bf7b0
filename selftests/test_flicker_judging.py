"""What the run knows about a 5xx (``judging.flicker``): the service's answer, or the deployment's.

Pure tests over records as ``reask`` marks them: a 5xx the same GET did not get again is set aside
(its clause undecided, blocking: the run inconclusive with one line), a reproduced one stands, and a
5xx to a write, which cannot be asked again, goes with the others only where the run showed the
deployment flickering.
"""

from __future__ import annotations

import pytest

from petstore_contract.core.records import (
    CONFORMANT,
    CONFORMS,
    DEPLOYMENT,
    EMPTY_STORE,
    INCONCLUSIVE,
    NOT_CONFORMANT,
    NOT_REASKED,
    REPRODUCED,
    SEEN_ONCE,
    UNDECIDED,
    VIOLATED,
    Exchange,
    Finding,
    Note,
    TestRecord,
)
from petstore_contract.judging import flicker, ids
from petstore_contract.judging.verdict import checked_reasons, clause_results, decide

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


def test_a_declared_reason_is_checked_against_a_lost_write() -> None:
    """``list.limit.maximum`` may stay undecided on a store of 100 animals or fewer; once a create's answer
    was lost the store may hold more, and that reason no longer lets the run pass."""
    note = Note(("list.limit.maximum",), EMPTY_STORE, "the store holds 100 animals or fewer: no page can exceed 100")
    records = [
        TestRecord("t::max", ("list.limit.maximum",), UNDECIDED, {"list.limit.maximum": UNDECIDED}, notes=[note])
    ]
    records.append(
        TestRecord("t::shape", ("list.shape",), CONFORMS, {"list.shape": CONFORMS}, examined={"list.shape": 1})
    )
    assert verdict(records, []) == CONFORMANT
    rows = checked_reasons(clause_results(records), unknown_writes=1)
    (maximum,) = [row for row in rows if row.id == "list.limit.maximum"]
    assert maximum.notes[0].reason.startswith("a create's answer was lost: the store may hold more animals")
    result = decide(rows, facts={}, problems=[], records=records, warnings=[])
    assert result.verdict == INCONCLUSIVE and "a create's answer was lost" in result.reason


def created(pet_id: int, at: float, name: str) -> dict[str, object]:
    body = f'{{"id": {pet_id}, "name": "{name}", "categoryId": 1}}'
    exchange = Exchange("POST", URL + "/pets", (), f'{{"name": "{name}", "categoryId": 1}}', 201, (), body, len(body))
    return {"id": pet_id, "at": at, "exchange": exchange.to_dict()}


def test_an_id_handed_out_twice_is_create_id_with_both_creates() -> None:
    once = ids.handed_twice([created(1, 1.0, "a"), created(2, 2.0, "b")])
    assert once.record is None and once.cause == ""
    twice = ids.handed_twice([created(7, 1.0, "a"), created(8, 2.0, "b"), created(7, 3.0, "c")])
    assert twice.record is not None and twice.cause == ""  # one id again: recycled, no restart named
    later, earlier = twice.record.findings
    assert (later.clause, earlier.clause) == ("create.id", "create.id")
    assert '"c"' in (later.exchange.response_body if later.exchange else "")
    assert '"a"' in (earlier.exchange.response_body if earlier.exchange else "")


def test_a_store_that_starts_over_is_named_as_the_cause() -> None:
    run = [created(n, float(n), f"before-{n}") for n in range(1, 6)]
    run += [created(n, 10.0 + n, f"after-{n}") for n in range(1, 4)]
    found = ids.handed_twice(run)
    assert found.record is not None and len(found.record.findings) == 6
    assert found.cause.startswith("3 ids were handed out again from 00:00:11 UTC on: at least 3 animals created")
    assert found.cause.endswith("did the service restart or lose its store?")
