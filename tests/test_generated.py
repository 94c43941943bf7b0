"""Property-based tests generated from spec/openapi.yaml (Schemathesis): one pytest item per operation.

Positive data: every answer conforms to the spec (status, content type, body, headers), no 5xx,
plus the custom checks (Bearer challenge, Deprecation, Error status).  Negative data: POST /pets
must reject invalid bodies with a 400 Error; for query values the document leaves open (clamp or
reject), only "no 5xx, conformant body".  Each failure lands on its clause through the table in
``petstore_contract.judging.generated``.
"""

from __future__ import annotations

from typing import Any

import pytest
from schemathesis import GenerationMode

from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.run import current_run

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): generated cases create and
# read their own animals: none of set-up's.
SET_UP_WRITES = ()

_run = current_run()
positive = _run.cases.schema(GenerationMode.POSITIVE)
negative = _run.cases.schema(GenerationMode.NEGATIVE)

CLAUSES = pytest.mark.clause(
    CLAUSE_IDS.responses_documented, CLAUSE_IDS.json_content_type, CLAUSE_IDS.auth_challenge, CLAUSE_IDS.errors_body
)


@pytest.mark.generated
@pytest.mark.deferred
@CLAUSES
@positive.parametrize()
def test_valid_requests_get_conformant_answers(case: Any) -> None:
    current_run().cases.call_and_judge(case)


@pytest.mark.generated
@pytest.mark.deferred
@CLAUSES
@negative.parametrize()
def test_invalid_requests_are_rejected_or_harmless(case: Any) -> None:
    current_run().cases.call_and_judge(case)
