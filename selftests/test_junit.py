"""The JUnit XML the suite leaves for CI: one-line messages that begin with the finding, the clause
properties, one testcase per selected clause and one for the verdict, the schema of each
``junit_family`` (xunit2: junit-10.xsd; xunit1: junit-xunit1.xsd), hostile text kept well formed.
The XML is a real pytest run's, of a throw-away test file, rewritten as the plugin does; the suite's
own runs against faulty servers are in test_junit_runs.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import reportdata
from petstore_contract.core.records import TARGET, UNDECIDED, VIOLATED, Finding, Note, RunResult, TestRecord
from petstore_contract.reporting import junit, junit_cases, verdict_line

ROOT = Path(__file__).resolve().parents[1]
JUNIT_XSD = ROOT / "selftests" / "data" / "junit-10.xsd"
XUNIT1_XSD = ROOT / "selftests" / "data" / "junit-xunit1.xsd"
SCHEMAS = {"xunit2": JUNIT_XSD, "xunit1": XUNIT1_XSD}
KEY_VARIABLE = reportdata.KEY_VARIABLE
KEY = "SECRET-canary-7f3a9c"  # what a key looks like in the shell; never in a report

TINY_TESTS = """
import pytest

@pytest.fixture
def clause(record_property):
    record_property("clause", "list.shape")

def test_passes(clause):
    pass

def test_fails(clause):
    assert False

@pytest.mark.parametrize("n", [1])
def test_fails_param(n):
    assert False

def test_skipped():
    pytest.skip("undecided (target): connection refused\\nsecond line")

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke\\nwith detail")

def test_errors(broken):
    pass
"""
# What the plugin will do: the failed test's text begins with its finding's one line.
TINY_CONFTEST = """
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        report.longrepr = (
            "list.limit.fills: expected 5 animals; observed 3 (GET http://127.0.0.1:1/v1/pets?limit=5)\\n\\n"
            "curl -sS -i -X GET -H 'Authorization: Bearer $PETSTORE_API_KEY' http://127.0.0.1:1/v1/pets?limit=5\\n"
            "HTTP 200\\n[{\\"id\\": 1}]"
        )
"""


def _tiny_run(directory: Path, family: str) -> Path:
    """The JUnit XML of a real pytest run of a throw-away test file under ``family``."""
    (directory / "test_tiny.py").write_text(textwrap.dedent(TINY_TESTS), encoding="utf-8")
    (directory / "conftest.py").write_text(textwrap.dedent(TINY_CONFTEST), encoding="utf-8")
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    path = directory / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:petstore_contract"]
    command += ["-o", f"junit_family={family}", f"--junitxml={path}", "test_tiny.py"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    return path


@pytest.fixture(scope="module")
def junit_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The JUnit XML of a tiny run under junit_family=xunit1 (as the checkout's pytest settings)."""
    return _tiny_run(tmp_path_factory.mktemp("junit"), "xunit1")


@pytest.fixture(scope="module")
def junit_file_xunit2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The JUnit XML of a tiny run under junit_family=xunit2 (pytest's default)."""
    return _tiny_run(tmp_path_factory.mktemp("junit2"), "xunit2")


def _tiny_result() -> RunResult:
    result = reportdata.not_conformant(long=0)
    # clause rows name the tiny tests: test_fails gets a second clause, test_fails_param its only one
    result.clauses[0].tests = ["test_tiny.py::test_fails", "test_tiny.py::test_fails_param[1]"]
    result.clauses[1].tests = ["test_tiny.py::test_fails"]
    result.records = []
    return result


@pytest.fixture
def rewritten(junit_file: Path, tmp_path: Path) -> tuple[Path, RunResult]:
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    result = _tiny_result()
    junit.rewrite(path, result)
    return path, result


def _cases(path: Path) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in ET.parse(path).getroot().iter("testcase")}


def test_junit_before_rewrite_has_multiline_messages(junit_file: Path) -> None:
    failure = _cases(junit_file)["test_fails"].find("failure")
    assert failure is not None and "\n" in failure.get("message", "")


def test_junit_messages_are_one_line(rewritten: tuple[Path, RunResult]) -> None:
    path, _ = rewritten
    assert path.read_bytes().startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    cases = _cases(path)
    outcomes = [e for case in cases.values() for e in case if e.tag in ("failure", "error", "skipped")]
    assert {e.tag for e in outcomes} == {"failure", "error", "skipped"}
    for element in outcomes:
        assert "\n" not in element.get("message", "") and element.get("message")
    failure = cases["test_fails"].find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "list.limit.fills: expected 5 animals; observed 3 (GET http://127.0.0.1:1/v1/pets?limit=5)"
    )
    assert "curl -sS -i" in (failure.text or "") and "HTTP 200" in (failure.text or "")  # the evidence stays
    error = cases["test_errors"].find("error")
    assert error is not None and "fixture broke" in (error.text or "")
    skipped = cases["test_skipped"].find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith("undecided (target): connection refused")
    assert "second line" in (skipped.text or "")


def test_junit_properties(rewritten: tuple[Path, RunResult]) -> None:
    path, result = rewritten
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.find("properties") or []}
    assert props["verdict"] == "not_conformant"
    assert props["verdict_reason"] == result.reason
    assert props["verdict_line"] == verdict_line(result)
    assert props["base_url"] == result.facts["base_url"] and props["key_env"] == KEY_VARIABLE
    cases = _cases(path)

    def clauses(name: str) -> list[str]:
        return [p.get("value", "") for p in cases[name].iter("property") if p.get("name") == "clause"]

    assert clauses("test_passes") == ["list.shape"]  # recorded by the test itself, kept
    assert clauses("test_fails") == ["list.shape", result.clauses[1].id]  # kept, and the missing one added
    assert clauses("test_fails_param[1]") == ["list.shape"]  # added from the run's records
    # Rewriting again changes nothing.
    before = path.read_bytes()
    junit.rewrite(path, result)
    assert path.read_bytes() == before


def _validate(path: Path, schema: Path = JUNIT_XSD) -> None:
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is a dev dependency (pip install -e '.[dev]')")
    xmlschema.XMLSchema(str(schema)).validate(str(path))


def test_junit_strict_validates_against_junit_10(junit_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    junit.rewrite(path, _tiny_result(), strict=True)
    _validate(path)
    out = _cases(path)["test_fails"].find("system-out")
    assert out is not None and (out.text or "").startswith("clauses: list.shape, ")


def test_junit_differs_from_junit_10_only_by_the_xunit1_extensions(rewritten: tuple[Path, RunResult]) -> None:
    """The xunit1 output: junit-xunit1.xsd, which is junit-10 plus testcase <properties> and file/line."""
    path, _ = rewritten
    _validate(path, XUNIT1_XSD)
    tree = ET.parse(path)
    for case in tree.getroot().iter("testcase"):
        ours = case.get("classname") in junit_cases.OURS
        assert case.find("properties") is not None or ours or case.get("name") in ("test_skipped", "test_errors")
        for name in junit.XUNIT1_ATTRIBUTES:
            case.attrib.pop(name, None)
        for properties in case.findall("properties"):
            case.remove(properties)
    stripped = path.with_name("stripped.xml")
    tree.write(stripped, encoding="utf-8", xml_declaration=True)
    _validate(stripped)


def test_junit_survives_hostile_text(junit_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    result = _tiny_result()
    result.facts["target"] = "bad\x01name <&>"
    result.reason = "x" * 20_000
    junit.rewrite(path, result, strict=True)
    _validate(path)
    props = {p.get("name"): p.get("value") for p in ET.parse(path).getroot().iter("property")}
    assert props["target"] == "bad\ufffdname <&>"


# -- the clauses' and the verdict's testcases, the schema of each family ------------------------------


@pytest.mark.parametrize("family", ["xunit2", "xunit1"])
def test_junit_validates_against_the_schema_of_its_family(
    family: str, junit_file: Path, junit_file_xunit2: Path, tmp_path: Path
) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes((junit_file_xunit2 if family == "xunit2" else junit_file).read_bytes())
    for result in (_tiny_result(), reportdata.inconclusive()):
        junit.rewrite(path, result, family=family)
        _validate(path, SCHEMAS[family])
    in_cases = [case for case in ET.parse(path).getroot().iter("testcase") if case.find("properties") is not None]
    assert bool(in_cases) is (family == "xunit1"), "testcase <properties> only where the family's schema has them"
    if family == "xunit2":
        out = _cases(path)["test_fails"].find("system-out")
        assert out is not None and (out.text or "").startswith("clauses: list.shape, ")


def _suite_counts(path: Path) -> dict[str, int]:
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    return {name: int(suite.get(name, "0")) for name in ("tests", "failures", "errors", "skipped")}


def test_every_violated_must_clause_is_a_failing_testcase(junit_file: Path, tmp_path: Path) -> None:
    """Whoever found it (here: no pytest testcase at all): a failure per violated MUST clause, its
    message quoting the clause's sentence and the first finding; the verdict a failure too (exit 1)."""
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    before = _suite_counts(path)
    result = _tiny_result()
    junit.rewrite(path, result, family="xunit2")
    cases = [c for c in ET.parse(path).getroot().iter("testcase") if c.get("classname") == junit_cases.CLAUSES_CLASS]
    by_id = {case.get("name"): case for case in cases}
    violated = [row for row in result.clauses if row.outcome == "violated" and row.level == "MUST"]
    assert violated
    for row in violated:
        failure = by_id[row.id].find("failure")
        assert failure is not None, row.id
        message = failure.get("message", "")
        assert message.startswith(f"{row.id} violated: ") and "\n" not in message
        assert " ".join(row.quote.split())[:40] in message, "the clause's sentence"
        assert row.findings[0].clause in message and "expected" in message, "the first finding"
        assert "curl " in (failure.text or ""), "the first finding's replay in the body"
    assert {c.get("name") for c in cases} == {r.id for r in result.clauses if r.outcome != "not_selected"}
    for row in result.clauses:
        if row.outcome == "undecided":
            assert by_id[row.id].find("skipped") is not None, row.id
        if row.outcome == "conforms":
            assert [e.tag for e in by_id[row.id]] == ["system-out"], row.id
    verdict = _cases(path)["verdict"].find("failure")
    assert verdict is not None and verdict.get("message") == verdict_line(result)
    after = _suite_counts(path)
    assert after["failures"] == before["failures"] + len(violated) + 1
    assert after["tests"] == before["tests"] + len(cases) + 1
    assert after["skipped"] == before["skipped"] + sum(1 for r in result.clauses if r.outcome == "undecided")
    junit.rewrite(path, result, family="xunit2")
    assert _suite_counts(path) == after, "a second rewrite replaces the testcases, never adds"


def test_an_inconclusive_run_is_an_error_and_a_conformant_one_passes(junit_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    before = _suite_counts(path)
    result = reportdata.inconclusive()
    junit.rewrite(path, result, family="xunit2")
    error = _cases(path)["verdict"].find("error")
    assert error is not None and error.get("message", "").startswith("Inconclusive: ")
    assert _suite_counts(path)["errors"] == before["errors"] + 1
    conformant = reportdata.conformant()
    junit.rewrite(path, conformant, family="xunit2")
    assert [e.tag for e in _cases(path)["verdict"]] == ["system-out"]
    assert _suite_counts(path)["errors"] == before["errors"]
    assert _suite_counts(path)["failures"] == before["failures"]


def test_a_waived_clause_is_skipped_and_the_passing_gate_passes(junit_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    result = _tiny_result()
    row = next(r for r in result.clauses if r.outcome == "violated")
    others = [r for r in result.clauses if r.outcome == "violated" and r is not row]
    for other in others:  # one violated clause left, every finding of it waived
        other.outcome, other.findings = "conforms", []
    signature = {"operation": "", "expectation": "x"}
    ids = [fid for fid, _ in row.numbered()]
    waiver = {"number": 1, "clause": row.id, "owner": "qa", "expires": "2099-01-01", "reason": "known"}
    entry = {"clause": row.id, "signature": signature, "findings": ids, "waiver": waiver}
    result.gate = {"exit_code": 0, "line": "gate passes: every MUST violation is waived", "waived": [entry]}
    junit.rewrite(path, result, family="xunit2")
    skipped = _cases(path)[row.id].find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith("waived: ")
    assert [e.tag for e in _cases(path)["verdict"]] == ["system-out"]


def test_a_should_warning_passes_and_an_undecided_test_is_skipped(junit_file: Path, tmp_path: Path) -> None:
    """A test whose only finding is on a SHOULD clause passes with its warning in ``<system-out>`` (and, in
    xunit1, a ``warning`` property); its clause's testcase passes with the note; a test that decided nothing
    (undecided, no finding) that pytest failed is a skip with its reason; the counters follow."""
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    result = _tiny_result()
    should = Finding("auth.challenge.quiet", "no error= parameter", 'Bearer error="invalid_token"')
    result.records = [
        TestRecord("test_tiny.py::test_passes", ("auth.challenge.quiet",), VIOLATED, {}, [should]),
        TestRecord(
            "test_tiny.py::test_errors",
            ("list.shape",),
            UNDECIDED,
            notes=[Note(("list.shape",), TARGET, "the target could not be asked: connection refused")],
        ),
    ]
    row = next(c for c in result.clauses if c.level == "SHOULD")
    row.outcome, row.findings = VIOLATED, [should]
    junit.rewrite(path, result)
    cases = _cases(path)
    warned = cases["test_passes"]
    assert warned.find("failure") is None and warned.find("skipped") is None
    assert (warned.findtext("system-out") or "").startswith("warning (SHOULD, not a failed gate): auth.challenge.quiet")
    assert any(p.get("name") == "warning" for p in warned.iter("property"))
    clause_case = next(
        c
        for c in ET.parse(path).getroot().iter("testcase")
        if c.get("name") == row.id and c.get("classname") == junit_cases.CLAUSES_CLASS
    )
    assert not [e for e in clause_case if e.tag in ("failure", "error", "skipped")]
    assert (clause_case.findtext("system-out") or "").startswith("warning (SHOULD")
    skipped = cases["test_errors"]
    assert skipped.find("error") is None and skipped.find("failure") is None
    mark = skipped.find("skipped")
    assert mark is not None and mark.get("message") == "undecided: the target could not be asked: connection refused"
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    testcases = list(suite.iter("testcase"))
    assert int(suite.get("errors", "0")) == sum(1 for c in testcases if c.find("error") is not None)
    assert int(suite.get("skipped", "0")) == sum(1 for c in testcases if c.find("skipped") is not None)
    junit.rewrite(path, result)  # a second rewrite adds nothing
    assert (_cases(path)["test_passes"].findtext("system-out") or "").count("warning (SHOULD") == 1
