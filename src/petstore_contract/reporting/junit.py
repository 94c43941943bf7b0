"""junit.xml after pytest wrote it: one-line messages, clause testcases, the run's facts.

pytest's junitxml puts a failed test's whole text in ``<failure message=...>``; CI front ends show
that attribute as a title.  ``rewrite`` keeps the first line there (the plugin makes it
``<clause>: expected ...; observed ... (METHOD URL)``) and the full text in the element's body; a test
that broke only SHOULD clauses (pytest passed it) gets its warning in ``<system-out>``, a test that decided
nothing (undecided, no finding) that pytest failed becomes ``<skipped>`` with its reason; it adds
one testcase per selected clause and one for the verdict (``junit_cases``: the exit code and the
test view agree, whichever test or set-up exchange found a violation), and adds the run's facts,
``verdict`` and ``verdict_reason`` as suite properties.  It uses only the public ``--junitxml``
output, so it works under pytest-xdist (call it in the controller's ``pytest_unconfigure``, after
junitxml's ``pytest_sessionfinish`` wrote the file).

Schema, by ``junit_family``:

- ``xunit2`` (pytest's default): the Jenkins JUnit 10 schema (junit-10.xsd), which pytest's own tests
  validate xunit2 output against.  It has no testcase ``<properties>`` and no ``file``/``line``: the
  clause ids of a pytest testcase go into its ``<system-out>`` ("clauses: ..."), and the suite-level
  ``<properties>`` carry the run's facts.
- ``xunit1`` (and ``legacy``): junit-10.xsd plus the two things pytest's xunit1 adds, testcase
  ``<properties>`` (the clause ids, ``<property name="clause">``) and the attributes ``file`` and
  ``line``.  pytest publishes no schema for it; selftests/data/junit-xunit1.xsd writes that one down.

``strict=True`` gives the xunit2 form whatever the family (Jenkins' xUnit plugin validates against
junit-10.xsd).
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from petstore_contract.core import atomic
from petstore_contract.core.records import (
    INCONCLUSIVE,
    REPEAT_WORDS,
    UNDECIDED,
    VIOLATED,
    Finding,
    Outcome,
    RunResult,
    TestRecord,
    cut,
)
from petstore_contract.reporting import junit_cases, view

MESSAGE_LIMIT = 1_000  # a one-line message longer than this is cut (the body keeps it whole)
OUTCOME_TAGS = ("failure", "error", "skipped")
XUNIT1_ATTRIBUTES = ("file", "line")
# The families whose schema has testcase <properties> and file/line (pytest's junit_family values).
XUNIT1_FAMILIES = ("xunit1", "legacy")
ASKED_AGAIN = "Asked again at the end of the run:"  # heads the failure body's repeat lines
ASKED_SHOWN = 20
# XML 1.0 cannot carry these characters even as references; a server's bytes might contain them.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def rewrite(path: Path, result: RunResult, *, family: str = "xunit1", strict: bool = False) -> None:
    """Rewrite pytest's JUnit XML at ``path`` in place (see the module's docstring); ``family``: the
    run's ``junit_family``."""
    strict = strict or family not in XUNIT1_FAMILIES
    tree = ET.parse(path)
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    clauses_of = _clauses_by_address(result)
    records_of = {address(record.nodeid): record for record in result.records}
    unjudged = _unjudged(result)
    for suite in suites:
        for case in suite.iter("testcase"):
            if case.get("classname") in junit_cases.OURS:
                continue  # the suite's own testcases (a second rewrite): written whole below
            record = records_of.get(_address_of(case))
            if _address_of(case) in unjudged:
                _skipped_not_failed(suite, case, unjudged[_address_of(case)])
            _one_line_messages(case)
            if record is not None:
                _undecided_skipped(suite, case, record)
                _warning_note(case, record, strict, result.key_variable)
            _asked_again(case, view.story_order(record.findings) if record is not None else [])
            clauses = _ensure_clause_properties(case, clauses_of.get(_address_of(case), ()))
            if strict:
                _strict(case, clauses)
    if suites:
        _suite_properties(suites[0], result)
        junit_cases.replace_cases(suites[0], result, _xml_text, MESSAGE_LIMIT)
    ET.indent(tree, space="  ")
    out = io.BytesIO()
    tree.write(out, encoding="utf-8", xml_declaration=True)
    atomic.write_bytes(path, out.getvalue())


def suite_properties(result: RunResult) -> list[tuple[str, str]]:
    """The suite-level properties: the verdict first, then the run's facts (never a secret)."""
    pairs = [
        ("verdict", result.verdict),
        ("verdict_reason", result.reason),
        ("verdict_line", view.verdict_line(result)),
        ("exit_code", str(result.exit_code)),
    ]
    if result.gate is not None:  # waivers were read: the run exits with the gate's code
        pairs += [("gate_exit_code", str(result.gate["exit_code"])), ("gate_line", result.gate["line"])]
        pairs += [("waiver", line) for line in view.waived_lines(result)]  # waived, expired, stale
    for name, value in view.public_facts(result.facts).items():
        pairs.append((name, "" if value is None else str(value)))
    # What the run saw besides its verdict (the transport's events, a store that forgot), as every report says it.
    pairs += [("warning", line) for line in view.other_warnings(result)]
    return [(name, _xml_text(value)) for name, value in pairs]


def address(nodeid: str, prefix: str = "") -> tuple[str, str]:
    """(classname, name) of a node id, as pytest's junitxml writes them (``mangle_test_address``)."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classname = ".".join(names[:-1])
    return (f"{prefix}.{classname}" if prefix else classname), names[-1]


# -- per testcase -----------------------------------------------------------------------------


def _unjudged(result: RunResult) -> dict[tuple[str, str], str]:
    """The tests of an inconclusive run that failed as they ran but whose findings the verdict does not hold
    (a refused key voids every judgement; a deployment's 5xx is set aside): address -> why they are undecided.
    Nothing they did is a violation, so none is a failure (failures >= 1 exactly when the exit code is 1)."""
    if result.verdict != INCONCLUSIVE:
        return {}
    violated = {row.id for row in result.clauses if row.outcome == VIOLATED}
    rows = {row.id: row for row in result.clauses}
    found = {}
    for record in result.records:
        if record.outcome == Outcome.ERROR or any(f.clause in violated for f in record.findings):
            continue  # the suite's own error, or a violation the verdict holds: a failure it stays
        clauses = [rows[cid] for cid in (*(f.clause for f in record.findings), *record.clauses) if cid in rows]
        notes = [note for row in clauses for note in row.notes if row.outcome == UNDECIDED]
        found[address(record.nodeid)] = notes[0].reason if notes else result.reason
    return found


def _skipped_not_failed(suite: ET.Element, case: ET.Element, reason: str) -> None:
    failure = case.find("failure")
    if failure is None:
        return
    case.remove(failure)
    skipped = ET.Element("skipped", type="undecided", message=_xml_text(cut(f"undecided: {reason}", MESSAGE_LIMIT)))
    skipped.text = failure.text
    case.insert(0 if case.find("properties") is None else 1, skipped)
    for name, step in (("failures", -1), ("skipped", 1)):
        if suite.get(name, "").isdigit():
            suite.set(name, str(max(0, int(suite.get(name, "0")) + step)))


def _one_line_messages(case: ET.Element) -> None:
    for element in case:
        if element.tag not in OUTCOME_TAGS:
            continue
        message = element.get("message") or ""
        body = element.text or ""
        lines = [line for line in message.splitlines() if line.strip()] or [
            line for line in body.splitlines() if line.strip()
        ]
        first = lines[0].strip() if lines else ""
        if message.strip() and message.strip() not in body:
            # the whole message was the evidence (pytest's str(longrepr)): keep it in the body
            body = f"{message}\n\n{body}" if body.strip() else message
        element.text = _xml_text(body)
        element.set("message", _xml_text(cut(first, MESSAGE_LIMIT)))


def _undecided_skipped(suite: ET.Element, case: ET.Element, record: TestRecord) -> None:
    """A test that decided nothing against the target (its clauses undecided, no finding) is skipped with
    its reason, never a failure or an error: nothing was judged broken."""
    failed = [e for e in case if e.tag in ("failure", "error")]
    if not failed or record.outcome != UNDECIDED or record.findings:
        return
    reasons = [note.reason for note in record.notes] or [record.detail or "undecided"]
    junit_cases.count(suite, case, -1)
    for element in failed:
        case.remove(element)
    body = "\n".join([*reasons, "", *(e.text or "" for e in failed)]).strip()
    skipped = ET.SubElement(
        case, "skipped", type=UNDECIDED, message=_xml_text(cut(f"undecided: {reasons[0]}", MESSAGE_LIMIT))
    )
    skipped.text = _xml_text(body)
    junit_cases.count(suite, case, +1)


def _warning_note(case: ET.Element, record: TestRecord, strict: bool, key: str) -> None:
    """A test that broke only SHOULD clauses passed (``plugin.classify.warned_only``): its warning and
    evidence go in ``<system-out>`` (and, in xunit1, a ``warning`` property), never a failure."""
    if record.outcome != VIOLATED or any(e.tag in OUTCOME_TAGS for e in case):
        return
    findings = view.story_order(record.findings)
    line = junit_cases.warning_line(view.finding_line(findings[0])) if findings else ""
    out = case.find("system-out")
    if not line or (out is not None and line in (out.text or "")):
        return  # no finding, or a second rewrite
    exchange = findings[0].exchange
    replay = ["", "replay: " + exchange.curl(key)] if exchange is not None else []
    body = "\n".join([line, *(f"- {view.finding_line(f)}" for f in findings[1:ASKED_SHOWN]), *replay])
    if out is None:
        out = ET.SubElement(case, "system-out")
    out.text = _xml_text(f"{body}\n{out.text}" if out.text else body)
    if not strict:
        properties = case.find("properties")
        if properties is None:
            properties = ET.Element("properties")
            case.insert(0, properties)
        ET.SubElement(properties, "property", name="warning", value=_xml_text(cut(line, MESSAGE_LIMIT)))


def _asked_again(case: ET.Element, findings: list[Finding]) -> None:
    """The failure says whether its findings were reproduced or seen once: the message names the first
    finding's (the message is that finding's line), the body every one's, with what came back."""
    marked = [f for f in findings if f.repeat in REPEAT_WORDS]
    for element in case.iter("failure"):
        if not marked:
            return
        message = element.get("message") or ""
        word = REPEAT_WORDS.get(findings[0].repeat)
        if word and message and not message.endswith(f" · {word}"):  # a second rewrite adds nothing
            element.set("message", _xml_text(f"{message} · {word}"))
        body = element.text or ""
        if ASKED_AGAIN not in body:
            lines = [f"  {f.clause}: {REPEAT_WORDS[f.repeat]}: {f.repeat_detail}" for f in marked[:ASKED_SHOWN]]
            more = [f"  and {len(marked) - ASKED_SHOWN} more"] if len(marked) > ASKED_SHOWN else []
            element.text = _xml_text("\n".join([body.rstrip(), "", ASKED_AGAIN, *lines, *more]).lstrip("\n"))


def _ensure_clause_properties(case: ET.Element, clauses: tuple[str, ...]) -> list[str]:
    properties = case.find("properties")
    present = [] if properties is None else [p.get("value", "") for p in properties if p.get("name") == "clause"]
    missing = [cid for cid in clauses if cid not in present]
    if missing:
        if properties is None:
            properties = ET.Element("properties")
            case.insert(0, properties)
        for cid in missing:
            ET.SubElement(properties, "property", name="clause", value=cid)
    return present + missing


def _strict(case: ET.Element, clauses: list[str]) -> None:
    for name in XUNIT1_ATTRIBUTES:
        case.attrib.pop(name, None)
    for properties in case.findall("properties"):
        case.remove(properties)
    if clauses:
        out = case.find("system-out")
        if out is None:
            out = ET.SubElement(case, "system-out")
        line = "clauses: " + ", ".join(clauses)
        if not (out.text or "").startswith(line):  # a second rewrite adds nothing
            out.text = f"{line}\n{out.text}" if out.text else line


def _address_of(case: ET.Element) -> tuple[str, str]:
    return case.get("classname", ""), case.get("name", "")


def _clauses_by_address(result: RunResult) -> dict[tuple[str, str], tuple[str, ...]]:
    by_address: dict[tuple[str, str], tuple[str, ...]] = {}
    for record in result.records:
        by_address[address(record.nodeid)] = tuple(record.clauses)
    for clause in result.clauses:  # clause rows name their tests too: a record may be missing
        for nodeid in clause.tests:
            key = address(nodeid)
            if clause.id not in by_address.get(key, ()):
                by_address[key] = (*by_address.get(key, ()), clause.id)
    return by_address


# -- the suite ------------------------------------------------------------------------------------


def _suite_properties(suite: ET.Element, result: RunResult) -> None:
    properties = suite.find("properties")
    if properties is None:
        properties = ET.Element("properties")
        suite.insert(0, properties)
    ours = suite_properties(result)
    names = {name for name, _ in ours}
    for old in [p for p in properties if p.get("name") in names]:
        properties.remove(old)  # a second rewrite replaces, never duplicates
    for name, value in ours:
        ET.SubElement(properties, "property", name=name, value=value)


def _xml_text(value: object) -> str:
    return _NOT_XML.sub("\ufffd", str(value))
