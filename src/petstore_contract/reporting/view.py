"""What every output of a run says, computed once: the verdict line, folded findings, one-line whys.

The HTML page, the Markdown summary, summary.json, JUnit and the terminal all read a ``RunResult``
through these functions, so that they never disagree.  Nothing here redacts: the records arrive
redacted.  Only the run's facts, which are environment, pass ``public_facts`` (secret-named values
and URL userinfo hidden), never the report's own structure (clause ids such as ``auth.invalid``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from petstore_contract.core.records import (
    BLOCKING,
    BUDGET,
    CONFORMANT,
    CONFORMS,
    DEPLOYMENT,
    EMPTY_STORE,
    INCONCLUSIVE,
    NOT_APPLICABLE,
    NOT_CONFORMANT,
    NOT_EXERCISED,
    NOT_SELECTED,
    NOT_SENT,
    OTHER,
    PRECONDITION,
    STORE_TOO_LARGE,
    TARGET,
    THROTTLED,
    UNDECIDED,
    VIOLATED,
    ClauseResult,
    Finding,
    Note,
    RunResult,
    cut,
)
from petstore_contract.interface.clauses import registry
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.reporting.facts import COUNTED_FACTS, FACT_LABELS

# The findings' order and folding live in ``findings``; every output reads them through this module.
from petstore_contract.reporting.findings import TIMES as TIMES
from petstore_contract.reporting.findings import Folded as Folded
from petstore_contract.reporting.findings import fold as fold
from petstore_contract.reporting.findings import plainness as plainness
from petstore_contract.reporting.findings import story_order as story_order

# The waivers' outcome as the outputs read it lives in ``waived``.
from petstore_contract.reporting.waived import WaivedEntry as WaivedEntry
from petstore_contract.reporting.waived import listed_waivers, waived_entries
from petstore_contract.reporting.waived import waived_clauses as waived_clauses

VERDICT_WORDS = {CONFORMANT: "Conformant", NOT_CONFORMANT: "Not conformant", INCONCLUSIVE: "Inconclusive"}
OUTCOME_WORDS = {CONFORMS: "conforms", VIOLATED: "violated", UNDECIDED: "undecided", NOT_SELECTED: "not selected"}

# Why a clause stayed undecided, as a verb phrase: (one clause, several clauses).
KIND_PHRASES: dict[str, tuple[str, str]] = {
    STORE_TOO_LARGE: ("needs a store the suite can see whole", "need a store the suite can see whole"),
    NOT_SENT: ("depends on an optional header the target did not send", "depend on optional headers not sent"),
    EMPTY_STORE: ("needs animals in the store", "need animals in the store"),
    TARGET: ("could not be checked: the target did not answer", "could not be checked: the target did not answer"),
    BUDGET: ("could not be checked: the request budget ran out", "could not be checked: the request budget ran out"),
    PRECONDITION: ("could not be checked: a precondition failed", "could not be checked: a precondition failed"),
    THROTTLED: ("could not be checked: the target throttled the suite", "could not be checked: throttled"),
    NOT_EXERCISED: ("was not exercised: no check judged an exchange for it", "were not exercised"),
    DEPLOYMENT: (
        "could not be checked: the deployment answered 5xx once",
        "could not be checked: the deployment answered 5xx once",
    ),
    OTHER: ("is undecided", "are undecided"),
}
KIND_WORDS: dict[str, str] = {
    STORE_TOO_LARGE: "store too large",
    NOT_SENT: "header not sent",
    NOT_APPLICABLE: "not applicable",
    EMPTY_STORE: "empty store",
    TARGET: "target",
    BUDGET: "budget",
    PRECONDITION: "precondition",
    THROTTLED: "throttled",
    NOT_EXERCISED: "not exercised",
    DEPLOYMENT: "deployment",
    OTHER: "other",
}

# The old reports' rule: environment values whose name says "secret" are not shown.
SECRET_NAME = re.compile(r"(?i)token|secret|passw|api_?key|credential|auth")
URL_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
HIDDEN = "[hidden]"

LINE = 240
REASON_LIMIT = 500  # the verdict line's reason
FACT_LIMIT = 300
REPLAY_LIMIT = 4_000  # a one-line value (a why, a terminal line) is cut here
NAMES_SHOWN = 5


# -- facts --------------------------------------------------------------------------------------


def public_facts(facts: Mapping[str, JsonValue]) -> JsonObject:
    """The run's facts with secret-named values hidden and URL userinfo removed (never the key)."""
    shown: JsonObject = {}
    for name, value in facts.items():
        if SECRET_NAME.search(name) and name != "key_env":  # key_env names a variable, never holds a key
            shown[name] = HIDDEN
        elif isinstance(value, str):
            shown[name] = URL_USERINFO.sub(r"\1[hidden]@", value)
        else:
            shown[name] = value
    return shown


def fact_text(name: str, value: JsonLike, limit: int = FACT_LIMIT) -> str:
    """One fact as a person reads it, cut to ``limit`` characters (the replay command to more)."""
    return cut(_fact_text(name, value), REPLAY_LIMIT if name == "replay" else limit)


def _fact_text(name: str, value: JsonLike) -> str:
    if value is None or value == "":
        return "-"
    if name.endswith("_s") and isinstance(value, int | float) and not isinstance(value, bool):
        return duration(float(value))
    if name == "key_env":
        return f"${value} (the key itself is never written)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and name in COUNTED_FACTS:
        return f"{value:,}"
    return str(value)


def fact_rows(result: RunResult) -> list[tuple[str, str, str]]:
    """(name, label, text) of every fact, known ones first."""
    facts = public_facts(result.facts)
    names = [n for n in FACT_LABELS if n in facts] + [n for n in facts if n not in FACT_LABELS]
    return [(n, FACT_LABELS.get(n, n.replace("_", " ").capitalize()), fact_text(n, facts[n])) for n in names]


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def tests_text(tests: dict[str, int]) -> str:
    parts = [f"{count:,} {name}" for name, count in tests.items() if count]
    return ", ".join(parts) or "none"


# -- clauses --------------------------------------------------------------------------------------


def by_outcome(result: RunResult, outcome: str, level: str | None = None) -> list[ClauseResult]:
    return [c for c in result.clauses if c.outcome == outcome and (level is None or c.level == level)]


def violated_must(result: RunResult) -> list[ClauseResult]:
    """The clauses that broke the gate, the most directly broken first (``Clause.directness``: the clause of
    an operation's own documented answer, a specific rule, a catch-all); registry order within each."""
    return sorted(by_outcome(result, VIOLATED, "MUST"), key=directness)


def directness(clause: ClauseResult) -> int:
    known = registry().get(clause.id)
    return known.directness if known is not None else 1


def violated_should(result: RunResult) -> list[ClauseResult]:
    return [c for c in result.clauses if c.outcome == VIOLATED and c.level != "MUST"]


def outcome_counts(result: RunResult) -> dict[str, int]:
    tally = Counter(c.outcome for c in result.clauses)
    return {outcome: tally.get(outcome, 0) for outcome in OUTCOME_WORDS}


def main_note(clause: ClauseResult) -> Note | None:
    """The note that says why the clause is undecided: a blocking one first."""
    for note in clause.notes:
        if note.kind in BLOCKING:
            return note
    return clause.notes[0] if clause.notes else None


def kind_of(clause: ClauseResult) -> str:
    note = main_note(clause)
    return note.kind if note else OTHER


def why(clause: ClauseResult, limit: int = LINE) -> str:
    """The matrix's one-line why."""
    if clause.outcome == VIOLATED:
        folded = fold(clause.findings)
        if not folded:
            return "violated (no finding recorded)"
        first = folded[0].finding
        more = len(clause.findings) - folded[0].count
        notes = [f"{TIMES}{folded[0].count}"] if folded[0].count > 1 else []
        notes += [f"+{more:,} more finding{'s' if more != 1 else ''}"] if more else []
        tail = f" ({'; '.join(notes)})" if notes else ""
        return cut(f"expected {first.expected}; observed {first.observed}", limit) + tail
    if clause.outcome == UNDECIDED:
        note = main_note(clause)
        if note is None:
            return "undecided (no reason recorded)"
        blocked = f" (blocked by {note.blocked_by})" if note.blocked_by else ""
        return cut(f"{KIND_WORDS.get(note.kind, note.kind)}: {note.reason}{blocked}", limit)
    if clause.outcome == NOT_SELECTED:
        return "no test of this clause was selected in this run"
    count = len(clause.tests)
    tests = f"{count} test{'s' if count != 1 else ''}"
    moot = [note.reason for note in clause.notes if note.kind == NOT_APPLICABLE]
    if moot:  # conforms because the target sent nothing the rule applies to
        return cut(f"conforms · not applicable: {moot[0]}", limit)
    return f"conforms · {clause.exchanges:,} exchange{'s' if clause.exchanges != 1 else ''} judged by {tests}"


def anchor(clause_id: str) -> str:
    """The HTML id of a clause's section (clause ids are dotted words: safe in an id and a URL fragment)."""
    return "clause-" + re.sub(r"[^A-Za-z0-9._-]", "-", clause_id)


def finding_line(finding: Finding, limit: int = LINE) -> str:
    """``Finding.summary()`` within about ``limit`` characters: each part cut, the request kept."""
    part = max(40, limit // 3)
    exchange = finding.exchange
    request = f" ({exchange.method} {cut(exchange.url, part)})" if exchange else ""
    return f"{finding.clause}: expected {cut(finding.expected, part)}; observed {cut(finding.observed, part)}{request}"


def first_line(clause: ClauseResult, limit: int = LINE) -> str:
    """The first folded finding's line, or the clause id and why when there is none."""
    folded = fold(clause.findings)
    if not folded:
        return f"{clause.id}: {why(clause)}"
    repeat = f" · {folded[0].repeat}" if folded[0].repeat else ""
    return finding_line(folded[0].finding, limit) + repeat


# -- the verdict ------------------------------------------------------------------------------------


def names(ids: list[str], shown: int = NAMES_SHOWN) -> str:
    listed = ", ".join(ids[:shown])
    return listed + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def verdict_line(result: RunResult) -> str:
    """The run in one line, the same in the terminal, HTML, Markdown, JUnit and summary.json.

    The verdict's own one-line reason (the plugin's, from the verdict rules) is the line; only a
    result without one gets the line ``describe`` writes from the clause rows.
    """
    word = VERDICT_WORDS.get(result.verdict, result.verdict)
    reason = " ".join(result.reason.split())
    return f"{word}: {cut(reason or describe(result), REASON_LIMIT)}"


def describe(result: RunResult) -> str:
    """The verdict's reason written from the clause rows (for a result that carries none)."""
    selected = [c for c in result.clauses if c.outcome != NOT_SELECTED]
    if result.verdict == NOT_CONFORMANT:
        broken = [c.id for c in violated_must(result)]
        must = sum(1 for c in selected if c.level == "MUST")
        return f"{len(broken)} of {must} MUST clauses violated ({names(broken)})"
    if result.verdict == INCONCLUSIVE:
        blocked = [c.id for c in selected if c.outcome == UNDECIDED and c.level == "MUST" and kind_of(c) in BLOCKING]
        return f"{len(blocked)} MUST clauses could not be decided ({names(blocked)})"
    conform = sum(1 for c in selected if c.outcome == CONFORMS)
    parts = [f"{conform} of {len(selected)} clauses conform"]
    groups: dict[str, list[str]] = {}
    for clause in selected:
        if clause.outcome == UNDECIDED:
            groups.setdefault(kind_of(clause), []).append(clause.id)
    for kind, ids in groups.items():
        one, several = KIND_PHRASES.get(kind, KIND_PHRASES[OTHER])
        parts.append(f"{len(ids)} {one if len(ids) == 1 else several}: {names(ids)}")
    should = [c.id for c in violated_should(result)]
    if should:
        parts.append(f"{len(should)} SHOULD clause{'s' if len(should) != 1 else ''} not met (warning): {names(should)}")
    return "; ".join(parts)


def one_reason(result: RunResult) -> tuple[str, int] | None:
    """(reason, clauses) when every selected clause is undecided for one and the same reason (a target the
    run could not judge, a budget spent before any test): every output says it once, with the count."""
    selected = [c for c in result.clauses if c.outcome != NOT_SELECTED]
    reasons = {(note.kind, note.reason) for c in selected for note in c.notes}
    if result.verdict != INCONCLUSIVE or not selected or len(reasons) != 1:
        return None
    if any(c.outcome != UNDECIDED or not c.notes for c in selected):
        return None
    return next(iter(reasons))[1], len(selected)


def one_reason_line(result: RunResult) -> str:
    """The undecided clauses of a run that judged nothing, in one line (the verdict's reason is not said twice)."""
    found = one_reason(result)
    if found is None:
        return ""
    reason, count = found
    clauses = f"all {count} selected clause{'s' if count != 1 else ''}"
    return (
        f"undecided: {clauses}, for the verdict's one reason"
        if reason == result.reason
        else f"undecided: {clauses}: {reason}"
    )


def other_warnings(result: RunResult) -> list[str]:
    """``result.warnings`` but those that only repeat a SHOULD clause shown in full beside them."""
    shown = tuple(f"{c.id} (" for c in violated_should(result))
    return [w for w in result.warnings if not (shown and w.startswith(shown))]


# -- waivers (the gate) -------------------------------------------------------------------------------


def coverage_line(result: RunResult) -> str:
    """The coverage in one line: documented answers and parameter values observed ("" without coverage)."""
    if result.coverage is None:
        return ""
    responses, parameters = result.coverage["responses"], result.coverage["parameters"]
    seen = sum(r["observed"] for r in responses), sum(p["observed"] for p in parameters)
    line = f"coverage: {seen[0]} of {len(responses)} documented answers observed, {seen[1]} of {len(parameters)}"
    line += " documented parameter values of GET /pets answered 200"
    layer = int(result.facts.get("layer_requests") or 0)
    if layer:
        kinds, mib = int(result.facts.get("layer_kinds") or 0), int(result.facts.get("layer_bytes") or 0) / 2**20
        line += f"; the HTTP layer: {layer} requests, {kinds} kinds ({mib:.0f} MiB in large bodies without the key)"
    return line


def waived_lines(result: RunResult) -> list[str]:
    """One line per waived signature, expired waiver and stale waiver (none without a waivers file)."""
    lines = []
    for entry in waived_entries(result):
        count = entry.findings
        operation = entry.operation or "-"
        what = f"{entry.clause} ({operation} · {entry.expectation})"
        lines.append(f"waived: {what}, {count} finding{'s' if count != 1 else ''}, by {entry.waiver}")
    lines += [f"EXPIRED {text}" for text in listed_waivers(result, "expired")]
    lines += [f"stale (matched no finding): {text}" for text in listed_waivers(result, "stale")]
    return [cut(line, REPLAY_LIMIT) for line in lines]
