"""Stateful sequences (Schemathesis state machine over the spec's links): create → read → list.

Along every hop each field survives exactly and ids are never reused (§2, §4.1-§4.3).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from schemathesis import GenerationMode

from petstore_contract import profiles
from petstore_contract.generated import CUSTOM_CHECKS, call_kwargs, load_schema

FIELDS = ("name", "categoryId", "status")


def _body(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


class RoundTrip:
    """What the sequences have created, to hold later answers against."""

    def __init__(self) -> None:
        self.pets: dict[int, dict[str, Any]] = {}

    def created(self, case: Any, response: Any) -> None:
        pet = _body(response)
        if response.status_code != 201 or not isinstance(pet, dict) or not isinstance(case.body, dict):
            return
        for field in FIELDS:
            if field in case.body:
                assert pet.get(field) == case.body[field], (
                    f"POST /pets sent {field}={case.body[field]!r}, the created Pet says {pet.get(field)!r} "
                    "[stateful.round-trip]"
                )
        pet_id = pet.get("id")
        assert pet_id not in self.pets, f"id {pet_id!r} was handed out twice [stateful.round-trip]"
        self.pets[pet_id] = {f: pet[f] for f in ("id", *FIELDS) if f in pet}

    def read(self, case: Any, response: Any) -> None:
        pet = _body(response)
        pet_id = case.path_parameters.get("petId")
        if response.status_code != 200 or pet_id not in self.pets or not isinstance(pet, dict):
            return
        for field, value in self.pets[pet_id].items():
            assert pet.get(field) == value, (
                f"GET /pets/{pet_id} says {field}={pet.get(field)!r}, it was created with {value!r} "
                "[stateful.round-trip]"
            )

    def listed(self, case: Any, response: Any) -> None:
        items = _body(response)
        if response.status_code != 200 or not isinstance(items, list):
            return
        for item in items:
            known = self.pets.get(item.get("id")) if isinstance(item, dict) else None
            for field, value in (known or {}).items():
                assert item.get(field) == value, (
                    f"GET /pets lists id {item['id']} with {field}={item.get(field)!r}, created with {value!r} "
                    "[stateful.round-trip]"
                )


@pytest.mark.generated
@pytest.mark.writes
@pytest.mark.clause("stateful.round-trip", "create.id", "read.found")
def test_create_read_list_sequences(base_url: str, api_headers: dict[str, str], request_timeout: float) -> None:
    schema = load_schema(GenerationMode.POSITIVE)
    kwargs = call_kwargs(base_url, api_headers, request_timeout)
    seen = RoundTrip()
    hooks = {"POST /pets": seen.created, "GET /pets/{petId}": seen.read, "GET /pets": seen.listed}

    class Sequences(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return kwargs

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            hook = hooks.get(case.operation.label)
            if hook is not None:
                hook(case, response)

        def validate_response(self, response: Any, case: Any, **call: Any) -> None:
            super().validate_response(response, case, additional_checks=CUSTOM_CHECKS, **call)

    profile = profiles.current().profile
    Sequences.run(
        settings=settings(
            max_examples=profile.stateful_examples,
            stateful_step_count=profile.stateful_steps,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            # Shrinking a failing sequence can take minutes; the unshrunk sequence and the
            # failing step's request are enough to replay, and CI time is bounded.
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
        )
    )
