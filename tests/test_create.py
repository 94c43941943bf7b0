"""§4.2 Add an animal: POST /pets with a NewPet (§2), answered 201 with a Pet or 400 with an Error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from petstore_contract import expect
from petstore_contract.client import ContractClient

pytestmark = pytest.mark.writes

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# Valid NewPets: each must come back exactly as sent.
VALID = {
    "available": {"name": "Rex", "categoryId": 1, "status": "available"},
    "pending": {"name": "Tom", "categoryId": 2, "status": "pending"},
    "sold": {"name": "Polly", "categoryId": 3, "status": "sold"},
    "unicode": {"name": "Ŝnuĉjo 🐶 猫 Ωmega", "categoryId": 4, "status": "available"},
    "int64-max": {"name": "Max", "categoryId": INT64_MAX, "status": "pending"},
    "int64-min": {"name": "Min", "categoryId": INT64_MIN, "status": "sold"},
    "zero-category": {"name": "Zero", "categoryId": 0},
    "spaces": {"name": "  Spacey  ", "categoryId": 5, "status": "available"},
    "quotes": {"name": 'O\'Brien "the" <cat> & \\dog', "categoryId": 6},
}

# Names the document puts no constraint on (§2 Gaps): a server may accept them (and then echo
# them exactly) or reject them with a 400 Error.
UNCONSTRAINED_NAMES = {
    "long-300": "L" * 300,
    "long-10000": "N" * 10_000,
    "empty": "",
    "whitespace": "   ",
    "long-unicode": "猫" * 200,
}

# Bodies §4.2/§7 say to reject with 400 and an Error body, grouped by the clause they break.
REJECTED = {
    "create.reject.required": {
        "no-name": {"categoryId": 1},
        "no-categoryId": {"name": "Rex"},
        "empty-object": {},
    },
    "create.reject.types": {
        "categoryId-string": {"name": "Rex", "categoryId": "5"},
        "categoryId-float": {"name": "Rex", "categoryId": 5.5},
        "categoryId-bool": {"name": "Rex", "categoryId": True},
        "categoryId-null": {"name": "Rex", "categoryId": None},
        "categoryId-beyond-int64": {"name": "Rex", "categoryId": INT64_MAX + 1},
        "name-number": {"name": 123, "categoryId": 1},
        "name-bool": {"name": False, "categoryId": 1},
        "name-null": {"name": None, "categoryId": 1},
        "name-array": {"name": ["Rex"], "categoryId": 1},
        "name-object": {"name": {"first": "Rex"}, "categoryId": 1},
    },
    "create.reject.status": {
        "status-unknown": {"name": "Rex", "categoryId": 1, "status": "adopted"},
        "status-case": {"name": "Rex", "categoryId": 1, "status": "Available"},
        "status-null": {"name": "Rex", "categoryId": 1, "status": None},
        "status-number": {"name": "Rex", "categoryId": 1, "status": 1},
    },
}
REJECTED_RAW = {
    "array": "[]",
    "array-of-pet": '[{"name": "Rex", "categoryId": 1}]',
    "string": '"Rex"',
    "number": "42",
    "null": "null",
    "invalid-json": '{"name": "Rex", "categoryId": 1',
    "not-json": "name=Rex&categoryId=1",
    "empty": "",
}


def _rejected_cases() -> list[Any]:
    return [
        pytest.param(body, id=case, marks=pytest.mark.clause(clause))
        for clause, cases in REJECTED.items()
        for case, body in cases.items()
    ]


@pytest.mark.clause("create.created")
@pytest.mark.parametrize("body", VALID.values(), ids=VALID.keys())
def test_valid_new_pet_is_created(api: ContractClient, body: dict[str, Any]) -> None:
    answer = api.post("/pets", json_body=body)
    expect.status(answer, 201)
    expect.json_media_type(answer)
    expect.pet(answer.json(), "the created animal")


@pytest.mark.clause("create.echo")
@pytest.mark.parametrize("body", VALID.values(), ids=VALID.keys())
def test_created_pet_echoes_fields(create_pet: Callable[..., dict[str, Any]], body: dict[str, Any]) -> None:
    pet = create_pet(**body)
    expect.same_fields(body, pet, "the created animal")


@pytest.mark.clause("create.echo")
@pytest.mark.parametrize("name", UNCONSTRAINED_NAMES.values(), ids=UNCONSTRAINED_NAMES.keys())
def test_unconstrained_name_is_echoed_or_rejected(api: ContractClient, name: str) -> None:
    body = {"name": name, "categoryId": 9, "status": "available"}
    answer = api.post("/pets", json_body=body)
    if answer.status == 400:
        expect.error_body(answer, 400)
        return
    expect.status(answer, 201)
    expect.same_fields(body, expect.pet(answer.json(), "the created animal"), "the created animal")


@pytest.mark.clause("create.id")
def test_ids_are_int64_and_unique(create_pet: Callable[..., dict[str, Any]]) -> None:
    ids = [create_pet(name=f"unique-{n}", categoryId=n)["id"] for n in range(6)]
    for pet_id in ids:
        assert type(pet_id) is int and INT64_MIN <= pet_id <= INT64_MAX, f"id {pet_id!r} is not an int64"
    assert len(set(ids)) == len(ids), f"ids were reused: {ids}"


@pytest.mark.clause("create.default-status")
def test_omitted_status_is_absent_or_a_pet_status(api: ContractClient) -> None:
    answer = api.post("/pets", json_body={"name": "NoStatus", "categoryId": 11})
    expect.status(answer, 201)
    pet = answer.json()
    if isinstance(pet, dict) and "status" in pet:
        assert pet["status"] in expect.STATUSES, f"omitted status came back as {pet['status']!r}"
    expect.pet(pet, "the created animal")


@pytest.mark.parametrize("body", _rejected_cases())
def test_invalid_new_pet_is_rejected(api: ContractClient, body: Any) -> None:
    expect.error_body(api.post("/pets", json_body=body), 400)


@pytest.mark.clause("create.reject.json")
@pytest.mark.parametrize("raw", REJECTED_RAW.values(), ids=REJECTED_RAW.keys())
def test_body_that_is_not_a_json_object_is_rejected(api: ContractClient, raw: str) -> None:
    expect.error_body(api.post("/pets", data=raw), 400)
