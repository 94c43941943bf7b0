"""The model of where the document is silent (``interface/silence.py``) and the pipeline that consults it.

Cases as data: each request kind is placed where the model says (within the document, or which
silence), and each answer to a request outside the document is judged as HTTP decides it: a fitting
4xx with the Error body says nothing, the same with an HTML or text body is ``errors.body``'s, a status
that fits nothing is ``responses.documented``'s, and a refused credential still comes first where the
service itself reads the request.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from typing import Any

import pytest
import requests

from devtools.catalog.fronts import Front, FrontLayer
from devtools.launcher import SuiteRun
from hosted import run_hosted
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.silence import FITTING_4XX, SILENCES, classify
from petstore_contract.judging.pipeline import Pipeline
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.transport import Observed
from petstore_contract.transport.answers import seen_answer
from tests.test_outside import OUTSIDE

KEY = "Silence-Key-0123456789"
BASE = "http://127.0.0.1:1/v1"
NEW_PET = json.dumps({"name": "pc-run1-a", "categoryId": 1}).encode()

# (what is sent) -> the silence it falls in ("" for within the document)
PLACED: list[tuple[str, str, dict[str, str], bytes | None, str]] = [
    ("GET", "/pets?limit=5", {}, None, ""),
    ("GET", "/pets/9223372036854775807", {}, None, ""),
    ("GET", "/store/orders", {"Accept": "application/json, */*;q=0.5"}, None, ""),
    ("POST", "/pets", {"Content-Type": "application/json"}, NEW_PET, ""),
    ("POST", "/pets", {"Content-Type": "application/json; charset=utf-8"}, b"{", ""),
    ("POST", "/pets", {"Content-Type": "text/plain"}, NEW_PET, "media-type"),
    ("POST", "/pets", {}, None, "media-type"),
    ("POST", "/pets", {"Content-Type": "application/json"}, b'{"name": "' + b"x" * 70_000 + b'"}', "too-large"),
    ("GET", "/pets", {"Accept": "text/html"}, None, "accept"),
    ("GET", "/pets", {"Accept": "application/json;q=0"}, None, "accept"),
    ("GET", "/pets/abc", {}, None, "path"),
    ("GET", "/pets/9223372036854775808", {}, None, "path"),
    ("GET", "/pets/", {}, None, "path"),
    ("GET", "/Pets", {}, None, "path"),
    ("GET", "/pets/1/owner", {}, None, "path"),
    ("DELETE", "/pets/1", {}, None, "method"),
    ("TRACE", "/pets", {}, None, "web-server"),
    ("BREW", "/pets", {}, None, "web-server"),
    ("POST", "/pets", {"Transfer-Encoding": "chunked", "Content-Type": "application/json"}, NEW_PET, "chunked"),
    ("POST", "/pets", {"Expect": "100-continue", "Content-Type": "application/json"}, NEW_PET, "expect-continue"),
    ("GET", "/pets/" + "9" * 9000, {}, None, "web-server"),
    ("GET", "/pets/../pets", {}, None, "path"),
    ("GET", "/pets/%zz", {}, None, "target-syntax"),
    ("GET", "/pets/%00", {}, None, "target-syntax"),
    ("GET", "/pets?status=" + "s" * 8100, {}, None, "uri-too-long"),
    ("GET", "/pets", {"X-Padding": "p" * 9000}, None, "headers-too-large"),
]


@pytest.mark.parametrize(("method", "path", "headers", "body", "kind"), PLACED, ids=lambda v: str(v)[:40])
def test_each_request_is_placed_once(
    method: str, path: str, headers: dict[str, str], body: bytes | None, kind: str
) -> None:
    placed = classify(method, BASE + path, headers, body)
    assert (placed.silence.kind if placed.silence else "") == kind, placed.why


@pytest.mark.parametrize("key", OUTSIDE)
def test_every_request_of_the_outside_table_falls_in_its_silence(key: str) -> None:
    row = OUTSIDE[key]
    headers = {"Accept": "application/json", **row.options.get("headers", {})}
    url = requests.Request(row.method, BASE + row.path, params=row.options.get("params")).prepare().url or ""
    data = row.options.get("data")
    if data is not None or key == "new-pet-as-text-plain":
        headers.setdefault("Content-Type", "application/json")
    placed = classify(row.method, url, headers, data or (NEW_PET if key == "new-pet-as-text-plain" else None))
    assert placed.silence is SILENCES[row.kind], placed.why


def test_every_silence_quotes_its_gap_and_its_rfc_and_fits_only_4xx_of_http() -> None:
    for silence in SILENCES.values():
        assert silence.gap.startswith("§") and "RFC" in silence.rfc, silence.kind
        # and 501 to a method not implemented (RFC 9110 §9.1), the one 5xx HTTP names for a request
        assert set(silence.statuses) <= {*FITTING_4XX, 501}, silence.kind


ERROR = {"code": "x", "message": "y", "status": 0}
HTML = "<html><body><h1>Unsupported</h1></body></html>"


def _seen(method: str, path: str, headers: dict[str, str], body: bytes | None, status: int, answer: Any) -> Observed:
    request = requests.Request(method, BASE + path, headers=headers, data=body).prepare()
    if isinstance(answer, dict):
        content, media = json.dumps({**answer, "status": status}).encode(), "application/json"
    else:
        content, media = str(answer).encode(), "text/html"
    extra = {"www-authenticate": 'Bearer realm="x"'} if status == 401 else {}
    fields = (("content-type", media), *extra.items())
    return Observed(
        request, 0.0, 0.0, answer=seen_answer(Redactor(KEY, "PETSTORE_API_KEY"), request, status, fields, content)
    )


def _findings(seen: Observed) -> list[str]:
    pipeline = Pipeline(KEY, Redactor(KEY, "PETSTORE_API_KEY"), "run1")
    pipeline(seen)
    return sorted(finding.clause for finding in pipeline.findings)


VALID = {"Authorization": f"Bearer {KEY}"}
TEXT = {**VALID, "Content-Type": "text/plain"}
# (request, answer) -> the clauses the pipeline finds broken
JUDGED: list[tuple[tuple[str, str, dict[str, str], bytes | None], int, Any, list[str]]] = [
    (("POST", "/pets", TEXT, NEW_PET), 415, ERROR, []),
    (("POST", "/pets", TEXT, NEW_PET), 400, ERROR, []),
    (("POST", "/pets", TEXT, NEW_PET), 415, HTML, ["errors.body"]),
    (("POST", "/pets", TEXT, NEW_PET), 403, ERROR, ["responses.documented"]),
    (("POST", "/pets", VALID, None), 422, ERROR, []),
    # the service itself reads the body: a refused credential still gets its 401 first (§5.3)
    (("POST", "/pets", {"Content-Type": "text/plain"}, NEW_PET), 415, ERROR, ["auth.missing"]),
    (("POST", "/pets", {"Content-Type": "text/plain"}, NEW_PET), 401, ERROR, []),
    (("POST", "/pets", {**VALID, "Content-Type": "application/json"}, b"[" + b"1," * 40_000 + b"1]"), 413, ERROR, []),
    (("POST", "/pets", {"Content-Type": "application/json"}, b"[" + b"1," * 40_000 + b"1]"), 413, ERROR, []),
    (
        ("POST", "/pets", {**VALID, "Content-Type": "application/json"}, b"[" + b"1," * 40_000 + b"1]"),
        413,
        HTML,
        ["errors.body"],
    ),
    (("GET", "/pets", {**VALID, "Accept": "text/html"}, None), 406, ERROR, []),
    # a path that names nothing: a router answers it before the key is read, and no animal is revealed
    (("GET", "/pets/abc", {}, None), 404, ERROR, []),
    (("GET", "/pets/abc", {"Authorization": "Bearer wrong"}, None), 400, ERROR, []),
    (("GET", "/pets/abc", {}, None), 404, "Not Found", ["errors.body"]),
    (("GET", "/pets/abc", {}, None), 200, {"id": 1, "name": "a", "categoryId": 1}, ["auth.missing"]),
    (("GET", "/pets/", VALID, None), 404, ERROR, []),
    (("GET", "/PETS", {}, None), 401, ERROR, []),
]


@pytest.mark.parametrize(("request_", "status", "answer", "clauses"), JUDGED, ids=lambda v: str(v)[:30])
def test_an_answer_outside_the_document_is_judged_as_http_decides(
    request_: tuple[str, str, dict[str, str], bytes | None], status: int, answer: Any, clauses: list[str]
) -> None:
    assert _findings(_seen(*request_, status, answer)) == clauses


# -- a whole run against one server that answers every kind outside the document ---------------------------

EVERY_SILENCE = Front(media_type=415, body_limit=64 * 1024, accept=406, path=404)


def _front_run(style: str) -> SuiteRun:
    key = "silence-" + secrets.token_urlsafe(12)
    app = build_app(key)
    app.add_middleware(FrontLayer, front=dataclasses.replace(EVERY_SILENCE, body=style), api_key=key)
    with BackgroundServer(app) as server:
        return run_hosted(server.base_url, key, "--contract-profile", "quick")


def test_every_fitting_refusal_with_the_error_body_is_conformant_and_with_html_it_is_errors_body() -> None:
    """One compliant server answering a body in another media type 415, a body over 64 KiB 413, an Accept
    without JSON 406 and a path that names nothing 404 before any key is read, each with the Error body:
    conformant.  The same server with HTML pages: not conformant, on errors.body alone."""
    compliant = _front_run("error")
    assert compliant.verdict == "conformant" and compliant.exit_code == 0, compliant.output[-2500:]
    html = _front_run("html")
    assert html.verdict == "not_conformant" and html.violated() == {"errors.body"}, html.output[-2500:]
    refused = {f["exchange"]["status"] for f in html.findings() if f["clause"] == "errors.body" and f["exchange"]}
    assert refused >= {404, 406, 413, 415}, refused
