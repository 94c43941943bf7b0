"""pytest-html's report carries the contract (issue 31): QA teams collect pytest-html reports.

A run against a reference with one fault (``error_status_string``: the Error body's status is a
string) with ``--html``: pytest-html's page must name the verdict, the violated clause with the
document's sentence, the target and its base URL, the seed and a runnable curl with the key as
``$PETSTORE_API_KEY``, show each test's clauses, and hold no byte of the key.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
from html import unescape
from pathlib import Path

from devtools.catalog import catalog_app
from devtools.launcher import ROOT, suite_command
from petstore_contract.interface.clauses import registry
from petstore_contract.reference import BackgroundServer

ARGS = ("--contract-profile", "quick")


def test_pytest_html_report_of_a_failing_run(tmp_path: Path) -> None:
    key = "html-" + secrets.token_urlsafe(16)
    reports = tmp_path / "reports"
    page_path = tmp_path / "qa" / "pytest-html.html"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PYTEST_"))}
    env["PETSTORE_API_KEY"] = key
    with BackgroundServer(catalog_app(key, fault="error_status_string")) as server:
        command = suite_command(reports, server.base_url, (*ARGS, f"--html={page_path}", "--self-contained-html"))
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((reports / "summary.json").read_text(encoding="utf-8"))
    raw = page_path.read_text(encoding="utf-8")
    assert key not in raw and key not in unescape(unescape(raw))
    # pytest-html keeps each test's row as JSON in an attribute: unescaped twice, it reads as HTML.
    page = unescape(unescape(raw))
    line = summary["verdict_line"]
    assert line.startswith("Not conformant") and "errors.body" in line
    assert re.search(r"<title[^>]*>Pet Store contract: " + re.escape(line), raw)
    assert f'<p class="petstore-verdict not_conformant">{line}</p>' in page  # the summary's first line
    matrix = re.search(r'<table class="petstore-clauses">.*?</table>', page, re.DOTALL)
    assert matrix, "no clause matrix in the summary"
    row = re.search(
        r'<tr class="violated"><td>errors.body</td><td>([^<]+)</td><td>MUST</td><td>violated</td><td>(\d+)</td>',
        matrix.group(0),
    )
    assert row and row.group(1) == registry()["errors.body"].section and int(row.group(2)) > 0
    # Each failing test: the document's sentence, expected against observed, the curl with the key's variable.
    assert registry()["errors.body"].quote in page
    assert "<b>Expected:</b>" in page and "<b>Observed:</b>" in page
    assert re.search(r"<pre>curl -sS -i -X GET -H [^<]*Authorization: Bearer \$PETSTORE_API_KEY", page)
    # The run's facts in the Environment table (pytest-metadata).
    blob = re.search(r'data-jsonblob="([^"]*)"', raw)
    assert blob, "pytest-html's data is not in the page"
    data = json.loads(unescape(blob.group(1)))
    environment = data["environment"]
    assert environment["Base URL"] == server.base_url
    assert environment["Contract target"] == summary["target"]
    assert environment["Contract seed"] == str(summary["seed"])
    assert environment["Spec SHA-256"] == summary["spec_sha256"] and environment["Contract mode"] == "read-write"
    # A "Clauses" column, filled for each test.
    assert '<th class="sortable" data-column-type="clauses">Clauses</th>' in raw
    rows = [cells for test in data["tests"].values() for run in test for cells in [run["resultsTableRow"]]]
    clauses = [re.sub(r"<[^>]+>", "", cells[2]) for cells in rows]
    assert all(clauses) and any("errors.body" in cell for cell in clauses), clauses[:5]
