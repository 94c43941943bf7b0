"""What the web server answers is the service's answer: the HTTP layer in front of the application.

A service is deployed behind Apache httpd, nginx or lighttpd, and what they answer themselves (their
HTML error pages, a TRACE echo, a coding the client did not ask for, a body limit before the key's
check, an answer cut off because a body was refused unread) reaches the client as the service's.  The
requests here are those a client may send inside the base URL that ``requests`` does not send as they
are (any method, the request-target as written, no ``Accept-Encoding`` or ``identity``, chunked bodies,
``Expect: 100-continue``, bodies of several MiB): a table of cases (``interface/http_layer.toml``), each
group judged by its rule (``judging/http_layer.py``) on its clause, and by the pipeline of every exchange.

They are sent once per run on sockets of their own (``transport/raw.py``), under the run's guard.  The
requests that carry a body go without the key (§5.3: they are refused, and nothing is written); in a
read-only run they are not sent.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import pytest

from petstore_contract.interface.clauses import ClauseId, clause_id
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.judging import http_layer
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.setup import Seeded
from petstore_contract.transport import TargetProblem
from petstore_contract.transport.answers import Row, Unanswered, row_from_dict
from petstore_contract.transport.raw import RawRequest, RawSender

SET_UP_WRITES = ()
LONG = 9000  # past RFC 9110 §4.1's 8000 octets and Apache httpd's 8190-byte request line
CHUNK = 16


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    target: str
    rule: str
    clause: ClauseId
    key: str = "valid"
    accept_encoding: str = "identity"
    body: str = ""
    size: int = 0
    chunked: bool = False
    expect_continue: bool = False
    writes: bool = False


def _cases() -> dict[str, Case]:
    table = tomllib.loads(files("petstore_contract.interface").joinpath("http_layer.toml").read_text("utf-8"))
    cases = {}
    for group in table["groups"]:
        for row in group["cases"]:
            case = Case(rule=group["rule"], clause=clause_id(group["clause"]), **row)
            cases[case.id] = case
    return cases


CASES = _cases()


def _body(run: Run, case: Case) -> bytes | None:
    if case.size:
        pad = case.size - len(json.dumps({"name": "", "categoryId": 1}))
        return json.dumps({"name": run.name("large") + "a" * pad, "categoryId": 1})[: case.size].encode()
    if case.body == "new-pet":
        return json.dumps({"name": run.name("framing"), "categoryId": 1}).encode()
    return case.body.encode() if case.body else None


def request_of(run: Run, case: Case) -> RawRequest:
    headers = [("Accept", "application/json")]
    if case.key == "valid":
        headers.append(("Authorization", f"Bearer {run.api.api_key}"))
    if case.accept_encoding:
        headers.append(("Accept-Encoding", case.accept_encoding))
    body = _body(run, case)
    if body is not None:
        headers.append(("Content-Type", "application/json"))
    target = case.target.replace("{long}", "9" * LONG)
    if case.chunked and body is not None:
        pieces = tuple(body[i : i + CHUNK] for i in range(0, len(body), CHUNK))
        return RawRequest(case.method, target, tuple(headers), chunks=pieces)
    return RawRequest(case.method, target, tuple(headers), body, expect_continue=case.expect_continue)


def _send(sender: RawSender, run: Run, case: Case) -> JsonObject:
    try:
        answer = sender.send(
            request_of(run, case), no_answer_is_an_answer=case.rule in http_layer.ANSWERED_BY_THE_WEB_SERVER
        )
    except TargetProblem as problem:
        return Unanswered(problem).to_dict()
    return answer.to_dict()  # with its raw bytes view, for the run's processes to share


@sent_ahead("http_layer")
def _http_layer(run: Run, seeded: Seeded) -> dict[str, Row]:
    def send() -> dict[str, JsonObject]:
        sender = RawSender(run.api.transport.adapter)
        chosen = [case for case in CASES.values() if not (case.writes and run.read_only)]
        # The large bodies one at a time (at most one of them in memory), the rest side by side.
        small = [case for case in chosen if not case.size]
        answers = dict(zip([c.id for c in small], run.api.map(lambda c: _send(sender, run, c), small), strict=True))
        answers.update({case.id: _send(sender, run, case) for case in chosen if case.size})
        # What the reports say was sent (``coverage_line``): requests, kinds, and the bytes of the large bodies;
        # a request the run held back (breaker open, budget spent) carries no exchange, and was not sent.
        sent = [c for c in chosen if "unanswered" not in answers[c.id] or answers[c.id]["exchange"] is not None]
        run.api.transport.guard.note_layer(len(sent), len({c.rule for c in sent}), sum(c.size for c in sent))
        return answers

    return {key: row_from_dict(data) for key, data in run.once("http_layer", send).items()}


@pytest.fixture(scope="module")
def http_answers(run: Run, seeded: Seeded) -> dict[str, Row]:
    return ahead.answers(run, "http_layer", seeded)


def _params() -> list[Any]:
    """Every case of the table, marked with the clause its group names (a ClauseId of the registry, checked
    as the table is read) and, for a write, ``writes``."""
    return [
        pytest.param(case.id, id=case.id, marks=[pytest.mark.clause(case.clause), *[pytest.mark.writes] * case.writes])
        for case in CASES.values()
    ]


def _judge(answers: dict[str, Row], run: Run, judge: Judge, key: str) -> None:
    case = CASES[key]
    row = answers[key]
    with judge(case.clause):
        if isinstance(row, Unanswered):
            mismatch = http_layer.unanswered(case.rule, row.problem)
            if mismatch is not None:
                raise mismatch
            if case.rule not in http_layer.ANSWERED_BY_THE_WEB_SERVER:
                raise row.problem
            return
        http_layer.RULES[case.rule](case, row, run.api.api_key)


@pytest.mark.parametrize("key", _params())
def test_an_answer_of_the_http_layer_keeps_its_groups_rule(http_answers: Any, run: Run, judge: Judge, key: str) -> None:
    _judge(http_answers, run, judge, key)
