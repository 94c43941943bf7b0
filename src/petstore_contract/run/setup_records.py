"""What set-up created and learnt, as frozen records (``Seeded``), and its one trip between the run's processes.

Set-up runs once per run (``Run.once``): the process that runs it writes ``Seeded.to_dict`` to the run's
shared folder and every other process (xdist workers) reads it back with ``Seeded.from_dict``, equal to
what the first one made.  Pets are JSON objects as the target answered them (any field may be any type:
each reader narrows); an answer is kept as its data (``api.answers_to_data``), the form in which a table
of answers crosses between processes.  ``Draft`` is the same record while set-up fills it in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from petstore_contract.core.records import Exchange
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.run.api import Row, answers_to_data

T = TypeVar("T")
AnswerData = JsonObject  # one answer as ``api.answers_to_data`` gives it: what crosses between processes


@dataclass(frozen=True)
class Probe:
    """A GET /pets/{id} of an id nobody had been handed out, read before any write; unanswered: no status,
    the problem's words as its body."""

    status: int | None
    body: str
    exchange: Exchange | None = None

    def to_dict(self) -> JsonObject:
        exchange = self.exchange.to_dict() if self.exchange is not None else None
        return {"status": self.status, "body": self.body, "exchange": exchange}

    @classmethod
    def from_dict(cls, data: JsonValue) -> Probe:
        item = _object(data)
        status, body, exchange = item.get("status"), item.get("body"), item.get("exchange")
        if (status is not None and not isinstance(status, int)) or not isinstance(body, str):
            raise ValueError(f"not a probe of set-up: {item!r:.80}")
        return cls(status, body, Exchange.from_dict(_object(exchange)) if exchange is not None else None)


@dataclass(frozen=True)
class Planned:
    """One create of set-up's plan of writes: the body it sent and what POST /pets answered."""

    sent: JsonObject
    answer: AnswerData

    def to_dict(self) -> JsonObject:
        return {"sent": self.sent, "answer": self.answer}

    @classmethod
    def from_dict(cls, data: JsonValue) -> Planned:
        item = _object(data)
        return cls(_object(item.get("sent")), _object(item.get("answer")))


@dataclass(frozen=True)
class OwnLook:
    """``looks.own_look``: each status page right after the first own animal of each status, with the
    animals (id, status) known to exist when it was asked for; empty where it was not taken."""

    known: tuple[JsonObject, ...] = ()
    pages: dict[str, AnswerData] = field(default_factory=dict)

    def to_dict(self) -> JsonObject:
        return {"known": list(self.known), "pages": dict(self.pages)}

    @classmethod
    def from_dict(cls, data: JsonValue) -> OwnLook:
        item = _object(data)
        return cls(_objects(item.get("known")), _table(item.get("pages")))


@dataclass(frozen=True)
class Seeded:
    """What set-up created and learnt, shared by the run's processes."""

    own: tuple[JsonObject, ...] = ()  # Pets as the service answered them
    sent: dict[str, JsonObject] = field(default_factory=dict)  # str(id) -> the NewPet sent (the status stored)
    fillers: int = 0
    before: tuple[JsonObject, ...] = ()  # pets listed before any write
    probes: dict[str, Probe] = field(default_factory=dict)  # str(id) -> read before writes
    whole_before: bool = False  # the store was seen whole before any write
    # A probe that answered 200 although the store, seen whole, did not list it: the store looked at
    # again at once.  Another client may have been handed that id in between (a busy service).
    listed_after_probes: tuple[str, ...] = ()  # such ids the second look listed
    whole_after_probes: bool = False  # the second look saw the store whole
    repeated: tuple[str, ...] = ()  # ids handed out twice in set-up: their last status unknown
    problem: str = ""  # why set-up could not create what it needed (the blocking clause's words)
    # The first own animal of each status as POST /pets answered it, by status: on a crowded store the
    # create tests judge these instead of creating more.
    own_answers: dict[str, Planned] = field(default_factory=dict)
    # The plan of writes (``writeplan``): each body by key, and what POST /pets answered for it.
    plan: dict[str, Planned] = field(default_factory=dict)
    created: dict[str, JsonObject] = field(default_factory=dict)  # str(id) -> every Pet set-up created
    early: dict[str, AnswerData] = field(default_factory=dict)  # the early look (``looks.early_look``)
    # The refused creates (``writeplan.rejected_bodies``), answered before the early look (on a store seen
    # whole, before any other write): their bodies (a JSON object, or a raw body's text) by key, and what
    # POST /pets answered.
    rejected: dict[str, JsonValue] = field(default_factory=dict)
    rejected_answers: dict[str, AnswerData] = field(default_factory=dict)
    after_refusals: dict[str, AnswerData] = field(default_factory=dict)  # the unfiltered page right after them
    own_look: OwnLook = field(default_factory=OwnLook)  # a store seen whole
    # Ids of animals made from invalid data the service accepted (a refused body answered 2xx): their
    # rejection clauses judge them; lists show them, unjudged for their shape (``expect.pet_list``).
    admitted: tuple[int, ...] = ()
    # Animals (id, status) the refused creates and the held-id create added (a client id ignored makes a
    # new animal): known to exist, and counted when set-up fills the store to 101 (so that it holds 101).
    beside_plan: tuple[JsonObject, ...] = ()
    filler_ids: tuple[str, ...] = ()
    newest: JsonObject | None = None  # the animal set-up created last, when it filled the store

    @property
    def crowded(self) -> bool:
        """The store could not be seen whole before the first write (see ``store.whole_store``)."""
        return not self.whole_before

    def to_dict(self) -> JsonObject:
        return {
            "own": list(self.own),
            "sent": dict(self.sent),
            "fillers": self.fillers,
            "before": list(self.before),
            "probes": {key: probe.to_dict() for key, probe in self.probes.items()},
            "whole_before": self.whole_before,
            "listed_after_probes": list(self.listed_after_probes),
            "whole_after_probes": self.whole_after_probes,
            "repeated": list(self.repeated),
            "problem": self.problem,
            "own_answers": {key: planned.to_dict() for key, planned in self.own_answers.items()},
            "plan": {key: planned.to_dict() for key, planned in self.plan.items()},
            "created": dict(self.created),
            "early": dict(self.early),
            "rejected": dict(self.rejected),
            "rejected_answers": dict(self.rejected_answers),
            "after_refusals": dict(self.after_refusals),
            "own_look": self.own_look.to_dict(),
            "admitted": list(self.admitted),
            "beside_plan": list(self.beside_plan),
            "filler_ids": list(self.filler_ids),
            "newest": self.newest,
        }

    @classmethod
    def from_dict(cls, data: JsonObject) -> Seeded:
        """The record ``to_dict`` wrote; ValueError where the data is not one."""
        newest = data.get("newest")
        return cls(
            own=_objects(data.get("own")),
            sent=_table(data.get("sent")),
            fillers=_int(data.get("fillers")),
            before=_objects(data.get("before")),
            probes=_records(data.get("probes"), Probe.from_dict),
            whole_before=data.get("whole_before") is True,
            listed_after_probes=_strings(data.get("listed_after_probes")),
            whole_after_probes=data.get("whole_after_probes") is True,
            repeated=_strings(data.get("repeated")),
            problem=_string(data.get("problem")),
            own_answers=_records(data.get("own_answers"), Planned.from_dict),
            plan=_records(data.get("plan"), Planned.from_dict),
            created=_table(data.get("created")),
            early=_table(data.get("early")),
            rejected=dict(_object(data.get("rejected"))),
            rejected_answers=_table(data.get("rejected_answers")),
            after_refusals=_table(data.get("after_refusals")),
            own_look=OwnLook.from_dict(data.get("own_look")),
            admitted=tuple(_int(item) for item in _list(data.get("admitted"))),
            beside_plan=_objects(data.get("beside_plan")),
            filler_ids=_strings(data.get("filler_ids")),
            newest=_object(newest) if newest is not None else None,
        )


@dataclass
class Draft:
    """``Seeded`` while set-up fills it in, step by step; ``seal`` gives the frozen record."""

    own: list[JsonObject] = field(default_factory=list)
    sent: dict[str, JsonObject] = field(default_factory=dict)
    fillers: int = 0
    before: list[JsonObject] = field(default_factory=list)
    probes: dict[str, Probe] = field(default_factory=dict)
    whole_before: bool = False
    listed_after_probes: list[str] = field(default_factory=list)
    whole_after_probes: bool = False
    repeated: list[str] = field(default_factory=list)
    problem: str = ""
    own_answers: dict[str, Planned] = field(default_factory=dict)
    plan: dict[str, Planned] = field(default_factory=dict)
    created: dict[str, JsonObject] = field(default_factory=dict)
    early: dict[str, AnswerData] = field(default_factory=dict)
    rejected: dict[str, JsonValue] = field(default_factory=dict)
    rejected_answers: dict[str, AnswerData] = field(default_factory=dict)
    after_refusals: dict[str, AnswerData] = field(default_factory=dict)
    own_look: OwnLook = field(default_factory=OwnLook)
    admitted: list[int] = field(default_factory=list)
    beside_plan: list[JsonObject] = field(default_factory=list)
    filler_ids: list[str] = field(default_factory=list)
    newest: JsonObject | None = None

    @property
    def crowded(self) -> bool:
        return not self.whole_before

    def seal(self) -> Seeded:
        return Seeded(
            own=tuple(self.own),
            sent=self.sent,
            fillers=self.fillers,
            before=tuple(self.before),
            probes=self.probes,
            whole_before=self.whole_before,
            listed_after_probes=tuple(self.listed_after_probes),
            whole_after_probes=self.whole_after_probes,
            repeated=tuple(self.repeated),
            problem=self.problem,
            own_answers=self.own_answers,
            plan=self.plan,
            created=self.created,
            early=self.early,
            rejected=self.rejected,
            rejected_answers=self.rejected_answers,
            after_refusals=self.after_refusals,
            own_look=self.own_look,
            admitted=tuple(self.admitted),
            beside_plan=tuple(self.beside_plan),
            filler_ids=tuple(self.filler_ids),
            newest=self.newest,
        )


def answer_table(answers: dict[str, Row]) -> dict[str, AnswerData]:
    """Answers as the data the run's processes share (``api.answers_to_data``), in JSON's own types (a
    header pair a list, as the trip gives it back): a record is the same before the trip and after it."""
    return {key: _object(_plain(item)) for key, item in answers_to_data(answers).items()}


def _plain(value: JsonLike) -> JsonValue:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return [_plain(item) for item in value]


# -- narrowing the data of the trip ------------------------------------------------------------------------


def _object(value: JsonValue) -> JsonObject:
    if not isinstance(value, dict):
        raise ValueError(f"not a JSON object in set-up's record: {value!r:.80}")
    return value


def _list(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        raise ValueError(f"not a JSON array in set-up's record: {value!r:.80}")
    return value


def _int(value: JsonValue) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"not an integer in set-up's record: {value!r:.80}")
    return value


def _string(value: JsonValue) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a string in set-up's record: {value!r:.80}")
    return value


def _objects(value: JsonValue) -> tuple[JsonObject, ...]:
    return tuple(_object(item) for item in _list(value))


def _strings(value: JsonValue) -> tuple[str, ...]:
    return tuple(_string(item) for item in _list(value))


def _table(value: JsonValue) -> dict[str, JsonObject]:
    return {key: _object(item) for key, item in _object(value).items()}


def _records(value: JsonValue, read: Callable[[JsonValue], T]) -> dict[str, T]:
    return {key: read(item) for key, item in _object(value).items()}
