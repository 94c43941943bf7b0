"""From test records to clause outcomes and the run's verdict: pure functions over records.

- A clause is *violated* when any test found it broken, else *undecided* when any test could
  not decide it, else *conforms* when a test judged it and it held, else *not selected*.  A
  conforming clause whose rule applies only to what the target chose to send, and it sent none of
  it, carries a *not applicable* note saying so (``records.NOT_APPLICABLE``).
- *Not conformant* when a MUST clause is violated.  Otherwise *inconclusive* when the target
  could not be judged (a run problem) or a MUST clause is undecided for a blocking reason;
  clauses undecided because the store is too large to see whole (or too small, or an optional
  header was not sent) are named but leave the verdict standing.  Otherwise *conformant*.
"""

from __future__ import annotations

from collections.abc import Iterable

from petstore_contract.core import records as rec
from petstore_contract.core.records import ClauseResult, Exchange, Finding, Note, RunResult, TestRecord
from petstore_contract.interface.clauses import CATCH_ALL, CLAUSE_IDS, Clause, registry
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.interface.spec import operation_id
from petstore_contract.judging.checks import clause_of
from petstore_contract.judging.declaration import Kind

RANK = {rec.NOT_SELECTED: 0, rec.CONFORMS: 1, rec.UNDECIDED: 2, rec.VIOLATED: 3}


def clause_results(records: Iterable[TestRecord]) -> list[ClauseResult]:
    rows = {cid: _row(clause) for cid, clause in registry().items()}
    named: set[str] = set()  # clauses a test that ran set out to judge
    for record in records:
        if record.outcome != rec.NOT_SELECTED:
            named.update(record.clauses)
        for cid, exchanges in record.examined.items():
            if cid in rows:
                rows[cid].exchanges += exchanges
        for cid, outcome in record.judged.items():
            row = rows.get(cid)
            if row is None:
                continue
            if RANK[outcome] > RANK[row.outcome]:
                row.outcome = outcome
            if record.nodeid not in row.tests:
                row.tests.append(record.nodeid)
        for finding in record.findings:
            if finding.clause in rows:
                rows[finding.clause].findings.append(finding)
        for note in record.notes:
            for cid in note.clauses:
                row = rows.get(cid)
                kept = row is not None and (row.outcome == rec.UNDECIDED or note.kind == rec.NOT_APPLICABLE)
                if row is not None and kept and note not in row.notes:
                    row.notes.append(note)
    for row in rows.values():  # "not applicable" says why a clause conforms: on any other outcome it is dropped
        row.notes = [note for note in row.notes if note.kind != rec.NOT_APPLICABLE or row.outcome == rec.CONFORMS]
    for cid, row in rows.items():
        if cid != CATCH_ALL:
            _unexamined(row, selected=cid in named)
    for cid, row in rows.items():
        for blocker in registry()[cid].blocked_by:
            _blocked(row, rows.get(blocker))
    # The catch-all clause appears only when a finding landed on it.
    return [row for cid, row in rows.items() if cid != CATCH_ALL or row.outcome != rec.NOT_SELECTED]


def _blocked(row: ClauseResult, blocker: ClauseResult | None) -> None:
    """A violation explained by a clause it compares with (``blocked-by``): undecided, blocked by that one."""
    if blocker is None or blocker.outcome != rec.VIOLATED or row.outcome != rec.VIOLATED:
        return
    row.outcome, row.findings = rec.UNDECIDED, []
    reason = f"{blocker.id} is violated: the answers this clause compares with are shown wrong already"
    row.notes = [Note((row.id,), rec.PRECONDITION, reason, blocker.id)]


def _unexamined(row: ClauseResult, *, selected: bool) -> None:
    """A clause conforms only where a check judged an exchange of the target for it: a test that ended
    without judging its clause (returned early, found nothing to judge) leaves it undecided, blocking."""
    if (
        row.exchanges
        or row.findings
        or not (row.outcome == rec.CONFORMS or (selected and row.outcome == rec.NOT_SELECTED))
    ):
        return
    row.outcome = rec.UNDECIDED
    tests = ", ".join(row.tests) or "its tests"
    row.notes.append(Note((row.id,), rec.NOT_EXERCISED, f"no check judged an exchange of the target for it ({tests})"))


SERVER_ERRORS_TEST = "(every request of the run): no 5xx answer"


def server_errors_record(exchanges: list[Exchange], records: Iterable[TestRecord], base_url: str) -> TestRecord | None:
    """The 5xx answers no check already reported, as violations of the operation's documented answers.

    A 5xx is never one of an operation's documented answers (§4, §7), whichever request got it (set-up,
    a table, a generated case); a check that judged the same request already holds it as evidence.
    """
    reported = {_request_line(f.exchange) for r in records for f in r.findings if f.exchange is not None}
    findings = []
    for exchange in exchanges:
        if _request_line(exchange) in reported:
            continue
        reported.add(_request_line(exchange))
        path = exchange.url.removeprefix(base_url.rstrip("/")).split("?", 1)[0]
        operation = operation_id(exchange.method, exchange.url)
        clause = clause_of(Kind.NO_SERVER_ERROR, operation, exchange.status) or CLAUSE_IDS.responses_documented
        expected = f"one of the answers §4 documents for {exchange.method} {path or '/'} (never a 5xx)"
        kind = Kind.NO_SERVER_ERROR
        found = Finding(clause, expected, f"HTTP {exchange.status}", exchange, SERVER_ERRORS_TEST, expectation=kind)
        findings.append(found)
    if not findings:
        return None
    clauses = tuple(dict.fromkeys(f.clause for f in findings))
    examined = {cid: sum(1 for f in findings if f.clause == cid) for cid in clauses}  # each 5xx: one exchange judged
    outcomes = dict.fromkeys(clauses, rec.VIOLATED)
    return TestRecord(SERVER_ERRORS_TEST, clauses, rec.VIOLATED, outcomes, findings, examined=examined)


def _request_line(exchange: Exchange) -> tuple[str, str, int | None]:
    return (exchange.method, exchange.url, exchange.status)


def _row(clause: Clause) -> ClauseResult:
    fields = (clause.id, clause.section, clause.level, clause.quote, rec.NOT_SELECTED)
    return ClauseResult(*fields, needs_complete_view=clause.complete_view)


def void(rows: list[ClauseResult], reason: str) -> list[ClauseResult]:
    """Every judgement undecided: what the target answered could not be judged (the key was refused)."""
    for row in rows:
        if row.outcome in (rec.CONFORMS, rec.VIOLATED):
            row.outcome = rec.UNDECIDED
            row.notes = [Note((row.id,), rec.TARGET, reason)]
    return rows


def checked_reasons(rows: list[ClauseResult], unknown_writes: int) -> list[ClauseResult]:
    """Each undecided clause's declared reason checked against what the run saw before it may let the run
    pass: "the store holds too few animals" is no longer known once a create's answer was lost (the store
    may hold one more animal per such write than the suite knows of); the clause is then undecided for
    that reason, which blocks.  A store too large to see whole stays too large, whatever was lost."""
    if not unknown_writes:
        return rows
    lost = "a create's answer was lost" if unknown_writes == 1 else f"{unknown_writes} creates' answers were lost"
    for row in rows:
        if row.outcome != rec.UNDECIDED or not any(note.kind == rec.EMPTY_STORE for note in row.notes):
            continue
        row.notes = [
            Note(
                note.clauses,
                rec.OTHER,
                f"{lost}: the store may hold more animals than the suite knows of, so '{note.reason}' is not known",
                note.blocked_by,
            )
            if note.kind == rec.EMPTY_STORE
            else note
            for note in row.notes
        ]
    return rows


def blocking(row: ClauseResult) -> bool:
    """An undecided MUST clause that leaves the target unjudged: undecided for any reason other than
    those the registry declares for it (a store too large to see whole, an optional header not sent)."""
    if row.level != "MUST" or row.outcome != rec.UNDECIDED:
        return False
    clause = registry().get(row.id)
    allowed = set(clause.undecided_ok) if clause is not None else set()
    return not row.notes or any(note.kind not in allowed for note in row.notes)


def decide(
    rows: list[ClauseResult],
    *,
    facts: JsonObject,
    problems: list[str],
    records: list[TestRecord],
    warnings: list[str],
    cause: str = "",
) -> RunResult:
    """The verdict and its one-line reason; ``problems``: unreachable, key rejected, budget spent, interrupted;
    ``cause``: what the run saw behind its violations (a store that forgot its animals), said beside them."""
    # The most directly broken first, as every report lists them (Clause.directness; registry order within).
    clauses = registry()
    violated = sorted(
        (r for r in rows if r.outcome == rec.VIOLATED and r.level == "MUST"),
        key=lambda r: clauses[r.id].directness if r.id in clauses else 1,
    )
    unsure = [r for r in rows if blocking(r)]
    if violated:
        verdict = rec.NOT_CONFORMANT
        reason = f"{len(violated)} of {_must(rows)} MUST clauses violated: {_ids(violated)}"
        reason += f"; {cause}" if cause else ""
    elif not _must(rows):
        verdict, reason = rec.INCONCLUSIVE, problems[0] if problems else "no MUST clause was judged in this run"
    elif problems or unsure:
        verdict = rec.INCONCLUSIVE
        reason = problems[0] if problems else f"{len(unsure)} MUST clauses undecided: {_why(unsure)}"
    else:
        verdict = rec.CONFORMANT
        reason = _conformant_reason(rows)
    tests = _test_counts(records)
    warnings = warnings + [
        f"{r.id} ({r.level}): {r.findings[0].summary() if r.findings else 'not decided'}"
        for r in rows
        if r.level == "SHOULD" and r.outcome == rec.VIOLATED
    ]
    warnings = list(dict.fromkeys(warnings))
    return RunResult(verdict, reason, facts, rows, tests, warnings, list(records), problems=list(problems))


def _must(rows: list[ClauseResult]) -> int:
    return sum(1 for r in rows if r.level == "MUST" and r.outcome != rec.NOT_SELECTED)


def _ids(rows: list[ClauseResult], shown: int = 5) -> str:
    ids = [r.id for r in rows]
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _why(rows: list[ClauseResult]) -> str:
    first = rows[0]
    reason = first.notes[0].reason if first.notes else "no test decided it"
    return f"{_ids(rows)} ({first.id}: {reason})"


def _conformant_reason(rows: list[ClauseResult]) -> str:
    selected = [r for r in rows if r.outcome != rec.NOT_SELECTED]
    conform = [r for r in selected if r.outcome == rec.CONFORMS]
    parts = [f"{len(conform)} of {len(selected)} clauses conform"]
    whole = [r for r in selected if r.outcome == rec.UNDECIDED and any(n.kind == rec.STORE_TOO_LARGE for n in r.notes)]
    if whole:
        parts.append(f"{len(whole)} need a store the suite can see whole: {_ids(whole)}")
    unsent = [
        r for r in selected if r.outcome == rec.UNDECIDED and all(n.kind == rec.NOT_SENT for n in r.notes) and r.notes
    ]
    if unsent:
        parts.append(f"{len(unsent)} not sent by the target: {_ids(unsent)}")
    empty = [r for r in selected if r.outcome == rec.UNDECIDED and r not in whole and _kinds(r) == {rec.EMPTY_STORE}]
    if empty:
        parts.append(f"{len(empty)} need animals the store does not hold (an empty store?): {_ids(empty)}")
    rest = [r for r in selected if r.outcome == rec.UNDECIDED and r not in whole and r not in unsent and r not in empty]
    if rest:
        parts.append(f"{len(rest)} undecided: {_ids(rest)}")
    moot = [r for r in conform if r.notes and _kinds(r) == {rec.NOT_APPLICABLE}]
    if moot:
        parts.append(f"{len(moot)} of them not applicable (the target sent nothing they apply to): {_ids(moot)}")
    warned = [r for r in selected if r.outcome == rec.VIOLATED and r.level != "MUST"]
    if warned:  # a SHOULD not met: a warning the gate passes over, named where the verdict is read
        parts.append(
            f"{len(warned)} SHOULD clause{'s' if len(warned) != 1 else ''} not met (a warning): {_ids(warned)}"
        )
    return "; ".join(parts)


def _kinds(row: ClauseResult) -> set[str]:
    return {note.kind for note in row.notes}


def _test_counts(records: Iterable[TestRecord]) -> dict[str, int]:
    counts = {"tests": 0, rec.CONFORMS: 0, rec.VIOLATED: 0, rec.UNDECIDED: 0, rec.NOT_SELECTED: 0, "error": 0}
    for record in records:
        counts["tests"] += 1
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    return counts
