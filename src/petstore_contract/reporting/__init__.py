"""The reports of a contract run, rendered from its ``RunResult`` and nothing else.

- ``write_reports(result, report_dir)``: report.html, summary.md and summary.json in ``report_dir``.
- ``html.render``, ``markdown.render``, ``summary_json.render``: each file's text.
- ``junit.rewrite(path, result)``: pytest's JUnit XML with one-line messages and the run's facts, and
  (``junit_cases``) a testcase per selected clause and one for the verdict, so the file agrees with the exit code.
- ``terminal.final_lines(result, paths)``: what the plugin prints last.
- ``verdict_line(result)``: the one line all of them share.

The other modules: ``view`` (what every output says, computed once), ``findings`` (findings folded and
ordered: the broken sentence first, its plainest exchange first), ``waived`` (the waivers' outcome as the
outputs read it), ``outputs`` (where reports go), ``readback`` (a ``summary.json`` read back),
``pytest_html_hooks`` (the contract in pytest-html's report, with ``--html``); ``templates/`` and
``summary.schema.json`` beside them.

Imports only go down: record and clauses, never the plugin.
"""

from __future__ import annotations

from pathlib import Path

from petstore_contract.core import atomic
from petstore_contract.core.records import RunResult
from petstore_contract.reporting import html, junit, markdown, summary_json, terminal
from petstore_contract.reporting.view import fold, public_facts, verdict_line

__all__ = [
    "REPORT_FILES",
    "fold",
    "html",
    "junit",
    "markdown",
    "public_facts",
    "summary_json",
    "terminal",
    "verdict_line",
    "write_reports",
]

REPORT_FILES = {"html": "report.html", "markdown": "summary.md", "json": "summary.json"}


def write_reports(result: RunResult, report_dir: Path) -> dict[str, Path]:
    """Write report.html, summary.md and summary.json into ``report_dir`` (created); their paths."""
    report_dir = Path(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    texts = {"html": html.render(result), "markdown": markdown.render(result), "json": summary_json.render(result)}
    paths = {}
    for kind, text in texts.items():
        paths[kind] = atomic.write_text(report_dir / REPORT_FILES[kind], text)
    return paths
