"""The JUnit XML the suite leaves for CI: one-line messages that begin with the finding, the clause
properties, JUnit 10's schema (strict) and only xunit1's extensions beyond it, hostile text kept well
formed.  The XML is a real pytest run's, of a throw-away test file, rewritten as the plugin does.
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
from petstore_contract.core.records import RunResult
from petstore_contract.reporting import junit, verdict_line

ROOT = Path(__file__).resolve().parents[1]
JUNIT_XSD = ROOT / "selftests" / "data" / "junit-10.xsd"
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


@pytest.fixture(scope="module")
def junit_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The JUnit XML of a real pytest run of a throw-away test file (junit_family=xunit1, as the repo)."""
    directory = tmp_path_factory.mktemp("junit")
    (directory / "test_tiny.py").write_text(textwrap.dedent(TINY_TESTS), encoding="utf-8")
    (directory / "conftest.py").write_text(textwrap.dedent(TINY_CONFTEST), encoding="utf-8")
    (directory / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    path = directory / "junit.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:petstore_contract"]
    command += ["-o", "junit_family=xunit1", f"--junitxml={path}", "test_tiny.py"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run(command, cwd=directory, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    return path


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


def _validate(path: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema is a dev dependency (pip install -e '.[dev]')")
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(path))


def test_junit_strict_validates_against_junit_10(junit_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(junit_file.read_bytes())
    junit.rewrite(path, _tiny_result(), strict=True)
    _validate(path)
    out = _cases(path)["test_fails"].find("system-out")
    assert out is not None and (out.text or "").startswith("clauses: list.shape, ")


def test_junit_differs_from_junit_10_only_by_the_xunit1_extensions(rewritten: tuple[Path, RunResult]) -> None:
    """The default output: junit-10 plus testcase <properties> and file/line (what xunit1 adds)."""
    path, _ = rewritten
    tree = ET.parse(path)
    for case in tree.getroot().iter("testcase"):
        assert case.find("properties") is not None or case.get("name") in ("test_skipped", "test_errors")
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
