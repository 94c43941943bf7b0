"""The testcases the suite adds to pytest's JUnit XML: one per selected clause and one for the verdict.

A CI test view shows testcases, never suite properties.  A finding made by a set-up exchange, by a
table another test sent or by the pipeline that judges every exchange (``judging/pipeline.py``) is
attached to no failing test, so pytest's own testcases alone can be green while the run exits 1.
These testcases make the view say what the exit code says:

- ``petstore_contract.clauses`` / ``<clause id>``: a violated MUST clause is a ``<failure>`` whose
  message quotes the clause's sentence and its first finding, whichever test or set-up exchange made
  it; a violated SHOULD clause (a warning, never a failed gate) passes, the warning and its evidence in
  its ``<system-out>``; an undecided clause and a clause whose every finding a waiver covers are
  ``<skipped>`` with the reason; a conforming clause passes.  A clause not selected gets no testcase (it
  was not tested).
- ``petstore_contract`` / ``verdict``: passes when the run exits 0; a ``<failure>`` when it exits 1
  (not conformant, or a waiver expired); an ``<error>`` when it exits 6 (inconclusive).  An error, not a
  skip: exit 6 fails the CI job, and many test views hide skipped tests or show them green.

So exit 1 always comes with failures >= 1 and exit 6 with errors >= 1.  Every element here is in the
JUnit 10 schema (junit-10.xsd, pytest's xunit2) and in xunit1: no testcase ``<properties>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from petstore_contract.core.records import CONFORMS, NOT_SELECTED, UNDECIDED, VIOLATED, ClauseResult, RunResult, cut
from petstore_contract.reporting import view

CLAUSES_CLASS = "petstore_contract.clauses"
VERDICT_CLASS = "petstore_contract"
VERDICT_NAME = "verdict"
OURS = (CLAUSES_CLASS, VERDICT_CLASS)  # the classnames of the testcases this module adds
FINDINGS_SHOWN = 20  # findings listed in a failure's body; the reports hold every one
COUNTED = {"failure": "failures", "error": "errors", "skipped": "skipped"}


def replace_cases(suite: ET.Element, result: RunResult, text: Callable[[str], str], limit: int) -> None:
    """The suite's testcases of the clauses and the verdict (a second rewrite replaces, never adds),
    and the suite's counters (``tests``, ``failures``, ``errors``, ``skipped``) kept true."""
    for case in [c for c in suite.findall("testcase") if c.get("classname") in OURS]:
        count(suite, case, -1)
        suite.remove(case)
    for case in [*clause_cases(result, text, limit), verdict_case(result, text, limit)]:
        suite.append(case)
        count(suite, case, +1)


def clause_cases(result: RunResult, text: Callable[[str], str], limit: int) -> list[ET.Element]:
    waived, key = _fully_waived(result), result.key_variable
    return [
        _clause_case(row, row.id in waived, text, limit, key) for row in result.clauses if row.outcome != NOT_SELECTED
    ]


def verdict_case(result: RunResult, text: Callable[[str], str], limit: int) -> ET.Element:
    case = ET.Element("testcase", classname=VERDICT_CLASS, name=VERDICT_NAME, time="0")
    line = view.verdict_line(result)
    gate = result.gate["line"] if result.gate is not None else ""
    body = "\n".join(part for part in (line, gate, *view.waived_lines(result)) if part)
    code = result.process_exit_code
    if code == 0:
        _out(case, text(body))
        return case
    tag = "error" if code == 6 else "failure"
    message = gate if gate and code != result.exit_code else line
    _outcome(case, tag, result.verdict, text(cut(message, limit)), text(body))
    return case


def _clause_case(row: ClauseResult, waived: bool, text: Callable[[str], str], limit: int, key: str) -> ET.Element:
    case = ET.Element("testcase", classname=CLAUSES_CLASS, name=row.id, time="0")
    sentence = f"{row.level} ({row.section}): {row.quote}"
    tests = f"judged by: {', '.join(row.tests)}" if row.tests else ""
    if row.outcome == VIOLATED:
        first = view.first_line(row, limit)
        message = f"{row.id} violated: {row.quote} — {first}"
        body = "\n".join(part for part in (sentence, tests, "", *_findings(row, key)) if part is not None)
        if waived:
            _outcome(case, "skipped", "waived", text(cut(f"waived: {message}", limit)), text(body))
        elif row.level == "MUST":
            _outcome(case, "failure", VIOLATED, text(cut(message, limit)), text(body))
        else:  # a SHOULD clause: a warning in every output, never a failed gate: a passed test with its note
            _out(case, text(f"{warning_line(message)}\n\n{body}"))
    elif row.outcome == UNDECIDED:
        why = view.why(row, limit)
        body = "\n".join(part for part in (sentence, tests, why) if part)
        _outcome(case, "skipped", UNDECIDED, text(cut(f"{row.id} undecided: {why}", limit)), text(body))
    elif row.outcome == CONFORMS:
        _out(case, text("\n".join(part for part in (sentence, view.why(row, limit)) if part)))
    return case


def warning_line(message: str) -> str:
    """A SHOULD clause's finding as the note of a passed testcase (``<system-out>``)."""
    return f"warning (SHOULD, not a failed gate): {' '.join(message.split())}"


def _findings(row: ClauseResult, key: str) -> list[str]:
    """The folded findings' lines, each with the tests that made it and the first's replay."""
    folded = view.fold(row.findings)
    lines = []
    for group in folded[:FINDINGS_SHOWN]:
        count = f" ({view.TIMES}{group.count})" if group.count > 1 else ""
        who = f" [{', '.join(group.tests)}]" if group.tests else ""
        lines.append(f"- {view.finding_line(group.finding)}{count}{who}")
    if len(folded) > FINDINGS_SHOWN:
        lines.append(f"- and {len(folded) - FINDINGS_SHOWN} more (report.html, summary.json)")
    exchange = folded[0].finding.exchange if folded else None
    if exchange is not None:
        lines += ["", "replay of the first: " + exchange.curl(key)]
    return lines


def _fully_waived(result: RunResult) -> set[str]:
    """Violated clauses whose every finding a waiver covers (the gate passes over them)."""
    waived = view.waived_clauses(result).items()
    counts = {cid: sum(entry.findings for entry in entries) for cid, entries in waived}
    return {row.id for row in result.clauses if row.findings and counts.get(row.id, 0) >= len(row.findings)}


def _outcome(case: ET.Element, tag: str, kind: str, message: str, body: str) -> None:
    # One line: CI front ends show the message as a title (a clause's sentence may wrap).
    element = ET.SubElement(case, tag, message=" ".join(message.split()), type=kind)
    element.text = body


def _out(case: ET.Element, body: str) -> None:
    ET.SubElement(case, "system-out").text = body


def count(suite: ET.Element, case: ET.Element, step: int) -> None:
    names = ["tests", *(COUNTED[child.tag] for child in case if child.tag in COUNTED)]
    for name in names:
        try:
            value = int(suite.get(name, "0"))
        except ValueError:
            continue
        suite.set(name, str(max(0, value + step)))
