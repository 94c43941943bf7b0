"""The lines the plugin prints last, after pytest's short summary; the verdict line is the very last."""

from __future__ import annotations

from pathlib import Path

from petstore_contract.core.records import UNDECIDED, RunResult, cut
from petstore_contract.reporting import view

SHOWN = 15  # violated clauses, and undecided reasons, listed one a line; the rest are counted
LINE = view.LINE  # a line longer than this is cut with its length shown
# Why set-up holds generated creates back: its look at the store did not show it whole (a crowded store,
# or one whose pages did not answer: the suite does not know what an animal more would do to it).
HELD_BACK = "the store was not seen whole"


def final_lines(result: RunResult, paths: dict[str, Path]) -> list[str]:
    lines: list[str] = []
    violated = view.violated_must(result)
    for clause in violated[:SHOWN]:
        folded = view.fold(clause.findings)
        count = f" [{view.TIMES}{folded[0].count}]" if folded and folded[0].count > 1 else ""
        lines.append(view.first_line(clause) + count)
    if len(violated) > SHOWN:
        rest = violated[SHOWN:]
        lines.append(f"and {len(rest)} more violated clauses: {view.names([c.id for c in rest], 10)}")
    single = view.one_reason_line(result)
    lines += [single] if single else _undecided(result)
    for clause in view.violated_should(result)[:SHOWN]:
        lines.append("warning (SHOULD) " + view.first_line(clause))
    for warning in view.other_warnings(result)[:SHOWN]:
        lines.append("warning: " + cut(warning, LINE))
    lines += view.waived_lines(result)
    if result.coverage is not None:
        lines.append(view.coverage_line(result))
        if not single:  # a run that judged nothing observed nothing: its coverage is its one line
            lines += [cut(f"not observed: {item}", LINE) for item in result.coverage["not_observed"][:SHOWN]]
    facts = result.facts
    if "requests" in facts:  # what the run cost the target: a store without delete keeps what it adds
        counted = f"requests {facts['requests']:,}, writes {facts.get('writes', 0):,}"
        held = f" ({facts['held_back']:,} generated creates held back: {HELD_BACK})" if facts.get("held_back") else ""
        again = f"; {facts['reasked']:,} of the requests asked findings again" if facts.get("reasked") else ""
        lines.append(f"{counted}, animals created {facts.get('created', 0):,}{held}{again}")
    if paths:
        lines.append("reports: " + ", ".join(str(p) for p in paths.values()))
    if result.gate is not None:
        lines.append(cut(result.gate["line"], view.REPLAY_LIMIT))  # the exit code's why, beside the verdict
    lines.append(view.verdict_line(result))
    return lines


def _undecided(result: RunResult) -> list[str]:
    """One line per undecided clause; clauses sharing one reason share one line."""
    groups: dict[tuple[str, str], list[str]] = {}
    for clause in result.clauses:
        if clause.outcome != UNDECIDED:
            continue
        note = view.main_note(clause)
        key = (note.kind, note.reason) if note else ("other", "no reason recorded")
        groups.setdefault(key, []).append(clause.id)
    lines = []
    for (kind, reason), ids in list(groups.items())[:SHOWN]:
        kind_word = view.KIND_WORDS.get(kind, kind)
        lines.append(cut(f"undecided ({kind_word}): {view.names(ids, 6)}: {reason}", LINE))
    if len(groups) > SHOWN:
        rest = sum(len(ids) for ids in list(groups.values())[SHOWN:])
        lines.append(f"and {rest} more undecided clauses (see report.html)")
    return lines
