"""Issue 58: every output tells the verdict's story, the broken sentence first, a SHOULD warning a warning.

Two runs of the catalog, their outputs asserted as a CI user, a vendor and QA read them:

- **one sentence broken** (fault ``create_returns_200``: 200 instead of 201 to a valid create): exit 1, the
  verdict last; every JUnit failure has a one-line message naming its clause and, where a finding made it,
  the evidence with its replay in the body; report.html and summary.md open on ``create.created`` (the
  clause of the operation's own documented answer) before the catch-all ``responses.documented``, its first
  example a plain ASCII request of set-up or a targeted test; no output names a Schemathesis check.
- **a SHOULD not met, nothing else** (variant ``gzip-by-word``: gzip to ``Accept-Encoding: gzip;q=0``),
  run under ``-x``: exit 0, "Conformant" naming the warning, no failed test in pytest's count or in JUnit
  (the warning a passed testcase's ``<system-out>``), and ``-x`` does not stop the run.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from devtools import SuiteRun
from devtools.killmatrix import Scenario, run_scenario
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.interface.clauses import registry
from petstore_contract.reporting import junit_cases

KEEP = ("summary.json", "summary.md", "report.html", "junit.xml")
RUNS = {
    "one-sentence": (Scenario("fault", "create_returns_200"), QUICK),
    "should-only": (Scenario("variant", "gzip-by-word"), (*QUICK, "-x")),
}
# Words of the library that must not reach a person: its checks' names, its own "check to hold".
LIBRARY_WORDS = re.compile(r"Schemathesis' |check to hold")


@pytest.fixture(scope="module", params=list(RUNS))
def story(request: pytest.FixtureRequest) -> tuple[str, SuiteRun]:
    scenario, args = RUNS[request.param]

    def runner(base_url: str | None, api_key: str | None, *more: str) -> SuiteRun:
        return run_hosted(base_url, api_key, *more, keep=KEEP, timeout=300)

    run = run_scenario(scenario, args, runner)
    assert set(KEEP) <= set(run.reports), run.output[-3000:]
    return request.param, run


def _cases(run: SuiteRun) -> list[ET.Element]:
    return list(ET.fromstring(run.reports["junit.xml"]).iter("testcase"))


def _check_names(run: SuiteRun) -> set[str]:
    """The Schemathesis checks the run's findings record (their signature's kind: "schemathesis:<name>")."""
    kinds = {str(f.get("expectation", "")) for f in run.findings()}
    return {kind.split(":", 1)[1] for kind in kinds if kind.startswith("schemathesis:")}


class _Sections(HTMLParser):
    """The ids of report.html's clause sections in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs).get("id") or ""
        if tag == "section" and found.startswith("clause-"):
            self.ids.append(found.removeprefix("clause-"))


def test_the_last_line_is_the_verdict_and_the_exit_code_agrees(story: tuple[str, SuiteRun]) -> None:
    name, run = story
    last = run.output.strip().splitlines()[-1]
    if name == "one-sentence":
        assert run.exit_code == 1 and last.startswith("Not conformant: ") and "create.created" in last, last
    else:
        assert run.exit_code == 0, run.output[-3000:]
        assert (
            last.startswith("Conformant: ") and "SHOULD clause not met (a warning): http.content-coding.refused" in last
        )
        summary = next(line for line in run.output.splitlines() if re.search(r"\d+ passed", line))
        assert " failed" not in summary and " error" not in summary, summary  # pytest's count agrees: -x ran on
        assert any(
            line.startswith("warning (SHOULD) http.content-coding.refused: ") for line in run.output.splitlines()
        )


def test_junit_failures_exactly_when_the_gate_is_red_each_in_one_line(story: tuple[str, SuiteRun]) -> None:
    _, run = story
    failures = [(case, element) for case in _cases(run) for element in case if element.tag in ("failure", "error")]
    root = ET.fromstring(run.reports["junit.xml"])
    counted = sum(int(suite.get("failures", "0")) for suite in root.iter("testsuite"))
    assert counted == sum(1 for _, element in failures if element.tag == "failure")
    assert (counted >= 1) == (run.exit_code == 1)
    ids = tuple(registry())
    for case, element in failures:
        message = element.get("message", "")
        assert message.strip() and "\n" not in message, (case.get("name"), message)
        if case.get("classname") == junit_cases.VERDICT_CLASS:
            continue
        assert message.startswith(ids), f"the message names its clause: {message[:200]}"
        assert "curl " in (element.text or ""), f"the evidence's replay in the body: {case.get('name')}"


def test_a_should_warning_is_a_passed_testcase_with_its_note(story: tuple[str, SuiteRun]) -> None:
    name, run = story
    if name != "should-only":
        pytest.skip("the SHOULD-only run's")
    warned = [
        case
        for case in _cases(run)
        if "http.content-coding.refused"
        in (case.get("name", "") + " ".join(p.get("value", "") for p in case.iter("property")))
        and (case.findtext("system-out") or "").startswith("warning (SHOULD")
    ]
    names = {case.get("classname") for case in warned}
    assert junit_cases.CLAUSES_CLASS in names and len(names) >= 2, "the clause's testcase and the test's own"
    assert all(case.find("failure") is None and case.find("skipped") is None for case in warned)


def test_the_broken_sentence_first_shown_plainly(story: tuple[str, SuiteRun]) -> None:
    name, run = story
    if name != "one-sentence":
        pytest.skip("the single-sentence fault's")
    violated = [c["id"] for c in run.summary["clauses"] if c["outcome"] == "violated"]
    assert "create.created" in violated
    # A violated clause was judged: each finding is an exchange judged for it (pytest-html's "Exchanges judged").
    judged = {c["id"]: c["exchanges"] for c in run.summary["clauses"] if c["outcome"] == "violated"}
    assert all(count >= 1 for count in judged.values()), judged
    parser = _Sections()
    parser.feed(run.reports["report.html"])
    assert parser.ids and parser.ids[0] == "create.created", parser.ids
    markdown = run.reports["summary.md"]
    headings = re.findall(r"^#### `([^`]+)`", markdown, flags=re.MULTILINE)
    assert headings[0] == "create.created", headings
    # Its first example: a request of set-up or a targeted test, plain ASCII (not a drawn case).
    section = markdown.split("#### `create.created`", 1)[1].split("\n#### ", 1)[0]
    first_replay = re.search(r"```sh\n(curl [^\n]+)\n```", section)
    assert first_replay is not None, section[:2000]
    assert first_replay.group(1).isascii() and "X-Schemathesis-TestCaseId" not in first_replay.group(1)
    # The document's sentence, quoted as a sentence.
    assert registry()["create.created"].quote.startswith("Responses of POST /pets: 201")


def test_no_output_names_a_library_check(story: tuple[str, SuiteRun]) -> None:
    _, run = story
    names = _check_names(run)
    for text in (run.output, run.reports["report.html"], run.reports["summary.md"], run.reports["junit.xml"]):
        assert not LIBRARY_WORDS.search(text), LIBRARY_WORDS.search(text)
        assert not [check for check in names if check in text], names
