"""The interface document's rules as the reference server applies them: who is let in, which
query values and which NewPet bodies it takes, and how an animal is shown.  Every ``self.variant``
field is a compliant choice where the document is silent; a fault of the catalog that breaks a rule
is a subclass in ``devtools/catalog/faulty/`` overriding the method that decides it (``accepted``,
``limit_in_range``, ``validate_name_type``, ...), installed through ``PetStore``'s ``rules``.
"""

from __future__ import annotations

import hmac
import re
from enum import Enum
from typing import Any, Final, NoReturn, TypeAlias, Union

from petstore_contract.interface.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.reference.variants import Variant

INTEGER = re.compile(r"-?[0-9]{1,20}")


class Absent(Enum):
    """A NewPet without ``status`` on a server with no default: the animal stored has none."""

    ABSENT = "absent"


ABSENT: Final = Absent.ABSENT
# Neither ``JsonValue | Absent`` (the mutation tool takes an annotation's ``|`` for arithmetic) nor a string
# (Hypothesis draws from the string constants of the code it runs: a new one changes the run's requests).
Status: TypeAlias = Union[JsonValue, Absent]  # noqa: UP007
# RFC 9745: an sf-date (2026-01-01T00:00:00Z); RFC 8594: an IMF-fixdate (§9.3: 5 December 2030).
DEPRECATION = "@1767225600"
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"


class BadRequest(Exception):
    """A request to reject with a 4xx Error: 400 unless a variant answers 422 for query values."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Rules:
    """One server's rules: its variant, its key, and its store (for the rules that look at it)."""

    def __init__(self, api_key: str, variant: Variant, pets: dict[int, dict[str, Any]]) -> None:
        self.api_key = api_key
        self.variant = variant
        self.pets = pets  # the server's store itself (shared, not copied)

    def present(self, pet: dict[str, Any]) -> dict[str, Any]:
        """An animal as an answer shows it."""
        out = dict(pet)
        if self.variant.extra_fields:
            out["tags"] = []
            out["createdBy"] = "reference"
        return out

    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        """The headers of every answer of GET /pets/{petId} (``pet_id`` as read; None: no integer), §4.3."""
        return {"Deprecation": DEPRECATION, "Sunset": SUNSET}

    def accepted(self, header: str, operation: str) -> bool:
        """Whether the Authorization ``header`` lets a request to ``operation`` in: the key as a bearer
        token (§5.2), the scheme in any case (RFC 9110 §11.1)."""
        scheme, token = credentials(header)
        return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), self.api_key.encode())

    def parse_limit(self, raw: str | None) -> int:
        if raw is None:
            return 20
        if not INTEGER.fullmatch(raw):
            if self.variant.out_of_range == "clamp":
                return 20
            raise BadRequest("limit must be an integer between 1 and 100", self.variant.invalid_query_status)
        value = int(raw)
        if self.limit_in_range(value):
            return value
        if self.variant.out_of_range == "clamp":
            return min(max(value, 1), 100)
        raise BadRequest(f"limit must be between 1 and 100, got {value}", self.variant.invalid_query_status)

    def limit_in_range(self, value: int) -> bool:
        """Whether ``limit=value`` lies within the document's bounds (§4.1: minimum 1, maximum 100)."""
        return 1 <= value <= 100

    def parse_status_filter(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        if raw in STATUSES:
            return raw
        if self.variant.out_of_range == "clamp":
            return None
        raise BadRequest(f"status must be one of {', '.join(STATUSES)}", self.variant.invalid_query_status)

    def validate_new_pet(self, body: JsonValue) -> JsonObject:
        """The fields a valid NewPet ``body`` stores (§2, §4.2); BadRequest for an invalid one."""
        if not isinstance(body, dict):
            raise BadRequest("request body must be a JSON object")
        pet: JsonObject = {}
        pet["name"] = self.validate_name(body)
        pet["categoryId"] = self.validate_category(body)
        status = self.validate_status(body)
        if status is not ABSENT:
            pet["status"] = status
        unknown = set(body) - {"name", "categoryId", "status"}
        if unknown and self.variant.reject_unknown_fields:
            raise BadRequest(f"unknown fields: {', '.join(sorted(unknown))}")
        return pet

    def validate_name(self, body: JsonObject) -> str:
        name = self.validate_name_type(body)
        if self.variant.reject_angle_brackets and ("<" in name or ">" in name):
            raise BadRequest("name must not contain < or >")
        if self.variant.unique_names and any(p.get("name") == name for p in self.pets.values()):
            raise BadRequest("an animal with that name exists already")
        return name

    def validate_name_type(self, body: JsonObject) -> str:
        if "name" not in body:
            raise BadRequest("name is required")
        name = body["name"]
        if not isinstance(name, str):
            raise BadRequest("name must be a string")
        limit = self.variant.name_max_length
        if limit is not None and len(name) > limit:
            raise BadRequest(f"name must be at most {limit} characters")
        if self.variant.reject_blank_names and not name.strip():
            raise BadRequest("name must not be blank")
        return name

    def validate_category(self, body: JsonObject) -> int:
        if "categoryId" not in body:
            raise BadRequest("categoryId is required")
        value = body["categoryId"]
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadRequest("categoryId must be an integer")
        if not INT64_MIN <= value <= INT64_MAX:
            raise BadRequest("categoryId must fit in 64 bits")
        if value < 0 and self.variant.positive_categories:
            raise BadRequest("categoryId must not be negative")
        return value

    def validate_status(self, body: JsonObject) -> Status:
        if "status" not in body:
            return ABSENT if self.variant.default_status is None else self.variant.default_status
        status = body["status"]
        if status is None:
            raise BadRequest("status must not be null")
        if status not in STATUSES:
            raise BadRequest(f"status must be one of {', '.join(STATUSES)}")
        return status


def credentials(header: str) -> tuple[str, str]:
    """The scheme and the token of an Authorization header, white space around either left out."""
    scheme, _, token = header.strip().partition(" ")
    return scheme, token.strip()


def reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")
