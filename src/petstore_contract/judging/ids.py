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
from dataclasses import dataclass
from typing import Any

from petstore_contract.core.records import VIOLATED, Exchange, Finding, TestRecord
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.judging.declaration import Kind

CLAUSE = CLAUSE_IDS.create_id
TEST = "(every create of the run): ids never handed out twice"
SHOWN = 5  # ids handed out twice shown as findings (each with both creates); the count says the rest
RESTART = 2  # ids handed out again from which the run names a store that forgot


@dataclass(frozen=True)
class HandedTwice:
    """The record of ids handed out twice (None: none was), and the line naming a lost store ("" if none)."""

    record: TestRecord | None
    cause: str


def handed_twice(handed: list[dict[str, Any]]) -> HandedTwice:
    """Every id a 201 answered more than once in the run, in the order the creates went out."""
    first: dict[int, dict[str, Any]] = {}
    again: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for create in sorted(handed, key=lambda item: float(item.get("at", 0.0))):
        pet_id = create.get("id")
        if type(pet_id) is not int:
            continue
        if pet_id in first:
            again.append((first[pet_id], create))
        else:
            first[pet_id] = create
    if not again:
        return HandedTwice(None, "")
    findings: list[Finding] = []
    for earlier, later in again[:SHOWN]:
        pet_id = later["id"]
        expected = f"an id never handed out before in the run (id {pet_id} was handed out by the create shown next)"
        findings.append(_finding(expected, f"id {pet_id} again", later))
        findings.append(
            _finding(f"id {pet_id} for this animal alone", f"the create that had id {pet_id} first", earlier)
        )
    record = TestRecord(TEST, (CLAUSE,), VIOLATED, {CLAUSE: VIOLATED}, findings, examined={CLAUSE: len(handed)})
    return HandedTwice(record, _cause(again))


def _finding(expected: str, observed: str, create: dict[str, Any]) -> Finding:
    exchange = Exchange.from_dict(create["exchange"])
    return Finding(CLAUSE, expected, observed, exchange, TEST, expectation=Kind.OWN.value)


def _cause(again: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    """One line when several ids came again: the store the run built before then is gone."""
    if len(again) < RESTART:
        return ""
    since = min(float(later.get("at", 0.0)) for _, later in again)
    before = len({earlier["id"] for earlier, _ in again})
    clock = time.strftime("%H:%M:%S", time.gmtime(since))
    return (
        f"{len(again)} ids were handed out again from {clock} UTC on: at least {before} animals created before "
        "then were no longer the store's — did the service restart or lose its store?"
    )
