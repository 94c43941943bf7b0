"""The one answer type (``transport/answers.py``): what every check reads, and its one absence.

An answer the transport's watchers see makes its redacted exchange only when a check reads it, once; its
body is parsed as JSON once for every reader; its header fields keep a repeated name; ``Unanswered``
raises its problem wherever an answer's part is read, and a ``judge`` block makes that undecided.
"""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest
import requests

from petstore_contract.core.records import UNDECIDED, Exchange, Mismatch
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging import expect
from petstore_contract.judging.declaration import Kind
from petstore_contract.transport import TargetProblem
from petstore_contract.transport.answers import Answer, Unanswered, row_from_dict, seen_answer

KEY = "answer-selftest-key-4f2a9c"
REDACT = Redactor(KEY, "PETSTORE_API_KEY")
PET = {"id": 7, "name": "pc-run1-a", "categoryId": 1}


def _request() -> requests.PreparedRequest:
    headers = {"Authorization": f"Bearer {KEY}"}
    return requests.Request("POST", "http://127.0.0.1:1/v1/pets", headers=headers, json=PET).prepare()


def _seen(body: bytes, *fields: tuple[str, str]) -> Answer:
    return seen_answer(REDACT, _request(), 201, (("Content-Type", "application/json"), *fields), body)


def test_a_watchers_answer_makes_its_redacted_exchange_when_first_read_and_once() -> None:
    answer = _seen(json.dumps(PET).encode())
    assert callable(answer.recorded), "no record is made before a check reads it"
    first = answer.exchange
    assert isinstance(answer.recorded, Exchange) and answer.exchange is first
    assert first.method == "POST" and first.status == 201 and first.response_body == json.dumps(PET)
    assert KEY not in json.dumps(first.to_dict())
    assert dict(first.request_headers)["Authorization"] == "Bearer $PETSTORE_API_KEY"


def test_the_body_is_parsed_once_for_every_reader_and_a_test_gets_its_own_copy() -> None:
    answer = _seen(json.dumps(PET).encode())
    shared = answer.json()
    assert shared == PET and answer.json() is shared and expect.parsed(answer) is shared
    own = expect.parse_json(answer)
    assert own == PET and own is not shared


@pytest.mark.parametrize("body", [b"<html>no</html>", b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe"])
def test_a_body_that_is_no_json_raises_for_every_reader(body: bytes) -> None:
    answer = _seen(body)
    for _ in range(2):
        with pytest.raises((ValueError, RecursionError)):
            answer.json()
    with pytest.raises(Mismatch) as caught:
        expect.parsed(answer)
    assert caught.value.expectation == Kind.JSON_BODY and caught.value.exchange is answer.exchange


def test_header_fields_keep_a_repeated_name_and_headers_its_last_value() -> None:
    answer = _seen(b"{}", ("Link", "<a>"), ("link", "<b>"))
    assert [value for name, value in answer.fields if name.lower() == "link"] == ["<a>", "<b>"]
    assert answer.headers["LINK"] == "<b>" and answer.headers["content-type"] == "application/json"
    assert answer.exchange.response_headers == answer.fields


def test_an_answer_crosses_processes_whole_and_its_fields_follow_its_headers() -> None:
    answer = _seen(json.dumps(PET).encode())
    back = row_from_dict(json.loads(json.dumps(answer.to_dict())))
    assert isinstance(back, Answer) and back.status == 201 and back.body == answer.body
    assert back.exchange == answer.exchange and back.json() == PET
    assert back.fields == tuple(back.headers.items()) == (("Content-Type", "application/json"),)


def test_no_answer_raises_its_problem_wherever_an_answer_is_read() -> None:
    missing = Unanswered(TargetProblem("POST /v1/pets: no answer (timed out)"))
    for read in (
        lambda: missing.status,
        lambda: missing.headers,
        lambda: missing.fields,
        lambda: missing.json(),
        lambda: missing.exchange,
        lambda: missing.raw_view(),
    ):
        with pytest.raises(TargetProblem, match="timed out"):
            read()
    judge = expect.Judge()
    with judge(CLAUSE_IDS.create_created):
        expect.status(missing, 201)
    assert judge.outcomes == {CLAUSE_IDS.create_created: UNDECIDED} and not judge.findings


def test_an_answer_is_read_only() -> None:
    answer = _seen(b"{}")
    with pytest.raises(FrozenInstanceError):
        answer.status = 500
