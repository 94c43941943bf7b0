"""The looks at the store set-up takes between its writes, and the requests they need.

On a store seen whole before any write, set-up sends every refused create first and then asks for one
unfiltered page of 100 (``AFTER_REFUSALS``).  For a server cap ``C >= 1`` and ``n`` animals that page holds
``min(100, n, C)``: an empty page proves the store holds none, so the refusals added nothing, whatever the
cap and the order; a page of ``q`` animals, ``q < 100``, is the whole store once any page of the run showed
more than ``q`` (``store.seen_whole``).  Animals a lenient service created from a refused body (answered
201, or another 2xx with a Pet) are known ids and count like any other.  Then it creates its first animal
of each status alone and asks for each status page (``own_look``): one known animal a status, on a page
any cap of two or more shows whole (``list.status.found``).  The early look, every page once the plan's
animals exist, follows.
"""

from __future__ import annotations

from petstore_contract.core.records import Mismatch
from petstore_contract.interface.document import STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.judging import expect, store
from petstore_contract.run import writeplan
from petstore_contract.run.api import Api, Request, Row, Unanswered, send_table
from petstore_contract.run.setup_records import OwnLook, answer_table

AFTER_REFUSALS = "None|100"  # the key of the unfiltered page asked for right after the refused creates


def grid_key(query: tuple[str | None, int | None]) -> str:
    return f"{query[0]}|{query[1]}"


def listed(answer: Row, status: str | None, limit: int | None) -> store.Page | None:
    """The page a row answered as any 200 JSON array, whatever its items (``store.listed``), or None."""
    if isinstance(answer, Unanswered) or answer.status != 200:
        return None
    try:
        return store.listed(expect.parse_json(answer), status, limit)
    except Mismatch:
        return None


def list_request(status: str | None, limit: int | None) -> Request:
    params = {k: v for k, v in (("status", status), ("limit", limit)) if v is not None}
    return Request("GET", "/pets", params=params)


def refused_requests(bodies: dict[str, JsonValue]) -> dict[str, Request]:
    """Each refused create of ``writeplan.rejected_bodies`` as the request that sends it."""

    def request(key: str, body: JsonValue) -> Request:
        if key.startswith("raw-") and isinstance(body, str):
            return Request("POST", "/pets", data=writeplan.raw_bytes(body))
        return Request("POST", "/pets", json_body=body, **writeplan.REFUSED_FOR.get(key.removeprefix("refused-"), {}))

    return {key: request(key, body) for key, body in bodies.items()}


def created_pet(answer: Row) -> JsonObject | None:
    """The animal a create's answer shows (``expect.created_animal``: a 201 with an id, or another 2xx with
    a Pet), or None: set-up goes on with it whatever its status (create.created judges the status)."""
    if isinstance(answer, Unanswered):
        return None
    return expect.created_animal(answer)


def pages(api: Api, statuses: tuple[str | None, ...]) -> dict[str, Row]:
    """The limit=100 page of each status (None: unfiltered), side by side."""
    return send_table(api, {grid_key((status, 100)): list_request(status, 100) for status in statuses})


def own_look(api: Api, known: list[JsonObject]) -> OwnLook:
    """Each status page right after the first own animal of each status was created, as data, with the
    animals (id, status) known to exist when it was asked for."""
    shown = answer_table(pages(api, STATUSES))
    return OwnLook(tuple({"id": pet.get("id"), "status": pet.get("status")} for pet in known), shown)


def early_look(api: Api) -> dict[str, Row]:
    """The store once the plan's animals exist, before any filler: every page of limit=100, side by side."""
    return pages(api, store.FILTERS)
