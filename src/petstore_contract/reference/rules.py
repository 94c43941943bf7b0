"""The interface document's rules as the reference server applies them: who is let in, which
query values and which NewPet bodies it takes.  Every ``self.has(...)`` is the one place where a
fault of ``faults.toml`` changes a rule; every ``self.variant`` field, a compliant choice where the
document is silent.
"""

from __future__ import annotations

import hmac
import json
import re
from typing import Any

from petstore_contract.interface.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.reference.variants import Variant

INTEGER = re.compile(r"-?[0-9]{1,20}")
ABSENT = object()
# RFC 9745: an sf-date (2026-01-01T00:00:00Z); RFC 8594: an IMF-fixdate (§9.3: 5 December 2030).
DEPRECATION = "@1767225600"
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"


class BadRequest(Exception):
    """A request to reject with a 4xx Error: 400 unless a variant answers 422 for query values."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Rules:
    """One server's rules: its variant, its fault (or none), its key, and its store (for the rules that look at it)."""

    def __init__(self, api_key: str, variant: Variant, fault: str | None, pets: dict[int, dict[str, Any]]) -> None:
        self.api_key = api_key
        self.variant = variant
        self.fault = fault
        self.pets = pets  # the server's store itself (shared, not copied)

    def has(self, fault: str) -> bool:
        return self.fault == fault

    def present(self, pet: dict[str, Any], *, listed: bool = False) -> dict[str, Any]:
        out = dict(pet)
        if self.variant.extra_fields:
            out["tags"] = []
            out["createdBy"] = "reference"
        if listed:
            if self.has("list_item_id_string"):
                out["id"] = str(out["id"])
            if self.has("list_item_status_uppercase") and "status" in out:
                out["status"] = out["status"].upper()
            if self.has("list_item_missing_category"):
                out.pop("categoryId", None)
            category = out.get("categoryId")
            if self.has("list_item_category_shifted") and out["id"] % 2 == 0 and type(category) is int:
                out["categoryId"] = category + 1 if category < INT64_MAX else category - 1
        return out

    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        if self.has("read_no_deprecation"):
            return {}
        deprecation, sunset = DEPRECATION, SUNSET
        if self.has("read_deprecation_http_date"):
            deprecation = "Thu, 01 Jan 2026 00:00:00 GMT"
        if self.has("read_deprecation_boolean"):
            deprecation = "true"
        if self.has("read_deprecation_in_future"):
            deprecation = "@1893456000"  # 2030-01-01
        if self.has("read_sunset_wrong_day"):
            sunset = "Fri, 05 Dec 2031 00:00:00 GMT"
        if self.has("read_sunset_before_deprecation"):
            deprecation = "@1956528000"  # 2032-01-01, after the Sunset
        if self.has("read_sunset_not_http_date"):
            sunset = "2030-12-05"
        if self.has("read_sunset_day_before"):
            sunset = "Wed, 04 Dec 2030 23:00:00 GMT"  # midnight in Central Europe, one day early in GMT
        if self.has("read_deprecation_even_ids") and pet_id is not None and pet_id % 2 == 0:
            return {"Sunset": sunset}
        return {"Deprecation": deprecation, "Sunset": sunset}

    def accepted(self, scheme: str, token: str, header: str, operation: str = "") -> bool:
        key = self.api_key
        if self.has("auth_accepts_bare_key") and hmac.compare_digest(header.strip(), key):
            return True
        if self.has("auth_accepts_basic") and scheme.lower() == "basic" and token:
            return True
        if self.has("auth_any_scheme") and token and hmac.compare_digest(token.encode(), key.encode()):
            return True
        scheme_ok = scheme == "Bearer" if self.has("auth_case_sensitive_scheme") else scheme.lower() == "bearer"
        if self.has("auth_scheme_by_order"):
            scheme_ok = scheme.lower() <= "bearer"  # found by mutation testing: Basic, ApiKey, Bear pass
        if not scheme_ok:
            return False
        if self.has("auth_empty_token") and token == "":
            return True
        if token and (self.has("auth_any_key") or (operation == "orders" and self.has("auth_orders_any_token"))):
            return True
        if self.has("auth_key_prefix") and token and key.startswith(token):
            return True
        if self.has("auth_key_case_insensitive") and token.lower() == key.lower():
            return True
        if self.has("auth_key_extra_char") and len(token) == len(key) + 1 and token.startswith(key):
            return True
        return hmac.compare_digest(token.encode(), key.encode())

    def parse_limit(self, raw: str | None) -> int:
        if raw is None:
            return 50 if self.has("list_default_50") else 5 if self.has("list_default_5") else 20
        if not INTEGER.fullmatch(raw):
            if self.has("list_500_on_non_integer_limit"):
                raise RuntimeError("limit is not an integer")
            if self.variant.out_of_range == "clamp":
                return 20
            raise BadRequest("limit must be an integer between 1 and 100", self.variant.invalid_query_status)
        value = int(raw)
        if value < 0 and self.has("list_500_on_negative_limit"):
            raise RuntimeError("negative limit")
        if value == 0 and self.has("list_zero_limit_returns_all"):
            return len(self.pets) + 1
        low = 2 if self.has("list_rejects_limit_1") else 1
        high = 1000 if self.has("list_no_maximum") else 99 if self.has("list_rejects_limit_100") else 100
        if low <= value <= high:
            return value
        if self.variant.out_of_range == "clamp":
            return min(max(value, 1), 100)
        raise BadRequest(f"limit must be between 1 and 100, got {value}", self.variant.invalid_query_status)

    def parse_status_filter(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        if raw in STATUSES:
            return raw
        if self.has("list_500_on_unknown_status"):
            raise RuntimeError("unknown status")
        if self.variant.out_of_range == "clamp":
            return None
        raise BadRequest(f"status must be one of {', '.join(STATUSES)}", self.variant.invalid_query_status)

    def validate_new_pet(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            if self.has("create_500_on_non_object"):
                raise RuntimeError("body is not an object")
            raise BadRequest("request body must be a JSON object")
        pet: dict[str, Any] = {}
        pet["name"] = self.validate_name(body)
        pet["categoryId"] = self.validate_category(body)
        status = self.validate_status(body)
        if status is not ABSENT:
            pet["status"] = status
        unknown = set(body) - {"name", "categoryId", "status"}
        if unknown and self.variant.reject_unknown_fields:
            raise BadRequest(f"unknown fields: {', '.join(sorted(unknown))}")
        return pet

    def validate_name(self, body: dict[str, Any]) -> str:
        name = self.validate_name_type(body)
        if self.variant.reject_angle_brackets and ("<" in name or ">" in name):
            raise BadRequest("name must not contain < or >")
        if self.variant.unique_names and any(p.get("name") == name for p in self.pets.values()):
            raise BadRequest("an animal with that name exists already")
        return name

    def validate_name_type(self, body: dict[str, Any]) -> str:
        if "name" not in body:
            if self.has("create_accepts_missing_name"):
                return "unnamed"
            raise BadRequest("name is required")
        name = body["name"]
        if not isinstance(name, str):
            if self.has("create_coerces_name") and name is not None:
                return json.dumps(name)
            raise BadRequest("name must be a string")
        if self.has("create_500_on_control_chars") and any(ord(c) < 0x20 for c in name):
            raise RuntimeError("control character in name")
        limit = self.variant.name_max_length
        if limit is not None and len(name) > limit:
            raise BadRequest(f"name must be at most {limit} characters")
        if self.variant.reject_blank_names and not name.strip():
            raise BadRequest("name must not be blank")
        return name

    def validate_category(self, body: dict[str, Any]) -> int:
        if "categoryId" not in body:
            if self.has("create_accepts_missing_category"):
                return 0
            raise BadRequest("categoryId is required")
        value = body["categoryId"]
        if isinstance(value, bool):
            if self.has("create_accepts_bool_category"):
                return int(value)
            raise BadRequest("categoryId must be an integer")
        if isinstance(value, str) and self.has("create_coerces_string_category") and INTEGER.fullmatch(value):
            value = int(value)
        if isinstance(value, float) and self.has("create_accepts_float_category"):
            value = int(value)
        if not isinstance(value, int):
            raise BadRequest("categoryId must be an integer")
        if not INT64_MIN <= value <= INT64_MAX:
            raise BadRequest("categoryId must fit in 64 bits")
        if value < 0 and self.variant.positive_categories:
            raise BadRequest("categoryId must not be negative")
        if self.has("create_category_float_precision"):
            return int(float(value))
        return value

    def apply_edge_faults(self, pet: dict[str, Any]) -> None:
        """Faults at the edges of what §2 allows (issue 30): a TEXT column, a C string, a sentinel."""
        if self.has("create_cuts_name_at_65535"):
            pet["name"] = pet["name"][:65_535]
        if self.has("create_cuts_name_at_nul"):
            pet["name"] = pet["name"].split("\0", 1)[0]
        if self.has("create_500_on_category_minus_one") and pet["categoryId"] == -1:
            raise RuntimeError("category -1 is the 'no category' sentinel")

    def validate_status(self, body: dict[str, Any]) -> Any:
        if "status" not in body:
            if self.has("create_default_status_null"):
                return None
            if self.has("create_default_status_unknown"):
                return "new"
            return ABSENT if self.variant.default_status is None else self.variant.default_status
        status = body["status"]
        if status is None:
            if self.has("create_accepts_null_status"):
                return None
            raise BadRequest("status must not be null")
        if status not in STATUSES:
            if self.has("create_accepts_unknown_status") and isinstance(status, str):
                return status
            if self.has("create_accepts_status_any_case") and isinstance(status, str) and status.lower() in STATUSES:
                return status.lower()
            raise BadRequest(f"status must be one of {', '.join(STATUSES)}")
        if status == "sold" and self.has("create_rejects_sold"):
            raise BadRequest("sold animals cannot be added")
        if self.has("create_ignores_status"):
            return "available"
        return status


def is_int64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def salvage(body: dict[str, Any]) -> dict[str, Any]:
    """What a careless server stores from a body it rejects (fault create_rejected_still_stored)."""
    category = body.get("categoryId")
    status = body.get("status")
    return {
        "name": body["name"],
        "categoryId": category if is_int64(category) else 0,
        "status": status if status in STATUSES else "available",
    }


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")
