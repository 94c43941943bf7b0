"""What every server of round 3 shares: the document's rules, written once as a vendor's domain layer.

The frameworks differ in what they do *around* these rules (routing, body parsing, error pages,
limits, negotiation); the rules themselves are the document's and are the same everywhere:
NewPet validation (§2, §4.2), the bearer check (§5), the Error body (§7), the limit bounds (§4.1,
§8) and the deprecation headers of ``GET /pets/{petId}`` (§4.3, §9.3, RFC 9745, RFC 8594).
"""

from __future__ import annotations

import hmac
import itertools
import re
import threading
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
STATUSES = ("available", "pending", "sold")
DEFAULT_LIMIT, MAX_LIMIT = 20, 100
# §4.3 / §9.3: removed on 5 December 2030; RFC 8594 §3 wants an IMF-fixdate.
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
REALM = 'realm="petstore"'
# RFC 9110 §11.1: auth-scheme is a token, compared case-insensitively; one space, then the token68.
AUTHORIZATION = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+) +(\S+) *")
# A signed int64 written in digits: what a vendor's router accepts as a petId (a range check follows).
PET_ID = r"-?[0-9]{1,19}"

Pet = dict[str, Any]

PRELOAD_NAMES = ("Rex", "Bella", "Milo", "Luna", "Charlie", "Nala", "Oscar", "Coco", "Pepper", "Ziggy")
PRELOAD_CATEGORIES = (1, 2, 3, 7, 12, 42, 100, 2024)


def preload_rows(n: int) -> list[tuple[str, int, str]]:
    """N animals already in the store: statuses take turns, names and categories vary."""
    return [
        (f"{PRELOAD_NAMES[i % len(PRELOAD_NAMES)]} {i + 1}", PRELOAD_CATEGORIES[i * 5 % 8], STATUSES[i % 3])
        for i in range(n)
    ]


def error_body(status: int, code: str, message: str) -> dict[str, Any]:
    """§7: every error answer is ``{code, message, status}``, ``status`` repeating the HTTP status."""
    return {"code": code, "message": message, "status": status}


# authentication (§5) -------------------------------------------------------------------------------
def bearer_problem(header: str | None, key: str) -> str | None:
    """None when the header carries the key in the documented form, else "missing" or "invalid"."""
    if header is None:
        return "missing"
    match = AUTHORIZATION.fullmatch(header)
    if not match or match.group(1).lower() != "bearer":
        return "invalid"
    # constant time: a vendor does not let response times tell how much of a key was right
    return None if hmac.compare_digest(match.group(2).encode(), key.encode()) else "invalid"


def challenge(problem: str) -> str:
    """RFC 9110 §11.6.1 / RFC 6750 §3: a Bearer challenge; an error code only when a token was sent (§3.1)."""
    return f'Bearer {REALM}, error="invalid_token"' if problem == "invalid" else f"Bearer {REALM}"


def unauthorized(problem: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The 401 body and headers for a missing or refused key (§5.3)."""
    message = "API key missing" if problem == "missing" else "API key not valid"
    return error_body(401, "unauthorized", message), {"WWW-Authenticate": challenge(problem)}


def deprecation(since: int) -> dict[str, str]:
    """§4.3 / §9.3: RFC 9745 Deprecation (an sf-date in the past) and RFC 8594 Sunset on 5 Dec 2030."""
    return {"Deprecation": f"@{since}", "Sunset": SUNSET}


# validation (§2, §4.1, §4.2) ---------------------------------------------------------------------
def is_int64(value: Any) -> bool:
    # bool is an int subclass in Python; JSON true is not an integer (§2: integer, format int64)
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def encodable(text: str) -> bool:
    """A lone surrogate (``"\\ud800"`` in JSON) parses in Python but cannot go out as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def new_pet_problem(body: Any) -> str | None:
    """Why a parsed body is not a NewPet (§2, §4.2), or None. Unknown fields (a client ``id``) are ignored."""
    if not isinstance(body, dict):
        return "the body must be a JSON object (NewPet)"
    for field in ("name", "categoryId"):
        if field not in body:
            return f"{field} is required"
    if not isinstance(body["name"], str):
        return "name must be a string"
    if not encodable(body["name"]):
        return "name must be valid Unicode"
    if not is_int64(body["categoryId"]):
        return "categoryId must be an integer (int64)"
    if "status" in body and body["status"] not in STATUSES:
        return "status must be one of available, pending, sold"
    return None


def new_pet(body: dict[str, Any]) -> Pet:
    """The fields of a valid NewPet; ``status`` stays out when the client left it out (§3: not shown)."""
    pet = {"name": body["name"], "categoryId": body["categoryId"]}
    if "status" in body:
        pet["status"] = body["status"]
    return pet


def limit_value(raw: str | None) -> int | None:
    """§4.1 / §8: the limit asked for, None when it is not an integer in 1..100 (digits only)."""
    if raw is None:
        return DEFAULT_LIMIT
    if not re.fullmatch(r"[0-9]{1,3}", raw):
        return None
    value = int(raw)
    return value if 1 <= value <= MAX_LIMIT else None


def pet_id_value(raw: str) -> int | None:
    """A path's petId as an int64, or None (then no such animal: 404)."""
    if not re.fullmatch(PET_ID, raw):
        return None
    value = int(raw)
    return value if INT64_MIN <= value <= INT64_MAX else None


class MemoryStore:
    """Animals in a dict behind a lock (the servers are threaded or share one loop)."""

    def __init__(self, preload: int, first_id: int = 1) -> None:
        self.lock = threading.Lock()
        self.pets: dict[int, Pet] = {}
        self.ids = itertools.count(first_id)
        for name, category, status in preload_rows(preload):
            self.add({"name": name, "categoryId": category, "status": status})

    def add(self, fields: Pet) -> Pet:
        with self.lock:
            pet = {"id": next(self.ids), **fields}
            self.pets[pet["id"]] = pet
            return dict(pet)

    def get(self, pet_id: int) -> Pet | None:
        with self.lock:
            pet = self.pets.get(pet_id)
            return dict(pet) if pet else None

    def page(self, limit: int, status: str | None, newest_first: bool = False) -> list[Pet]:
        with self.lock:
            pets = list(self.pets.values())
        if newest_first:
            pets.reverse()
        return [dict(p) for p in pets if status is None or p.get("status") == status][:limit]
