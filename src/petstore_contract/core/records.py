"""The structured records every output is built from.

A check that fails raises a ``Violation`` carrying one or more ``Finding`` records; a check that
cannot decide raises ``Undecided``.  The plugin turns test outcomes into ``ClauseResult`` rows and
one ``RunResult``; the reports, JUnit, the terminal and the self-tests read those records, never
another output's text.  Every record is plain data (``to_dict``/``from_dict``) so it survives the
trip from an xdist worker to the controller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import pytest

from petstore_contract.core import replay, wire

# The records' vocabulary, imported from here as from its own module.
from petstore_contract.core.outcomes import *  # noqa: F403
from petstore_contract.core.outcomes import EXIT_CODES, Outcome, Reason, Repeat, Verdict
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.interface.spec import operation_of

# 2: findings carry ``expectation``, ``signature`` and ``id``; the run carries ``problems``.
# 3: findings carry ``repeat`` and ``repeat_detail`` (asked again at the run's end, ``reask``).
# 5: a conforming clause may carry ``not_applicable`` notes (``NOT_APPLICABLE``).
SCHEMA_VERSION = 5


BODY_EXCERPT = 2000


def cut(text: str, limit: int = BODY_EXCERPT) -> str:
    """A long value cut with its length shown, so no report grows with what a server sends."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [cut: {len(text):,} characters in all]"


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, already redacted: the key appears as ``$<key variable>``."""

    method: str
    url: str
    request_headers: tuple[tuple[str, str], ...] = ()
    request_body: str | None = None
    status: int | None = None  # None: no answer (the transport's problem is in ``problem``)
    response_headers: tuple[tuple[str, str], ...] = ()
    response_body: str = ""  # an excerpt (``cut``)
    response_length: int = 0
    problem: str = ""
    # The request body's exact bytes (base64) when they are not UTF-8: ``request_body`` shows them as
    # U+FFFD, the replay sends these.  None for a UTF-8 body, which ``request_body`` holds exactly.
    request_body_base64: str | None = None

    def curl(self, key_variable: str = "") -> str:
        """A command that replays the request in a POSIX shell, exactly the bytes judged; only the key's
        variable ``$<key_variable>`` is left to the shell (``core/replay.py``)."""
        headers = self.request_headers
        return replay.curl(self.method, self.url, headers, self.request_body, self.request_body_base64, key_variable)

    def header(self, name: str) -> str | None:
        for key, value in self.response_headers:
            if key.lower() == name.lower():
                return value
        return None

    def to_dict(self) -> JsonObject:
        return {
            "method": self.method,
            "url": self.url,
            "request_headers": [[name, value] for name, value in self.request_headers],
            "request_body": self.request_body,
            "status": self.status,
            "response_headers": [[name, value] for name, value in self.response_headers],
            "response_body": self.response_body,
            "response_length": self.response_length,
            "problem": self.problem,
            "request_body_base64": self.request_body_base64,
        }

    @classmethod
    def from_dict(cls, value: JsonLike) -> Exchange:
        data = wire.fields(value, "exchange")
        return cls(
            method=wire.text(data, "method"),
            url=wire.text(data, "url"),
            request_headers=wire.pairs(data, "request_headers"),
            request_body=wire.maybe_text(data, "request_body"),
            status=wire.maybe_number(data, "status"),
            response_headers=wire.pairs(data, "response_headers"),
            response_body=wire.text(data, "response_body", ""),
            response_length=wire.number(data, "response_length", 0),
            problem=wire.text(data, "problem", ""),
            request_body_base64=wire.maybe_text(data, "request_body_base64"),
        )


class Signature(NamedTuple):
    """What makes two findings "the same violation" across runs: no ids, seeds, times or observed text."""

    operation: str  # "GET /pets/{petId}" (the spec's path template), "" without a request
    clause: str
    expectation: str  # the check's kind ("status:404", "bearer-challenge"), or the expected text made stable

    def text(self) -> str:
        return " · ".join(part or "-" for part in self)

    def to_dict(self) -> dict[str, str]:
        return self._asdict()


# Values that differ from run to run inside an expected text: the suite's own names, then numbers.
_RUN_NAMES = re.compile(r"contract-[A-Za-z0-9_-]+")
_NUMBERS = re.compile(r"\d+")


def stable(text: str) -> str:
    """An expected text without what changes between runs (ids, limits, the run's names): "404 for id N"."""
    return " ".join(_NUMBERS.sub("N", _RUN_NAMES.sub("<name>", text)).split())


@dataclass(frozen=True)
class Finding:
    """One piece of evidence that a clause is violated."""

    clause: str
    expected: str
    observed: str
    exchange: Exchange | None = None
    test: str = ""  # the pytest node id, filled in by the plugin
    source: str = "targeted"  # targeted | generated
    # The check that failed, as data: "<kind>" or "<kind>:<argument>" (``rejudge`` can run it again).
    expectation: str = ""
    # Asked again at the run's end: REPRODUCED, SEEN_ONCE or NOT_REASKED ("" until the run's end
    # decides it), and one line saying what came back or why it was not sent.  Not in the signature.
    repeat: Repeat = Repeat.UNASKED
    repeat_detail: str = ""

    def signature(self) -> Signature:
        """Stable across runs: the operation, the clause and the expectation (never the observed text)."""
        operation = operation_of(self.exchange.method, self.exchange.url) if self.exchange else ""
        return Signature(operation, self.clause, self.expectation or stable(self.expected))

    def with_test(self, nodeid: str) -> Finding:
        return self if self.test else replace(self, test=nodeid)

    def summary(self) -> str:
        """One line: clause id and the broken expectation (JUnit message, terminal, Markdown)."""
        request = f" ({self.exchange.method} {self.exchange.url})" if self.exchange else ""
        return f"{self.clause}: expected {self.expected}; observed {self.observed}{request}"

    def fold_key(self) -> tuple[str, str, str]:
        """Findings with the same clause and expectation and observation are one finding."""
        return (self.clause, self.expected, self.observed)

    def to_dict(self) -> JsonObject:
        signature: JsonObject = {**self.signature().to_dict()}
        return {
            "clause": self.clause,
            "expected": self.expected,
            "observed": self.observed,
            "exchange": self.exchange.to_dict() if self.exchange else None,
            "test": self.test,
            "source": self.source,
            "expectation": self.expectation,
            "repeat": str(self.repeat),
            "repeat_detail": self.repeat_detail,
            "signature": signature,
        }

    @classmethod
    def from_dict(cls, value: JsonLike) -> Finding:
        """Its ``signature``, ``id`` and ``waiver`` are computed or added by the run, never read back."""
        data = wire.fields(value, "finding")
        exchange = data.get("exchange")
        return cls(
            clause=wire.text(data, "clause"),
            expected=wire.text(data, "expected"),
            observed=wire.text(data, "observed"),
            exchange=Exchange.from_dict(exchange) if exchange else None,
            test=wire.text(data, "test", ""),
            source=wire.text(data, "source", "targeted"),
            expectation=wire.text(data, "expectation", ""),
            repeat=Repeat(wire.text(data, "repeat", "")),
            repeat_detail=wire.text(data, "repeat_detail", ""),
        )


@dataclass(frozen=True)
class Note:
    """Why a clause stayed undecided: a kind from this module and one line for people."""

    clauses: tuple[str, ...]
    kind: Reason
    reason: str
    blocked_by: str = ""  # the clause whose failure left a precondition unmet

    def to_dict(self) -> JsonObject:
        clauses: list[JsonValue] = [*self.clauses]
        return {"clauses": clauses, "kind": str(self.kind), "reason": self.reason, "blocked_by": self.blocked_by}

    @classmethod
    def from_dict(cls, value: JsonLike) -> Note:
        data = wire.fields(value, "note")
        kind = Reason(wire.text(data, "kind"))
        return cls(wire.texts(data, "clauses"), kind, wire.text(data, "reason"), wire.text(data, "blocked_by", ""))


class Mismatch(AssertionError):
    """What a check saw against what it expected; the ``judge`` block around it names the clause."""

    def __init__(self, expected: str, observed: str, exchange: Exchange | None = None, expectation: str = "") -> None:
        self.expected, self.observed, self.exchange = expected, observed, exchange
        self.expectation = str(expectation)  # the check's kind as data (see Finding.expectation)
        super().__init__(f"expected {expected}; observed {observed}")

    def finding(self, clause: str) -> Finding:
        return Finding(clause, self.expected, self.observed, self.exchange, expectation=self.expectation)


class Violation(AssertionError):
    """A check failed: the findings say which clause, what was expected and what came back."""

    def __init__(self, *findings: Finding) -> None:
        self.findings = findings
        super().__init__("\n".join(f.summary() for f in findings))


class Undecided(pytest.skip.Exception):  # type: ignore[name-defined,misc]
    """A check that cannot decide: reported as a skip, its clauses undecided with the reason."""

    def __init__(self, note: Note) -> None:
        self.note = note
        super().__init__(f"undecided ({note.kind}): {note.reason}", allow_module_level=False)


def undecided(clauses: str | tuple[str, ...], kind: Reason, reason: str, blocked_by: str = "") -> Undecided:
    ids = (clauses,) if isinstance(clauses, str) else tuple(clauses)
    return Undecided(Note(ids, kind, reason, blocked_by))


@dataclass
class TestRecord:
    """What one test decided, carried on its pytest report (``to_dict``) from worker to controller."""

    __test__ = False  # not a pytest test class

    nodeid: str
    clauses: tuple[str, ...]
    outcome: Outcome = Outcome.CONFORMS
    judged: dict[str, Outcome] = field(default_factory=dict)  # clause -> its outcome in this test
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    detail: str = ""  # for an error of the suite itself: its one-line description
    examined: dict[str, int] = field(default_factory=dict)  # clause -> exchanges judged for it

    def to_dict(self) -> JsonObject:
        return {
            "nodeid": self.nodeid,
            "clauses": [*self.clauses],
            "outcome": str(self.outcome),
            "judged": {cid: str(outcome) for cid, outcome in self.judged.items()},
            "findings": [f.to_dict() for f in self.findings],
            "notes": [n.to_dict() for n in self.notes],
            "warnings": [*self.warnings],
            "detail": self.detail,
            "examined": {**self.examined},
        }

    @classmethod
    def from_dict(cls, value: JsonLike) -> TestRecord:
        data = wire.fields(value, "test record")
        judged = wire.table(data, "judged")
        return cls(
            nodeid=wire.text(data, "nodeid"),
            clauses=wire.texts(data, "clauses"),
            outcome=Outcome(wire.text(data, "outcome")),
            judged={cid: Outcome(wire.text(judged, cid)) for cid in judged},
            findings=[Finding.from_dict(f) for f in wire.items(data, "findings")],
            notes=[Note.from_dict(n) for n in wire.items(data, "notes")],
            warnings=list(wire.texts(data, "warnings")),
            detail=wire.text(data, "detail", ""),
            examined=wire.counts(data, "examined"),
        )


@dataclass
class ClauseResult:
    """One row of the conformance matrix."""

    id: str
    section: str
    level: str  # MUST | SHOULD
    quote: str  # the document's (or the RFC's) own sentence
    outcome: Outcome
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    needs_complete_view: bool = False
    exchanges: int = 0  # exchanges of the target judged for this clause, over every test

    def numbered(self) -> list[tuple[str, Finding]]:
        """Each finding with its id, which names it within one summary.json (a bundle): "<clause>/<n>"."""
        return [(f"{self.id}/{n}", finding) for n, finding in enumerate(self.findings, 1)]

    def to_dict(self, gate: Mapping[str, JsonLike] | None = None) -> JsonObject:
        """Its row of summary.json; a finding ``gate`` waived is marked with its waiver (it stays a finding
        of its violated clause)."""
        findings: list[JsonValue] = []
        for fid, finding in self.numbered():
            data: JsonObject = {**finding.to_dict(), "id": fid}
            waiver = waiver_of(gate, fid)
            findings.append(data if waiver is None else {**data, "waiver": waiver})
        return {
            "id": self.id,
            "section": self.section,
            "level": self.level,
            "quote": self.quote,
            "outcome": str(self.outcome),
            "findings": findings,
            "notes": [n.to_dict() for n in self.notes],
            "tests": [*self.tests],
            "needs_complete_view": self.needs_complete_view,
            "exchanges": self.exchanges,
        }


@dataclass
class RunResult:
    """One run: its facts, every clause's outcome, the verdict and, when inconclusive, why."""

    verdict: Verdict
    reason: str  # one line; for conformant runs, what the verdict rests on
    facts: dict[str, Any]  # target, base_url, mode, profile, seed, started, finished, duration_s, requests, ...
    clauses: list[ClauseResult]
    tests: dict[str, int]  # counts by test outcome
    warnings: list[str] = field(default_factory=list)
    records: list[TestRecord] = field(default_factory=list)
    # What kept the target from being judged (unreachable, key rejected, budget, interrupted): with the
    # clause rows, all ``verdict.decide`` needs, so that a summary.json's verdict can be recomputed.
    problems: list[str] = field(default_factory=list)
    # The waivers' outcome (``waivers.Gate.to_dict``) when a waivers file was read: the run then exits
    # with ``gate["exit_code"]``; the verdict, and every clause's outcome, stay as they are.
    gate: dict[str, Any] | None = None
    # What the run exercised (``coverage.report``): per documented answer and parameter value.
    coverage: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    @property
    def key_variable(self) -> str:
        """The variable that holds the run's key (the one word a replay leaves to the shell)."""
        return str(self.facts.get("key_env") or "")

    @property
    def process_exit_code(self) -> int:
        """The run's exit code: the verdict's, or the gate's when waivers were read."""
        return int(self.gate["exit_code"]) if self.gate is not None else self.exit_code

    def to_dict(self) -> JsonObject:
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": str(self.verdict),
            "reason": self.reason,
            "exit_code": self.exit_code,
            **self.facts,
            "tests": dict(self.tests),
            "warnings": list(self.warnings),
            "problems": list(self.problems),
            "clauses": [c.to_dict(self.gate) for c in self.clauses],
            **({"gate": self.gate} if self.gate is not None else {}),
            **({"coverage": self.coverage} if self.coverage is not None else {}),
        }


def waiver_of(gate: Mapping[str, JsonLike] | None, finding_id: str) -> JsonValue:
    """The waiver (as the gate holds it) that waived the finding ``finding_id`` in this run; None if none."""
    for entry in wire.items(gate, "waived") if gate is not None else ():
        fields = wire.fields(entry, "waived")
        if finding_id in wire.texts(fields, "findings"):
            return wire.copy(fields.get("waiver"))
    return None
