"""Schemathesis wiring of the generated tests: schemas, custom checks, and findings on clauses.

Every Schemathesis failure becomes a ``Finding`` on one clause through one explicit table,
keyed by (operation, failure code or check name, status class); a failure the table does not place
lands on the catch-all clause ``generated.other``.  Schemathesis' own ``ignored_auth`` probes are
turned off (spec/schemathesis.toml): they would bypass the run's transport, and the credential table
(tests/test_auth.py) asks every operation with every refused credential anyway.

Why codes and check names, not class names or titles: a failure's ``code`` ("ST108", the class
attribute ``Failure.code``; schemathesis.failure_codes lists them, and Schemathesis promises a code is
never renumbered or reused) and the name of the check that raised it (``response_headers_conformance``,
the name its configuration files and ``--checks`` use) are Schemathesis' stable identities.  A class
name or a title is wording: an upgrade that renames ``JsonSchemaError`` or rewords "Response header
does not conform" would silently send every such finding to ``generated.other``.  The check that
raised a failure is recorded by an ``after_validate`` hook on each schema (``record_checks``).
selftests/test_failure_codes.py fails, naming it, when the installed Schemathesis defines a failure
code or registers a check the table does not place, or no longer defines one the table names.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import threading
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import schemathesis
from schemathesis import CheckResult, Config, GenerationMode, HookContext
from schemathesis.errors import FailureGroup

from petstore_contract.core import replay
from petstore_contract.core.records import BODY_EXCERPT, Exchange, Finding, Violation, cut
from petstore_contract.interface.clauses import CATCH_ALL, CLAUSE_IDS, ClauseId, success_clause
from petstore_contract.interface.document import STATUSES
from petstore_contract.interface.jsontypes import JsonLike
from petstore_contract.interface.silence import Placed, classify
from petstore_contract.interface.spec import operation_ids, schemathesis_config_path, spec_path, success_shown
from petstore_contract.judging import failure_words
from petstore_contract.judging.checks import clause_of
from petstore_contract.judging.coverage import new_pet
from petstore_contract.judging.declaration import Kind

# Schemathesis' failure codes (``Failure.code``), by what they report.
SERVER_ERROR = "ST101"  # a 5xx
CONTENT_TYPE_SERVER_ERROR = "ST102"  # a 5xx to a request whose Content-Type is malformed or not declared
UNDEFINED_STATUS = "ST103"  # a status the operation does not document
MISSING_CONTENT_TYPE = "ST104"
UNDEFINED_CONTENT_TYPE = "ST105"
MALFORMED_MEDIA_TYPE = "ST106"
MISSING_HEADERS = "ST107"  # a required response header absent
SCHEMA_VIOLATION = "ST108"  # a body, or a header (response_headers_conformance), that breaks its schema
MALFORMED_JSON = "ST109"
UNDESERIALIZABLE = "ST110"  # a body that cannot be decoded as its media type
DISCRIMINATOR_MISMATCH = "ST111"
RESPONSE_TIME = "ST112"  # max_response_time: not configured
GRAPHQL_CODES = ("ST113", "ST114", "ST115", "ST206")  # GraphQL targets only
ACCEPTED_NEGATIVE = "ST201"  # invalid data not rejected
REJECTED_POSITIVE = "ST202"  # valid data rejected
MISSING_HEADER_ACCEPTED = "ST203"  # a request without a required header (Authorization) not rejected
UNSUPPORTED_METHOD = "ST204"  # off in spec/schemathesis.toml (§4.4: other methods are not shown)
ALLOW_HEADER = "ST205"
USE_AFTER_FREE = "ST301"  # the spec has no DELETE
RESOURCE_UNAVAILABLE = "ST302"  # a created resource not found by the link that reads it
IGNORED_AUTH = "ST401"  # off in spec/schemathesis.toml (see above)
OBJECT_AUTHORIZATION = "ST402"
CUSTOM = "ST901"  # a custom check's failure; the suite's own checks carry their clause (_failure_findings)

# A header that breaks its schema: the schema-violation code as the header check raises it.
HEADER_SCHEMA = f"{SCHEMA_VIOLATION}@response_headers_conformance"


def _per_operation() -> dict[tuple[str, str, str], ClauseId]:
    """The rows derived from the interface's two sources: an undocumented status, a body that breaks its
    schema or is no JSON, on a success answer, break the operation's success clause (clauses.toml's
    ``operation``); a 5xx, and on an operation whose success the document shows no shape for (GET
    /store/orders) any answer of an undocumented status or no JSON, lands where the check registry
    places a 5xx (``checks.clause_of``)."""
    rows: dict[tuple[str, str, str], ClauseId] = {}
    for operation in operation_ids():
        success = success_clause(operation)
        if success is None:
            continue
        for code in (UNDEFINED_STATUS, SCHEMA_VIOLATION, MALFORMED_JSON):
            rows[(operation, code, "2xx")] = success
            if code != SCHEMA_VIOLATION and not success_shown(operation):  # an Error's schema stays errors.body's
                rows[(operation, code, "*")] = success
        server_error = clause_of(Kind.NO_SERVER_ERROR, operation, 500)
        if server_error is not None and server_error != CLAUSE_IDS.responses_documented:
            rows[(operation, SERVER_ERROR, "*")] = server_error
    return rows


# (operationId or "*", kind, "2xx" | "4xx" | "*") -> clause.  A kind is a failure code, a code as one
# check raises it ("<code>@<check>"), or a check name (for a code this table does not name: a code
# a later Schemathesis adds lands on its check's clause).  The code raised by the check comes first,
# then the code, then the check; within each, the most specific key wins; generated.other last.
_FIXED_CLAUSES: dict[tuple[str, str, str], ClauseId] = {
    ("*", SERVER_ERROR, "*"): CLAUSE_IDS.responses_documented,
    ("*", CONTENT_TYPE_SERVER_ERROR, "*"): CLAUSE_IDS.responses_documented,
    ("*", UNDEFINED_STATUS, "*"): CLAUSE_IDS.responses_documented,
    ("*", MISSING_CONTENT_TYPE, "*"): CLAUSE_IDS.json_content_type,
    ("*", MALFORMED_MEDIA_TYPE, "*"): CLAUSE_IDS.json_content_type,
    ("*", UNDEFINED_CONTENT_TYPE, "*"): CLAUSE_IDS.json_content_type,
    ("getPet", MISSING_HEADERS, "*"): CLAUSE_IDS.read_deprecation,
    ("getPet", HEADER_SCHEMA, "*"): CLAUSE_IDS.read_deprecation,
    ("*", MISSING_HEADERS, "*"): CLAUSE_IDS.responses_documented,
    ("*", HEADER_SCHEMA, "*"): CLAUSE_IDS.responses_documented,
    ("*", SCHEMA_VIOLATION, "4xx"): CLAUSE_IDS.errors_body,
    ("*", MALFORMED_JSON, "4xx"): CLAUSE_IDS.errors_body,
    ("*", UNDESERIALIZABLE, "2xx"): CLAUSE_IDS.responses_documented,
    ("*", UNDESERIALIZABLE, "4xx"): CLAUSE_IDS.errors_body,
    ("createPet", ACCEPTED_NEGATIVE, "*"): CLAUSE_IDS.create_reject_types,  # refined by the body: see below
    ("getPet", ACCEPTED_NEGATIVE, "*"): CLAUSE_IDS.read_not_found,  # an id that is no int64 names no animal
    ("*", ACCEPTED_NEGATIVE, "*"): CLAUSE_IDS.responses_documented,
    ("createPet", REJECTED_POSITIVE, "*"): CLAUSE_IDS.create_created,
    ("listPets", REJECTED_POSITIVE, "*"): CLAUSE_IDS.list_limit_accepted,
    ("getPet", REJECTED_POSITIVE, "*"): CLAUSE_IDS.read_not_found,  # a well-formed id answered neither 200 nor 404
    ("listOrders", REJECTED_POSITIVE, "*"): CLAUSE_IDS.orders_available,
    ("*", MISSING_HEADER_ACCEPTED, "*"): CLAUSE_IDS.auth_missing,
    ("*", IGNORED_AUTH, "*"): CLAUSE_IDS.auth_missing,
    ("getPet", RESOURCE_UNAVAILABLE, "*"): CLAUSE_IDS.read_found,
    # Known kinds no clause of the document is more specific for (or not raised against this spec).
    ("*", DISCRIMINATOR_MISMATCH, "*"): CATCH_ALL,  # the spec has no discriminator
    ("*", RESPONSE_TIME, "*"): CATCH_ALL,
    **{("*", code, "*"): CATCH_ALL for code in GRAPHQL_CODES},
    ("*", UNSUPPORTED_METHOD, "*"): CATCH_ALL,
    ("*", ALLOW_HEADER, "*"): CATCH_ALL,
    ("*", USE_AFTER_FREE, "*"): CATCH_ALL,
    ("*", OBJECT_AUTHORIZATION, "*"): CATCH_ALL,
    ("*", CUSTOM, "*"): CATCH_ALL,  # another check's AssertionError (the suite's own carry a clause)
    # Checks: where a code the table does not name lands (one a later Schemathesis adds, or a code
    # above on an operation or status its rows leave out).
    ("*", "not_a_server_error", "*"): CLAUSE_IDS.responses_documented,
    ("*", "status_code_conformance", "*"): CLAUSE_IDS.responses_documented,
    ("*", "content_type_conformance", "*"): CLAUSE_IDS.json_content_type,
    ("*", "response_headers_conformance", "*"): CLAUSE_IDS.responses_documented,
    ("*", "response_schema_conformance", "*"): CATCH_ALL,
    ("*", "negative_data_rejection", "*"): CLAUSE_IDS.responses_documented,
    ("*", "positive_data_acceptance", "*"): CATCH_ALL,
    ("*", "missing_required_header", "*"): CLAUSE_IDS.auth_missing,
    ("*", "ignored_auth", "*"): CLAUSE_IDS.auth_missing,
    ("*", "unsupported_method", "*"): CATCH_ALL,
    ("*", "allow_header_conformance", "*"): CATCH_ALL,
    ("*", "use_after_free", "*"): CATCH_ALL,
    ("*", "ensure_resource_availability", "*"): CATCH_ALL,
    ("*", "object_level_authorization", "*"): CATCH_ALL,
    ("*", "max_response_time", "*"): CATCH_ALL,
}


@functools.cache
def failure_clauses() -> dict[tuple[str, str, str], ClauseId]:
    """The whole table: the rows derived from the spec, then the fixed ones.  Built on first use, not at
    import: the plugin imports this module before the spec is read, and a spec that does not load must
    surface as the generated tests' collection error, not as a plugin that cannot be imported."""
    return {**_per_operation(), **_FIXED_CLAUSES}


# Labels of findings (``Finding.expectation``, "schemathesis:<label>", part of a finding's signature
# and so of waivers and compare): Schemathesis' class name, as before codes placed findings; shown,
# never matched.  A header that breaks its schema is "HeaderSchema".
HEADER_SCHEMA_LABEL = "HeaderSchema"


def clause_for(operation: str, code: str, status: int | None, check: str | None = None) -> ClauseId:
    """The clause of a failure with this code, raised by this check (when known), on an answer of this status."""
    status_class = "2xx" if status is not None and status < 400 else "4xx"
    kinds = [f"{code}@{check}", code, check] if check else [code]
    scopes = ((operation, status_class), (operation, "*"), ("*", status_class), ("*", "*"))
    keys = ((where, kind, answered) for kind in kinds for where, answered in scopes)
    table = failure_clauses()
    return next((table[key] for key in keys if key in table), CATCH_ALL)


# The check that raised each failure of this thread's last validation (Schemathesis' FailureGroup
# carries the failures only).  Checks run, and the hook is called, on the thread that validates.
_raised = threading.local()


def record_checks(context: HookContext, case: Any, response: Any, results: list[CheckResult]) -> None:
    """``after_validate`` hook of each schema: which check raised which failure."""
    _raised.by = [(result.failure, result.name) for result in results if result.failure is not None]


def check_of(failure: Any) -> str | None:
    """The check that raised ``failure`` in this thread's last validation; else the only check that reports its code."""
    for seen, name in getattr(_raised, "by", ()):
        if seen is failure:
            return str(name)
    checks: tuple[str, ...] = getattr(type(failure), "checks", ())
    return checks[0] if len(checks) == 1 else None


def rejection_clause(body: Any) -> ClauseId:
    """Which create.reject.* clause an invalid NewPet that was accepted breaks."""
    if not isinstance(body, dict):
        return CLAUSE_IDS.create_reject_json
    if "name" not in body or "categoryId" not in body:
        return CLAUSE_IDS.create_reject_required
    if "status" in body and body["status"] not in STATUSES:
        return CLAUSE_IDS.create_reject_status
    return CLAUSE_IDS.create_reject_types


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
    """The spec as a Schemathesis schema for one generation mode (and what judging it will import); its
    validations record which check raised each failure (``record_checks``)."""
    import_lazy_modules()
    schema: Any = schemathesis.openapi.from_path(spec_path(), config=Config.from_path(schemathesis_config_path()))
    schema.config.seed = seed
    schema.config.generation.update(modes=[mode], max_examples=max_examples, deterministic=False)
    schema = schema.exclude(method="POST") if read_only else schema
    schema.hook("after_validate")(record_checks)
    return schema


# -- what a case sends ---------------------------------------------------------------------------

TEST_CASE_HEADER = "x-schemathesis-testcaseid"  # a fresh id per case: not part of what is asked


def request_fingerprint(case: Any, base_url: str, headers: dict[str, str]) -> str:
    """A digest of the request ``case.call(base_url=..., headers=...)`` sends, as Schemathesis serialises it
    (excluded headers already removed); a digest, so that the key is never kept in the clear."""
    sent: dict[str, object] = dict(case.as_transport_kwargs(base_url=base_url, headers=headers))
    given = sent.get("headers")
    on_wire = given.items() if isinstance(given, Mapping) else ()
    sent["headers"] = sorted((k.lower(), v) for k, v in on_wire if k.lower() != TEST_CASE_HEADER)
    # Keys keep their order: a body or query with the same members in another order is another request.
    text = json.dumps(sent, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- failures as findings --------------------------------------------------------------------------


def exchange_of(response: Any, redact: Any) -> Exchange:
    """The Schemathesis response (and the request it carries) as a redacted record."""
    request = response.request
    text, exact = replay.recorded_body(request.body, redact)
    content = response.content or b""
    return Exchange(
        method=request.method,
        url=redact(request.url),
        request_headers=tuple((k, redact(v)) for k, v in request.headers.items() if k.lower() != "content-length"),
        request_body=None if text is None else cut(text),
        request_body_base64=exact if text is not None and len(text) <= BODY_EXCERPT else None,
        status=response.status_code,
        response_headers=tuple((k, redact(v)) for k, values in response.headers.items() for v in values),
        response_body=cut(redact(content.decode("utf-8", "replace"))),
        response_length=len(content),
    )


# Failures that judge a status against the operation's Responses table (or the generation mode's
# expectation): outside the document HTTP decides the status instead (``interface/silence.py``).
STATUS_CODES = (UNDEFINED_STATUS, ACCEPTED_NEGATIVE, REJECTED_POSITIVE)


def findings_of(group: FailureGroup, case: Any, response: Any, redact: Any, valid_auth: str) -> list[Finding]:
    exchange = exchange_of(response, redact) if response is not None else None
    status = response.status_code if response is not None else None
    sent_auth = response.request.headers.get("Authorization") if response is not None else valid_auth
    operation = case.operation.definition.raw.get("operationId", case.operation.label)
    failures = list(group.exceptions)
    if response is not None and status is not None:
        request = response.request
        placed = classify(request.method, request.url, request.headers, request.body)
        failures = [f for f in failures if not _decided_by_http(f, placed, request, status, sent_auth == valid_auth)]
        if placed.silence is not None and not placed.credential_first and placed.fits(status):
            sent_auth = valid_auth  # a fitting refusal of a request no operation reads: its credential is not judged
    # A request without the valid key that did not get its 401 breaks the credential clause first;
    # a 401 it did get is judged like any other answer (its body, its challenge).
    blamed = _credential_clause(sent_auth, valid_auth) if status != 401 else None
    found: list[Finding] = []
    for failure in failures:
        found += _failure_findings(failure, blamed or _blamed_clause(failure, operation, case, status), exchange)
    return found


def _decided_by_http(failure: Any, placed: Placed, request: Any, status: int, valid_key: bool) -> bool:
    """A failure of Schemathesis' checks on an answer HTTP allows to a request outside the document.

    Those checks hold the answer against the operation's Responses table (its statuses, media types
    and schemas, what a request missing its credential or carrying invalid data gets); outside the
    document HTTP decides instead.  A fitting 4xx is judged by the pipeline (its Error body, §7) and by
    the suite's own checks (``custom_checks``, kept); a 2xx that served a NewPet sent in another media
    type is created as the document says (§4.2).  A refused credential still gets its 401 first where
    the service itself reads the request (``Silence.credential_first``)."""
    if placed.silence is None or isinstance(getattr(failure, "exception", None), Violation):
        return False
    if 200 <= status < 300:
        return (
            failure.code in STATUS_CODES and valid_key and placed.silence.kind == "media-type" and new_pet(request.body)
        )
    if placed.credential_first and not valid_key:
        return False
    return placed.fits(status)


def _credential_clause(sent: str | None, valid: str) -> ClauseId | None:
    """A request without the valid key must get 401, whatever else it carries (§5.3): its clause first."""
    if sent is None:
        return CLAUSE_IDS.auth_missing
    return None if sent == valid else CLAUSE_IDS.auth_invalid


def _blamed_clause(failure: Any, operation: str, case: Any, status: int | None) -> ClauseId:
    negative = case.meta is not None and case.meta.generation.mode == GenerationMode.NEGATIVE
    code = failure.code
    rejected = status is not None and 400 <= status < 500
    if negative and operation == "createPet" and code in (ACCEPTED_NEGATIVE, SERVER_ERROR) and not rejected:
        # Invalid data not answered with a 4xx: the clause of what the body got wrong.
        return rejection_clause(case.body)
    if negative and operation == "listPets" and code == SERVER_ERROR:
        return query_clause(case.query or {})
    return clause_for(operation, code, status, check_of(failure))


def query_clause(query: Mapping[str, JsonLike]) -> ClauseId:
    """Which list clause an invalid query that broke the server judges: the limit's or the status'."""
    limit = str(query.get("limit", "20"))
    if not (limit.isascii() and limit.isdigit() and len(limit) <= 3 and 1 <= int(limit) <= 100):
        return CLAUSE_IDS.list_limit_invalid
    if "status" in query and query["status"] not in STATUSES:
        return CLAUSE_IDS.list_status_invalid
    return CLAUSE_IDS.responses_documented


def _failure_findings(failure: Any, clause: ClauseId, exchange: Exchange | None) -> list[Finding]:
    origin = getattr(failure, "exception", None)  # a custom check's own exception (Schemathesis keeps it)
    if isinstance(origin, Violation):
        return [replace(f, exchange=exchange, source="generated") for f in origin.findings]
    # In the document's words (``failure_words``); the check's name only in the expectation (the signature).
    status = exchange.status if exchange is not None else None
    method, url = (exchange.method, exchange.url) if exchange is not None else ("", "")
    code, title = str(failure.code), str(failure.title)
    expected = failure_words.expected(code, method, url, status, title)
    observed = failure_words.observed(code, status, title, failure.message)
    kind = Kind.SCHEMATHESIS.expectation(failure_label(failure))
    return [Finding(clause, expected, observed, exchange, source="generated", expectation=kind)]


def failure_label(failure: Any) -> str:
    """How a finding names its failure (``HEADER_SCHEMA_LABEL``): shown and kept in signatures, never matched."""
    if f"{failure.code}@{check_of(failure)}" == HEADER_SCHEMA:
        return HEADER_SCHEMA_LABEL
    return type(failure).__name__
