"""What crosses between xdist processes comes back as the same records: a test's record (on its pytest
report), the pipeline's tally (beside a process's counters), every finding and exchange inside them.

Each record goes through ``to_dict``, JSON text and ``from_dict`` and must come back equal, its enums
as enums; a value of the wrong type is one ``WireError`` naming the field, never a record holding it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from requests.structures import CaseInsensitiveDict

from petstore_contract.core.outcomes import Outcome, Reason, Repeat
from petstore_contract.core.records import Exchange, Finding, Note, TestRecord
from petstore_contract.core.wire import WireError
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging import tally
from petstore_contract.run.api import answers_from_data, answers_to_data
from petstore_contract.transport import Answer, TargetProblem
from petstore_contract.transport.answers import Unanswered

EXCHANGE = Exchange(
    "GET",
    "http://127.0.0.1:1/pets/7?x=%C3%A9",
    (("Authorization", "Bearer $PETSTORE_API_KEY"), ("Accept", "application/json")),
    None,
    404,
    (("Content-Type", "application/json"), ("X-Twice", "a"), ("x-twice", "b")),
    '{"code": 404}',
    13,
    "",
    None,
)
FINDING = Finding(
    CLAUSE_IDS.read_found,
    "HTTP 200",
    "HTTP 404 with {}",
    EXCHANGE,
    test="tests/test_read.py::test_x",
    expectation="status:200",
    repeat=Repeat.REPRODUCED,
    repeat_detail="asked again: 404",
)
RECORD = TestRecord(
    "tests/test_read.py::test_x[é]",
    (CLAUSE_IDS.read_found, CLAUSE_IDS.read_not_found),
    Outcome.VIOLATED,
    {CLAUSE_IDS.read_found: Outcome.VIOLATED, CLAUSE_IDS.read_not_found: Outcome.UNDECIDED},
    [FINDING, Finding(CLAUSE_IDS.read_found, "a JSON body", "not JSON")],
    [Note((CLAUSE_IDS.read_not_found,), Reason.PRECONDITION, "blocked", CLAUSE_IDS.read_found)],
    ["a warning"],
    "",
    {CLAUSE_IDS.read_found: 2},
)


def test_a_test_record_comes_back_as_itself() -> None:
    back = TestRecord.from_dict(json.loads(json.dumps(RECORD.to_dict())))
    assert back == RECORD
    assert type(back.outcome) is Outcome and all(type(o) is Outcome for o in back.judged.values())
    assert type(back.notes[0].kind) is Reason and type(back.findings[0].repeat) is Repeat
    assert back.findings[0].exchange == EXCHANGE


def test_a_finding_and_an_exchange_come_back_as_themselves() -> None:
    assert Finding.from_dict(json.loads(json.dumps(FINDING.to_dict()))) == FINDING
    assert Exchange.from_dict(json.loads(json.dumps(EXCHANGE.to_dict()))) == EXCHANGE


def test_the_pipelines_tallies_merge_into_one(tmp_path: Path) -> None:
    handed = {"id": 7, "at": 1.5, "exchange": EXCHANGE.to_dict()}
    one = tally.Tally(3, 1, (FINDING,), (handed,))
    two = tally.Tally(5, 0, (), ())
    for name, part in (("gw0", one), ("gw1", two)):
        (tmp_path / f"counters-{name}.json").write_text(json.dumps({"requests": 1, "pipeline": part.to_dict()}))
    merged = tally.merge(tmp_path, {})
    assert merged == tally.Tally(8, 1, (FINDING,), (handed,))
    assert tally.merge(None, one.to_dict()) == one


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**RECORD.to_dict(), "outcome": 3}, "outcome"),
        ({**RECORD.to_dict(), "clauses": CLAUSE_IDS.read_found}, "clauses"),
        ({**RECORD.to_dict(), "examined": {CLAUSE_IDS.read_found: "2"}}, CLAUSE_IDS.read_found),
        ({**RECORD.to_dict(), "findings": [{**FINDING.to_dict(), "exchange": {"method": "GET"}}]}, "url"),
        ({**RECORD.to_dict(), "findings": [{**FINDING.to_dict(), "clause": None}]}, "clause"),
    ],
)
def test_a_record_of_another_form_is_one_clear_error(data: dict[str, object], field: str) -> None:
    with pytest.raises(WireError, match=field):
        TestRecord.from_dict(json.loads(json.dumps(data)))


def test_an_unknown_outcome_is_refused() -> None:
    with pytest.raises(ValueError, match="'conforming'"):
        TestRecord.from_dict({**RECORD.to_dict(), "outcome": "conforming"})


def test_a_row_of_a_table_comes_back_answered_or_not() -> None:
    """A table's rows cross as ``answers_to_data``: an answer whole, a row unanswered with its reason."""
    answer = Answer(404, CaseInsensitiveDict({"Content-Type": "application/json"}), b'{"code": 404}', EXCHANGE)
    lost = Unanswered(TargetProblem("GET /pets/7: no answer (reset)", kind="target", exchange=EXCHANGE))
    back = answers_from_data(json.loads(json.dumps(answers_to_data({"a": answer, "b": lost}))))
    got, missing = back["a"], back["b"]
    assert isinstance(got, Answer) and isinstance(missing, Unanswered)
    assert (got.status, dict(got.headers), got.body, got.exchange, got.raw) == (
        404,
        dict(answer.headers),
        answer.body,
        EXCHANGE,
        None,
    )
    assert (missing.problem.message, missing.problem.kind, missing.problem.exchange) == (
        lost.problem.message,
        "target",
        EXCHANGE,
    )
    with pytest.raises(TargetProblem):
        missing.status  # noqa: B018 (reading it is the check)
