"""Ids handed out twice in one run: ``create.id`` over every 201 of POST /pets, whoever sent it.

§2: "Unique identifier, assigned by the service on creation".  The pipeline (``pipeline.py``) keeps the
id of every create the run saw answered 201 — set-up's, the tables', the generated cases', the
stateful walks' — in every process; the controller holds them together here.  Two creates answered
with one id are a violation of ``create.id`` shown with both exchanges: a service that recycles ids,
or one that restarted with an empty store and counts from the start again.  When several ids come
again, the animals created before the first of them are gone from the store as the run knew it: the
run says so in one line (the cause, not the pagination clauses that would otherwise carry the blame:
they are blocked by ``create.id``, ``clauses.toml``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from petstore_contract.core.records import VIOLATED, Exchange, Finding, TestRecord
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.jsontypes import JsonLike, JsonObject
from petstore_contract.judging.declaration import Kind

CLAUSE = CLAUSE_IDS.create_id
TEST = "(every create of the run): ids never handed out twice"
SHOWN = 5  # ids handed out twice shown as findings (each with both creates); the count says the rest
RESTART = 2  # ids handed out again from which the run names a store that forgot


@dataclass(frozen=True)
class Handed:
    """An id a 201 answered: the id, when its request went out, its create's exchange (as it crosses processes)."""

    id: int
    at: float
    exchange: JsonObject

    def to_dict(self) -> JsonObject:
        return {"id": self.id, "at": self.at, "exchange": self.exchange}

    @classmethod
    def from_dict(cls, data: JsonLike) -> Handed | None:
        """The create a process's tally holds; None for one that is not (no int id, no exchange)."""
        if not isinstance(data, dict) or type(pet_id := data.get("id")) is not int:
            return None
        at, exchange = data.get("at", 0.0), data.get("exchange")
        if not isinstance(at, int | float) or not isinstance(exchange, dict):
            return None
        return cls(pet_id, float(at), exchange)


@dataclass(frozen=True)
class HandedTwice:
    """The record of ids handed out twice (None: none was), and the line naming a lost store ("" if none)."""

    record: TestRecord | None
    cause: str


def handed_twice(tallied: Sequence[JsonLike]) -> HandedTwice:
    """Every id a 201 answered more than once in the run, in the order the creates went out (``tallied``:
    the creates of every process's tally, ``Handed.to_dict``)."""
    handed = [create for item in tallied if (create := Handed.from_dict(item)) is not None]
    first: dict[int, Handed] = {}
    again: list[tuple[Handed, Handed]] = []
    for create in sorted(handed, key=lambda item: item.at):
        pet_id = create.id
        if pet_id in first:
            again.append((first[pet_id], create))
        else:
            first[pet_id] = create
    if not again:
        return HandedTwice(None, "")
    findings: list[Finding] = []
    for earlier, later in again[:SHOWN]:
        pet_id = later.id
        expected = f"an id never handed out before in the run (id {pet_id} was handed out by the create shown next)"
        findings.append(_finding(expected, f"id {pet_id} again", later))
        findings.append(
            _finding(f"id {pet_id} for this animal alone", f"the create that had id {pet_id} first", earlier)
        )
    record = TestRecord(TEST, (CLAUSE,), VIOLATED, {CLAUSE: VIOLATED}, findings, examined={CLAUSE: len(handed)})
    return HandedTwice(record, _cause(again))


def _finding(expected: str, observed: str, create: Handed) -> Finding:
    exchange = Exchange.from_dict(create.exchange)
    return Finding(CLAUSE, expected, observed, exchange, TEST, expectation=Kind.OWN.value)


def _cause(again: list[tuple[Handed, Handed]]) -> str:
    """One line when several ids came again: the store the run built before then is gone."""
    if len(again) < RESTART:
        return ""
    since = min(later.at for _, later in again)
    before = len({earlier.id for earlier, _ in again})
    clock = time.strftime("%H:%M:%S", time.gmtime(since))
    return (
        f"{len(again)} ids were handed out again from {clock} UTC on: at least {before} animals created before "
        "then were no longer the store's — did the service restart or lose its store?"
    )
