"""Stateful walks: sequences of steps drawn with Hypothesis in this thread, sent as chains on the run's pool.

A walk is a list of sequences; a sequence is a chain of steps over the spec's links (create an
animal, read it back by the id its answer gave, list the animals with the status it showed), each
step sent once the step before it has been answered.  Two constraints give the shape:

- Hypothesis cannot run in two threads at once here (CPython 3.11: "AST constructor recursion depth
  mismatch" when it reads a strategy's source), so every step is *drawn* in the thread that asks
  (``draw_sequences``), as data: a drawn createPet case, or "read / list what the k-th create of
  this sequence answered";
- the sequences do not depend on each other, so they are *sent* side by side on the run's bounded
  pool (``Transport.batch``), one step at a time each (``Chains``): a walk costs about one chain's
  round trips, whatever the distance to the target, and the session starts it as soon as the
  selection is known (``ahead.started_ahead``), so that it overlaps the rest of the run.

Every request goes through the run's transport (budget, breaker, recording, coverage); what an
answer means is the caller's (``answered``): a chain stops at the first ``Violation`` or
``TargetProblem`` it raises, as a state machine's sequence stops at its first failing step, and any
other exception is the chain's own error and reaches the test unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from petstore_contract.core.records import Violation
from petstore_contract.judging.expect import animal_made
from petstore_contract.run import Run
from petstore_contract.run.setup import set_up_of
from petstore_contract.run.setup_records import Seeded
from petstore_contract.transport import Batch, TargetProblem

CREATE, READ, LIST = "create", "read", "list"
# The order Hypothesis shrinks towards: the simplest sequence follows its first create's links.
KINDS = (READ, LIST, CREATE)
LIST_LIMIT = 100  # the ListByStatus link's limit (spec/openapi.yaml)


@dataclass(frozen=True)
class Step:
    kind: str  # CREATE | READ | LIST
    case: Any = None  # CREATE: the drawn createPet case (Schemathesis)
    of: int = 0  # READ | LIST: which earlier create of the sequence (0: its first)


Sequence = list[Step]
# A chain's end: None (every step answered and judged), or the Violation or TargetProblem that stopped it.
Outcome = Violation | TargetProblem | None


def _sequence(create_cases: st.SearchStrategy[Any], steps: int) -> st.SearchStrategy[Sequence]:
    @st.composite
    def sequence(draw: st.DrawFn) -> Sequence:
        drawn = [Step(CREATE, draw(create_cases))]
        while len(drawn) < steps:
            kind = draw(st.sampled_from(KINDS))
            creates = sum(step.kind == CREATE for step in drawn)
            follows = Step(kind, of=draw(st.integers(0, creates - 1))) if kind != CREATE else None
            drawn.append(follows or Step(CREATE, draw(create_cases)))
        return drawn

    return sequence()


def draw_sequences(run: Run, seed_value: int, count: int, steps: int) -> list[Sequence]:
    """``count`` sequences of ``steps`` steps, drawn by Hypothesis from ``seed_value`` (the same seed draws
    the same sequences); the first is the simplest (Hypothesis tries the simplest data first).  In the
    calling thread, which must be the only one drawing with Hypothesis."""
    schema = run.cases.schema(GenerationMode.POSITIVE)
    create_cases = schema["/pets"]["POST"].as_strategy(generation_mode=GenerationMode.POSITIVE)
    drawn: list[Sequence] = []

    @seed(seed_value)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        # Nothing fails while drawing: generating is the whole work.
        phases=[Phase.generate],
    )
    @given(_sequence(create_cases, steps))
    def collect(sequence: Sequence) -> None:
        drawn.append(sequence)

    collect()
    return drawn


def _linked_case(run: Run, step: Step, created: list[Any]) -> Any:
    """The case a step sends: its drawn create, or the link's read or list filled from the answer of the
    create it follows; None when that create answered no animal to follow (the link cannot be followed)."""
    schema = run.cases.schema(GenerationMode.POSITIVE)
    if step.kind == CREATE:
        return step.case
    pet = created[step.of] if step.of < len(created) else None
    if not isinstance(pet, dict):
        return None
    if step.kind == READ:
        pet_id = pet.get("id")
        if not isinstance(pet_id, int) or isinstance(pet_id, bool):
            return None
        return schema["/pets/{petId}"]["GET"].Case(path_parameters={"petId": pet_id})
    status = pet.get("status")
    query = {"status": status, "limit": LIST_LIMIT} if isinstance(status, str) else {"limit": LIST_LIMIT}
    return schema["/pets"]["GET"].Case(query=query)


def _created(response: Any) -> Any:
    """The Pet a create answered (None for any other answer): what the links read.  A 2xx other than 201
    whose body is a Pet with its id made that animal all the same (``expect.animal_made``): the links
    follow it, and its status is create.created's finding."""
    if response.status_code == 201:
        try:
            return response.json()
        except (ValueError, RecursionError):
            return None
    return animal_made(response.status_code, response.content)


class Chains:
    """Sequences sent side by side on the run's pool once set-up is done; each one step at a time.

    ``answered(case, response)`` judges each answer (raising ``Violation`` stops that chain);
    ``trim(seeded, index, sequence)`` may shorten or drop a sequence once set-up has said what the store is.
    """

    def __init__(
        self,
        run: Run,
        sequences: list[Sequence],
        answered: Callable[[Any, Any], None],
        trim: Callable[[Seeded, int, Sequence], Sequence] | None = None,
    ) -> None:
        self.run = run
        self.answered = answered
        self.trim = trim
        self.stopped = threading.Event()
        self.batch: Batch[tuple[int, Sequence], Outcome] = run.transport.batch(self._chain, len(sequences) or 1)
        for index, sequence in enumerate(sequences):
            self.batch.submit((index, sequence))

    def outcomes(self) -> list[Outcome]:
        """Wait for every chain: how each ended, in the order of the sequences.  An exception other than
        a Violation or TargetProblem (an error of the suite) is raised as it was raised."""
        return self.batch.results()

    def stop(self) -> None:
        """No further step is sent (the run ends without waiting for this walk)."""
        self.stopped.set()
        self.batch.close()

    def _chain(self, job: tuple[int, Sequence]) -> Outcome:
        index, sequence = job
        seeded = set_up_of(self.run).seeded  # nothing is sent before set-up is done
        if self.trim is not None:
            sequence = self.trim(seeded, index, sequence)
        created: list[Any] = []  # what each create of this chain answered, for the links that follow it
        kwargs = self.run.cases.call_kwargs()
        for step in sequence:
            if self.stopped.is_set():
                return None
            case = _linked_case(self.run, step, created)
            if case is None:
                continue
            try:
                response = case.call(**kwargs)
                if step.kind == CREATE:
                    created.append(_created(response))
                self.answered(case, response)
            except (Violation, TargetProblem) as stop:
                return stop
        return None
