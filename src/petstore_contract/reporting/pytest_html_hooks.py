"""The contract in pytest-html's report (``--html``): the verdict, the clause matrix, each test's clauses,
each failing test's evidence, and the run's facts in its Environment table.

QA teams collect pytest-html reports from many projects; without this one it is a list of test ids.
One plugin object owns pytest-html's hooks (public ones only: ``pytest_html_report_title``,
``pytest_html_results_summary``, ``pytest_html_results_table_header`` / ``_row``, extras on the
report, and pytest-metadata's ``metadata_key`` for the Environment table).  The plugin registers it
in the controller of a contract run, only when pytest-html writes a report, as pytest-html registers
its own.  Every string comes from the redacted result, or passes the run's redaction: the key is never
in any byte of the page.  pytest-html inserts these blocks as raw HTML, so every value is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from html import escape
from typing import Any

import pytest
from pytest_html import extras
from pytest_metadata.plugin import metadata_key

from petstore_contract.core.records import CONFORMS, UNDECIDED, VIOLATED, Finding, RunResult, TestRecord, cut
from petstore_contract.interface.clauses import registry
from petstore_contract.interface.jsontypes import JsonValue
from petstore_contract.reporting.view import first_line, story_order, verdict_line, violated_must

FACTS = (  # Environment table row -> the run's fact
    ("Contract target", "target"),
    ("Base URL", "base_url"),  # pytest-base-url's own row, empty for the embedded reference without this
    ("Contract mode", "mode"),
    ("Contract profile", "profile"),
    ("Contract seed", "seed"),
    ("Contract run id", "run_id"),
    ("Key variable", "key_env"),
    ("Spec SHA-256", "spec_sha256"),
    ("Suite version", "suite_version"),
    ("Schemathesis version", "schemathesis_version"),
    ("Hypothesis version", "hypothesis_version"),
    ("pytest version", "pytest_version"),
    ("Replay", "replay"),
)
ORDER = {VIOLATED: 0, UNDECIDED: 1, CONFORMS: 2}  # what is broken first
TEXT_LIMIT = 2_000  # characters of an expected/observed text or a response body shown per finding
SHOWN = 3  # findings shown per failing test (summary.json and report.html have every one)
# pytest-html's table grows as wide as the longest unbroken line of a log (a URL, a JSON body): wrap them.
STYLE = """<style>
.petstore-verdict{font-size:1.3em;font-weight:bold;padding:.5em .7em;border-left:.4em solid #888;background:#f4f4f4}
.petstore-verdict.not_conformant{border-color:#c62828;background:#fdecea}
.petstore-verdict.conformant{border-color:#2e7d32;background:#edf7ed}
.petstore-verdict.inconclusive{border-color:#b26a00;background:#fff4e5}
ul.petstore-broken li{margin:.3em 0}
table.petstore-clauses{border-collapse:collapse;margin:.5em 0 1em;font-size:.95em}
table.petstore-clauses th,table.petstore-clauses td{border:1px solid #ccc;padding:.2em .6em;text-align:left}
table.petstore-clauses tr.violated td{background:#fdecea;font-weight:bold}
table.petstore-clauses tr.undecided td{background:#fff4e5}
.petstore-finding pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.4em}
.petstore-finding blockquote{margin:.3em 0 .3em 1em;font-style:italic}
.logwrapper .log,#results-table td.col-testId{overflow-wrap:anywhere}
</style>"""


class PytestHtmlContract:
    """pytest-html's hooks for a contract run (the controller's; ``result()`` is its redacted result
    once the run is judged, ``record(report)`` a test's record, ``redact`` the run's redaction)."""

    def __init__(
        self,
        facts: Mapping[str, JsonValue],
        redact: Callable[[str], str],
        result: Callable[[], RunResult | None],
        record: Callable[[pytest.TestReport], TestRecord | None],
    ) -> None:
        self.facts = facts
        self.redact = redact
        self.result = result
        self.record = record
        self.report: Any = None  # pytest-html's report data, whose title the verdict becomes
        self.quotes = {cid: clause.quote for cid, clause in registry().items()}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before pytest-html reads pytest-metadata's table (its own sessionstart, trylast)."""
        metadata = session.config.stash.get(metadata_key, None)
        if metadata is not None:
            metadata.update({row: self.redact(str(self.facts.get(fact, ""))) for row, fact in FACTS})

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        self.report = report
        report.title = "Pet Store contract suite"

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str]) -> None:
        """Called in pytest-html's sessionfinish (trylast): the session's, which judges the run, came first."""
        result = self.result()
        if result is None:
            prefix.append('<p class="petstore-verdict">No contract verdict: the run ended before it was judged.</p>')
            return
        line = verdict_line(result)
        if self.report is not None:
            self.report.title = f"Pet Store contract: {line}"
        prefix.append(STYLE + f'<p class="petstore-verdict {escape(result.verdict)}">{escape(line)}</p>')
        prefix.append(_broken(result) + _matrix(result))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(2, '<th class="sortable" data-column-type="clauses">Clauses</th>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        clauses = [str(value) for name, value in getattr(report, "user_properties", ()) if name == "clause"]
        cells.insert(2, f'<td class="col-clauses">{escape(", ".join(dict.fromkeys(clauses)))}</td>')

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A failing test's evidence as an inline extra (pytest-html reads extras at the test's teardown)."""
        if not report.failed or report.when == "teardown":
            return
        record = self.record(report)
        if record is None or not (record.findings or record.detail):
            return
        block = self.redact(_evidence(record, self.quotes, str(self.facts.get("key_env") or "")))
        report.extras = [*getattr(report, "extras", []), extras.html(block)]  # type: ignore[attr-defined]


def _broken(result: RunResult) -> str:
    """What is broken, before the matrix: each violated MUST clause, its sentence and its first finding."""
    items = "".join(
        f"<li><b>{escape(c.id)}</b> ({escape(c.section)}): <q>{escape(c.quote)}</q><br>{escape(first_line(c))}</li>"
        for c in violated_must(result)
    )
    return f'<ul class="petstore-broken">{items}</ul>' if items else ""


def _matrix(result: RunResult) -> str:
    rows = sorted(result.clauses, key=lambda c: (ORDER.get(c.outcome, 3), c.level != "MUST"))
    body = "".join(
        f'<tr class="{escape(c.outcome)}"><td>{escape(c.id)}</td><td>{escape(c.section)}</td>'
        f"<td>{escape(c.level)}</td><td>{escape(c.outcome.replace('_', ' '))}</td><td>{c.exchanges}</td></tr>"
        for c in rows
    )
    head = "<tr><th>Clause</th><th>Section</th><th>Level</th><th>Outcome</th><th>Exchanges judged</th></tr>"
    return f'<table class="petstore-clauses"><thead>{head}</thead><tbody>{body}</tbody></table>'


def _evidence(record: TestRecord, quotes: dict[str, str], key: str) -> str:
    parts = [_finding(f, quotes.get(f.clause, ""), key) for f in story_order(record.findings)[:SHOWN]]
    hidden = len(record.findings) - SHOWN
    if hidden > 0:
        parts.append(f"<p>{hidden} more findings of this test: report.html and summary.json have every one.</p>")
    if not record.findings:
        parts.append(f"<p>{escape(cut(record.detail, TEXT_LIMIT))}</p>")
    return '<div class="petstore-finding">' + "".join(parts) + "</div>"


def _finding(finding: Finding, quote: str, key: str) -> str:
    html = [f"<p><b>Clause {escape(finding.clause)}</b></p>"]
    if quote:
        html.append(f"<blockquote>{escape(quote)}</blockquote>")
    html.append(f"<p><b>Expected:</b> {escape(cut(finding.expected, TEXT_LIMIT))}</p>")
    html.append(f"<p><b>Observed:</b> {escape(cut(finding.observed, TEXT_LIMIT))}</p>")
    exchange = finding.exchange
    if exchange is not None:
        html.append("<p>Replay (the key comes from its variable):</p>")
        html.append(f"<pre>{escape(exchange.curl(key))}</pre>")
        answer = f"HTTP {exchange.status}" if exchange.status is not None else f"no answer: {exchange.problem}"
        html.append(f"<p>Answered {escape(answer)}</p><pre>{escape(cut(exchange.response_body, TEXT_LIMIT))}</pre>")
    return "".join(html)
