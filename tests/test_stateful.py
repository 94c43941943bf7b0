"""Stateful sequences over the spec's links: create → read back by the id → list by the status shown.

Along every hop each field survives exactly and ids are never reused (§2, §4.1-§4.3); an animal just
created is found by the id its create answered.  The profile's sequences are split into ``WALKS``
independent walks, each a test with its own seed.  A walk's steps are drawn with Hypothesis in the
main thread and its sequences sent side by side on the run's pool, each a chain of round trips
(``petstore_contract.run.walks``); the session starts the selected walks as soon as the selection is
known, so that they overlap the rest of the run, and each test then judges what its walk saw.  A chain
stops at a hop the round trip breaks; what the generated checks find on its answers (a create answered
200 with its Pet: create.created's) is kept, and the chain follows its links on.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from petstore_contract.core.records import Finding, Violation
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.spec import schema_errors
from petstore_contract.judging.expect import Judge, animal_made
from petstore_contract.run import Run, walks
from petstore_contract.run.ahead import started_ahead
from petstore_contract.run.setup import Seeded
from petstore_contract.transport import TargetProblem

# The parts of set-up's plan of writes these tests judge (``selection.needed_writes``): the walks create what they
# read: none of set-up's animals.
SET_UP_WRITES = ()

FIELDS = ("name", "categoryId", "status")
CLAUSE = CLAUSE_IDS.stateful_round_trip
WALKS = 2
# On a store too large to see whole every animal a walk adds stays there: one short sequence a walk
# (a create, then the read or list that follows it) instead of the profile's runs, drawn again with
# the next seed (at most ``CROWDED_TRIES`` times) while none held an answer against a created animal
# (a service may refuse the names drawn: name rules are not shown).
# Two sequences: Hypothesis draws the simplest data first (an empty name, category 0), which a
# service may refuse (name rules are not shown), so the second is the first with drawn data.
CROWDED_WALK = (2, 3)  # (sequences, steps)
CROWDED_TRIES = 5
NOT_FOUND = (CLAUSE_IDS.read_found, "schemathesis:EnsureResourceAvailability")  # (clause, expectation)


def _body(response: Any) -> Any:
    try:
        return response.json()
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python's stack
        return None


def _id(pet: Any) -> int | None:
    """The id of a Pet-like object as a key (a list or an object as an id names no animal)."""
    pet_id = pet.get("id") if isinstance(pet, dict) else None
    return pet_id if isinstance(pet_id, int) and not isinstance(pet_id, bool) else None


class RoundTrip:
    """What the sequences have created, to hold later answers against."""

    def __init__(self, exchange_of: Any) -> None:
        self.pets: dict[int, dict[str, Any]] = {}
        self.exchange_of = exchange_of
        self.hops = 0  # answers held against what the sequences created (the clause's judgements)

    def fail(self, response: Any, expected: str, observed: str, clause: str = CLAUSE, label: str = "") -> Violation:
        exchange = self.exchange_of(response)
        return Violation(Finding(clause, expected, observed, exchange, source="generated", expectation=label))

    def created(self, case: Any, response: Any) -> None:
        pet = _body(response)
        # A 201, or another 2xx whose body is a Pet with its id (the animal exists; the status is
        # create.created's finding, made by the checks on the same answer).
        made = response.status_code == 201 or animal_made(response.status_code, response.content) is not None
        if not made or not isinstance(pet, dict) or not isinstance(case.body, dict):
            return
        for field in FIELDS:
            if field in case.body and pet.get(field) != case.body[field]:
                raise self.fail(response, f"the created Pet with {field}={case.body[field]!r}", f"{pet.get(field)!r}")
        self.hops += 1
        pet_id = _id(pet)
        if pet_id is None:
            return  # not a Pet: Schemathesis' schema check judges the created answer
        if pet_id in self.pets:
            raise self.fail(response, "a new id", f"id {pet_id!r} handed out twice")
        self.pets[pet_id] = {f: pet[f] for f in ("id", *FIELDS) if f in pet}

    def read(self, case: Any, response: Any) -> None:
        pet = _body(response)
        pet_id = case.path_parameters.get("petId")
        if response.status_code == 404 and pet_id in self.pets:
            # The animal just created, read by the id its create answered, is not found: Schemathesis'
            # ensure_resource_availability check, restated (it needs its state machine); its label
            # keeps the finding's signature.
            raise self.fail(response, f"GET /pets/{pet_id} to find the animal just created", "404", *NOT_FOUND)
        if response.status_code != 200 or pet_id not in self.pets or not isinstance(pet, dict):
            return
        self.hops += 1
        for field, value in self.pets[pet_id].items():
            if pet.get(field) != value:
                raise self.fail(response, f"GET /pets/{pet_id} with {field}={value!r}", f"{pet.get(field)!r}")

    def listed(self, case: Any, response: Any) -> None:
        items = _body(response)
        if response.status_code != 200 or not isinstance(items, list):
            return
        for item in items:
            if schema_errors("Pet", item):
                continue  # an item that is no Pet is the list's shape (list.shape), not a round trip
            pet_id = _id(item)
            known = self.pets.get(pet_id) if pet_id is not None else None
            self.hops += known is not None
            for field, value in (known or {}).items():
                if item.get(field) != value:
                    raise self.fail(response, f"id {pet_id} listed with {field}={value!r}", f"{item.get(field)!r}")


class Walk:
    """One walk: its sequences drawn (in the thread that starts it), sent on the run's pool, then judged."""

    def __init__(self, run: Run, number: int) -> None:
        self.run = run
        self.number = number
        self.seen = RoundTrip(run.cases.exchange_of)
        self.counts: dict[str, int] = {}  # the generated checks' judgements, by clause
        # What the generated checks found on the walk's answers: the chain goes on after them while its
        # links can be followed (a create answered 200 with its Pet still made the animal the next steps
        # read); only a hop the round trip breaks ends a chain.
        self.found: list[Finding] = []
        self.lock = threading.Lock()  # the walk's chains judge side by side
        seen = self.seen
        self.hooks = {"POST /pets": seen.created, "GET /pets/{petId}": seen.read, "GET /pets": seen.listed}
        profile = run.profile
        size = (-(-profile.stateful_examples // WALKS), profile.stateful_steps)
        self.chains = self._send(walks.draw_sequences(run, self._seed(0), *size), trim=self._trim)

    def _seed(self, attempt: int) -> int:
        return self.run.settings.seed * WALKS + self.number + attempt * 1_000_003

    def _send(self, sequences: list[walks.Sequence], trim: Any = None) -> walks.Chains:
        return walks.Chains(self.run, sequences, self._answered, trim)

    def _answered(self, case: Any, response: Any) -> None:
        """Each answer held against what the walk created, then Schemathesis' checks and ours on it."""
        with self.lock:
            hook = self.hooks.get(case.operation.label)
            if hook is not None:
                hook(case, response)
        try:
            self.run.cases.judge_response(case, response, self.counts)
        except Violation as violation:
            with self.lock:
                self.found += violation.findings

    @staticmethod
    def _trim(seeded: Seeded, index: int, sequence: walks.Sequence) -> walks.Sequence:
        """On a crowded store, the first ``CROWDED_WALK`` sequences, shortened (see ``CROWDED_WALK``)."""
        if not seeded.crowded:
            return sequence
        sequences, steps = CROWDED_WALK
        return sequence[:steps] if index < sequences else []

    def stop(self) -> None:
        self.chains.stop()

    def finish(self, judge: Judge) -> None:
        """Wait for the walk; count its judgements; raise every distinct finding, or what stopped it."""
        outcomes = self.chains.outcomes()
        # On any store: a service may refuse every NewPet a walk drew (name and category rules are not
        # shown), which leaves the walk nothing to follow; short sequences drawn again, as on a crowded store.
        for attempt in range(1, CROWDED_TRIES):
            if self.seen.hops or any(outcomes) or self.found:
                break
            self.chains = self._send(walks.draw_sequences(self.run, self._seed(attempt), *CROWDED_WALK))
            outcomes += self.chains.outcomes()
        for clause, exchanges in self.counts.items():
            judge.count(clause, exchanges)
        judge.count(CLAUSE, self.seen.hops)
        findings = [f for o in outcomes if isinstance(o, Violation) for f in o.findings] + self.found
        if findings:
            raise Violation(*{f.fold_key(): f for f in findings}.values())
        problem = next((o for o in outcomes if isinstance(o, TargetProblem)), None)
        if problem is not None:
            raise problem


def _key(walk: int) -> str:
    return f"stateful-walk-{walk}"


@started_ahead("walked")
def start_walk(run: Run, item: pytest.Item) -> None:
    """The selected walk's sequences, drawn now and sent once set-up is done (the session starts it)."""
    walk: int = item.callspec.params["walk"]  # type: ignore[attr-defined]
    if _key(walk) not in run.started:
        run.started[_key(walk)] = Walk(run, walk)


@pytest.fixture
def walked(run: Run, walk: int, seeded: Seeded) -> Walk:
    """The walk as started ahead, or started now (at ``--contract-concurrency 1``, under xdist)."""
    if _key(walk) not in run.started:
        run.started[_key(walk)] = Walk(run, walk)
    started: Walk = run.started.pop(_key(walk))
    return started


@pytest.mark.generated
@pytest.mark.writes
@pytest.mark.clause(CLAUSE)
@pytest.mark.parametrize("walk", range(WALKS), ids=[f"walk-{n + 1}" for n in range(WALKS)])
def test_create_read_list_sequences(walk: int, judge: Judge, seeded: Seeded, walked: Walk) -> None:
    walked.finish(judge)
