"""A create whose answer was lost, looked up where the store lets the suite look.

A write whose answer never came may or may not have been applied, and it is never sent again on a guess
(RFC 9110 §9.2.2; ``transport``).  Set-up's creates carry names that hold the run's id, unique in any
store, so the suite can look: right after its creates, the lost ones are looked for on the list pages
(``GET /pets?limit=100``, and the page of each status they were sent with).  One animal listed with a
lost create's name and category is that create, applied: set-up goes on with it as the service lists it,
and the clauses that needed it are decided.  Not listed, the create stays unknown (a page shows at most
what the service's cap allows, and no page proves a write was *not* applied on every store), and is
counted as before.  Either way, each lost write looked up is counted (``writes_found`` when found).
"""

from __future__ import annotations

from petstore_contract.interface.document import STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.run.api import Api, Request, Row, Unanswered, send_table
from petstore_contract.transport import Answer

LOST = "a write's answer was lost"  # the transport's words for a write without its answer (adapter.py)


def lost(row: Row) -> bool:
    return isinstance(row, Unanswered) and LOST in row.problem.message


def look_up(api: Api, bodies: list[JsonObject], rows: list[Row]) -> dict[int, JsonObject]:
    """The animal each lost create made, by its index in ``bodies``, where one page shows it."""
    wanted = [i for i, (body, row) in enumerate(zip(bodies, rows, strict=False)) if lost(row) and _named(body)]
    if not wanted:
        return {}
    statuses = sorted({s for i in wanted if isinstance(s := bodies[i].get("status"), str) and s in STATUSES})
    queries = {str(status): (status, 100) for status in [None, *statuses]}
    table = {key: Request("GET", "/pets", params=_params(*query)) for key, query in queries.items()}
    listed = [pet for row in send_table(api, table).values() for pet in _pets(row)]
    found: dict[int, JsonObject] = {}
    for index in wanted:
        body = bodies[index]
        matches = {pet["id"]: pet for pet in listed if _made_by(pet, body)}
        if len(matches) == 1:
            found[index] = next(iter(matches.values()))
            line = f"POST /pets named {body['name']!r}: listed as id {found[index]['id']}"
            api.transport.guard.note_event("writes_found", line)
    return found


def _named(body: JsonObject) -> bool:
    return isinstance(body.get("name"), str)


def _params(status: str | None, limit: int) -> dict[str, str | int]:
    return {"limit": limit} if status is None else {"status": status, "limit": limit}


def _pets(row: Row) -> list[JsonObject]:
    if not isinstance(row, Answer) or row.status != 200:
        return []
    try:
        items: JsonValue = row.json()
    except (ValueError, RecursionError):
        return []
    return [pet for pet in items if isinstance(pet, dict)] if isinstance(items, list) else []


def _made_by(pet: JsonObject, body: JsonObject) -> bool:
    pet_id = pet.get("id")
    return (
        isinstance(pet_id, int)
        and not isinstance(pet_id, bool)
        and pet.get("name") == body["name"]
        and pet.get("categoryId") == body.get("categoryId")
    )
