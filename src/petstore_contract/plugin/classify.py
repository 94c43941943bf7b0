"""One test's outcome as a ``TestRecord``: which clauses it found conforming, violated or undecided.

- a passing test: the clauses its judge blocks judged (or, with none, every clause it names) conform;
- a ``Violation``/``Mismatch``: findings on their clauses (a bare Mismatch or assert on the test's
  first clause); the judge's other clauses keep their own outcome; a clause the test names and never
  judged is undecided, blocked by the violation, only where the violation ended the test: a test whose
  body ran to its end (``Judge.finished``) had nothing to judge for it, as a test that passed;
- ``Undecided`` (a skip carrying a note): its clauses undecided with the note's reason;
- a transport ``TargetProblem``: every clause of the test undecided, the target could not be asked; but an
  answer that started and never completed is the target's: a finding on the test's first clause;
- any other skip (read-only, markers): not selected;
- anything else is an error of the suite itself: its clauses undecided, never "passed".

A test whose only violations are of SHOULD clauses (``warned_only``) is a warning, never a failed test:
the plugin reports it passed, the warning in its report's sections and in the run's last lines.
"""

from __future__ import annotations

from typing import Any, TypeVar

import pytest

from petstore_contract.core.records import (
    BUDGET,
    CONFORMS,
    NOT_SELECTED,
    OTHER,
    PRECONDITION,
    TARGET,
    UNDECIDED,
    VIOLATED,
    Finding,
    Mismatch,
    Note,
    Outcome,
    TestRecord,
    Undecided,
    Violation,
)
from petstore_contract.interface.clauses import CLAUSE_IDS, registry
from petstore_contract.judging.expect import Judge, cut_short
from petstore_contract.reporting.view import story_order
from petstore_contract.transport import TargetProblem


def record_of(
    nodeid: str, clauses: tuple[str, ...], call: pytest.CallInfo[None], report: pytest.TestReport, judge: Judge | None
) -> TestRecord:
    record = TestRecord(nodeid, clauses)
    if judge is not None:
        record.judged = dict(judge.outcomes)
        record.findings = list(judge.findings)
        record.notes = list(judge.notes)
        record.warnings = list(judge.warnings)
        record.examined = dict(judge.examined)
    error = call.excinfo.value if call.excinfo is not None else None
    if error is None:
        _passed(record, clauses, judge)
    elif (undecided := find_error(error, Undecided)) is not None:
        _note(record, undecided.note)
    elif (problem := find_error(error, TargetProblem)) is not None and (cut := cut_short(problem)) is not None:
        _violated(record, cut.finding(clauses[0] if clauses else CLAUSE_IDS.generated_other))
        _left_by_violation(record, clauses)
    elif problem is not None:
        kind = BUDGET if getattr(problem, "kind", TARGET) == BUDGET else TARGET
        _note(record, Note(_all(record, clauses), kind, f"the target could not be asked: {problem}"))
    elif report.skipped:
        record.outcome = NOT_SELECTED
        record.detail = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else "skipped"
        record.judged = {}
    elif (violation := find_error(error, Violation)) is not None:
        for finding in violation.findings:
            _violated(record, finding)
        _left_by_violation(record, clauses, judge)
    elif (mismatch := find_error(error, Mismatch)) is not None:
        _violated(record, mismatch.finding(clauses[0] if clauses else CLAUSE_IDS.generated_other))
    elif isinstance(error, AssertionError) and clauses:
        first = (str(error).strip().splitlines() or ["an assertion failed"])[0]
        _violated(record, Finding(clauses[0], "the check to hold", first[:500]))
    else:
        first_line = (str(error).strip().splitlines() or [""])[0][:300]
        record.detail = f"the suite failed: {type(error).__name__}: {first_line}"
        _note(record, Note(_all(record, clauses), OTHER, record.detail))
        record.outcome = Outcome.ERROR
        return record
    record.findings = [f.with_test(nodeid) for f in record.findings]
    record.outcome = _overall(record)
    return record


def _passed(record: TestRecord, clauses: tuple[str, ...], judge: Judge | None) -> None:
    if judge is None or not judge.outcomes:
        for cid in clauses:
            record.judged.setdefault(cid, CONFORMS)


def _all(record: TestRecord, clauses: tuple[str, ...]) -> tuple[str, ...]:
    undecided = [c for c in clauses if record.judged.get(c) != VIOLATED]
    return tuple(dict.fromkeys([*undecided, *(c for c, o in record.judged.items() if o == CONFORMS)]))


def _note(record: TestRecord, note: Note) -> None:
    record.notes.append(note)
    for cid in note.clauses:
        if record.judged.get(cid) != VIOLATED:
            record.judged[cid] = UNDECIDED


def _violated(record: TestRecord, finding: Finding) -> None:
    if finding not in record.findings:  # the judge's own findings come back in its Violation (counted there)
        record.findings.append(finding)
        record.examined[finding.clause] = record.examined.get(finding.clause, 0) + 1  # a finding judged an exchange
    record.judged[finding.clause] = VIOLATED


def _left_by_violation(record: TestRecord, clauses: tuple[str, ...], judge: Judge | None = None) -> None:
    """The test's own clauses that a violation found on another clause left unjudged (a stateful walk
    whose fault lands on read.found, say): they conform on the exchanges judged for them before it, or,
    with none judged, are undecided, blocked by the violated clause; never "not selected" as if no
    test had run.  A test that judged every exchange it sent before raising (``Judge.whole``: a generated
    test's cases) was not ended by the violation: its other clauses conform as in a test that passed
    (a clause none of its answers applied to, a 401's challenge, say, is decided by the tests that got one).
    A targeted test whose body ran to its end (``Judge.finished``: its violations raised after it) had
    nothing to judge for a clause it never judged: left to the tests that have something, as in a test
    that passed."""
    blocker = next((cid for cid, outcome in record.judged.items() if outcome == VIOLATED), None)
    whole, finished = judge is not None and judge.whole, judge is not None and judge.finished
    for cid in clauses:
        if cid in record.judged or blocker is None:
            continue
        if record.examined.get(cid) or whole:
            record.judged[cid] = CONFORMS
        elif not finished:
            reason = f"the test ended on a violation of {blocker} before it judged this clause"
            _note(record, Note((cid,), PRECONDITION, reason, blocker))


def _overall(record: TestRecord) -> Outcome:
    outcomes = set(record.judged.values())
    for outcome in (VIOLATED, UNDECIDED, CONFORMS):
        if outcome in outcomes:
            return outcome
    return NOT_SELECTED if record.outcome == NOT_SELECTED else CONFORMS


def warned_only(record: TestRecord) -> bool:
    """The test decided every clause it judged and broke only SHOULD clauses (RFC 2119: a warning)."""
    clauses = registry()
    violated = [cid for cid, outcome in record.judged.items() if outcome == VIOLATED]
    decided = all(outcome in (CONFORMS, VIOLATED) for outcome in record.judged.values())
    broken = {*violated, *(f.clause for f in record.findings)}
    return bool(violated) and decided and all(cid in clauses and clauses[cid].level != "MUST" for cid in broken)


WARNING_SECTION = "petstore warning (SHOULD: not a failed gate)"


class FailureRepr:
    """A failure's text whose first line pytest shows as the failure's one-line message.

    pytest's short summary and JUnit's ``message`` read ``longrepr.reprcrash.message``; the whole
    text is the evidence.  (Under xdist a report's longrepr travels as its text.)
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.reprcrash = _Crash(text.splitlines()[0] if text else "")

    def toterminal(self, out: Any) -> None:
        for line in self.text.splitlines():
            out.line(line)

    def __str__(self) -> str:
        return self.text


class _Crash:
    def __init__(self, message: str) -> None:
        self.message, self.path, self.lineno = message, "", 0


def failure_text(record: TestRecord, key_variable: str = "") -> str:
    """First line: the clause and the broken expectation (JUnit's message); then the evidence."""
    findings = story_order(record.findings)  # the broken sentence first, shown plainly
    lines = [f.summary() for f in findings] or [record.detail]
    for finding in findings[:3]:
        if finding.exchange is not None:
            exchange = finding.exchange
            lines += [
                "",
                f"{finding.clause}: replay: {exchange.curl(key_variable)}",
                f"  answered HTTP {exchange.status}: {exchange.response_body[:500]}",
            ]
    return "\n".join(lines)


E = TypeVar("E", bound=BaseException)


def find_error(error: BaseException, kind: type[E]) -> E | None:
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
