"""The reports of a run, rendered from its records: what QA, CI and vendors read.

Each test renders run results built as data (selftests/reportdata.py): a conformant run, a
not-conformant one with 150 findings over 12 clauses and 10,000-character names, URLs and bodies,
and an inconclusive one (the target refused); the JUnit XML is ``test_junit.py``'s.  The page-width
tests drive headless Chromium with JavaScript off; they skip without a Chromium, and fail instead
when PETSTORE_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from html import escape, unescape
from pathlib import Path
from typing import Any

import jsonschema
import markupsafe
import pytest

import reportdata
from petstore_contract.core.records import VIOLATED, ClauseResult, Exchange, Finding, RunResult
from petstore_contract.interface.clauses import registry
from petstore_contract.reporting import html, markdown, summary_json, terminal, verdict_line, write_reports
from petstore_contract.reporting import view as report_view

ROOT = Path(__file__).resolve().parents[1]
KEY_VARIABLE = reportdata.KEY_VARIABLE
KEY = "SECRET-canary-7f3a9c"  # what a key looks like in the shell; never in a report
KINDS = list(reportdata.RUNS)
CLAUSE_SECTION = re.compile(r'<section class="clause (?:must|should)" id="([^"]+)">(.*?)</section>', re.DOTALL)
PRE = re.compile(r"<pre>(.*?)</pre>", re.DOTALL)


@pytest.fixture(scope="module")
def runs() -> dict[str, RunResult]:
    return {kind: make() for kind, make in reportdata.RUNS.items()}


@pytest.fixture(scope="module")
def written(runs: dict[str, RunResult], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    base = tmp_path_factory.mktemp("reports")
    return {kind: write_reports(result, base / kind / "nested") for kind, result in runs.items()}


def sections(page: str) -> dict[str, str]:
    return {anchor: body for anchor, body in CLAUSE_SECTION.findall(page)}


# -- the verdict line, the same everywhere ----------------------------------------------------------


class COUNTS:
    """The registry's own numbers, so a new clause does not rewrite these lines (reportdata's runs hold every
    clause: the conformant one needs the whole store for the complete-view clauses, the not-conformant one
    leaves one MUST clause out of its selection)."""

    total = len(registry())
    must = sum(1 for clause in registry().values() if clause.level == "MUST")
    whole_ids = ", ".join(cid for cid, clause in registry().items() if clause.complete_view)
    whole = whole_ids.count(",") + 1


def test_verdict_lines(runs: dict[str, RunResult]) -> None:
    """The verdict's own reason is the line (one source of truth with the exit code)."""
    assert verdict_line(runs["conformant"]) == (
        f"Conformant: {COUNTS.total - COUNTS.whole - 1} of {COUNTS.total - 1} clauses conform; {COUNTS.whole} need "
        f"a store the suite can see whole: {COUNTS.whole_ids}"
    )
    assert verdict_line(runs["not-conformant"]) == (
        f"Not conformant: 12 of {COUNTS.must - 1} MUST clauses violated: list.shape, list.limit.honoured, "
        "list.limit.fills, list.page.distinct, list.status.filter and 7 more"
    )
    assert verdict_line(runs["inconclusive"]) == (
        "Inconclusive: the target did not answer: GET http://127.0.0.1:9/v1/pets?limit=1: connection refused"
    )


def test_verdict_lines_without_a_reason() -> None:
    """A result without a reason gets one written from its clause rows."""
    runs = {kind: make() for kind, make in reportdata.RUNS.items()}
    for result in runs.values():
        result.reason = ""
    assert verdict_line(runs["conformant"]) == (
        f"Conformant: {COUNTS.total - COUNTS.whole - 1} of {COUNTS.total} clauses conform; {COUNTS.whole} need a "
        f"store the suite can see whole: {COUNTS.whole_ids}; 1 SHOULD clause not met (warning): auth.challenge.quiet"
    )
    assert verdict_line(runs["not-conformant"]).startswith(
        f"Not conformant: 12 of {COUNTS.must - 1} MUST clauses violated (list.shape, "
    )
    assert verdict_line(runs["inconclusive"]).startswith(
        f"Inconclusive: {COUNTS.must} MUST clauses could not be decided ("
    )
    one_line = reportdata.inconclusive()
    one_line.reason = "refused\n" + "x" * 10_000
    assert "\n" not in verdict_line(one_line) and len(verdict_line(one_line)) < 600


def test_write_reports(written: dict[str, dict[str, Path]]) -> None:
    for paths in written.values():
        assert {path.name for path in paths.values()} == {"report.html", "summary.md", "summary.json"}
        assert all(path.is_file() and path.stat().st_size > 0 for path in paths.values())


# -- report.html -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_html_banner_and_matrix(kind: str, runs: dict[str, RunResult], written: dict[str, dict[str, Path]]) -> None:
    result = runs[kind]
    page = written[kind]["html"].read_text(encoding="utf-8")
    banner = re.search(r'<p class="banner banner--(\w+)"[^>]*>(.*?)</p>', page, re.DOTALL)
    assert banner and banner.group(1) == result.verdict
    text = unescape(re.sub(r"<[^>]+>", " ", banner.group(2)))
    assert report_view.VERDICT_WORDS[result.verdict] in text
    assert " ".join(verdict_line(result).split()) in " ".join(text.split())
    if report_view.one_reason(result) is not None:  # a run that judged nothing: its reason once, no matrix
        assert page.index('class="banner') < page.index('id="run"') < page.index('id="undecided"')
        assert 'id="matrix"' not in page and 'id="coverage"' not in page and 'id="texts"' not in page
        assert page.count(escape(result.reason, quote=False)) == 1
        return
    assert page.index('class="banner') < page.index('id="run"') < page.index('id="matrix"')
    if report_view.violated_must(result):  # the verdict, then what is broken, then the run's facts
        assert page.index('class="banner') < page.index('id="violated"') < page.index('id="run"')
    rows = re.findall(r'<tr class="(\w+)">\s*<td class="m-id">(.*?)</td>', page, re.DOTALL)
    assert [unescape(re.sub(r"<[^>]+>", "", cell)) for _, cell in rows] == [c.id for c in result.clauses]
    # Every matrix link lands on an element of the page.
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    for href in re.findall(r'href="#([^"]+)"', page):
        assert href in ids


@pytest.mark.parametrize("kind", KINDS)
def test_html_is_self_contained(kind: str, written: dict[str, dict[str, Path]]) -> None:
    page = written[kind]["html"].read_text(encoding="utf-8")
    assert "default-src 'none'; style-src 'unsafe-inline'" in page
    assert "<script" not in page.lower()
    assert not re.search(r"<[^>]+\son\w+\s*=", page, re.IGNORECASE), "an event handler attribute"
    assert page.count("<style>") == 1
    for reference in re.findall(r'\b(?:src|href|action|srcset)\s*=\s*"([^"]*)"', page):
        assert reference.startswith("#"), reference
    assert "url(" not in page.split("</style>")[0]  # no font or image the CSP would block


def test_html_escapes_what_the_server_sent(written: dict[str, dict[str, Path]]) -> None:
    page = written["not-conformant"]["html"].read_text(encoding="utf-8")
    assert reportdata.HOSTILE not in page
    assert "&lt;script&gt;alert(" in page


def test_every_violated_clause_has_its_section(runs: dict[str, RunResult], written: dict[str, dict[str, Path]]) -> None:
    result = runs["not-conformant"]
    found = sections(written["not-conformant"]["html"].read_text(encoding="utf-8"))
    violated = [c for c in result.clauses if c.outcome == VIOLATED]
    assert len(violated) == 12
    for clause in violated:
        body = found[report_view.anchor(clause.id)]
        assert f"<blockquote>{_escaped(clause.quote)}<cite>{_escaped(clause.section)}</cite></blockquote>" in body
        curls = [unescape(text) for text in PRE.findall(body) if text.startswith("curl ")]
        assert curls, f"{clause.id}: no curl"
        for command in curls:
            argv = shlex.split(command)
            assert argv[0] == "curl"
            assert any(f"${KEY_VARIABLE}" in arg for arg in argv), command[:200]
            assert KEY not in command


def test_curl_replays_the_request_in_a_shell(runs: dict[str, RunResult]) -> None:
    """The page's command, run by sh with curl replaced by an echo: the key expands, nothing else does."""
    page = html.render(runs["not-conformant"])
    exchanges = {
        f.exchange.curl(KEY_VARIABLE): f.exchange
        for c in runs["not-conformant"].clauses
        for f in c.findings
        if f.exchange
    }
    shown = [unescape(text) for text in PRE.findall(page) if text.startswith("curl ")]
    checked = 0
    for command in dict.fromkeys(shown):
        exchange = exchanges[command]  # the page shows the command whole (the 10,000-character URL too)
        script = 'curl() { for arg in "$@"; do printf "%s\\0" "$arg"; done; }\n' + command
        out = subprocess.run(
            ["sh", "-c", script], env={"PETSTORE_API_KEY": KEY, "PATH": os.environ["PATH"]}, capture_output=True
        )
        assert out.returncode == 0, out.stderr
        argv = out.stdout.decode().split("\0")[:-1]
        assert argv[argv.index("-X") + 1] == exchange.method
        assert argv[-1] == exchange.url
        assert f"Authorization: Bearer {KEY}" in argv
        if exchange.request_body is not None:
            assert argv[argv.index("--data-raw") + 1] == exchange.request_body  # "$dog" stays literal
        checked += 1
    assert checked >= 3


def test_identical_findings_fold(runs: dict[str, RunResult], written: dict[str, dict[str, Path]]) -> None:
    clause = next(c for c in runs["not-conformant"].clauses if c.id == reportdata.FOLDED_CLAUSE)
    folded = report_view.fold(clause.findings)
    assert folded[0].count == 12 and len(folded[0].tests) == 12
    body = sections(written["not-conformant"]["html"].read_text(encoding="utf-8"))[report_view.anchor(clause.id)]
    assert body.count("\u00d712</span>") == 1  # one entry, counted
    assert body.count("expected 5 animals") == 0  # expected/observed are shown apart, once
    assert body.count("5 animals (limit=5, 40 matching animals, page cap 100)") == 1
    assert "Seen by 12 tests" in body
    assert all(f"test_limit_fills[case{i}]" in body for i in range(12))
    assert "(\u00d712)" in written["not-conformant"]["markdown"].read_text(encoding="utf-8")


def _created(observed: str, pet_id: int) -> Finding:
    exchange = Exchange("POST", "http://127.0.0.1:1/v1/pets", request_body=f'{{"name": "a{pet_id}"}}', status=200)
    return Finding("create.created", "HTTP 201", observed, exchange, f"t{pet_id}", expectation="status:201")


@pytest.mark.parametrize(
    ("observed", "groups"),
    [
        pytest.param(lambda i: f'HTTP 200 with {{"id": {i}, "name": "a{i}"}}', 1, id="only-the-body-differs"),
        pytest.param(lambda i: f"HTTP 20{i} with {{}}", 3, id="the-status-differs"),
        pytest.param(lambda i: f"id {i} again", 3, id="the-observation-differs"),
    ],
)
def test_findings_that_differ_only_in_a_body_say_one_thing(observed: Any, groups: int) -> None:
    """A 200-for-201 server's creates, each answered with its own Pet: one reason, counted; a status or an
    observation of its own is a reason of its own."""
    folded = report_view.fold([_created(observed(i), i) for i in range(3)])
    assert len(folded) == groups
    assert sum(group.count for group in folded) == 3
    if groups == 1:
        assert folded[0].tests == ["t0", "t1", "t2"]


def test_long_values_are_cut_with_their_length(written: dict[str, dict[str, Path]]) -> None:
    page = written["not-conformant"]["html"].read_text(encoding="utf-8")
    assert "N" * reportdata.LONG not in page.split("curl ")[0]  # before the first command: facts, matrix
    assert re.search(r"\[cut: [\d,]+ characters in all\]", page)
    assert "y" * 2_001 not in page  # response bodies: an excerpt


# -- the layout in a browser --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    required = os.environ.get("PETSTORE_REQUIRE_BROWSER") == "1"
    missing = ""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is not installed (pip install -e '.[dev]')"
    executable = reportdata.chromium_path()
    if not missing and executable is None:
        missing = "no Chromium on PATH (apt-get install chromium) nor in $PETSTORE_CHROMIUM"
    if missing:
        if required:
            pytest.fail(f"PETSTORE_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.mark.parametrize("width", [1280, 400])
@pytest.mark.parametrize("kind", KINDS)
def test_page_fits_the_window(kind: str, width: int, browser: Any, written: dict[str, dict[str, Path]]) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        page.goto(written[kind]["html"].as_uri())
        # evaluate runs in an isolated world: it works while the page itself may run no script
        assert page.evaluate("document.title").startswith(report_view.VERDICT_WORDS[runs_verdict(kind)])
        scroll_width, inner_width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert inner_width == width
        assert scroll_width <= width, f"{kind} is {scroll_width}px wide in a {width}px window"
        widest = page.evaluate(
            "Math.max(...Array.from(document.querySelectorAll('body *'), e => e.getBoundingClientRect().right))"
        )
        assert widest <= width + 0.5
        assert not [m for m in console if "Content Security Policy" in m], console
    finally:
        context.close()


def test_page_runs_no_script(browser: Any, tmp_path: Path) -> None:
    """The check above is meaningful: with JavaScript off, a script in the page does not run."""
    probe = tmp_path / "probe.html"
    probe.write_text("<title>before</title><script>document.title = 'ran'</script>", encoding="utf-8")
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(probe.as_uri())
        assert page.evaluate("document.title") == "before"
    finally:
        context.close()


def runs_verdict(kind: str) -> str:
    return {"conformant": "conformant", "not-conformant": "not_conformant", "inconclusive": "inconclusive"}[kind]


# -- summary.json --------------------------------------------------------------------------------------


def test_schema_is_valid_2020_12() -> None:
    schema = summary_json.schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["verdict"]["enum"] == ["conformant", "not_conformant", "inconclusive"]
    assert (ROOT / "src/petstore_contract/reporting/summary.schema.json").is_file()


@pytest.mark.parametrize("kind", KINDS)
def test_summary_json_validates(kind: str, runs: dict[str, RunResult], written: dict[str, dict[str, Path]]) -> None:
    data = json.loads(written[kind]["json"].read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(summary_json.schema()).validate(data)
    result = runs[kind]
    assert data["verdict"] == result.verdict and data["exit_code"] == result.exit_code
    assert data["verdict_line"] == verdict_line(result)
    for clause in data["clauses"]:
        assert [f["count"] for f in clause.pop("folded")] == [
            f.count for f in report_view.fold([Finding.from_dict(d) for d in clause["findings"]])
        ]
    assert {k: v for k, v in data.items() if k in result.to_dict()} == json.loads(json.dumps(result.to_dict()))


def test_summary_json_schema_rejects_what_it_should(runs: dict[str, RunResult]) -> None:
    validator = jsonschema.Draft202012Validator(summary_json.schema())
    good = summary_json.document(runs["not-conformant"])
    for change in (
        {"verdict": "not conformant"},
        {"schema_version": 1},
        {"exit_code": 0},  # a not-conformant run exits 1
        {"requests": -1},
    ):
        assert not validator.is_valid({**good, **change}), change
    broken = json.loads(json.dumps(good))
    broken["clauses"][0]["outcome"] = "passed"
    assert not validator.is_valid(broken)
    del good["started"]
    assert not validator.is_valid(good)


def test_secret_named_facts_are_hidden_but_not_the_reports_own_words() -> None:
    result = reportdata.conformant()
    result.facts |= {"auth_header": "Bearer x", "ci_token": "abc", "base_url": "https://user:pw@host.example/v1"}
    data = summary_json.document(result)
    assert data["auth_header"] == data["ci_token"] == "[hidden]"
    assert data["base_url"] == "https://[hidden]@host.example/v1"
    assert data["key_env"] == KEY_VARIABLE
    assert any(c["id"] == "auth.invalid" for c in data["clauses"])  # clause ids are not "secret names"
    page = html.render(result)
    assert "Bearer x" not in page and "user:pw" not in page and "auth.invalid" in page


# -- summary.md -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_markdown(kind: str, runs: dict[str, RunResult], written: dict[str, dict[str, Path]]) -> None:
    text = written[kind]["markdown"].read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < 60_000
    unescaped = re.sub(r"\\(.)", r"\1", text)
    assert verdict_line(runs[kind]) in unescaped
    assert "<script" not in text and "<img" not in text
    if kind == "not-conformant":
        for clause in runs[kind].clauses:
            if clause.outcome == VIOLATED:
                assert f"#### `{clause.id}`" in text
        assert text.count("```sh\ncurl ") == 12


def test_markdown_stays_small_however_many_findings() -> None:
    """Every MUST clause violated, each finding enormous: the first 20 in detail, the rest counted."""
    big = "B" * 50_000
    clauses = []
    for index in range(40):
        exchange = Exchange("GET", f"http://h/v1/pets?q={big}", (("Authorization", f"Bearer ${KEY_VARIABLE}"),))
        finding = Finding(f"fake.c{index}", big, big, exchange, f"tests/t.py::t[{big}]")
        clauses.append(ClauseResult(f"fake.c{index}", "§4.1", "MUST", big, VIOLATED, [finding] * 3, tests=[big]))
    result = RunResult("not_conformant", "40 MUST clauses violated", reportdata.facts(), clauses, {"failed": 40})
    text = markdown.render(result)
    assert len(text.encode("utf-8")) < 60_000
    assert text.count("#### ") == 20
    assert "And 20 more violated clauses (60 findings)" in text
    assert text.count("```sh") == 20


# -- the terminal -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_terminal_lines(kind: str, runs: dict[str, RunResult], written: dict[str, dict[str, Path]]) -> None:
    result = runs[kind]
    lines = terminal.final_lines(result, written[kind])
    assert lines[-1] == verdict_line(result)
    assert lines[-2].startswith("reports: ") and str(written[kind]["html"]) in lines[-2]
    assert all(len(line) < 600 for line in lines)
    if kind == "not-conformant":
        violated = [line for line in lines if line.split(":")[0] in {c.id for c in result.clauses}]
        assert len(violated) == 12
        assert any(line.startswith(f"{reportdata.FOLDED_CLAUSE}: expected 5 animals") for line in violated)
        assert all("(GET " in line or "(POST " in line for line in violated)  # the request survives the cut
    if kind == "inconclusive":
        # every clause undecided for the verdict's one reason: said once, in the verdict line, and counted
        assert lines[0] == f"undecided: all {len(result.clauses)} selected clauses, for the verdict's one reason"


def test_terminal_lists_at_most_15_violated_clauses() -> None:
    clauses = [
        ClauseResult(f"fake.c{i:02}", "§4", "MUST", "q", VIOLATED, [Finding(f"fake.c{i:02}", "a", "b")])
        for i in range(20)
    ]
    result = RunResult("not_conformant", "", reportdata.facts(), clauses, {})
    lines = terminal.final_lines(result, {})
    assert len(lines) == 15 + 1 + 1 + 1  # 15 clauses, "and 5 more", the run's requests, the verdict
    assert lines[15].startswith("and 5 more violated clauses: fake.c15")
    assert lines[16] == "requests 1,873, writes 211, animals created 0"
    assert lines[-1] == (
        "Not conformant: 20 of 20 MUST clauses violated (fake.c00, fake.c01, fake.c02, fake.c03, fake.c04 and 15 more)"
    )


def _escaped(text: str) -> str:
    return str(markupsafe.escape(text))
