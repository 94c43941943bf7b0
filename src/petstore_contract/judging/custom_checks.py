"""The generated tests' own checks: what Schemathesis has no built-in check for, each on its clause.

Schemathesis runs them on every generated answer (``case.validate_response(..., additional_checks=
CUSTOM_CHECKS)``, ``run/cases.py``); each raises a ``Violation`` that carries its finding, which
``generated.findings_of`` keeps on its own clause.
"""

from __future__ import annotations

import json
import time
from typing import Any

from petstore_contract.core.records import Finding, Violation
from petstore_contract.interface.clauses import CLAUSE_IDS, ClauseId
from petstore_contract.interface.document import CURRENT_OPERATIONS
from petstore_contract.judging import expect
from petstore_contract.judging.declaration import Kind


def _finding(clause: ClauseId, expected: str, observed: str, expectation: str) -> Violation:
    return Violation(Finding(clause, expected, observed, source="generated", expectation=expectation))


def www_authenticate_on_401(ctx: Any, response: Any, case: Any) -> None:
    """RFC 9110 §11.6.1, RFC 6750 §3: a 401 carries a Bearer challenge."""
    if response.status_code != 401:
        return
    problem = expect.challenge_problem(response.headers.get("www-authenticate"))
    if problem is not None:
        raise _finding(CLAUSE_IDS.auth_challenge, *problem, Kind.BEARER_CHALLENGE)


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
            raise _finding(CLAUSE_IDS.deprecation_scope, expected, shown, Kind.DEPRECATION_SCOPE)
        return
    if not 200 <= response.status_code < 300:
        return
    date = (response.headers.get("date") or [None])[0]
    problem = expect.deprecation_problem(values[0] if values else None, date, time.time())
    if problem is not None:
        raise _finding(CLAUSE_IDS.read_deprecation, *problem)


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
        raise _finding(CLAUSE_IDS.errors_body, f"Error status {response.status_code}", observed, Kind.ERROR_BODY)


CUSTOM_CHECKS = [www_authenticate_on_401, deprecation_header, error_status_matches]
