"""§5.2 The key has one form: ``Authorization: Bearer <API_KEY>``; under any other scheme it is refused.

    "The client sends the API key as a bearer token in the `Authorization` header, in the form
    `Authorization: Bearer <API_KEY>`." (§5.2) "When the key is missing or invalid, the service
    answers 401 with an Error body." (§5.3)

The invariant: the valid key itself, under any scheme but Bearer (in whatever case: RFC 9110 §11.1),
gets 401 on every operation.  Found by mutation testing of the reference: a scheme check that read
``scheme.lower() <= "bearer"`` let the key in under every scheme sorting before Bearer, and the
credential table of ``test_auth.py`` sends the key under ``Token`` (after Bearer) and only a Base64
pair under ``Basic``.  The schemes below lie on both sides of "bearer" in sort order, and one is a
prefix of it and one extends it, so that a check by order, by prefix or by containment fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging import expect
from petstore_contract.judging.expect import Judge
from petstore_contract.run import Run, ahead
from petstore_contract.run.ahead import sent_ahead
from petstore_contract.run.api import Request, send_table
from petstore_contract.run.selection import OWN
from petstore_contract.run.setup import Seeded
from petstore_contract.transport import Answer

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): credentials are tried on an
# animal of the suite's own.
SET_UP_WRITES = (OWN,)

# scheme -> where it sorts against "bearer" (the row id says why it is there)
OTHER_SCHEMES = {
    "basic": "Basic",  # before; a common scheme
    "apikey": "ApiKey",  # before; what many APIs use
    "prefix": "Bear",  # before, and a prefix of Bearer
    "extended": "Bearerx",  # after, and Bearer is its prefix
    "digest": "Digest",  # after; a common scheme
}
OPERATIONS = {"listPets": ("GET", "/pets"), "createPet": ("POST", "/pets"), "getPet": ("GET", "/pets/{own}")}
OPERATIONS["listOrders"] = ("GET", "/store/orders")


def _own_id(seeded: Seeded) -> int:
    pets = seeded.own or seeded.before
    return int(pets[0]["id"]) if pets else 1


@sent_ahead("other_schemes")
def _other_schemes(run: Run, seeded: Seeded) -> dict[str, Answer]:
    table: dict[str, Request] = {}
    for op, (method, path) in OPERATIONS.items():
        if run.read_only and method == "POST":
            continue
        for row, scheme in OTHER_SCHEMES.items():
            options: dict[str, Any] = {"authorization": f"{scheme} {{key}}"}
            if method == "POST":
                options["json_body"] = {"name": run.name("auth-scheme"), "categoryId": 1, "status": "available"}
            table[f"{op}-{row}"] = Request(method, path.replace("{own}", str(_own_id(seeded))), **options)
    return run.once_answers("other_schemes", lambda: send_table(run.api, table))


@pytest.fixture(scope="module")
def other_schemes(run: Run, seeded: Seeded) -> dict[str, Answer]:
    return ahead.answers(run, "other_schemes", seeded)


@pytest.mark.clause(CLAUSE_IDS.auth_invalid)
@pytest.mark.parametrize(
    "row",
    [
        pytest.param(f"{op}-{row}", id=f"{op}-{row}", marks=[pytest.mark.writes] * (method == "POST"))
        for op, (method, _) in OPERATIONS.items()
        for row in OTHER_SCHEMES
    ],
)
def test_key_under_another_scheme_is_refused(other_schemes: dict[str, Answer], judge: Judge, row: str) -> None:
    with judge(CLAUSE_IDS.auth_invalid):
        expect.status(other_schemes[row], 401)
