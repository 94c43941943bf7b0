"""The web server's refusal of a framing is HTTP's answer: the ``framing`` rule and the pipeline, as data.

A create without the key in the chunked coding, or behind ``Expect: 100-continue`` (the HTTP layer's
``framing`` group, ``interface/http_layer.toml``), may be refused by the web server in front itself, with
the status HTTP defines for it and whatever body it has: 411 (RFC 9110 §15.5.12) or 501 (RFC 9112 §6.1) to
the chunked coding, 417 to the expectation (RFC 9110 §15.5.18).  Apache httpd with mod_wsgi's default
answers its own HTML 411, which ``ErrorDocument`` cannot replace when the error pages are the application's.
Each row is one answer, judged twice as a run judges it: by the rule (``judging/http_layer.py``, on
``http.framing``) and by the pipeline of every exchange (``judging/pipeline.py``): a refusal of the framing is
accepted by both whatever its body, before or after the key's check; a 401 is still the pipeline's to
judge with its Error body; what would mislead a client (a 2xx, a redirect, a 5xx, another refusal, an answer
cut off, an echo of the request and its key) is the rule's finding.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import requests
from requests.structures import CaseInsensitiveDict

from petstore_contract.core.records import Exchange, Mismatch
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.silence import SILENCES, classify
from petstore_contract.judging import http_layer
from petstore_contract.judging.pipeline import Pipeline
from petstore_contract.transport import Observed
from petstore_contract.transport.answers import Answer, RawView, seen_answer
from tests.test_http_layer import CASES, Case

KEY = "Framing-Key-0123456789"
URL = "http://127.0.0.1:1/v1/pets"
NEW_PET = json.dumps({"name": "pc-run1-framing", "categoryId": 1}).encode()
CHUNKED, EXPECT = CASES["chunked-without-key"], CASES["expect-continue-without-key"]
# The same chunked create with the key: a web server may refuse the framing after the key's check too.
CHUNKED_WITH_KEY = dataclasses.replace(CHUNKED, id="chunked-with-key", key="valid")

HTML = ("text/html; charset=iso-8859-1", b"<html><body><h1>Length Required</h1></body></html>")
ERROR = ("application/json", b'{"code": "x", "message": "y", "status": %d}')
PET = ("application/json", b'{"id": 1, "name": "pc-run1-framing", "categoryId": 1}')
ECHO = ("message/http", b"POST /v1/pets HTTP/1.1\r\nAuthorization: Bearer " + KEY.encode() + b"\r\n\r\n")
EMPTY = ("", b"")

# (case, status, body, complete) -> (what the rule's finding expects, or None: accepted; the pipeline's clauses)
ROWS: list[tuple[Case, int, tuple[str, bytes], bool, str | None, list[str]]] = [
    # the web server's refusal of the framing, in any form, before or after the key's check
    (CHUNKED, 411, HTML, True, None, []),
    (CHUNKED, 411, ERROR, True, None, []),
    (CHUNKED, 411, EMPTY, True, None, []),
    (CHUNKED, 501, HTML, True, None, []),
    (EXPECT, 417, HTML, True, None, []),
    (CHUNKED_WITH_KEY, 411, HTML, True, None, []),
    (CHUNKED_WITH_KEY, 501, HTML, True, None, []),
    # the 401 is the service's answer, judged with its Error body as every 401 is
    (CHUNKED, 401, ERROR, True, None, []),
    (EXPECT, 401, ERROR, True, None, []),
    (CHUNKED, 401, HTML, True, None, ["errors.body"]),
    (EXPECT, 401, HTML, True, None, ["errors.body"]),
    # what misleads a client
    (CHUNKED, 201, PET, True, "never a 2xx", ["auth.missing"]),
    (EXPECT, 200, PET, True, "never a 2xx", ["auth.missing"]),
    (CHUNKED, 302, EMPTY, True, "no redirect", []),  # the pipeline leaves a redirect outside the document alone
    (EXPECT, 308, EMPTY, True, "no redirect", []),
    (CHUNKED, 500, HTML, True, "never a 5xx", ["responses.documented"]),
    (EXPECT, 501, HTML, True, "never a 5xx", ["responses.documented"]),  # 501 is a transfer coding's, not Expect's
    (EXPECT, 411, HTML, True, "417", ["auth.missing"]),  # a Content-Length was sent: 411 is no refusal of it
    (CHUNKED, 417, HTML, True, "411, 501", ["auth.missing"]),  # no expectation was sent
    (CHUNKED, 400, ERROR, True, "411, 501", ["auth.missing"]),  # RFC 9112 §7.1: a recipient MUST parse chunked
    (CHUNKED, 411, HTML, False, "the whole answer", []),  # cut off: the rule's alone, never judged half-read
    (CHUNKED, 401, ERROR, False, "the whole answer", []),
    (CHUNKED, 411, ECHO, True, "no echo of the request", []),
    (CHUNKED_WITH_KEY, 411, ECHO, True, "no echo of the request", []),
]


def _request_headers(case: Case) -> list[tuple[str, str]]:
    headers = [("Accept", "application/json"), ("Content-Type", "application/json")]
    headers += [("Authorization", f"Bearer {KEY}")] if case.key == "valid" else []
    if case.chunked:
        return [*headers, ("Transfer-Encoding", "chunked")]
    return [*headers, ("Content-Length", str(len(NEW_PET))), ("Expect", "100-continue")]


def _answer_headers(status: int, media: str) -> list[tuple[str, str]]:
    headers = [("Content-Type", media)] if media else []
    headers += [("WWW-Authenticate", 'Bearer realm="petstore"')] if status == 401 else []
    return headers + ([("Location", "http://127.0.0.1:1/v1/pets/")] if 300 <= status < 400 else [])


def _raw(case: Case, status: int, body: tuple[str, bytes], complete: bool) -> Answer:
    media, content = body[0], body[1].replace(b"%d", str(status).encode())
    pairs = _answer_headers(status, media)
    problem = "" if complete else "the answer ended before its framing did (chunked, without its last chunk)"
    shown = [(k, v.replace(KEY, "$PETSTORE_API_KEY")) for k, v in _request_headers(case)]
    exchange = Exchange(
        "POST", URL, tuple(shown), NEW_PET.decode(), status, tuple(pairs), content.decode(), len(content)
    )
    return Answer(status, CaseInsensitiveDict(dict(pairs)), content, exchange, RawView(content, complete, problem))


def _seen(case: Case, answer: Answer) -> Observed:
    """The same exchange as the pipeline reads it (``transport/raw.py``: Content-Length left out of the view)."""
    request = requests.PreparedRequest()
    request.method, request.url, request.body = "POST", URL, NEW_PET
    request.headers = CaseInsensitiveDict({k: v for k, v in _request_headers(case) if k.lower() != "content-length"})
    seen = seen_answer(Redactor(KEY, "PETSTORE_API_KEY"), request, answer.status, answer.fields, answer.body)
    return Observed(request, 0.0, 0.0, answer=seen, problem=answer.raw_view().problem)


def _pipeline(seen: Observed) -> list[str]:
    pipeline = Pipeline(KEY, Redactor(KEY, "PETSTORE_API_KEY"), "run1")
    pipeline(seen)
    return sorted(finding.clause for finding in pipeline.findings)


def _label(value: Any) -> str:
    if isinstance(value, Case):
        return value.id
    if isinstance(value, tuple):
        return value[0].split(";")[0] or "empty"
    return str(value)


@pytest.mark.parametrize(("case", "status", "body", "complete", "refused", "pipeline"), ROWS, ids=_label)
def test_a_refusal_of_the_framing_is_the_web_servers_answer_and_only_what_misleads_is_judged(
    case: Case, status: int, body: tuple[str, bytes], complete: bool, refused: str | None, pipeline: list[str]
) -> None:
    answer = _raw(case, status, body, complete)
    try:
        http_layer.RULES[case.rule](case, answer, KEY)
    except Mismatch as mismatch:
        assert refused is not None, f"{case.id}: HTTP {status} refused: {mismatch.expected} / {mismatch.observed}"
        assert refused in mismatch.expected, mismatch.expected
        assert KEY not in mismatch.expected + mismatch.observed, "the key in a finding"
    else:
        assert refused is None, f"{case.id}: HTTP {status} accepted; expected a finding: {refused}"
    assert _pipeline(_seen(case, answer)) == pipeline


def test_the_rule_and_the_pipeline_read_the_refusals_from_the_one_model() -> None:
    """Each framing case of the HTTP layer falls in the silence that names its refusals: 411 and 501 to the
    chunked coding, 417 to the expectation (``interface/silence.py``), which the rule and the pipeline read."""
    framing = {case.id: case for case in CASES.values() if case.rule == "framing"}
    assert set(framing) == {CHUNKED.id, EXPECT.id}
    wanted = {CHUNKED.id: ("chunked", (411, 501)), EXPECT.id: ("expect-continue", (417,))}
    for key, case in framing.items():
        placed = classify("POST", URL, dict(_request_headers(case)), NEW_PET)
        assert placed.silence is not None and placed.silence is SILENCES[wanted[key][0]], placed.why
        assert placed.silence.framing_refusals == wanted[key][1] and not placed.silence.any_answer
