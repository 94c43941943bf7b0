"""Schemathesis wiring of the generated tests: schemas per mode, custom checks, call arguments.

The checks below cover what Schemathesis has no built-in check for; they run on generated
traffic (including Schemathesis' own no-auth probes) as well as in the stateful tests.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import schemathesis
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from petstore_contract import guard, profiles
from petstore_contract.spec import spec_path

SF_DATE = re.compile(r"@-?[0-9]{1,15}")


def config_path() -> Path:
    return spec_path().with_name("schemathesis.toml")


def load_schema(mode: GenerationMode) -> Any:
    """The spec as a Schemathesis schema for one generation mode, shaped by the run's profile."""
    run = profiles.current()
    schema = schemathesis.openapi.from_path(spec_path(), config=SchemathesisConfig.from_path(config_path()))
    schema.config.seed = run.seed
    schema.config.generation.update(modes=[mode], max_examples=run.profile.max_examples, deterministic=False)
    if run.read_only:
        schema = schema.exclude(method="POST")
    return schema


def www_authenticate_on_401(ctx: Any, response: Any, case: Any) -> None:
    """RFC 9110 §11.6.1, RFC 6750 §3: a 401 carries a Bearer challenge."""
    if response.status_code != 401:
        return
    values = response.headers.get("www-authenticate") or []
    assert values, "401 without a WWW-Authenticate header (RFC 9110 §11.6.1) [auth.challenge]"
    schemes = {part.strip().split(None, 1)[0].lower() for v in values for part in v.split(",") if part.strip()}
    assert "bearer" in schemes, f"WWW-Authenticate {values!r} offers no Bearer challenge (RFC 6750 §3) [auth.challenge]"


def deprecation_header(ctx: Any, response: Any, case: Any) -> None:
    """§4.3/§9.3, RFC 9745 §2.1: the deprecated operation's answers carry Deprecation: @<seconds>."""
    if not case.operation.schema.is_deprecated(case.operation) or not 200 <= response.status_code < 300:
        return
    values = response.headers.get("deprecation") or []
    assert values, "the deprecated GET /pets/{petId} answered without a Deprecation header [read.deprecation]"
    assert SF_DATE.fullmatch(values[0].strip()), (
        f"Deprecation must be an sf-date @<unix seconds>, got {values[0]!r} (RFC 9745 §2.1) [read.deprecation]"
    )


def error_status_matches(ctx: Any, response: Any, case: Any) -> None:
    """§7: an Error body's status repeats the HTTP status."""
    if response.status_code < 400:
        return
    try:
        body = json.loads(response.content)
    except ValueError:
        return  # response_schema_conformance reports a body that is not JSON
    if isinstance(body, dict) and "status" in body:
        assert body["status"] == response.status_code, (
            f"Error body says status {body['status']!r}, the HTTP status is {response.status_code} [errors.body]"
        )


CUSTOM_CHECKS = [www_authenticate_on_401, deprecation_header, error_status_matches]


def call_kwargs(base_url: str, headers: dict[str, str], timeout: float) -> dict[str, Any]:
    """Schemathesis call arguments: the run's guarded session (budget, breaker, body cap, TLS)."""
    session = guard.session()
    return {"base_url": base_url, "headers": headers, "timeout": timeout, "session": session, "verify": session.verify}


# Schemathesis failure codes → the clause of the registry each one breaks.
FAILURE_CLAUSES = {
    "ST101": "responses.documented",  # server error
    "ST102": "responses.documented",
    "ST103": "responses.documented",  # undocumented status code
    "ST104": "json.content-type",
    "ST105": "json.content-type",
    "ST106": "json.content-type",
    "ST107": "responses.documented",  # declared header missing
    "ST108": "responses.documented",
    "ST109": "responses.documented",
    "ST110": "responses.documented",  # body does not match the schema
    "ST111": "responses.documented",
    "ST201": "create.reject.types",  # invalid data accepted
    "ST202": "create.created",  # valid data rejected
    "ST203": "auth.missing",
    "ST401": "auth.missing",  # authentication ignored
}
_TAG = re.compile(r"\[([a-z-]+(?:\.[a-z-]+)+)\]")


def failed_clauses(group: BaseException) -> list[str]:
    """The clauses a Schemathesis FailureGroup breaks, from failure codes and custom-check tags."""
    found: list[str] = []
    for failure in getattr(group, "exceptions", ()):
        tag = _TAG.search(str(failure))
        clause = tag.group(1) if tag else FAILURE_CLAUSES.get(getattr(failure, "code", ""), "")
        if clause and clause not in found:
            found.append(clause)
    return found
