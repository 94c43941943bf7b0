"""Schemathesis wiring of the generated tests: schemas, custom checks, and findings on clauses.

Every Schemathesis failure becomes a ``Finding`` on one clause through one explicit table,
keyed by (operation, check, status class); a failure the table does not place lands on the
catch-all clause ``generated.other``.  Schemathesis' own ``ignored_auth`` probes are turned off
(spec/schemathesis.toml): they would bypass the run's transport, and the credential table
(tests/test_auth.py) asks every operation with every refused credential anyway.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import time
from dataclasses import replace
from typing import Any

import schemathesis
from schemathesis import Config, GenerationMode
from schemathesis.errors import FailureGroup

from petstore_contract import headers
from petstore_contract.clauses import CATCH_ALL
from petstore_contract.document import STATUSES
from petstore_contract.record import Exchange, Finding, Violation, cut
from petstore_contract.spec import schemathesis_config_path, spec_path

CURRENT_OPERATIONS = ("listPets", "createPet")  # §9.3: GET /pets is the replacement; POST /pets is not deprecated

# (operationId or "*", failure kind, "2xx" | "4xx" | "*") -> clause.  Most specific key wins.  The
# failure kinds are Schemathesis' failure classes; a header that breaks its schema is "HeaderSchema".
FAILURE_CLAUSES: dict[tuple[str, str, str], str] = {
    ("listPets", "ServerError", "*"): "responses.documented",
    ("listOrders", "ServerError", "*"): "orders.available",
    ("*", "ServerError", "*"): "responses.documented",
    ("*", "ContentTypeServerError", "*"): "responses.documented",
    # An undocumented status where the operation should have succeeded breaks that operation's clause.
    ("listPets", "UndefinedStatusCode", "2xx"): "list.shape",
    ("createPet", "UndefinedStatusCode", "2xx"): "create.created",
    ("getPet", "UndefinedStatusCode", "2xx"): "read.found",
    ("listOrders", "UndefinedStatusCode", "*"): "orders.available",
    ("*", "UndefinedStatusCode", "*"): "responses.documented",
    ("*", "MissingContentType", "*"): "json.content-type",
    ("*", "MalformedMediaType", "*"): "json.content-type",
    ("*", "UndefinedContentType", "*"): "json.content-type",
    ("getPet", "MissingHeaders", "*"): "read.deprecation",
    ("getPet", "HeaderSchema", "*"): "read.deprecation",
    ("*", "MissingHeaders", "*"): "responses.documented",
    ("*", "HeaderSchema", "*"): "responses.documented",
    ("listPets", "JsonSchemaError", "2xx"): "list.shape",
    ("createPet", "JsonSchemaError", "2xx"): "create.created",
    ("getPet", "JsonSchemaError", "2xx"): "read.found",
    ("listOrders", "JsonSchemaError", "2xx"): "orders.available",
    ("*", "JsonSchemaError", "4xx"): "errors.body",
    ("listPets", "MalformedJson", "2xx"): "list.shape",
    ("createPet", "MalformedJson", "2xx"): "create.created",
    ("getPet", "MalformedJson", "2xx"): "read.found",
    ("listOrders", "MalformedJson", "*"): "orders.available",
    ("*", "MalformedJson", "4xx"): "errors.body",
    ("*", "ContentDeserializationError", "2xx"): "responses.documented",
    ("*", "ContentDeserializationError", "4xx"): "errors.body",
    ("createPet", "AcceptedNegativeData", "*"): "create.reject.types",  # refined by the body: see below
    ("getPet", "AcceptedNegativeData", "*"): "read.not-found",  # an id that is no int64 names no animal
    ("*", "AcceptedNegativeData", "*"): "responses.documented",
    ("createPet", "RejectedPositiveData", "*"): "create.created",
    ("listPets", "RejectedPositiveData", "*"): "list.limit.accepted",
    ("getPet", "RejectedPositiveData", "*"): "read.not-found",  # a well-formed id answered neither 200 nor 404
    ("listOrders", "RejectedPositiveData", "*"): "orders.available",
    ("*", "MissingHeaderNotRejected", "*"): "auth.missing",
    ("*", "IgnoredAuth", "*"): "auth.missing",
    ("getPet", "EnsureResourceAvailability", "*"): "read.found",
}


def failure_kind(failure: Any) -> str:
    kind = type(failure).__name__
    if kind == "JsonSchemaError" and (failure.title or "").startswith("Response header"):
        return "HeaderSchema"
    return kind


def clause_for(operation: str, kind: str, status: int | None) -> str:
    status_class = "2xx" if status is not None and status < 400 else "4xx"
    for key in ((operation, kind, status_class), (operation, kind, "*"), ("*", kind, status_class), ("*", kind, "*")):
        if key in FAILURE_CLAUSES:
            return FAILURE_CLAUSES[key]
    return CATCH_ALL


def rejection_clause(body: Any) -> str:
    """Which create.reject.* clause an invalid NewPet that was accepted breaks."""
    if not isinstance(body, dict):
        return "create.reject.json"
    if "name" not in body or "categoryId" not in body:
        return "create.reject.required"
    if "status" in body and body["status"] not in STATUSES:
        return "create.reject.status"
    return "create.reject.types"


# Modules Schemathesis imports on first use while it sends and judges a case (seen with an audit
# hook on "import" events off the main thread: selftests/test_import_race.py).  The run sends and
# judges cases on several threads; two threads importing one module of an import cycle at once
# can see it half-initialised ("cannot import name 'check_object_level_authorization'"), so the
# main thread imports them while it loads the schemas, before any case is sent.
LAZY_MODULES = ("schemathesis.specs.openapi.object_authorization", "pyrate_limiter")


def import_lazy_modules() -> None:
    for name in LAZY_MODULES:
        with contextlib.suppress(ImportError):  # a later Schemathesis may have moved it: the self-test says so
            importlib.import_module(name)


def load_schema(mode: GenerationMode, *, seed: int, max_examples: int, read_only: bool) -> Any:
    """The spec as a Schemathesis schema for one generation mode (and what judging it will import)."""
    import_lazy_modules()
    schema = schemathesis.openapi.from_path(spec_path(), config=Config.from_path(schemathesis_config_path()))
    schema.config.seed = seed
    schema.config.generation.update(modes=[mode], max_examples=max_examples, deterministic=False)
    return schema.exclude(method="POST") if read_only else schema


# -- custom checks: what Schemathesis has no built-in check for ------------------------------------


def _finding(clause: str, expected: str, observed: str, expectation: str) -> Violation:
    return Violation(Finding(clause, expected, observed, source="generated", expectation=expectation))


def www_authenticate_on_401(ctx: Any, response: Any, case: Any) -> None:
    """RFC 9110 §11.6.1, RFC 6750 §3: a 401 carries a Bearer challenge."""
    if response.status_code != 401:
        return
    values = response.headers.get("www-authenticate") or []
    if not values:
        raise _finding("auth.challenge", "a WWW-Authenticate header on the 401", "none", "bearer-challenge")
    if "bearer" not in headers.challenge_schemes(values):
        raise _finding("auth.challenge", "a Bearer challenge", f"WWW-Authenticate: {values[0]}", "bearer-challenge")


def deprecation_header(ctx: Any, response: Any, case: Any) -> None:
    """§4.3/§9.3, RFC 9745 §2.1: the deprecated operation's 2xx answers carry Deprecation: @<seconds>, a
    date not in the future; the operations §9.3 names as current (GET /pets, its replacement, and
    POST /pets) carry neither Deprecation nor Sunset."""
    values = response.headers.get("deprecation") or []
    if not case.operation.schema.is_deprecated(case.operation):
        operation = case.operation.definition.raw.get("operationId", "")
        sunset = response.headers.get("sunset") or []
        if operation in CURRENT_OPERATIONS and (values or sunset):
            shown = f"Deprecation: {values[0]}" if values else f"Sunset: {sunset[0]}"
            expected = f"no Deprecation or Sunset on {case.operation.label}"
            raise _finding("deprecation.scope", expected, shown, "deprecation-scope")
        return
    if not 200 <= response.status_code < 300:
        return
    if not values:
        raise _finding("read.deprecation", "a Deprecation header on the 200 answer", "none", "deprecation-header")
    seconds = headers.sf_date_seconds(values[0])
    if seconds is None:
        observed = f"Deprecation: {values[0]}"
        raise _finding("read.deprecation", "Deprecation: @<unix seconds>", observed, "deprecation-header")
    date = (response.headers.get("date") or [None])[0]
    if headers.after_now(seconds, date, time.time()):
        observed = f"Deprecation: {values[0]}"
        raise _finding("read.deprecation", "a Deprecation date not in the future", observed, "deprecation-future")


def error_status_matches(ctx: Any, response: Any, case: Any) -> None:
    """§7: an Error body's status repeats the HTTP status."""
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.content)
    except (ValueError, RecursionError):
        return  # response_schema_conformance reports a body that is not JSON
    if isinstance(body, dict) and "status" in body and body["status"] != response.status_code:
        observed = f"Error status {body['status']!r}"
        raise _finding("errors.body", f"Error status {response.status_code}", observed, "error-body")


CUSTOM_CHECKS = [www_authenticate_on_401, deprecation_header, error_status_matches]


# -- what a case sends ---------------------------------------------------------------------------

TEST_CASE_HEADER = "x-schemathesis-testcaseid"  # a fresh id per case: not part of what is asked


def request_fingerprint(case: Any, base_url: str, headers: dict[str, str]) -> str:
    """A digest of the request ``case.call(base_url=..., headers=...)`` sends, as Schemathesis serialises it
    (excluded headers already removed); a digest, so that the key is never kept in the clear."""
    sent: dict[str, Any] = case.as_transport_kwargs(base_url=base_url, headers=headers)
    on_wire = sent.get("headers", {}).items()
    sent["headers"] = sorted((k.lower(), v) for k, v in on_wire if k.lower() != TEST_CASE_HEADER)
    # Keys keep their order: a body or query with the same members in another order is another request.
    text = json.dumps(sent, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- failures as findings --------------------------------------------------------------------------


def exchange_of(response: Any, redact: Any) -> Exchange:
    """The Schemathesis response (and the request it carries) as a redacted record."""
    request = response.request
    body = request.body
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    content = response.content or b""
    return Exchange(
        method=request.method,
        url=redact(request.url),
        request_headers=tuple((k, redact(v)) for k, v in request.headers.items() if k.lower() != "content-length"),
        request_body=None if text is None else cut(redact(text)),
        status=response.status_code,
        response_headers=tuple((k, redact(v)) for k, values in response.headers.items() for v in values),
        response_body=cut(redact(content.decode("utf-8", "replace"))),
        response_length=len(content),
    )


def findings_of(group: FailureGroup, case: Any, response: Any, redact: Any, valid_auth: str) -> list[Finding]:
    exchange = exchange_of(response, redact) if response is not None else None
    status = response.status_code if response is not None else None
    sent_auth = response.request.headers.get("Authorization") if response is not None else valid_auth
    operation = case.operation.definition.raw.get("operationId", case.operation.label)
    # A request without the valid key that did not get its 401 breaks the credential clause first;
    # a 401 it did get is judged like any other answer (its body, its challenge).
    blamed = _credential_clause(sent_auth, valid_auth) if status != 401 else None
    found: list[Finding] = []
    for failure in group.exceptions:
        found += _failure_findings(failure, blamed or _blamed_clause(failure, operation, case, status), exchange)
    return found


def _credential_clause(sent: str | None, valid: str) -> str | None:
    """A request without the valid key must get 401, whatever else it carries (§5.3): its clause first."""
    if sent is None:
        return "auth.missing"
    return None if sent == valid else "auth.invalid"


def _blamed_clause(failure: Any, operation: str, case: Any, status: int | None) -> str:
    negative = case.meta is not None and case.meta.generation.mode == GenerationMode.NEGATIVE
    kind = failure_kind(failure)
    rejected = status is not None and 400 <= status < 500
    if negative and operation == "createPet" and kind in ("AcceptedNegativeData", "ServerError") and not rejected:
        # Invalid data not answered with a 4xx: the clause of what the body got wrong.
        return rejection_clause(case.body)
    if negative and operation == "listPets" and kind == "ServerError":
        return query_clause(case.query or {})
    return clause_for(operation, kind, status)


def query_clause(query: dict[str, Any]) -> str:
    """Which list clause an invalid query that broke the server judges: the limit's or the status'."""
    limit = str(query.get("limit", "20"))
    if not (limit.isascii() and limit.isdigit() and len(limit) <= 3 and 1 <= int(limit) <= 100):
        return "list.limit.invalid"
    if "status" in query and query["status"] not in STATUSES:
        return "list.status.invalid"
    return "responses.documented"


def _failure_findings(failure: Any, clause: str, exchange: Exchange | None) -> list[Finding]:
    origin = getattr(failure, "exception", None)  # a custom check's own exception (Schemathesis keeps it)
    if isinstance(origin, Violation):
        return [replace(f, exchange=exchange, source="generated") for f in origin.findings]
    observed = " ".join(f"{failure.title}. {failure.message}".split())
    kind = failure_kind(failure)
    expected = f"Schemathesis' {kind} check to hold"
    return [
        Finding(clause, expected, cut(observed, 500), exchange, source="generated", expectation=f"schemathesis:{kind}")
    ]
