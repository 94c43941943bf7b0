"""What the suite knows of the target's store, and the arithmetic of its pages.

The interface has no delete, so a shared Staging only grows, and a server may cap its pages
(``limit`` is a maximum, §4.1; paging beyond it is not shown, §4.4).  The suite therefore never
assumes it sees the whole store.  For one server cap ``C >= 1`` and ``n`` matching animals, the
page for ``limit=k`` holds ``min(k, n, C)`` animals.  From pages alone it knows:

- ``C >= C_seen``, the largest page any query returned;
- ``n_s >= known_s``, the animals of status ``s`` it created or saw before it looked;
- a page for status ``s`` with ``limit=100`` that holds ``q`` animals, with ``q < 100`` and
  ``q < C_seen``, holds every animal of status ``s``: that status is seen whole (an empty page, at any
  cap: there is none).  The same holds of the unfiltered page and the whole store, whenever in the run
  the page was asked for: ``C_seen`` may come from a later, fuller page, as ``C`` does not change.

Everything below is a pure function of the pages; the tests send the requests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from petstore_contract.interface.document import INT64_MAX, INT64_MIN, LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, STATUSES
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.interface.spec import required, validator

LIMITS = (None, LIMIT_MIN, 2, 5, LIMIT_DEFAULT, LIMIT_MAX)  # None: no limit parameter (the default, 20)
FILTERS = (None, *STATUSES)  # None: no status parameter
FULL_STORE = LIMIT_MAX + 1  # one more than the largest page, so that "never more than 100" can be seen


@dataclass(frozen=True)
class Page:
    """One answered GET /pets: the query and the animals it listed, as JSON objects (shape-checked where
    made by ``expect.pet_list``; ``listed`` keeps every item of any JSON array, each clause reading only
    the part of an item it needs)."""

    status: str | None
    limit: int | None
    pets: tuple[JsonObject, ...]
    others: int = 0  # items that are no JSON object (list.shape's): counted in the page's length, never read

    @property
    def size(self) -> int:
        return len(self.pets) + self.others

    @property
    def ids(self) -> list[JsonValue]:
        return [pet.get("id") for pet in self.pets]

    def query(self) -> str:
        parts = [f"status={self.status}"] * (self.status is not None) + [f"limit={self.limit}"] * (
            self.limit is not None
        )
        return "GET /pets" + ("?" + "&".join(parts) if parts else "")


@dataclass
class Knowledge:
    """Animals known to exist, by status, before the pages being judged were asked for."""

    by_status: dict[str, set[Any]] = field(default_factory=lambda: {s: set() for s in STATUSES})
    without_status: set[Any] = field(default_factory=set)

    @classmethod
    def of(cls, pets: list[JsonObject]) -> Knowledge:
        known = cls()
        for pet in pets:
            known.add(pet)
        return known

    def add(self, pet: JsonObject) -> None:
        """The latest word on an animal wins: an id seen again leaves the status it had before."""
        status = pet.get("status")
        for ids in (*self.by_status.values(), self.without_status):
            ids.discard(pet.get("id"))
        if status in self.by_status:
            self.by_status[status].add(pet.get("id"))
        else:
            self.without_status.add(pet.get("id"))

    def count(self, status: str | None) -> int:
        if status is None:
            return sum(len(ids) for ids in self.by_status.values()) + len(self.without_status)
        return len(self.by_status.get(status, ()))


def listed(body: JsonValue, status: str | None, limit: int | None) -> Page | None:
    """The page a body lists when it is a JSON array, whatever its items (None otherwise): a page's length
    needs an array, a filter each item's ``status``, "distinct" each item's ``id`` (§4.1; list.shape judges
    the items)."""
    if not isinstance(body, list):
        return None
    objects = tuple(item for item in body if isinstance(item, dict))
    return Page(status, limit, objects, len(body) - len(objects))


def pet_id(value: JsonValue) -> bool:
    """A value that names an animal (§2: id, integer, format int64)."""
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def unnamed(page: Page) -> int:
    """The page's items whose id names no animal (absent, or no int64; list.shape's): any of them may be
    any animal."""
    return page.others + sum(not pet_id(pet.get("id")) for pet in page.pets)


def unreadable(pet: JsonObject) -> set[str]:
    """The fields of a listed item that are list.shape's: present with a value the Pet schema refuses, or
    required and absent.  Each field is read on its own, so the item's other fields can still be compared."""
    wrong = {str(error.absolute_path[0]) for error in validator("Pet").iter_errors(pet) if error.absolute_path}
    return wrong | {name for name in required("Pet") if name not in pet}


def readable(pet: JsonObject) -> JsonObject:
    """The fields of a listed item that are not list.shape's (``unreadable``)."""
    wrong = unreadable(pet)
    return {name: value for name, value in pet.items() if name not in wrong}


def largest_page(pages: list[Page]) -> int:
    return max((page.size for page in pages), default=0)


def effective_limit(page: Page) -> int:
    return LIMIT_DEFAULT if page.limit is None else page.limit


def least_size(page: Page, known: Knowledge, cap_seen: int) -> int:
    """The fewest animals the page may hold: min(k, n, C) with n >= known and C >= cap_seen.

    Where the page should hold every known match (k at least n), a missing animal is a question of
    which animals are listed (``list.status.found``, judged in complete view); the page's size
    alone then only says it must not be empty.
    """
    matching = known.count(page.status)
    if effective_limit(page) >= matching:
        return min(1, matching)
    return min(effective_limit(page), matching, max(cap_seen, 1))


def seen_whole(page: Page, cap_seen: int) -> bool:
    """A limit=100 page shorter than 100 and than the largest page seen lists every match; so does an
    empty one, whatever the cap (``C >= 1``: ``min(100, n, C) = 0`` only where ``n = 0``)."""
    return page.limit == LIMIT_MAX and (page.size == 0 or (page.size < LIMIT_MAX and page.size < cap_seen))


def duplicates(page: Page) -> list[JsonValue]:
    """The ids a page lists more than once, compared as JSON values (``1``, ``1.0``, ``"1"`` and ``true``
    are four), whatever their type; an item without an id repeats none."""
    seen: set[str] = set()
    repeated: list[JsonValue] = []
    for pet in page.pets:
        if "id" not in pet:
            continue
        key = json.dumps(pet["id"], sort_keys=True)
        if key in seen:
            repeated.append(pet["id"])
        seen.add(key)
    return repeated


def distinct_ids(pages: list[Page]) -> int:
    """How many animals the pages show at least: their distinct ids, as JSON values (an animal listed exists,
    and none is ever removed, §4)."""
    return len({json.dumps(pet["id"], sort_keys=True) for page in pages for pet in page.pets if "id" in pet})


def shows_status(pet: JsonObject) -> bool:
    """An item whose status can be read: a PetStatus, or none (optional in Pet: then it has none of the
    filter's); another value is list.shape's."""
    return "status" not in pet or pet["status"] in STATUSES


def wrong_status(page: Page) -> list[JsonObject]:
    if page.status is None:
        return []
    return [pet for pet in page.pets if shows_status(pet) and pet.get("status") != page.status]


def fillers_needed(first_page: Page, own: int) -> int:
    """Animals to create so that more than 100 exist, when the first page shows a store that small.

    A limit=100 page of 100 animals: the store holds enough.  A shorter page holds every animal
    unless the server caps pages below it; then the cap, not the store, bounds every page, and
    filling would only grow the store.  Both cases are told apart by the status pages (see
    ``whole_store``), so a capped server gets no fillers.
    """
    if first_page.size >= LIMIT_MAX:
        return 0
    return max(0, FULL_STORE - first_page.size - own)


def whole_store(unfiltered: Page, filtered: list[Page]) -> bool:
    """True when a limit=100 unfiltered page provably lists the whole store.

    Each animal has at most one status, so the status pages partition the statused animals.  If
    the page were cut by a cap C < n, either one status alone fills C (its page holds C, and the
    other statuses add more than the unfiltered page holds) or the statuses together exceed C.
    With every status present, the sum of the status pages then exceeds the unfiltered page.
    """
    if unfiltered.limit != LIMIT_MAX or unfiltered.size >= LIMIT_MAX:
        return False
    statused = {pet.get("id") for pet in unfiltered.pets if pet.get("status") in STATUSES}
    unstatused = unfiltered.size - len(statused)
    union = {pet_id for page in filtered for pet_id in page.ids}
    if unfiltered.size == 0:
        return all(page.size == 0 for page in filtered)
    if any(page.size == 0 for page in filtered) or unstatused:
        return False
    return sum(page.size for page in filtered) == unfiltered.size and union == statused
