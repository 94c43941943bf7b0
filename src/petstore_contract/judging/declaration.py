"""A check as one declaration: its clause, the answers it applies to, whether its finding may be asked again.

As Schemathesis registers a function marked ``@schemathesis.check`` and Hypothesis' state machine
collects the methods ``@rule`` stamps, ``declare`` puts a check's function and everything the run
needs to know about it in one ``Declared`` record, beside the function (``checks.py``).  The pipeline
of every exchange (``pipeline.py``) reads where an answer stands (its ``Route``), then runs, in the order
declared, every declaration that applies to it; at the end of a run, ``reask.py`` and
``petstore-contract replay`` judge a finding again by its kind's declaration.

Where an answer stands is decided once, from the request alone and its status (``Route``): the checks
then say which routes they apply to, and nothing names a check outside its declaration.

A kind is its declaration's string (``@declare("documented-status", ...)``): a check of a new kind,
written in ``checks.py``, is named there alone.  ``Kind`` holds the kinds the expectations shared with the
tests raise (``expect.py``, the store model, the refused creates, Schemathesis' wiring), which sit below
``checks.py`` and so cannot take a name from it; each of them is declared once all the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, TypedDict, Unpack

from petstore_contract.core.records import Finding, Mismatch
from petstore_contract.interface.clauses import ClauseId
from petstore_contract.interface.jsontypes import JsonValue
from petstore_contract.transport.answers import Answer

if TYPE_CHECKING:  # annotations only: the modules below import ``Kind`` from here
    from requests import PreparedRequest

    from petstore_contract.interface.silence import Placed
    from petstore_contract.judging.model import StoreModel
    from petstore_contract.judging.refusals import Refusals


class Kind(StrEnum):
    """The kinds the shared expectations raise (``Finding.expectation`` is "<kind>" or "<kind>:<argument>").

    Each is declared once in ``checks.py``, as every kind is; a kind whose check lives in ``checks.py``
    alone is its declaration's string and has no member here.
    """

    OWN = ""  # a check written in the test itself (a comparison the registry has no function for)
    STATUS = "status"  # argument: the statuses expected, "201" or "400,422"
    KEY_ACCEPTED = "key-accepted"
    NO_SERVER_ERROR = "no-5xx"
    JSON_MEDIA_TYPE = "json-media-type"
    JSON_BODY = "json-body"
    ERROR_BODY = "error-body"
    PET_LIST = "pet-list"
    PET = "pet"  # one animal inside a larger answer
    SAME_FIELD = "same-field"  # argument: the field's name
    SAME_ANIMAL = "same-animal"  # argument: the field's name; the store model's one representation
    BEARER_CHALLENGE = "bearer-challenge"
    DEPRECATION_SCOPE = "deprecation-scope"
    DEPRECATION_HEADER = "deprecation-header"
    DEPRECATION_FUTURE = "deprecation-future"
    SCHEMATHESIS = "schemathesis"  # argument: Schemathesis' failure label

    def expectation(self, argument: str = "") -> str:
        return expectation(self, argument)


def expectation(kind: str, argument: str = "") -> str:
    """What a finding of ``kind`` records: "<kind>", or "<kind>:<argument>" (``status:201``)."""
    return f"{kind}:{argument}" if argument else kind


# Called with an answer (a re-ask's, or the replay's); raises Mismatch when it still breaks the check.
# What it returns (the Error body an expectation read, say) is not read.
Check = Callable[[Answer], object]


class Route(Enum):
    """Where an answer stands, from its request and status (``pipeline.route``): what the checks apply to."""

    WEB_SERVER = "the web server's own answer to a request it answers itself (judging/http_layer.py)"
    REDIRECT = "a 3xx to a request the document describes: §4's Responses tables list none"
    CREDENTIAL = "a request without the valid key, not answered 401 (§5.3): its credential clause first"
    PLAIN_CREATE = "a plain valid NewPet of the run's own with the valid key, not answered 201"
    ADMITTED = "invalid data the service accepted with a 201: its rejection clause judges it"
    DOCUMENTED = "an answer of one of the document's operations"
    OUTSIDE_UNKEYED = "outside the document, without the key, served or refused with a status HTTP does not fit"
    OUTSIDE_UNFITTING = "outside the document, with the key, refused with a status HTTP does not fit"
    OUTSIDE_REFUSED = "outside the document, refused with a status HTTP fits: §7's Error body"
    OUTSIDE_QUIET = "outside the document with nothing more to judge (a 2xx the path names no animal for, a HEAD)"


class Placement(Enum):
    """A clause that depends on the answer's operation and status (``checks.clause_of``)."""

    SUCCESS = "the operation's success clause"
    # A 5xx (or an undocumented status that is no success): the operation's success clause where the
    # document shows no shape for its success (GET /store/orders: all it says is that it exists), else
    # ``responses.documented``.
    DOCUMENTED = "the operation's documented answers"


# The answers a check applies to beyond its routes (the status, the schema the document gives it).
Applies = Callable[["Judged"], bool]
# A check of the pipeline: raises Mismatch (with the exchange) when the answer breaks it.
Run = Callable[["Judged"], None]
# What the pipeline does with what a check read (the store model, the refused creates), told whether it
# held: the findings it makes, in the order they come.
Then = Callable[["Judged", bool], list[Finding]]


@dataclass
class Judged:
    """One answer as the pipeline judges it: where it stands, and what its checks read and concluded."""

    answer: Answer
    request: PreparedRequest  # as it went out (``transport.Observed``)
    operation: str  # the operationId of the request, "" outside the document
    placed: Placed  # where the request stands (interface/silence.py)
    route: Route
    credential: ClauseId  # the credential clause a request without the valid key is judged on
    admitted: set[int]  # ids handed out for invalid data the service accepted
    model: StoreModel  # every Pet of every answer, one representation of its animal
    refusals: Refusals  # refused creates, held against every animal shown
    schema: str | None = None  # the body the document gives the answer's status ("Pet", "Pet[]", "Error")
    read: list[JsonValue] = field(default_factory=list)  # what a shape check read (Pets), for the store model
    outcomes: dict[str, Mismatch | None] = field(default_factory=dict)  # each check run, once

    @property
    def status(self) -> int:
        return self.answer.status

    def holds(self, declared: Declared) -> bool:
        """Whether ``declared``'s check holds on this answer, run at most once (a check may need another's)."""
        if declared.kind not in self.outcomes:
            assert declared.run is not None
            try:
                declared.run(self)
                self.outcomes[declared.kind] = None
            except Mismatch as mismatch:
                self.outcomes[declared.kind] = mismatch
        return self.outcomes[declared.kind] is None


def always(_: Judged) -> bool:
    return True


@dataclass(frozen=True)
class Declared:
    """One kind of check: its clause, the answers the pipeline runs it on, how a finding of it is judged again."""

    kind: str  # what its findings record before any argument: a ``Kind``, or a kind ``checks.py`` alone raises
    # A clause id, or where the pipeline places it for the answer's operation and status (``Placement``);
    # None: the test's judge block names it.
    clause: ClauseId | Placement | None = None
    place: Callable[[Judged], ClauseId] | None = None  # the clause on a route, where the route decides it
    again: Callable[[str], Check] | None = None  # the check made from the argument (the text after "kind:")
    not_again: str = ""  # why a finding of it cannot be judged again from one answer
    run: Run | None = None  # the pipeline's check of every answer; None: only tests and Schemathesis run it
    on: frozenset[Route] = frozenset()  # the routes the pipeline runs it on
    when: Applies = always  # the answers of those routes it applies to
    halts: bool = False  # a failure ends the answer's checks (what follows would judge a wrong answer twice)
    # Judged before the pipeline takes note of the answer (an id handed out, a refused create), and halting:
    # an answer that fails it is no answer to take note of.
    gate: bool = False
    then: Then | None = None
    expected: str = ""  # what it expects, in the words of its findings

    @property
    def reaskable(self) -> bool:
        return self.again is not None

    def applies(self, judged: Judged) -> bool:
        return self.run is not None and judged.route in self.on and self.when(judged)


DECLARED: list[Declared] = []  # in the order the pipeline runs them: the order of ``checks.py``


class Declaration(TypedDict, total=False):
    """What ``declare`` and ``declared`` take beside the kind: ``Declared``'s fields, each as it types it."""

    clause: ClauseId | Placement | None
    place: Callable[[Judged], ClauseId] | None
    again: Callable[[str], Check] | None
    not_again: str
    on: frozenset[Route]
    when: Applies
    halts: bool
    gate: bool
    then: Then | None
    expected: str


def declare(kind: str, **declaration: Unpack[Declaration]) -> Callable[[Run], Run]:
    """Declare ``kind``'s check, the decorated function being the pipeline's check of every answer."""

    def stamp(run: Run) -> Run:
        DECLARED.append(Declared(kind, run=run, **declaration))
        return run

    return stamp


def declared(kind: str, **declaration: Unpack[Declaration]) -> None:
    """Declare a kind the pipeline does not run on every answer (a test's, Schemathesis', a comparison)."""
    DECLARED.append(Declared(kind, **declaration))
