"""report.html: one self-contained page, no script, readable offline and on paper.

The page reads top-down: the verdict, the run's facts, the clause matrix, one section per violated
clause (the document's sentence, then each folded finding with its curl and response), the undecided
clauses, the warnings, and every judged clause's sentence at the end.  The template is package data
(templates/report.html.j2), rendered with autoescaping; every value a server sent is cut to a known
length here, and the CSS wraps whatever remains so that the page never grows wider than the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cache

import jinja2

from petstore_contract.core.records import (
    BODY_EXCERPT,
    NOT_SELECTED,
    OTHER,
    UNDECIDED,
    VIOLATED,
    ClauseResult,
    Exchange,
    Note,
    RunResult,
    cut,
)
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.reporting import view
from petstore_contract.reporting.facts import TOP_FACTS, TROUBLE_FACTS

CURL_LIMIT = 20_000  # longer commands are cut (and are no longer runnable: the page says so)
TEXT_LIMIT = BODY_EXCERPT  # expected / observed / a note's reason
TEST_NAME_LIMIT = 300
TESTS_SHOWN = 12  # tests named under one folded finding
FOLDED_SHOWN = 30  # distinct findings shown per clause; the rest are counted
HEADER_LIMIT = 1_000


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("petstore_contract.reporting", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@dataclass(frozen=True)
class MatrixRow:
    """One row of the clause matrix: the clause, where its link goes, its outcome and its one-line why."""

    id: str
    href: str
    section: str
    level: str
    outcome: str  # the CSS class: an outcome, or "warning" for a SHOULD clause not met
    outcome_word: str
    why: str


@dataclass(frozen=True)
class ExchangeView:
    """A finding's exchange as the page shows it, every part cut to size."""

    request: str
    curl: str
    curl_cut: bool
    status: int | None
    problem: str
    headers: str
    body: str
    length: int
    body_cut: bool


@dataclass(frozen=True)
class FoldedView:
    """Identical findings shown once, with their count, their tests and one exchange."""

    count: int
    expected: str
    observed: str
    source: str
    repeat: str
    repeat_class: str
    repeat_detail: str
    tests: list[str]
    tests_hidden: int
    exchange: ExchangeView | None


@dataclass(frozen=True)
class Section:
    """The section of one violated clause: its sentence, then its folded findings."""

    id: str
    anchor: str
    section: str
    level: str
    quote: str
    statement: str
    findings: int
    distinct: int
    folded: list[FoldedView]
    folded_hidden: int
    tests: int


@dataclass(frozen=True)
class UndecidedClause:
    id: str
    anchor: str  # the clause's anchor sits on its first mention only: an id is unique in a page
    level: str


@dataclass(frozen=True)
class UndecidedGroup:
    """The undecided clauses that share one reason."""

    kind: str
    reason: str
    blocked_by: str
    clauses: list[UndecidedClause] = field(default_factory=list)


@dataclass(frozen=True)
class Appendix:
    """A judged clause's sentence at the end of the page."""

    id: str
    anchor: str
    section: str
    level: str
    quote: str
    statement: str
    outcome: str
    outcome_word: str
    tests: int


@dataclass(frozen=True)
class Waived:
    """A waived signature under its violated clause's section."""

    signature: str
    what: str
    findings: int


@dataclass(frozen=True)
class Page:
    """Everything the template shows, already cut to size: each field is one of its names."""

    verdict: str
    verdict_word: str
    verdict_line: str
    exit_code: int
    title_target: str
    facts: list[tuple[str, str, str]]
    replay: str
    tests: str
    counts: dict[str, int]
    matrix: list[MatrixRow]
    violated: list[Section]
    undecided: list[UndecidedGroup]
    undecided_count: int
    warning_count: int
    should: list[Section]
    warnings: list[str]
    not_selected: list[str]
    appendix: list[Appendix]
    suite_version: str
    single: str
    single_clauses: list[str]
    top_facts: list[tuple[str, str, str]]
    coverage: JsonObject | None
    coverage_line: str
    gate: JsonObject | None
    gate_lines: list[str]
    waived: dict[str, list[Waived]]


def render(result: RunResult) -> str:
    """The HTML page of one run."""
    page = context(result)
    names = {f.name: getattr(page, f.name) for f in fields(page)}  # the template's names, shallow (no copy)
    return _environment().get_template("report.html.j2").render(**names)


def context(result: RunResult) -> Page:
    """Everything the template shows, already cut to size."""
    sections = {c.id for c in view.violated_must(result)} | {c.id for c in view.violated_should(result)}
    undecided = [c for c in result.clauses if c.outcome == UNDECIDED]
    facts = view.fact_rows(result)
    key = result.key_variable
    single = view.one_reason_line(result)
    shown = {name for name, value in result.facts.items() if name in TROUBLE_FACTS and value not in (0, None, "")}
    return Page(
        verdict=result.verdict,
        verdict_word=view.VERDICT_WORDS.get(result.verdict, result.verdict),
        verdict_line=view.verdict_line(result),
        exit_code=result.exit_code,
        title_target=cut(str(view.public_facts(result.facts).get("target") or ""), 80),
        facts=[row for row in facts if row[0] != "replay"],
        replay=next((text for name, _, text in facts if name == "replay"), ""),
        tests=view.tests_text(result.tests),
        counts=view.outcome_counts(result)
        | {"violated": len(view.violated_must(result)), "should": len(view.violated_should(result))},
        matrix=[_row(c, sections, undecided) for c in result.clauses],
        violated=[_section(c, key) for c in view.violated_must(result)],
        undecided=_undecided(undecided),
        undecided_count=len(undecided),
        warning_count=len(view.violated_should(result)) + len(view.other_warnings(result)),
        should=[_section(c, key) for c in view.violated_should(result)],
        warnings=[cut(w, TEXT_LIMIT) for w in view.other_warnings(result)],
        not_selected=[c.id for c in result.clauses if c.outcome == NOT_SELECTED],
        appendix=[_appendix(c) for c in result.clauses if c.outcome != NOT_SELECTED],
        suite_version=str(result.facts.get("suite_version") or ""),
        # A run that judged nothing (``view.one_reason``): its reason once, the clauses counted, so that the
        # page fits a screen; every run: the facts that matter on top (``TOP_FACTS``, a count of trouble that
        # is not zero), the rest folded.
        single=single,
        single_clauses=[c.id for c in result.clauses if c.outcome == UNDECIDED] if single else [],
        top_facts=[row for row in facts if row[0] in TOP_FACTS or row[0] in shown],
        coverage=result.coverage,
        coverage_line=view.coverage_line(result),
        gate=result.gate,
        gate_lines=view.waived_lines(result),
        waived=_waived(result),
    )


def _waived(result: RunResult) -> dict[str, list[Waived]]:
    """Each violated clause's section lists the waivers of its findings."""
    return {
        clause: [
            Waived(
                signature=f"{e.operation or '-'} · {e.expectation}",
                what=e.waiver,
                findings=e.findings,
            )
            for e in entries
        ]
        for clause, entries in view.waived_clauses(result).items()
    }


def _row(clause: ClauseResult, sections: set[str], undecided: list[ClauseResult]) -> MatrixRow:
    if clause.id in sections:
        href = view.anchor(clause.id)
    elif clause in undecided:
        href = "undecided-" + view.anchor(clause.id)
    elif clause.outcome != NOT_SELECTED:
        href = "text-" + view.anchor(clause.id)
    else:
        href = ""
    outcome, word = _outcome(clause)
    return MatrixRow(clause.id, href, clause.section, clause.level, outcome, word, view.why(clause))


def _outcome(clause: ClauseResult) -> tuple[str, str]:
    """The outcome's CSS class and word: a SHOULD clause not met is a warning, not a violation."""
    if clause.outcome == VIOLATED and clause.level != "MUST":
        return "warning", "not met (SHOULD)"
    return clause.outcome, view.OUTCOME_WORDS.get(clause.outcome, clause.outcome)


def _section(clause: ClauseResult, key: str) -> Section:
    folded = view.fold(clause.findings)
    return Section(
        id=clause.id,
        anchor=view.anchor(clause.id),
        section=clause.section,
        level=clause.level,
        quote=clause.quote,
        statement=_statement(clause.id),
        findings=len(clause.findings),
        distinct=len(folded),
        folded=[_folded(f, key) for f in folded[:FOLDED_SHOWN]],
        folded_hidden=len(folded) - min(len(folded), FOLDED_SHOWN),
        tests=len(clause.tests),
    )


def _folded(folded: view.Folded, key: str) -> FoldedView:
    finding = folded.finding
    tests = [cut(t, TEST_NAME_LIMIT) for t in folded.tests[:TESTS_SHOWN]]
    return FoldedView(
        count=folded.count,
        expected=cut(finding.expected, TEXT_LIMIT),
        observed=cut(finding.observed, TEXT_LIMIT),
        source=finding.source,
        repeat=folded.repeat,
        repeat_class=next(iter(folded.repeats)) if len(folded.repeats) == 1 else "mixed",
        # A mixed group's details differ finding by finding: summary.json has each.
        repeat_detail=cut(finding.repeat_detail, TEXT_LIMIT) if len(folded.repeats) == 1 else "",
        tests=tests,
        tests_hidden=len(folded.tests) - len(tests),
        exchange=_exchange(finding.exchange, key) if finding.exchange else None,
    )


def _exchange(exchange: Exchange, key: str) -> ExchangeView:
    command = exchange.curl(key)
    body = exchange.response_body
    if len(body) > 2 * BODY_EXCERPT:  # the record should have cut it already; never trust a size
        body = cut(body)
    headers = "\n".join(f"{name}: {value}" for name, value in exchange.response_headers)
    return ExchangeView(
        request=cut(f"{exchange.method} {exchange.url}", TEST_NAME_LIMIT),
        curl=cut(command, CURL_LIMIT),
        curl_cut=len(command) > CURL_LIMIT,
        status=exchange.status,
        problem=cut(exchange.problem, TEXT_LIMIT),
        headers=cut(headers, 4 * HEADER_LIMIT),
        body=body,
        length=exchange.response_length,
        body_cut=exchange.response_length > len(body) or body != exchange.response_body,
    )


def _undecided(clauses: list[ClauseResult]) -> list[UndecidedGroup]:
    """Undecided clauses grouped by their reason (a refused target leaves all of them with one)."""
    groups: dict[tuple[str, str, str], UndecidedGroup] = {}
    for clause in clauses:
        notes = clause.notes or [Note((clause.id,), OTHER, "no reason recorded")]
        for note in notes:
            key = (note.kind, note.reason, note.blocked_by)
            group = groups.setdefault(
                key,
                UndecidedGroup(
                    view.KIND_WORDS.get(note.kind, note.kind), cut(note.reason, TEXT_LIMIT), note.blocked_by
                ),
            )
            if not any(c.id == clause.id for c in group.clauses):
                first = not any(c.id == clause.id for g in groups.values() for c in g.clauses)
                anchor = "undecided-" + view.anchor(clause.id) if first else ""
                group.clauses.append(UndecidedClause(clause.id, anchor, clause.level))
    return list(groups.values())


def _appendix(clause: ClauseResult) -> Appendix:
    outcome, word = _outcome(clause)
    return Appendix(
        id=clause.id,
        anchor="text-" + view.anchor(clause.id),
        section=clause.section,
        level=clause.level,
        quote=clause.quote,
        statement=_statement(clause.id),
        outcome=outcome,
        outcome_word=word,
        tests=len(clause.tests),
    )


def _statement(clause_id: str) -> str:
    """What the suite checks, in its own words (the registry's statement; empty for an unknown id)."""
    from petstore_contract.interface.clauses import registry

    clause = registry().get(clause_id)
    return clause.statement if clause else ""
