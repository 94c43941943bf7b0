"""Fixtures of the contract suite: animals to list, create and read, on any target.

The suite never assumes an empty store: it runs against a shared Staging full of other
data.  It finds what it needs by id and only asserts what holds whatever else is there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from petstore_contract import expect
from petstore_contract.client import ContractClient

STATUSES = expect.STATUSES
SEED_TARGET = 101  # one more than the maximum page, so that "never more than 100" can be seen


@dataclass(frozen=True)
class Population:
    """What the store is known to hold at least."""

    at_least: int


@pytest.fixture(scope="session")
def populated(api: ContractClient, read_only: bool) -> Population:
    """At least 101 animals of every status when writes are allowed; what is there otherwise."""
    first_page = api.get("/pets", params={"limit": 100})
    present = len(first_page.json()) if first_page.status == 200 and isinstance(first_page.json(), list) else 0
    if read_only:
        return Population(present)
    created = 0
    for index in range(max(0, SEED_TARGET - present)):
        body = {"name": f"contract-seed-{index}", "categoryId": index, "status": STATUSES[index % 3]}
        # Best effort: a server that fails to create is reported by the create tests, on their
        # clauses; the list tests still run on whatever the store holds.
        created += api.post("/pets", json_body=body).status == 201
    return Population(present + created)


@pytest.fixture(scope="session")
def create_pet(api: ContractClient) -> Callable[..., dict[str, Any]]:
    """POST a NewPet and return the created Pet (201 and a Pet body, else the test fails)."""

    def create(**fields: Any) -> dict[str, Any]:
        body = {"name": "Rex", "categoryId": 1, **fields}
        answer = api.post("/pets", json_body=body)
        expect.status(answer, 201)
        return expect.pet(answer.json(), "the created animal")

    return create


@pytest.fixture(scope="session")
def known_pet(api: ContractClient, read_only: bool, create_pet: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """An animal to read: one the suite created, or in read-only runs, one that is listed."""
    if not read_only:
        return create_pet(name="Biscuit", categoryId=7, status="pending")
    listed = expect.pet_list(api.get("/pets", params={"limit": 1}))
    if not listed:
        pytest.skip("read-only run against an empty store: no animal to read")
    return listed[0]


def unknown_pet_id(api: ContractClient) -> int:
    """An int64 id that no listed animal has (the store may hold anything)."""
    listed = api.get("/pets", params={"limit": 100})
    taken = {p.get("id") for p in listed.json()} if listed.status == 200 and isinstance(listed.json(), list) else set()
    candidate = 2**63 - 1 - 4242
    while candidate in taken:
        candidate -= 1
    return candidate
