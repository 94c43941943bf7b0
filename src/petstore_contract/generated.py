"""Schemathesis wiring of the generated tests: schemas, custom checks, and findings on clauses.

Every Schemathesis failure becomes a ``Finding`` on one clause through one explicit table,
keyed by (operation, check, status class); a failure the table does not place lands on the
catch-all clause ``generated.other``.  Schemathesis' own ``ignored_auth`` probes are excluded:
they would bypass the run's transport, and the credential table (tests/test_auth.py) asks
every operation with every refused credential anyway.
"""

from __future__ import annotations

import json
import re
from typing import Any

import schemathesis
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import CustomFailure, Failure, FailureGroup
from schemathesis.specs.openapi.checks import ignored_auth

from petstore_contract.record import Exchange, Finding, Violation, cut
from petstore_contract.spec import schemathesis_config_path, spec_path

SF_DATE = re.compile(r"@-?[0-9]{1,15}")
CATCH_ALL = "generated.other"
STATUSES = ("available", "pending", "sold")

# (operationId or "*", check, "2xx" | "4xx" | "*") -> clause.  Most specific key wins.
FAILURE_CLAUSES: dict[tuple[str, str, str], str] = {
    ("*", "not_a_server_error", "*"): "responses.documented",
    # An undocumented status where the operation should have succeeded breaks that operation's clause.
    ("listPets", "status_code_conformance", "2xx"): "list.shape",
    ("createPet", "status_code_conformance", "2xx"): "create.created",
    ("getPet", "status_code_conformance", "2xx"): "read.found",
    ("listOrders", "status_code_conformance", "*"): "orders.available",
    ("*", "status_code_conformance", "*"): "responses.documented",
    ("*", "content_type_conformance", "*"): "json.content-type",
    ("getPet", "response_headers_conformance", "2xx"): "read.deprecation",
    ("*", "response_headers_conformance", "*"): "responses.documented",
    ("listPets", "response_schema_conformance", "2xx"): "list.shape",
    ("createPet", "response_schema_conformance", "2xx"): "create.created",
    ("getPet", "response_schema_conformance", "2xx"): "read.found",
    ("listOrders", "response_schema_conformance", "2xx"): "orders.available",
    ("*", "response_schema_conformance", "4xx"): "errors.body",
    ("createPet", "negative_data_rejection", "*"): "create.reject.types",  # refined by the body: see below
    ("*", "negative_data_rejection", "*"): "responses.documented",
    ("createPet", "positive_data_acceptance", "*"): "create.created",
    ("listPets", "positive_data_acceptance", "*"): "list.limit.accepted",
    ("getPet", "positive_data_acceptance", "*"): "responses.documented",
    ("listOrders", "positive_data_acceptance", "*"): "orders.available",
    ("*", "missing_required_header", "*"): "auth.missing",
    ("*", "ignored_auth", "*"): "auth.missing",
    ("getPet", "ensure_resource_availability", "*"): "read.found",
}


def clause_for(operation: str, check: str, status: int | None) -> str:
    status_class = "2xx" if status is not None and status < 400 else "4xx"
    for key in (
        (operation, check, status_class),
        (operation, check, "*"),
        ("*", check, status_class),
        ("*", check, "*"),
    ):
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


def load_schema(mode: GenerationMode, *, seed: int, max_examples: int, read_only: bool) -> Any:
    """The spec as a Schemathesis schema for one generation mode."""
    schema = schemathesis.openapi.from_path(
        spec_path(), config=SchemathesisConfig.from_path(schemathesis_config_path())
    )
    schema.config.seed = seed
    schema.config.generation.update(modes=[mode], max_examples=max_examples, deterministic=False)
    if read_only:
        schema = schema.exclude(method="POST")
    return schema


# -- custom checks: what Schemathesis has no built-in check for ------------------------------------


def _finding(clause: str, expected: str, observed: str) -> Violation:
    return Violation(Finding(clause, expected, observed, source="generated"))


def www_authenticate_on_401(ctx: Any, response: Any, case: Any) -> None:
    """RFC 9110 §11.6.1, RFC 6750 §3: a 401 carries a Bearer challenge."""
    if response.status_code != 401:
        return
    values = response.headers.get("www-authenticate") or []
    if not values:
        raise _finding("auth.challenge", "a WWW-Authenticate header on the 401", "none")
    schemes = {part.strip().split(None, 1)[0].lower() for v in values for part in v.split(",") if part.strip()}
    if "bearer" not in schemes:
        raise _finding("auth.challenge", "a Bearer challenge", f"WWW-Authenticate: {values[0]}")


def deprecation_header(ctx: Any, response: Any, case: Any) -> None:
    """§4.3/§9.3, RFC 9745 §2.1: the deprecated operation's 2xx answers carry Deprecation: @<seconds>."""
    if not case.operation.schema.is_deprecated(case.operation) or not 200 <= response.status_code < 300:
        return
    values = response.headers.get("deprecation") or []
    if not values:
        raise _finding("read.deprecation", "a Deprecation header on the 200 answer", "none")
    if not SF_DATE.fullmatch(values[0].strip()):
        raise _finding("read.deprecation", "Deprecation: @<unix seconds>", f"Deprecation: {values[0]}")


def error_status_matches(ctx: Any, response: Any, case: Any) -> None:
    """§7: an Error body's status repeats the HTTP status."""
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        return  # response_schema_conformance reports a body that is not JSON
    if isinstance(body, dict) and "status" in body and body["status"] != response.status_code:
        raise _finding("errors.body", f"Error status {response.status_code}", f"Error status {body['status']!r}")


CUSTOM_CHECKS = [www_authenticate_on_401, deprecation_header, error_status_matches]
EXCLUDED_CHECKS = [ignored_auth]


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


def findings_of(group: FailureGroup, case: Any, response: Any, redact: Any) -> list[Finding]:
    exchange = exchange_of(response, redact) if response is not None else None
    status = response.status_code if response is not None else None
    operation = case.operation.definition.raw.get("operationId", case.operation.label)
    found: list[Finding] = []
    for failure in group.exceptions:
        found += _failure_findings(failure, operation, case, status, exchange)
    return found


def _failure_findings(
    failure: Failure, operation: str, case: Any, status: int | None, exchange: Exchange | None
) -> list[Finding]:
    origin = getattr(failure, "exception", None) if isinstance(failure, CustomFailure) else None
    if isinstance(origin, Violation):
        return [Finding(f.clause, f.expected, f.observed, exchange, source="generated") for f in origin.findings]
    check = failure.checks[0] if failure.checks else type(failure).__name__
    clause = clause_for(operation, check, status)
    if check == "negative_data_rejection" and operation == "createPet":
        clause = rejection_clause(case.body)
    observed = " ".join(f"{failure.title}. {failure.message}".split())
    return [Finding(clause, f"the {check} check to hold", cut(observed, 500), exchange, source="generated")]
