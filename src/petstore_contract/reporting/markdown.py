"""summary.md: the run for a GitHub Actions job summary ($GITHUB_STEP_SUMMARY), under 60 KB.

The verdict line, the facts, the clauses that are not simply conforming, then the first
``DETAILED`` violated clauses each with the document's sentence, its first folded finding and the
curl that replays it; the rest are counted.  Every value a server sent is cut and escaped (GitHub
renders HTML in Markdown): a hostile name can neither break the layout nor inject markup.
"""

from __future__ import annotations

import re

from petstore_contract.core.records import (
    CONFORMANT,
    CONFORMS,
    NOT_CONFORMANT,
    NOT_SELECTED,
    UNDECIDED,
    VIOLATED,
    ClauseResult,
    RunResult,
    cut,
)
from petstore_contract.reporting import view
from petstore_contract.reporting.facts import FACT_LABELS

LIMIT = 60_000  # bytes (UTF-8); GitHub refuses a step summary over 1 MiB, and reads best far below
DETAILED = 20
LINE_LIMIT = 300
QUOTE_LIMIT = 400
CURL_LIMIT = 1_200
FACTS = ("target", "base_url", "mode", "profile", "seed", "started", "duration_s", "requests", "writes", "throttled")
THROTTLED_FACTS = ("concurrency_min",)  # shown beside ``throttled`` only when something was throttled
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_LEADING = re.compile(r"^([#>+=-])")
_ORDERED = re.compile(r"^(\d+)([.)])")


def text(value: str, limit: int = LINE_LIMIT) -> str:
    """A value as inert Markdown on one line: cut, HTML and Markdown syntax escaped."""
    value = " ".join(cut(str(value), limit).split())
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    value = _LEADING.sub(r"\\\1", _SPECIAL.sub(r"\\\1", value))
    return _ORDERED.sub(r"\1\\\2", value)


def code(value: str, limit: int = LINE_LIMIT) -> str:
    """A value as inline code (a table cell may hold it: ``|`` is escaped)."""
    value = " ".join(cut(str(value), limit).split()).replace("|", "\\|")
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", value)), default=0) + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def block(value: str, language: str = "") -> str:
    """A fenced block that no backtick run inside can close."""
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`+", value)), default=0) + 1)
    return f"{fence}{language}\n{value}\n{fence}"


def render(result: RunResult) -> str:
    """The Markdown summary; it stays under ``LIMIT`` bytes by detailing fewer clauses if need be."""
    violated = view.violated_must(result)
    for detailed in range(min(DETAILED, len(violated)), -1, -1):
        page = _render(result, violated, detailed)
        if len(page.encode("utf-8")) <= LIMIT:
            return page
    return cut(page, LIMIT // 4)  # unreachable with the cuts above; never hand GitHub an oversized page


def _render(result: RunResult, violated: list[ClauseResult], detailed: int) -> str:
    word = view.VERDICT_WORDS.get(result.verdict, result.verdict)
    icon = {CONFORMANT: "✅", NOT_CONFORMANT: "❌"}.get(result.verdict, "⚠️")
    lines = [f"## {icon} Pet Store contract: {word}", "", f"**{text(view.verdict_line(result), 2_000)}**", ""]
    facts = view.public_facts(result.facts)
    names = FACTS + (THROTTLED_FACTS if facts.get("throttled") else ())
    shown = [(FACT_LABELS[n], view.fact_text(n, facts[n])) for n in names if n in facts]
    if shown:
        lines += ["| " + " | ".join(label for label, _ in shown) + " |", "|" + "---|" * len(shown)]
        lines += ["| " + " | ".join(code(value, 120) for _, value in shown) + " |", ""]
    counts = view.outcome_counts(result)
    lines += [
        f"Clauses: {counts[CONFORMS]} conform, {len(violated)} violated"
        + (f", {len(view.violated_should(result))} SHOULD not met" if view.violated_should(result) else "")
        + f", {counts[UNDECIDED]} undecided"
        + (f", {counts[NOT_SELECTED]} not selected" if counts[NOT_SELECTED] else "")
        + f". Tests: {view.tests_text(result.tests)}. Exit code {result.process_exit_code}.",
        "",
    ]
    broken = [c for c in result.clauses if c.outcome == VIOLATED]
    if broken:
        lines += ["| Clause | Section | Level | Outcome | Why |", "|---|---|---|---|---|"]
        for c in broken:
            why = text(view.why(c, 100), 200)
            outcome = "violated" if c.level == "MUST" else "not met (warning)"
            lines.append(f"| {code(c.id)} | {text(c.section)} | {c.level} | {outcome} | {why} |")
        lines.append("")
    lines += _undecided(result)
    lines += _coverage(result)
    lines += _gate(result)
    if violated:
        lines += [f"### Violated clauses ({len(violated)})", ""]
        for clause in violated[:detailed]:
            lines += _clause(clause, result.key_variable)
        rest = violated[detailed:]
        if rest:
            findings = sum(len(c.findings) for c in rest)
            ids = ", ".join(code(c.id) for c in rest[:40]) + (f" and {len(rest) - 40} more" if len(rest) > 40 else "")
            lines += [f"And {len(rest)} more violated clauses ({findings:,} findings): {ids}.", ""]
    should = view.violated_should(result)
    warnings = view.other_warnings(result)
    if should or warnings:
        lines += ["### Warnings", ""]
        lines += [
            f"- {code(c.id)} (SHOULD, {text(c.section)}): {text(view.first_line(c).removeprefix(c.id + ': '), 600)}"
            for c in should[:20]
        ]
        lines += [f"- {text(w)}" for w in warnings[:20]]
        hidden = max(0, len(should) - 20) + max(0, len(warnings) - 20)
        lines += [f"- and {hidden} more"] if hidden else []
        lines.append("")
    lines += ["Full evidence (every finding, response bodies): `report.html`; machine-readable: `summary.json`.", ""]
    return "\n".join(lines)


def _coverage(result: RunResult) -> list[str]:
    """One line of coverage, then each documented answer or parameter value not observed."""
    if result.coverage is None:
        return []
    # A run that judged nothing observed nothing: its coverage is its one line.
    missing = [] if view.one_reason(result) else result.coverage["not_observed"]
    line = view.coverage_line(result)
    lines = [f"{text(line[:1].upper() + line[1:], 400)}.", ""]
    if missing:
        lines = [lines[0].removesuffix(".") + ". **Not observed:**", ""]
        lines += [f"- {text(item, 400)}" for item in missing[:20]] + [""]
    return lines


def _gate(result: RunResult) -> list[str]:
    """The waivers' outcome: the exit code's one line, then each waived, expired and stale waiver."""
    if result.gate is None:
        return []
    waived = view.waived_lines(result)
    lines = [f"**{text(result.gate['line'], 1_000)}**", ""]
    lines += [f"- {text(line, 600)}" for line in waived[:30]]
    lines += [f"- and {len(waived) - 30} more"] if len(waived) > 30 else []
    return [*lines, ""] if waived else lines


def _undecided(result: RunResult) -> list[str]:
    """Undecided clauses, one line per reason (a refused target leaves every clause with the same one)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for clause in result.clauses:
        if clause.outcome == UNDECIDED:
            note = view.main_note(clause)
            key = (note.kind, note.reason) if note else ("other", "no reason recorded")
            groups.setdefault(key, []).append(clause.id)
    if not groups:
        return []
    single = view.one_reason_line(result)
    if single:
        return [f"**{text(single[:1].upper() + single[1:])}.**", ""]
    lines = [f"**Undecided ({sum(len(ids) for ids in groups.values())}):**", ""]
    for (kind, reason), ids in list(groups.items())[:20]:
        listed = ", ".join(code(cid) for cid in ids[:12]) + (f" and {len(ids) - 12} more" if len(ids) > 12 else "")
        lines.append(f"- {text(view.KIND_WORDS.get(kind, kind))}: {text(reason)} ({listed})")
    if len(groups) > 20:
        lines.append(f"- and {len(groups) - 20} more reasons")
    return [*lines, ""]


def _clause(clause: ClauseResult, key: str) -> list[str]:
    folded = view.fold(clause.findings)
    distinct = f", {len(folded)} distinct" if len(folded) != len(clause.findings) else ""
    lines = [
        f"#### {code(clause.id)} ({text(clause.section)}, {clause.level}): "
        f"{len(clause.findings)} finding{'s' if len(clause.findings) != 1 else ''}{distinct}",
        "",
        f"> {text(clause.quote, QUOTE_LIMIT)}",
        "",
    ]
    if not folded:
        return [*lines, view.why(clause), ""]
    first = folded[0]
    count = f" ({view.TIMES}{first.count})" if first.count > 1 else ""
    lines += [f"{text(view.finding_line(first.finding), 2 * LINE_LIMIT)}{count}", ""]
    if first.repeat:
        detail = (
            f": {text(first.finding.repeat_detail)}" if len(first.repeats) == 1 and first.finding.repeat_detail else ""
        )
        lines += [f"Asked again: **{first.repeat}**{detail}", ""]
    if first.finding.exchange:
        command = first.finding.exchange.curl(key)
        if len(command) > CURL_LIMIT:
            lines += ["Command cut (too long for a job summary; report.html has it whole):", ""]
        lines += [block(cut(command, CURL_LIMIT), "sh"), ""]
    return lines
