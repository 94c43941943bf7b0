"""A model of the store that judges every answer: one animal, one representation.

The document shows no operation that changes an animal (§4: no update, no delete), so an animal's
name, categoryId and status, once shown, are the same in every answer that shows it.  The model holds,
per process, the ids seen, each animal as ``GET /pets/{petId}`` first answered it alone and as the
lists first showed it; an id seen there and then read as absent (404) is a ``read.found`` violation.
Every Pet of every list (the grid, the
tables, generated and stateful answers alike) is checked against it: a list item must equal what
``GET /pets/{petId}`` answers for the same id, and what every other list showed for it.  Checked in
the spirit of Hypothesis' rule-based state machines: an invariant over every step, whoever took it.

What the document leaves open is not flagged: a status absent in one answer (the status the service
chose when none was sent is fixed once shown, never required to be shown); the comparison of a read
with the create answer is ``read.found``'s and ``create.echo``'s (the targeted tests).
"""

from __future__ import annotations

import threading

from petstore_contract.core.records import Finding
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.judging import expect
from petstore_contract.judging.declaration import Kind
from petstore_contract.transport.answers import Answer

CLAUSE = CLAUSE_IDS.list_item_same
FIELDS = ("name", "categoryId", "status")
MODEL_TEST = "(every exchange of the run): one animal, one representation"


def differs(first: JsonObject, later: JsonObject) -> str | None:
    """The first field two representations of one animal disagree on (status only where both show one)."""
    for name in FIELDS:
        if name == "status" and ("status" not in first or "status" not in later):
            continue
        mine, theirs = first.get(name, "<absent>"), later.get(name, "<absent>")
        if mine != theirs or type(mine) is not type(theirs):
            return name
    return None


class StoreModel:
    """Per process: each id's representation as read alone and as listed, first seen; ids found absent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.read: dict[int, JsonObject] = {}  # GET /pets/{petId} answered 200
        self.listed: dict[int, JsonObject] = {}  # a list showed it

    def gone(self, pet_id: int, answer: Answer) -> list[Finding]:
        """A 404 for an id a list or a read showed before: no operation removes an animal (§4)."""
        with self._lock:
            shown = self.read.get(pet_id) or self.listed.get(pet_id)
        if shown is None:
            return []
        expected = f"animal {pet_id} found: a list or a read showed it before, and no operation removes one"
        kind = Kind.STATUS.expectation("200")
        return [Finding(CLAUSE_IDS.read_found, expected, "HTTP 404", answer.exchange, MODEL_TEST, expectation=kind)]

    def judge(self, operation: str, pets: list[JsonValue], answer: Answer) -> list[Finding]:
        """Findings for each Pet of one answer that another answer showed otherwise (``pets`` already
        judged as Pets by the pipeline)."""
        if not isinstance(pets, list) or operation not in ("getPet", "listPets"):
            return []
        found: list[Finding] = []
        with self._lock:
            for pet in pets:
                pet_id = pet.get("id") if isinstance(pet, dict) else None
                if not isinstance(pet, dict) or not isinstance(pet_id, int) or type(pet_id) is not int:
                    continue
                shown = {name: pet[name] for name in FIELDS if name in pet}
                problem = self._seen(operation, pet_id, shown)
                if problem is not None:
                    name, other, where = problem
                    found.append(_finding(pet_id, name, (other, shown), where, answer))
        return found

    def _seen(self, operation: str, pet_id: int, shown: JsonObject) -> tuple[str, JsonObject, str] | None:
        """(field, the other representation, where it was shown) when this one disagrees; else None."""
        if operation == "getPet":
            self.read.setdefault(pet_id, shown)
            other = self.listed.get(pet_id)
            where = "a list"
        else:
            other = self.read.get(pet_id)
            where = f"GET /pets/{pet_id}"
            if other is None:
                other, where = self.listed.get(pet_id), "another list"
            self.listed.setdefault(pet_id, shown)
        if other is None or other is shown:
            return None
        name = differs(other, shown)
        return (name, other, where) if name is not None else None


def _finding(pet_id: int, name: str, both: tuple[JsonObject, JsonObject], where: str, answer: Answer) -> Finding:
    other, shown = both
    expected = f"animal {pet_id} with {name}={expect.short(other.get(name, '<absent>'))}, as {where} showed it"
    observed = f"{name}={expect.short(shown.get(name, '<absent>'))}"
    kind = Kind.SAME_ANIMAL.expectation(name)
    return Finding(CLAUSE, expected, observed, answer.exchange, MODEL_TEST, expectation=kind)
