"""The suite's judgement as data: the failure -> clause table, page arithmetic, and the verdict.

Each case is a row of a table; one loop runs them (as the JSON-Schema-Test-Suite does).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from petstore_contract.core.records import (
    CONFORMANT,
    CONFORMS,
    EMPTY_STORE,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    NOT_CONFORMANT,
    NOT_EXERCISED,
    NOT_SELECTED,
    PRECONDITION,
    STORE_TOO_LARGE,
    UNDECIDED,
    VIOLATED,
    ClauseResult,
    Exchange,
    Finding,
    Note,
    TestRecord,
    Violation,
)
from petstore_contract.interface.clauses import registry
from petstore_contract.judging import expect, store
from petstore_contract.judging.expect import Judge
from petstore_contract.judging.generated import CATCH_ALL, clause_for, failure_clauses, query_clause, rejection_clause
from petstore_contract.judging.verdict import clause_results, decide
from petstore_contract.plugin.classify import record_of
from petstore_contract.reporting import view
from petstore_contract.transport import TargetProblem

# -- Schemathesis findings on clauses ---------------------------------------------------------------

ATTRIBUTION = [
    # (operation, failure code, the check that raised it, status, clause)
    ("createPet", "ST103", "status_code_conformance", 200, "create.created"),
    ("createPet", "ST108", "response_schema_conformance", 201, "create.created"),
    ("createPet", "ST108", "response_schema_conformance", 400, "errors.body"),
    ("listPets", "ST108", "response_schema_conformance", 200, "list.shape"),
    ("listPets", "ST108", None, 200, "list.shape"),  # the check unknown: the code alone places it
    ("getPet", "ST108", "response_headers_conformance", 200, "read.deprecation"),
    ("listPets", "ST108", "response_headers_conformance", 200, "responses.documented"),
    ("createPet", "ST108", "response_headers_conformance", 400, "responses.documented"),
    ("getPet", "ST107", "response_headers_conformance", 200, "read.deprecation"),
    ("getPet", "ST202", "positive_data_acceptance", 400, "read.not-found"),
    ("getPet", "ST201", "negative_data_rejection", 200, "read.not-found"),
    ("listOrders", "ST101", "not_a_server_error", 500, "orders.available"),
    ("listPets", "ST101", "not_a_server_error", 500, "responses.documented"),
    ("listPets", "ST105", "content_type_conformance", 200, "json.content-type"),
    ("createPet", "ST203", "missing_required_header", 200, "auth.missing"),
    ("createPet", "ST111", "response_schema_conformance", 200, CATCH_ALL),
    # A code Schemathesis adds later lands on its check's clause, or on the catch-all clause.
    ("createPet", "ST199", "content_type_conformance", 200, "json.content-type"),
    ("createPet", "ST199", "a_check_schemathesis_adds_later", 200, CATCH_ALL),
    ("createPet", "ST199", None, 200, CATCH_ALL),
]


@pytest.mark.parametrize(("operation", "code", "check", "status", "clause"), ATTRIBUTION)
def test_failure_lands_on_its_clause(operation: str, code: str, check: str | None, status: int, clause: str) -> None:
    assert clause_for(operation, code, status, check) == clause


def test_every_clause_of_the_table_exists() -> None:
    assert {clause for clause in failure_clauses().values()} <= set(registry())


REJECTIONS = [
    ([], "create.reject.json"),
    ({"categoryId": 1}, "create.reject.required"),
    ({"name": "x", "categoryId": 1, "status": "adopted"}, "create.reject.status"),
    ({"name": 5, "categoryId": 1}, "create.reject.types"),
]


@pytest.mark.parametrize(("body", "clause"), REJECTIONS)
def test_invalid_body_accepted_lands_on_its_rejection_clause(body: Any, clause: str) -> None:
    assert rejection_clause(body) == clause


@pytest.mark.parametrize(
    ("query", "clause"),
    [({"limit": "0"}, "list.limit.invalid"), ({"status": "x"}, "list.status.invalid"), ({}, "responses.documented")],
)
def test_server_error_on_an_invalid_query_lands_on_its_parameter(query: dict[str, str], clause: str) -> None:
    assert query_clause(query) == clause


# -- page arithmetic --------------------------------------------------------------------------------


def _knowledge(counts: dict[str, int]) -> store.Knowledge:
    known = store.Knowledge()
    next_id = 0
    for status, count in counts.items():
        for _ in range(count):
            next_id += 1
            known.add({"id": next_id, "status": status})
    return known


PAGES = [
    # (status, limit, size, known per status, largest page seen, least size)
    (None, 20, 20, {"available": 40, "sold": 40}, 100, 20),
    (None, 20, 10, {"available": 40}, 10, 10),  # a server capping at 10: a page of 10 is full
    ("sold", 5, 5, {"sold": 2, "available": 50}, 50, 1),  # two sold known, limit above: only "not empty"
    ("sold", 1, 1, {"sold": 2}, 2, 1),
    (None, 100, 0, {}, 0, 0),  # an empty store
]


@pytest.mark.parametrize(("status", "limit", "size", "counts", "cap", "least"), PAGES)
def test_least_page_size(
    status: str | None, limit: int, size: int, counts: dict[str, int], cap: int, least: int
) -> None:
    page = store.Page(status, limit, tuple({"id": i} for i in range(size)))
    assert store.least_size(page, _knowledge(counts), cap) == least


@pytest.mark.parametrize(
    ("size", "cap", "whole"),
    [(34, 100, True), (100, 100, False), (7, 7, False), (0, 5, True), (49, 50, True)],
)
def test_a_status_page_is_seen_whole_only_below_every_cap(size: int, cap: int, whole: bool) -> None:
    page = store.Page("sold", 100, tuple({"id": i} for i in range(size)))
    assert store.seen_whole(page, cap) is whole


def test_an_animal_seen_again_keeps_only_its_latest_status() -> None:
    known = store.Knowledge()
    known.add({"id": 1, "status": "sold"})
    known.add({"id": 1, "status": "available"})
    assert known.count("sold") == 0 and known.count("available") == 1


def test_duplicates_and_wrong_status_on_a_page() -> None:
    page = store.Page("sold", 5, ({"id": 1, "status": "sold"}, {"id": 1, "status": "pending"}))
    assert store.duplicates(page) == [1]
    assert [p["status"] for p in store.wrong_status(page)] == ["pending"]


# Each list clause reads only the part of a page it needs (issue 58): a page's length any JSON array, a
# filter each item's PetStatus, "distinct" each id as a JSON value, a comparison each field the Pet schema
# admits; what an item gets wrong otherwise is list.shape's alone.
ODD_ITEMS = [{"id": "1", "status": "SOLD"}, {"id": 1}, {"id": True, "status": "pending"}, {"id": 1.0}, 7, {"id": "1"}]
PAGE_READINGS = [
    # (what is read, the function, its value on a sold page of ODD_ITEMS)
    ("length", lambda page: page.size, 6),
    ("ids repeated, as JSON values", store.duplicates, ["1"]),
    ("items with another status", lambda page: [p["id"] for p in store.wrong_status(page)], [1, True, 1.0, "1"]),
    ("items whose id names no animal", store.unnamed, 5),
    ("animals shown at least", lambda page: store.distinct_ids([page]), 4),
]


@pytest.mark.parametrize(("reading", "read", "value"), PAGE_READINGS, ids=[row[0] for row in PAGE_READINGS])
def test_a_page_of_items_that_are_no_pets_is_read_for_what_each_clause_needs(
    reading: str, read: Any, value: Any
) -> None:
    page = store.listed(ODD_ITEMS, "sold", 100)
    assert page is not None and read(page) == value, reading


@pytest.mark.parametrize(
    ("item", "unreadable"),
    [
        ({"id": 1, "name": "Rex", "categoryId": 2, "status": "AVAILABLE"}, {"status"}),
        ({"id": "1", "name": "Rex"}, {"id", "categoryId"}),
        ({"id": 1, "name": "Rex", "categoryId": 2}, set()),  # status is optional: none is no fault
    ],
)
def test_an_item_is_read_field_by_field(item: dict[str, Any], unreadable: set[str]) -> None:
    assert store.unreadable(item) == unreadable
    assert set(store.readable(item)) == set(item) - unreadable


def test_only_a_json_array_is_a_page() -> None:
    assert store.listed({"items": []}, None, 20) is None
    assert store.listed([], None, 20) == store.Page(None, 20, ())


# -- the verdict ------------------------------------------------------------------------------------


def _row(cid: str, outcome: str, level: str = "MUST", kind: str = "") -> ClauseResult:
    notes = [Note((cid,), kind, f"because {kind}")] if kind else []
    findings = [Finding(cid, "x", "y")] if outcome == VIOLATED else []
    return ClauseResult(cid, "§1", level, "quote", outcome, findings=findings, notes=notes)


VERDICTS = [
    # (rows, run problems, verdict, words the reason holds)
    ([_row("a", CONFORMS), _row("b", CONFORMS)], [], CONFORMANT, "2 of 2"),
    ([_row("a", CONFORMS), _row("b", VIOLATED)], [], NOT_CONFORMANT, "b"),
    ([_row("a", CONFORMS), _row("s", VIOLATED, "SHOULD")], [], CONFORMANT, "1 of 2"),
    # Non-blocking reasons only where the registry declares them for the clause (undecided-ok):
    ([_row("a", CONFORMS), _row("list.status.found", UNDECIDED, kind=STORE_TOO_LARGE)], [], CONFORMANT, "whole"),
    ([_row("a", CONFORMS), _row("read.sunset", CONFORMS, kind=NOT_APPLICABLE)], [], CONFORMANT, "not applicable"),
    ([_row("a", CONFORMS), _row("read.found", UNDECIDED, kind=EMPTY_STORE)], [], CONFORMANT, "does not hold"),
    ([_row("a", CONFORMS), _row("read.not-found", UNDECIDED, kind=STORE_TOO_LARGE)], [], INCONCLUSIVE, "not-found"),
    ([_row("a", CONFORMS), _row("list.shape", UNDECIDED, kind=EMPTY_STORE)], [], INCONCLUSIVE, "list.shape"),
    ([_row("a", CONFORMS), _row("read.found", UNDECIDED, kind=NOT_EXERCISED)], [], INCONCLUSIVE, "read.found"),
    ([_row("a", CONFORMS), _row("b", UNDECIDED, kind=PRECONDITION)], [], INCONCLUSIVE, "b"),
    ([_row("a", CONFORMS)], ["the target did not answer: refused"], INCONCLUSIVE, "refused"),
    ([_row("a", VIOLATED)], ["run budget of 3 s spent"], NOT_CONFORMANT, "a"),
    ([_row("a", NOT_SELECTED)], [], INCONCLUSIVE, "no MUST clause"),
]


@pytest.mark.parametrize(("rows", "problems", "verdict", "words"), VERDICTS)
def test_verdict(rows: list[ClauseResult], problems: list[str], verdict: str, words: str) -> None:
    result = decide(rows, facts={}, problems=problems, records=[], warnings=[])
    assert result.verdict == verdict, result.reason
    assert words in result.reason
    assert result.exit_code == {CONFORMANT: 0, NOT_CONFORMANT: 1, INCONCLUSIVE: 6}[verdict]


def test_not_applicable_is_said_of_a_conforming_clause_only() -> None:
    """A rule about what the target chose to send, and it sent none of it: the clause conforms with the
    reason (``Judge.not_applicable``); the note never stands beside another test's violation of it."""
    judge = Judge()
    judge.not_applicable("read.sunset", "no Sunset header was sent")
    alone = TestRecord(
        "t::moot", ("read.sunset",), CONFORMS, judge.outcomes, notes=judge.notes, examined=judge.examined
    )
    broken = TestRecord(
        "t::broken", ("read.sunset",), VIOLATED, {"read.sunset": VIOLATED}, [Finding("read.sunset", "x", "y")]
    )
    (moot,) = [row for row in clause_results([alone]) if row.id == "read.sunset"]
    assert (moot.outcome, [note.kind for note in moot.notes]) == (CONFORMS, [NOT_APPLICABLE])
    assert view.why(moot).startswith("conforms · not applicable: no Sunset header")
    (row,) = [row for row in clause_results([alone, broken]) if row.id == "read.sunset"]
    assert (row.outcome, row.notes) == (VIOLATED, [])


def test_a_violated_should_clause_is_a_warning() -> None:
    result = decide(
        [_row("a", CONFORMS), _row("s", VIOLATED, "SHOULD")], facts={}, problems=[], records=[], warnings=[]
    )
    assert any(w.startswith("s (SHOULD)") for w in result.warnings)


# -- a test that ends on a violation of another clause (issue 39: "not selected" although it ran) --------


class _Report:
    skipped = False


def _ended_on(
    clauses: tuple[str, ...],
    examined: dict[str, int],
    *,
    whole: bool = False,
    nothing: tuple[str, ...] = (),
    finished: bool = False,
) -> dict[str, str]:
    judge = Judge(whole=whole, finished=finished)
    judge.examined.update(examined)
    for clause in nothing:
        judge.nothing_to_judge(clause)
    finding = Finding("read.found", "the animal just created", "404")

    def walk() -> None:
        raise Violation(finding)

    call = pytest.CallInfo.from_call(walk, "call")
    record = record_of("t::walk", clauses, call, _Report(), judge)  # type: ignore[arg-type]
    return dict(record.judged)


def test_a_walk_that_ended_on_another_clause_conforms_on_the_hops_it_judged() -> None:
    judged = _ended_on(("stateful.round-trip",), {"stateful.round-trip": 3})
    assert judged == {"read.found": "violated", "stateful.round-trip": "conforms"}


def test_a_walk_that_ended_before_judging_its_clause_is_undecided_blocked_by_the_violated_one() -> None:
    judged = _ended_on(("stateful.round-trip",), {})
    assert judged == {"read.found": "violated", "stateful.round-trip": "undecided"}


def test_a_test_that_judged_every_case_before_raising_leaves_no_clause_blocked() -> None:
    """A generated test's cases are all judged before its findings are raised (``Judge.whole``): a clause none
    of its answers applied to (no 401 came, so no challenge) is not left undecided by a finding elsewhere."""
    clauses = ("responses.documented", "auth.challenge")
    judged = _ended_on(clauses, {"responses.documented": 4}, whole=True)
    assert judged == {"read.found": "violated", "responses.documented": "conforms", "auth.challenge": "conforms"}


def test_a_targeted_test_that_ran_to_its_end_leaves_a_clause_it_never_judged_to_the_others() -> None:
    """Its violations were raised once its body had judged every exchange (``Judge.finish``): a clause it
    names and never judged (no Pet in a 400's answer to echo) had nothing to judge there, as in a test that
    passed; it is not blocked by the violation found on another clause."""
    judged = _ended_on(("create.echo", "create.reject.types"), {}, finished=True)
    assert judged == {"read.found": "violated"}


@pytest.mark.parametrize(
    ("status", "body", "nothing"),
    [
        (500, b"Internal Server Error", True),  # responses.documented's: no fields for an echo to read
        (404, b'{"code": "x", "message": "y", "status": 404}', True),
        (201, b"{}", False),  # a 201 made the animal, whatever its shape
        (200, json.dumps({"id": 5, "name": "Rex", "categoryId": 1}).encode(), False),
    ],
)
def test_a_create_that_made_no_animal_leaves_its_echo_nothing_to_judge(status: int, body: bytes, nothing: bool) -> None:
    """No Pet, no fields to echo or id to read: nothing to judge on that exchange (never undecided by it);
    the clause is decided on the creates that made one (``expect.made_nothing``)."""
    answer = SimpleNamespace(status=status, body=body, exchange=None, headers={})
    judge = Judge()
    assert expect.made_nothing(judge, answer, "create.echo") is nothing
    assert judge.outcomes == ({"create.echo": "not_selected"} if nothing else {}) and not judge.notes


def test_a_clause_with_nothing_to_judge_in_a_test_is_left_to_the_others() -> None:
    judged = _ended_on(("auth.missing", "auth.challenge.quiet"), {"auth.missing": 1}, nothing=("auth.challenge.quiet",))
    assert judged["auth.challenge.quiet"] == "not_selected" and judged["auth.missing"] == "conforms"


def _passed(nodeid: str, clauses: tuple[str, ...], examined: dict[str, int], nothing: tuple[str, ...]) -> TestRecord:
    judge = Judge(finished=True)
    judge.examined.update(examined)
    for clause in clauses:
        if clause in examined:
            judge.outcomes[clause] = "conforms"
    for clause in nothing:
        judge.nothing_to_judge(clause)
    call = pytest.CallInfo.from_call(lambda: None, "call")
    return record_of(nodeid, clauses, call, _Report(), judge)  # type: ignore[arg-type]


def test_a_clause_every_test_had_nothing_to_judge_for_ends_undecided_not_exercised() -> None:
    """A clause "nothing to judge" leaves to the tests that have something: where no test had, no check
    judged an exchange for it, and it cannot conform (never "not selected" as if its tests had not run)."""
    clauses = ("auth.missing", "auth.challenge.quiet")
    alone = _passed("t::missing", clauses, {"auth.missing": 1}, nothing=("auth.challenge.quiet",))
    (row,) = [row for row in clause_results([alone]) if row.id == "auth.challenge.quiet"]
    assert row.outcome == "undecided" and [note.kind for note in row.notes] == [NOT_EXERCISED]
    other = _passed("t::challenge", ("auth.challenge.quiet",), {"auth.challenge.quiet": 1}, nothing=())
    (row,) = [row for row in clause_results([alone, other]) if row.id == "auth.challenge.quiet"]
    assert row.outcome == "conforms" and row.exchanges == 1 and not row.notes


@pytest.mark.parametrize(
    ("status", "body", "made"),
    [
        (201, {"id": 5}, True),  # a 201 made the animal, whatever its shape (create.created judges that)
        (200, {"id": 5, "name": "Rex", "categoryId": 1, "status": "sold"}, True),  # a Pet with its id in a 200
        (202, {"id": 5, "name": "Rex", "categoryId": 1}, True),
        (200, {"id": 5, "status": "queued"}, False),  # not a Pet: no doubt removed
        (200, {"id": "5", "name": "Rex", "categoryId": 1}, False),
        (201, {"id": True}, False),
        (201, {"id": "5", "name": "Rex", "categoryId": 1}, True),  # its decimal digits: the id a read names
        (201, {"id": "05"}, False),
        (201, {"id": "9223372036854775808"}, False),
        (400, {"id": 5, "name": "Rex", "categoryId": 1}, False),
        (200, [{"id": 5, "name": "Rex", "categoryId": 1}], False),
    ],
)
def test_an_animal_made_is_read_from_any_2xx_that_shows_it(status: int, body: Any, made: bool) -> None:
    assert (expect.animal_made(status, json.dumps(body).encode()) is not None) is made
    assert expect.animal_made(200, b"{not json") is None


# -- an answer that started and never completed: the target's answer, judged --------------------------


def _problem(kind: str) -> TargetProblem:
    exchange = Exchange("POST", "http://127.0.0.1:1/v1/pets", status=401, response_body='{"code": "unau')
    line = "POST http://127.0.0.1:1/v1/pets: the answer ended before its framing did (chunked, without its last chunk)"
    return TargetProblem(line, kind=kind, exchange=exchange)


@pytest.mark.parametrize(("kind", "outcome"), [("incomplete", VIOLATED), ("target", UNDECIDED)])
def test_an_answer_cut_short_violates_the_clause_it_was_asked_for(kind: str, outcome: str) -> None:
    """Inside a judge block and outside one (a generated case's test: its first clause), alike; a problem of
    any other kind (no answer at all) leaves the clause undecided."""
    judge = Judge()
    with judge("auth.missing"):
        raise _problem(kind)
    assert judge.outcomes == {"auth.missing": outcome}

    def generated() -> None:
        raise _problem(kind)

    call = pytest.CallInfo.from_call(generated, "call")
    record = record_of("t::generated", ("auth.missing", "errors.body"), call, _Report(), None)  # type: ignore[arg-type]
    assert record.judged["auth.missing"] == outcome
    if kind == "incomplete":
        (finding,) = record.findings
        assert finding.observed.startswith("HTTP 401 that never completed: the answer ended before its framing")
        assert "RFC 9112 §6.3" in finding.expected and finding.exchange is not None


# -- an Error body is judged where an answer has one (one fault, one clause) ----------------------------


class _Answered:
    """What ``Judge.error_body`` reads of an answer."""

    def __init__(self, status: int, body: Any) -> None:
        self.status, self.body = status, json.dumps(body).encode()
        self.exchange = Exchange("GET", "http://127.0.0.1:1/v1/pets", status=status)
        self.headers: dict[str, str] = {"content-type": "application/json"}


ERROR = {"code": "forbidden", "message": "no", "status": 403}


@pytest.mark.parametrize(
    ("answers", "outcome"),
    [
        ([(403, ERROR)], CONFORMS),  # a refusal with another status than 401 still carries §7's Error body
        ([(403, {"message": "no"})], VIOLATED),
        ([(200, [])], "not_selected"),  # a 2xx carries none: nothing to judge, left to the answers that have one
        ([(200, []), (403, ERROR)], CONFORMS),  # judged on a later answer after all: it conforms
        ([(200, []), (403, {})], VIOLATED),
    ],
)
def test_an_error_body_is_judged_on_the_answers_that_have_one(answers: list[tuple[int, Any]], outcome: str) -> None:
    judge = Judge()
    for status, body in answers:
        judge.error_body(_Answered(status, body))
    assert judge.outcomes == {"errors.body": outcome}
    judged = _ended_on(("errors.body",), dict(judge.examined), nothing=("errors.body",) * (outcome == "not_selected"))
    assert judged["errors.body"] != "undecided"  # a violation elsewhere leaves it decided or to the others
