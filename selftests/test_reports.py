"""The reports of a contract run: what QA and vendors read, and that the API key is in none of them.

Each run is the contract suite as a user starts it (a subprocess, the key in the environment);
the tests read the files it wrote and what it printed.  The key-leak runs talk to a server that
echoes the credentials back in a response header and in its JSON bodies, with a fault that makes
most error answers fail, so that those answers end up in failure messages, exchanges and curl lines.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import os
import re
import secrets
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest
import requests

from petstore_contract.clauses import registry
from petstore_contract.redaction import Redactor
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.reporting import CONFORMANT, NOT_CONFORMANT, failure_details, verdict_of
from petstore_contract.spec import spec_checksum

ROOT = Path(__file__).resolve().parents[1]
# "+", "/" and "=" make the URL-encoded and base64 forms differ from the key and from each other.
KEY = f"SECRET-canary-{secrets.token_hex(6)}+/{secrets.token_hex(3)}=="
SUITE_TIMEOUT = 300
ECHO_FAULT = "error_missing_code"  # every Error body incomplete: the echoing answers become failures
BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")


# -- a careless server -------------------------------------------------------------------------------


class EchoCredentials:
    """ASGI middleware: echoes the Authorization header and the query string in a header and the body."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        auth = dict(scope["headers"]).get(b"authorization", b"")
        query = scope.get("query_string", b"")
        echo = {"authorization": auth.decode("latin-1"), "query": query.decode("latin-1")}
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def rewrite(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = _with_echo(b"".join(chunks), echo)
            headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
            headers += [(b"content-length", str(len(body)).encode()), (b"x-echo-authorization", auth)]
            headers.append((b"x-echo-query", query))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, rewrite)


def _with_echo(body: bytes, echo: dict[str, str]) -> bytes:
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict):
        return body  # an array keeps its shape: the list tests still see a list
    # First, so that a report that cuts long bodies still shows (and must redact) it.
    return json.dumps({"echo": echo, **data}).encode()


@pytest.fixture(scope="module")
def echo_server() -> Iterator[str]:
    app = build_app(KEY, fault=ECHO_FAULT)
    app.add_middleware(EchoCredentials)
    with BackgroundServer(app) as server:
        yield server.base_url


# -- running the suite ---------------------------------------------------------------------------------


@dataclass
class SuiteRun:
    exit_code: int
    output: bytes
    report_dir: Path

    def summary(self) -> dict[str, Any]:
        return json.loads((self.report_dir / "summary.json").read_text(encoding="utf-8"))

    def html(self) -> str:
        return (self.report_dir / "report.html").read_text(encoding="utf-8")

    def junit(self) -> ET.Element:
        return ET.parse(self.report_dir / "junit.xml").getroot()


def run_suite(report_dir: Path, *args: str, base_url: str | None = None) -> SuiteRun:
    command = [sys.executable, "-m", "pytest", "tests", f"--report-dir={report_dir}", "-p", "no:cacheprovider"]
    command += ["--contract-profile", "quick", *args]
    if base_url is not None:
        command += ["--base-url", base_url]
    env = {**os.environ, "PETSTORE_API_KEY": KEY}
    env.pop("PETSTORE_BASE_URL", None)
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=SUITE_TIMEOUT, check=False)
    return SuiteRun(done.returncode, done.stdout + done.stderr, report_dir)


@pytest.fixture(scope="module", params=["plain", "xdist"])
def echo_run(request: pytest.FixtureRequest, echo_server: str, tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    args = ["-n", "2"] if request.param == "xdist" else []
    return run_suite(tmp_path_factory.mktemp(f"echo-{request.param}"), *args, base_url=echo_server)


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    """The embedded reference server (no --base-url): the default run of the README."""
    return run_suite(tmp_path_factory.mktemp("reference"))


# -- the key is nowhere ----------------------------------------------------------------------------------


def secret_forms(key: str) -> set[str]:
    """The key as text, URL-encoded (three ways) and base64-encoded as the suite's requests carry it."""
    forms = {key, quote(key), quote(key, safe=""), quote_plus(key)}
    for raw in (key, f":{key}", f"user:{key}", f"{key}:"):
        for encoded in (base64.b64encode(raw.encode()), base64.urlsafe_b64encode(raw.encode())):
            forms |= {encoded.decode(), encoded.decode().rstrip("=")}
    return forms


def views(data: bytes) -> list[str]:
    """The text as written, HTML-unescaped, and every base64 run in it decoded (data: URIs, statistics)."""
    text = data.decode("utf-8", errors="replace")
    found = [text, html.unescape(text)]
    for run in BASE64_RUN.findall(text):
        padded = run + "=" * (-len(run) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                found.append(decode(padded).decode("latin-1"))
            except (binascii.Error, ValueError):
                continue
    return found


def leaks(data: bytes) -> set[str]:
    forms = secret_forms(KEY)
    return {form for view in views(data) for form in forms if form in view}


def test_the_echo_server_really_echoes_the_key(echo_server: str) -> None:
    """Without this, the leak tests below could pass against a server that never shows the key."""
    answer = requests.get(f"{echo_server}/pets/999999999", headers={"Authorization": f"Bearer {KEY}"}, timeout=10)
    assert KEY in answer.text and KEY in answer.headers["x-echo-authorization"]


def test_the_key_is_in_no_report_and_no_output(echo_run: SuiteRun) -> None:
    assert echo_run.exit_code == 1, echo_run.output[-3000:].decode(errors="replace")
    written = sorted(path for path in echo_run.report_dir.rglob("*") if path.is_file())
    assert {path.name for path in written} >= {"report.html", "junit.xml", "summary.json"}
    found = {str(path.name): leaks(path.read_bytes()) for path in written}
    found["console"] = leaks(echo_run.output)
    assert not {where: forms for where, forms in found.items() if forms}


def test_secret_forms_are_found_where_they_hide() -> None:
    """The scanner itself: raw, HTML-escaped, URL-encoded and inside a base64 data: URI."""
    assert leaks(html.escape(f"<p>{KEY}</p>").encode())
    assert leaks(f"?api_key={quote_plus(KEY)}".encode())
    assert leaks(b"data:text/plain;base64," + base64.b64encode(f"curl -H 'Authorization: Bearer {KEY}'".encode()))
    assert not leaks(b"Authorization: Bearer [REDACTED]")


# -- what the reports say ------------------------------------------------------------------------------


def matrix_rows(page: str) -> list[str]:
    table = page.split('<table class="pc-matrix">', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr class=\"pc-row--[a-z-]+\"><td><code>([^<]+)</code>", table)


def test_failing_run_reports_the_broken_clause(echo_run: SuiteRun) -> None:
    summary, page = echo_run.summary(), html.unescape(echo_run.html())
    assert verdict_of(echo_run.exit_code) == summary["verdict"] == NOT_CONFORMANT
    outcomes = {row["id"]: row["outcome"] for row in summary["clauses"]}
    assert list(outcomes) == list(registry()) == matrix_rows(page)
    assert outcomes["errors.body"] == "failed"
    assert outcomes["list.shape"] == "passed"  # a list is no Error body: the fault leaves it alone
    assert summary["counts"]["failed"] + summary["counts"]["errors"] == len(summary["failures"]) > 0
    assert all(set(f["clauses"]) <= set(registry()) and f["message"] for f in summary["failures"])
    assert "Not conformant" in page and "Violates <code>errors.body</code>" in page
    assert "curl -i -X GET" in page and "Reproduce with" in page  # targeted and Schemathesis failures


def test_junit_carries_every_test_with_its_clauses(echo_run: SuiteRun) -> None:
    cases = echo_run.junit().findall(".//testcase")
    assert len(cases) == echo_run.summary()["counts"]["tests"]
    for case in cases:
        clauses = [p.get("value") for p in case.findall("properties/property") if p.get("name") == "clause"]
        assert clauses and set(clauses) <= set(registry()), case.get("name")


def test_passing_run_reports_conformance(passing_run: SuiteRun) -> None:
    summary, page = passing_run.summary(), passing_run.html()
    assert passing_run.exit_code == 0, passing_run.output[-3000:].decode(errors="replace")
    assert summary["verdict"] == CONFORMANT and summary["counts"]["failed"] == 0
    assert [row["outcome"] for row in summary["clauses"]] == ["passed"] * len(registry())
    assert matrix_rows(page) == list(registry()) and "Conformant: all" in page
    env = summary["environment"]
    assert env["spec_sha256"] == spec_checksum() and env["target"] == "embedded" and env["seed"] == 20301205
    assert "--contract-seed 20301205" in env["replay"] and env["spec_sha256"] in page


def test_selftest_runs_write_no_reports(tmp_path: Path) -> None:
    report_dir = tmp_path / "reports"
    command = [sys.executable, "-m", "pytest", "selftests/test_reports.py::test_secret_forms_are_found_where_they_hide"]
    command += ["-q", "-p", "no:cacheprovider", f"--report-dir={report_dir}"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=SUITE_TIMEOUT, check=False)
    assert done.returncode == 0, done.stdout[-2000:]
    assert not report_dir.exists()


# -- the pieces, without a run ----------------------------------------------------------------------------


def test_verdict_follows_the_exit_code() -> None:
    assert [verdict_of(code) for code in (0, 1, 2, 4, 5)] == [CONFORMANT, NOT_CONFORMANT] + ["incomplete"] * 3


def test_a_long_failure_keeps_its_clause_and_its_curl_line() -> None:
    message = ["Schemathesis found 1 distinct failure", *(f"    line {n}" for n in range(200)), "    curl -X GET URL"]
    text = "violates clause errors.body (§2, §7, MUST): ...\n\n" + "\n".join(message)
    report = pytest.TestReport(
        "t::x", ("t", 1, "x"), {}, "failed", text, "call", [("HTTP exchanges (last 1)", "> GET")]
    )
    details = failure_details(report, ["errors.body", "auth.missing"], Redactor(None))
    assert details["clauses"] == ["errors.body"] and details["exchanges"] == "> GET"
    lines = details["message"].splitlines()
    assert len(lines) <= 41 and lines[0].startswith("Schemathesis") and lines[-1].endswith("curl -X GET URL")
    assert any(line.startswith("[... cut: ") for line in lines)
