"""The structured records every output is built from.

A check that fails raises a ``Violation`` carrying one or more ``Finding`` records; a check that
cannot decide raises ``Undecided``.  The plugin turns test outcomes into ``ClauseResult`` rows and
one ``RunResult``; the reports, JUnit, the terminal and the self-tests read those records, never
another output's text.  Every record is plain data (``to_dict``/``from_dict``) so it survives the
trip from an xdist worker to the controller.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any, NamedTuple

import pytest

from petstore_contract.core import replay
from petstore_contract.interface.spec import operation_of

# 2: findings carry ``expectation``, ``signature`` and ``id``; the run carries ``problems``.
# 3: findings carry ``repeat`` and ``repeat_detail`` (asked again at the run's end, ``reask``).
# 5: a conforming clause may carry ``not_applicable`` notes (``NOT_APPLICABLE``).
SCHEMA_VERSION = 5

# Clause outcomes.
CONFORMS, VIOLATED, UNDECIDED, NOT_SELECTED = "conforms", "violated", "undecided", "not_selected"
# Run verdicts and their exit codes (pytest keeps 2-5 for itself).
CONFORMANT, NOT_CONFORMANT, INCONCLUSIVE = "conformant", "not_conformant", "inconclusive"
EXIT_CODES = {CONFORMANT: 0, NOT_CONFORMANT: 1, INCONCLUSIVE: 6}

# Why a clause is undecided.  Only the kinds in BLOCKING make a run inconclusive: a store too large
# to see whole, or an optional header that was not sent, leave the rest of the verdict standing.
TARGET, BUDGET, PRECONDITION, THROTTLED, OTHER = "target", "budget", "precondition", "throttled", "other"
STORE_TOO_LARGE, NOT_SENT, EMPTY_STORE = "store_too_large", "not_sent", "empty_store"
NOT_EXERCISED = "not_exercised"  # selected, but no check judged an exchange of the target for it
# Not a reason for undecided: a note on a *conforming* clause whose rule applies only to what the target chose
# to send, and it sent none of it (no Sunset header: read.sunset).  Nothing broke the rule; the note says why
# no exchange showed it holding.
NOT_APPLICABLE = "not_applicable"
# A 5xx of the deployment (a gateway's page, a drained instance) that the same request did not get again:
# no answer of the service to judge (``judging.flicker``).
DEPLOYMENT = "deployment"
BLOCKING = frozenset({TARGET, BUDGET, PRECONDITION, THROTTLED, OTHER, NOT_EXERCISED, DEPLOYMENT})

BODY_EXCERPT = 2000

# A finding asked once more at the end of the run (``reask``): the same check failed again, it held,
# or the request was not sent again (with the reason).  Either way the finding stays a violation.
REPRODUCED, SEEN_ONCE, NOT_REASKED = "reproduced", "seen_once", "not_reasked"
REPEAT_WORDS = {REPRODUCED: "reproduced", SEEN_ONCE: "seen once", NOT_REASKED: "not re-asked"}


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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["request_headers"] = [list(pair) for pair in self.request_headers]
        data["response_headers"] = [list(pair) for pair in self.response_headers]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Exchange:
        fields = dict(data)
        fields["request_headers"] = tuple(tuple(pair) for pair in data.get("request_headers", ()))
        fields["response_headers"] = tuple(tuple(pair) for pair in data.get("response_headers", ()))
        return cls(**fields)


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
    repeat: str = ""
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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exchange"] = self.exchange.to_dict() if self.exchange else None
        data["signature"] = self.signature().to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        exchange = Exchange.from_dict(data["exchange"]) if data.get("exchange") else None
        derived = ("signature", "id", "waiver")  # computed or added by the run, never read back
        return cls(**{**{k: v for k, v in data.items() if k not in derived}, "exchange": exchange})


@dataclass(frozen=True)
class Note:
    """Why a clause stayed undecided: a kind from this module and one line for people."""

    clauses: tuple[str, ...]
    kind: str
    reason: str
    blocked_by: str = ""  # the clause whose failure left a precondition unmet

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "clauses": list(self.clauses)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Note:
        return cls(**{**data, "clauses": tuple(data["clauses"])})


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


def undecided(clauses: str | tuple[str, ...], kind: str, reason: str, blocked_by: str = "") -> Undecided:
    ids = (clauses,) if isinstance(clauses, str) else tuple(clauses)
    return Undecided(Note(ids, kind, reason, blocked_by))


@dataclass
class TestRecord:
    """What one test decided, carried on its pytest report (``to_dict``) from worker to controller."""

    __test__ = False  # not a pytest test class

    nodeid: str
    clauses: tuple[str, ...]
    outcome: str = CONFORMS  # conforms | violated | undecided | not_selected | error
    judged: dict[str, str] = field(default_factory=dict)  # clause -> its outcome in this test
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    detail: str = ""  # for an error of the suite itself: its one-line description
    examined: dict[str, int] = field(default_factory=dict)  # clause -> exchanges judged for it

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodeid": self.nodeid,
            "clauses": list(self.clauses),
            "outcome": self.outcome,
            "judged": dict(self.judged),
            "findings": [f.to_dict() for f in self.findings],
            "notes": [n.to_dict() for n in self.notes],
            "warnings": list(self.warnings),
            "detail": self.detail,
            "examined": dict(self.examined),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestRecord:
        return cls(
            nodeid=data["nodeid"],
            clauses=tuple(data["clauses"]),
            outcome=data["outcome"],
            judged=dict(data.get("judged", {})),
            findings=[Finding.from_dict(f) for f in data["findings"]],
            notes=[Note.from_dict(n) for n in data["notes"]],
            warnings=list(data.get("warnings", ())),
            detail=data.get("detail", ""),
            examined=dict(data.get("examined", {})),
        )


@dataclass
class ClauseResult:
    """One row of the conformance matrix."""

    id: str
    section: str
    level: str  # MUST | SHOULD
    quote: str  # the document's (or the RFC's) own sentence
    outcome: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    needs_complete_view: bool = False
    exchanges: int = 0  # exchanges of the target judged for this clause, over every test

    def numbered(self) -> list[tuple[str, Finding]]:
        """Each finding with its id, which names it within one summary.json (a bundle): "<clause>/<n>"."""
        return [(f"{self.id}/{n}", finding) for n, finding in enumerate(self.findings, 1)]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["findings"] = [{**f.to_dict(), "id": fid} for fid, f in self.numbered()]
        data["notes"] = [n.to_dict() for n in self.notes]
        return data


@dataclass
class RunResult:
    """One run: its facts, every clause's outcome, the verdict and, when inconclusive, why."""

    verdict: str
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict,
            "reason": self.reason,
            "exit_code": self.exit_code,
            **self.facts,
            "tests": dict(self.tests),
            "warnings": list(self.warnings),
            "problems": list(self.problems),
            "clauses": [_marked(c.to_dict(), self.gate) for c in self.clauses],
            **({"gate": self.gate} if self.gate is not None else {}),
            **({"coverage": self.coverage} if self.coverage is not None else {}),
        }


def _marked(clause: dict[str, Any], gate: dict[str, Any] | None) -> dict[str, Any]:
    """A waived finding stays a finding of its violated clause, marked with the waiver that waived it."""
    for finding in clause["findings"] if gate is not None else ():
        waiver = waiver_of(gate, finding["id"])
        if waiver is not None:
            finding["waiver"] = waiver
    return clause


def waiver_of(gate: dict[str, Any] | None, finding_id: str) -> dict[str, Any] | None:
    """The waiver that waived the finding ``finding_id`` in this run, if any."""
    for entry in (gate or {}).get("waived", ()):
        if finding_id in entry["findings"]:
            waiver: dict[str, Any] = entry["waiver"]
            return waiver
    return None


def find_error(error: BaseException, kind: type[Any]) -> Any:
    """The first exception of ``kind`` in the error, its groups (Hypothesis, Schemathesis) and its chain."""
    seen: list[BaseException] = []
    todo: list[BaseException | None] = [error]
    while todo and len(seen) < 100:
        current = todo.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, kind):
            return current
        todo += [*getattr(current, "exceptions", ()), current.__cause__, current.__context__]
    return None
