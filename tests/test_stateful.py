"""Stateful sequences (Schemathesis state machine over the spec's links): create → read → list.

Along every hop each field survives exactly and ids are never reused (§2, §4.1-§4.3).  The
profile's state-machine runs are split into ``WALKS`` independent walks, each a test with its own
seed: a walk is a chain of round trips, so far from the target a concurrent run walks them side
by side in child processes (``petstore_contract.run.sidecar``); elsewhere they run one after the other.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, seed, settings
from schemathesis import GenerationMode

from petstore_contract.core.records import BUDGET, TARGET, Finding, Violation, find_error
from petstore_contract.judging.expect import Judge
from petstore_contract.judging.generated import CUSTOM_CHECKS
from petstore_contract.run import current_run
from petstore_contract.run.setup import Seeded
from petstore_contract.transport import TargetProblem

FIELDS = ("name", "categoryId", "status")
CLAUSE = "stateful.round-trip"
WALKS = 2
# On a store too large to see whole every animal a walk adds stays there: one short sequence a walk
# (a create, then the read or list that follows it) instead of the profile's runs, drawn again with
# the next seed (at most ``CROWDED_TRIES`` times) while none held an answer against a created animal
# (a service may refuse the names drawn: name rules are not shown).
# Two sequences: Hypothesis draws the simplest data first (an empty name, category 0), which a
# service may refuse (name rules are not shown), so the second is the first with drawn data.
CROWDED_WALK = (2, 3)  # (sequences, steps)
CROWDED_TRIES = 5


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
        self.found: list[Violation] = []  # every violation as it was seen, replayable or not
        self.hops = 0  # answers held against what the sequences created (the clause's judgements)

    def fail(self, response: Any, expected: str, observed: str) -> Violation:
        return self.keep(Violation(Finding(CLAUSE, expected, observed, self.exchange_of(response), source="generated")))

    def keep(self, violation: Violation) -> Violation:
        self.found.append(violation)
        return violation

    def created(self, case: Any, response: Any) -> None:
        pet = _body(response)
        if response.status_code != 201 or not isinstance(pet, dict) or not isinstance(case.body, dict):
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
            pet_id = _id(item)
            known = self.pets.get(pet_id) if pet_id is not None else None
            self.hops += known is not None
            for field, value in (known or {}).items():
                if item.get(field) != value:
                    raise self.fail(response, f"id {pet_id} listed with {field}={value!r}", f"{item.get(field)!r}")


def run_sequences(walk: int, judge: Judge, crowded: bool = False) -> None:
    """One walk of the state machine over the spec's links: the run's seed and the walk's number
    pick its sequences (the same seed walks the same sequences)."""
    run = current_run()
    schema = run.cases.schema(GenerationMode.POSITIVE)
    seen = RoundTrip(run.cases.exchange_of)
    hooks = {"POST /pets": seen.created, "GET /pets/{petId}": seen.read, "GET /pets": seen.listed}
    kwargs = run.cases.call_kwargs()

    class Sequences(schema.as_state_machine()):  # type: ignore[misc]
        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return kwargs

        def after_call(self, response: Any, case: Any) -> None:
            super().after_call(response, case)
            hook = hooks.get(case.operation.label)
            if hook is not None:
                hook(case, response)

        def validate_response(self, response: Any, case: Any, **call: Any) -> None:
            # The state machine's own validation keeps its record of the scenario (stateful checks).
            checks = CUSTOM_CHECKS
            try:
                run.cases.judge_response(
                    case, response, lambda: super(Sequences, self).validate_response(response, case, checks, **call)
                )
            except Violation as violation:
                raise seen.keep(violation) from None

    profile = run.profile
    tries = range(CROWDED_TRIES) if crowded else range(1)
    size = CROWDED_WALK if crowded else (-(-profile.stateful_examples // WALKS), profile.stateful_steps)
    try:
        for attempt in tries:
            _walk(seed(run.settings.seed * WALKS + walk + attempt * 1_000_003)(Sequences), size)
            if seen.hops:
                break
    except Exception as error:
        judge.count(CLAUSE, seen.hops)
        # Hypothesis replays a failing sequence to report it; against a live store the replay takes
        # other steps (new ids, a fuller store) and it gives up ("Inconsistent data generation",
        # "Flaky").  What was seen the first time is the finding.
        if seen.found and find_error(error, Violation) is None:
            raise seen.found[0] from None
        # A budget spent (or a target gone) mid-walk makes Hypothesis' replay of the sequence differ
        # ("Inconsistent data generation"): the target could not be asked, which is no error of the suite.
        spent, gone = run.guard.budget_spent(), run.guard.breaker_open()
        if (spent or gone) and find_error(error, Violation) is None:
            raise TargetProblem(spent or gone or "", kind=BUDGET if spent else TARGET) from None
        raise
    judge.count(CLAUSE, seen.hops)


def _walk(walker: Any, size: tuple[int, int]) -> None:
    """``size``: the sequences (the profile's runs, dealt out among the walks) and steps of each."""
    walker.run(
        settings=settings(
            max_examples=size[0],
            stateful_step_count=size[1],
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            # Shrinking a failing sequence can take minutes; the unshrunk sequence and the
            # failing step's request are enough to replay, and CI time is bounded.
            phases=[Phase.explicit, Phase.reuse, Phase.generate],
        )
    )


@pytest.mark.generated
@pytest.mark.writes
@pytest.mark.clause(CLAUSE)
@pytest.mark.parametrize("walk", range(WALKS), ids=[f"walk-{n + 1}" for n in range(WALKS)])
def test_create_read_list_sequences(walk: int, judge: Judge, seeded: Seeded) -> None:
    # Inline, not in a background thread: Hypothesis running in two threads at once trips a CPython
    # 3.11 bug ("AST constructor recursion depth mismatch") when it reads a strategy's source.
    run_sequences(walk, judge, crowded=seeded.crowded)
