"""Waivers with an expiry, end to end: the suite against a server that sends no challenge on any 401.

A waived violation stays violated in the verdict and every report, marked waived; only the exit
code passes over it.  An expired waiver fails the gate; a waiver that matched nothing is stale; a
waivers file that cannot be read is one line and exit 4.  Each run is the credential table (about
2 s); the malformed files stop the run before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from devtools import SuiteRun
from gatekit import CREDENTIALS, KEY, page_width, served
from hosted import run_hosted

CLAUSE = "auth.challenge"
FUTURE, PAST = "2999-12-31", "2001-01-01"
ORDERS_ONLY = '{ operation = "GET /store/orders", clause = "auth.challenge", expectation = "bearer-challenge" }'
NEVER_SEEN = '{ operation = "GET /pets", clause = "list.shape", expectation = "pet-list" }'


def waiver(what: str, expires: str, owner: str = "team-gateway") -> str:
    name = "signature" if what.startswith("{") else "clause"
    value = what if name == "signature" else f'"{what}"'
    reason = 'reason = "challenge lands with TICKET-9"'
    return f'[[waiver]]\n{name} = {value}\n{reason}\nowner = "{owner}"\nexpires = {expires}\n'


@pytest.fixture(scope="module")
def faulty() -> Iterator[str]:
    with served("--fault", "auth_no_challenge") as base_url:
        yield base_url


def gated(base_url: str, tmp_path: Path, text: str, *more: str) -> SuiteRun:
    file = tmp_path / "waivers.toml"
    file.write_text(text, encoding="utf-8")
    keep = ("summary.json", "summary.md", "report.html", "junit.xml")
    return run_hosted(base_url, KEY, *CREDENTIALS, f"--contract-waivers={file}", *more, keep=keep, timeout=300)


def test_a_waived_violation_stays_violated_but_the_gate_passes(faulty: str, tmp_path: Path) -> None:
    run = gated(faulty, tmp_path, waiver(CLAUSE, FUTURE))
    assert run.exit_code == 0, run.output[-3000:]
    assert run.verdict == "not_conformant" and run.violated() == {CLAUSE}
    assert run.summary["exit_code"] == 1 and run.summary["gate"]["exit_code"] == 0
    assert all(f["waiver"]["owner"] == "team-gateway" for f in run.findings()) and run.findings()
    assert run.summary["gate"]["stale"] == [] and run.summary["gate"]["expired"] == []
    lines = run.output.strip().splitlines()
    assert lines[-1].startswith("Not conformant: 1 of") and lines[-2].startswith("gate: exit 0: every MUST violation")
    assert any(line.startswith(f"waived: {CLAUSE} (GET /store/orders · bearer-challenge)") for line in lines)
    for name in ("summary.md", "report.html"):
        report = run.reports[name]
        assert "Not conformant" in report and "expires 2999-12-31" in report and "team-gateway" in report, name
    assert 'name="gate_exit_code" value="0"' in run.reports["junit.xml"]
    html = tmp_path / "report.html"  # with its coverage tables and waivers: it still fits a narrow window
    html.write_text(run.reports["report.html"], encoding="utf-8")
    assert page_width(html, 400) <= 400
    assert 'name="waiver" value="waived: auth.challenge (GET /pets' in run.reports["junit.xml"]


def test_an_expired_waiver_fails_the_gate_and_waives_nothing(faulty: str, tmp_path: Path) -> None:
    run = gated(faulty, tmp_path, waiver(CLAUSE, PAST))
    assert run.exit_code == 1
    gate = run.summary["gate"]
    assert gate["exit_code"] == 1 and [w["expires"] for w in gate["expired"]] == [PAST]
    assert gate["line"].startswith("gate fails (exit 1): 1 waiver(s) expired: waiver 1 (auth.challenge;")
    assert gate["waived"] == [] and not any("waiver" in f for f in run.findings())
    assert "EXPIRED waiver 1 (auth.challenge; owner team-gateway; expires 2001-01-01)" in run.output


def test_an_expired_waiver_fails_even_a_conformant_run(tmp_path: Path) -> None:
    with served() as base_url:
        run = gated(base_url, tmp_path, waiver(CLAUSE, PAST))
    assert run.verdict == "conformant" and run.exit_code == 1
    assert "expired" in run.summary["gate"]["line"]


def test_a_waiver_that_matched_nothing_is_stale(faulty: str, tmp_path: Path) -> None:
    run = gated(faulty, tmp_path, waiver(CLAUSE, FUTURE) + waiver(NEVER_SEEN, FUTURE, owner="qa"))
    assert run.exit_code == 0
    stale = run.summary["gate"]["stale"]
    assert [(w["number"], w["owner"], w["signature"]["clause"]) for w in stale] == [(2, "qa", "list.shape")]
    assert "stale (matched no finding): waiver 2 (GET /pets · list.shape · pet-list; owner qa" in run.output
    assert "stale (matched no finding)" in run.reports["summary.md"] and "stale" in run.reports["report.html"]


def test_a_signature_waiver_covers_only_its_signature(faulty: str, tmp_path: Path) -> None:
    run = gated(faulty, tmp_path, waiver(ORDERS_ONLY, FUTURE))
    assert run.exit_code == 1 and run.summary["gate"]["line"].startswith("gate fails (exit 1): not waived:")
    waived = {f["signature"]["operation"] for f in run.findings() if "waiver" in f}
    assert waived == {"GET /store/orders"}
    assert {f["signature"]["operation"] for f in run.findings() if "waiver" not in f} == {
        "GET /pets",
        "POST /pets",
        "GET /pets/{petId}",
    }


def test_the_project_roots_waivers_toml_is_read(faulty: str, tmp_path: Path) -> None:
    (tmp_path / "waivers.toml").write_text(waiver(CLAUSE, FUTURE), encoding="utf-8")
    run = run_hosted(faulty, KEY, *CREDENTIALS, f"--rootdir={tmp_path}", timeout=300)
    assert run.exit_code == 0 and run.summary["gate"]["file"] == str(tmp_path / "waivers.toml")


MALFORMED = {
    "not TOML": ("[[waiver]\nclause = 1", "not TOML"),
    "no owner": ('[[waiver]]\nclause = "auth.challenge"\nreason = "r"\nexpires = 2999-01-01\n', "owner must be"),
    "bad date": (waiver(CLAUSE, '"31/12/2999"'), "expires must be a date (YYYY-MM-DD)"),
    "impossible date": (waiver(CLAUSE, '"2999-02-30"'), "expires must be a date"),
    "unknown clause": (waiver("auth.nope", FUTURE), "unknown clause 'auth.nope'"),
    "both": (waiver(CLAUSE, FUTURE).replace("[[waiver]]\n", f"[[waiver]]\nsignature = {ORDERS_ONLY}\n"), "one of"),
    "short signature": (waiver('{ clause = "auth.challenge" }', FUTURE), "signature must be a table of"),
    "unknown field": (waiver(CLAUSE, FUTURE) + 'until = "x"\n', "unknown field 'until'"),
    "not waivers": ('[waivers]\nclause = "auth.challenge"\n', "unknown table 'waivers'"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_waivers_file_is_one_line_and_exit_4(case: str, tmp_path: Path) -> None:
    text, words = MALFORMED[case]
    run = gated("http://127.0.0.1:9/v1", tmp_path, text)  # nothing is sent: the file is read first
    errors = [line for line in run.output.splitlines() if line.startswith("ERROR:")]
    assert run.exit_code == 4 and len(errors) == 1 and words in errors[0], run.output[-2000:]
    assert str(tmp_path / "waivers.toml") in errors[0] and "Traceback" not in run.output


def test_a_missing_waivers_file_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.toml"
    run = run_hosted("http://127.0.0.1:9/v1", KEY, *CREDENTIALS, f"--contract-waivers={missing}", timeout=120)
    assert run.exit_code == 4 and f"ERROR: {missing}: no such waivers file" in run.output
