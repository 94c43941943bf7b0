"""Property-based tests generated from spec/openapi.yaml (Schemathesis): one pytest item per operation.

Positive data: every answer conforms to the spec (status, content type, body, headers), no
5xx, authentication never ignored, plus the custom checks (Bearer challenge, Deprecation,
Error status).  Negative data: POST /pets must reject invalid bodies with a 400 Error; for
query values the document leaves open (clamp or reject), only "no 5xx, conformant body".
"""

from __future__ import annotations

from typing import Any

import pytest
from schemathesis import GenerationMode

from petstore_contract.generated import CUSTOM_CHECKS, call_kwargs, load_schema

positive = load_schema(GenerationMode.POSITIVE)
negative = load_schema(GenerationMode.NEGATIVE)

GENERATED_CLAUSES = pytest.mark.clause(
    "responses.documented", "json.content-type", "auth.missing", "auth.challenge", "errors.body", "read.deprecation"
)


@pytest.mark.generated
@GENERATED_CLAUSES
@positive.parametrize()
def test_valid_requests_get_conformant_answers(
    case: Any, base_url: str, api_headers: dict[str, str], request_timeout: float
) -> None:
    case.call_and_validate(**call_kwargs(base_url, api_headers, request_timeout), additional_checks=CUSTOM_CHECKS)


@pytest.mark.generated
@GENERATED_CLAUSES
@pytest.mark.clause("create.reject.types", "create.reject.required", "create.reject.status")
@negative.parametrize()
def test_invalid_requests_are_rejected_or_harmless(
    case: Any, base_url: str, api_headers: dict[str, str], request_timeout: float
) -> None:
    case.call_and_validate(**call_kwargs(base_url, api_headers, request_timeout), additional_checks=CUSTOM_CHECKS)
