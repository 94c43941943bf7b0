"""The reports of a contract run: report.html, junit.xml and summary.json in the report directory.

QA reads the HTML report (verdict, conformance matrix, environment, each failure with its clause,
message, request and response); CI and vendors' tools read summary.json and junit.xml (one
testcase per test, its clause ids as properties).  pytest-html and pytest's junitxml write their
files; this module points them at the report directory and feeds them.

Under pytest-xdist the workers run the tests and the controller writes the files, so everything
the reports need travels on the TestReport (user_properties, extras, one JSON-able attribute) and
is aggregated in pytest_runtest_logreport, which the controller sees for every worker's test.
Every string that goes into a report passes through the run's Redactor first.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import shlex
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from petstore_contract import __version__, profiles
from petstore_contract.clauses import Clause, registry
from petstore_contract.redaction import Redactor
from petstore_contract.spec import load_spec, spec_checksum, spec_path
from petstore_contract.target import Target

DEFAULT_REPORT_DIR = Path(__file__).resolve().parents[2] / "reports"
FAILURE_ATTR = "petstore_failure"  # a plain dict on the TestReport: survives xdist serialization
MESSAGE_LINES = 40
MESSAGE_CHARS = 4000
TAIL_LINES = 8
EXCHANGES_CHARS = 8000
EXCHANGES_TITLE = "HTTP exchanges"
CLAUSE_HEADER = re.compile(r"^violates clause (\S+) \(")
ERROR_LINE = re.compile(r"^E( |$)")
URL_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
# pytest-html blacks out Environment values whose name matches (a --metadata NAME VALUE, a CI variable).
SECRET_NAMES = r"(?i).*(token|secret|passw|api_?key|credential|auth)"

CONFORMANT, NOT_CONFORMANT, INCOMPLETE = "conformant", "not conformant", "incomplete"
PASSED, FAILED, NOT_RUN = "passed", "failed", "not run"


def add_report_options(group: pytest.OptionGroup) -> None:
    group.addoption(
        "--report-dir",
        dest="petstore_report_dir",
        default=None,
        metavar="DIR",
        # pytest reads an existing directory after a space as a test path before this option is
        # known (it comes from a conftest plugin), so the help shows the "=" form.
        help=f"--report-dir=DIR: where report.html, junit.xml and summary.json go (default {DEFAULT_REPORT_DIR})",
    )


# -- what one run found -----------------------------------------------------------------------------


@dataclass
class TestRecord:
    """One test's outcome over its set-up, call and teardown phases."""

    __test__ = False  # not a pytest test class, whatever its name says

    nodeid: str
    clauses: list[str]
    outcome: str = PASSED  # passed | failed | skipped | xfailed
    phase: str = ""  # the phase that failed, when one did
    why: str = ""  # skip reason
    violated: list[str] = field(default_factory=list)
    message: str = ""


@dataclass(frozen=True)
class ClauseRow:
    clause: Clause
    tests: int
    outcome: str  # passed | failed | not run
    why: str
    failed_tests: tuple[str, ...] = ()


class Results:
    """Test outcomes gathered from pytest_runtest_logreport, and the clause matrix built from them."""

    def __init__(self) -> None:
        self.tests: dict[str, TestRecord] = {}

    def add(self, report: pytest.TestReport) -> None:
        clauses = [str(value) for name, value in report.user_properties if name == "clause"]
        record = self.tests.setdefault(report.nodeid, TestRecord(report.nodeid, clauses))
        if report.failed and record.outcome != FAILED:
            failure = getattr(report, FAILURE_ATTR, None) or {}
            record.outcome, record.phase = FAILED, report.when or ""
            record.violated = list(failure.get("clauses") or clauses)
            record.message = str(failure.get("message", ""))
        elif report.skipped and record.outcome == PASSED:
            record.outcome = "xfailed" if hasattr(report, "wasxfail") else "skipped"
            record.why = _skip_reason(report)

    def counts(self) -> dict[str, int]:
        tally = Counter(record.outcome for record in self.tests.values())
        errors = sum(1 for r in self.tests.values() if r.outcome == FAILED and r.phase != "call")
        return {
            "tests": len(self.tests),
            "passed": tally[PASSED],
            "failed": tally[FAILED] - errors,
            "errors": errors,
            "skipped": tally["skipped"],
            "xfailed": tally["xfailed"],
        }

    def matrix(self) -> list[ClauseRow]:
        return [self._row(clause) for clause in registry().values()]

    def _row(self, clause: Clause) -> ClauseRow:
        tests = [r for r in self.tests.values() if clause.id in r.clauses]
        failed = tuple(r.nodeid for r in tests if r.outcome == FAILED and clause.id in r.violated)
        if failed:
            why = f"{len(failed)} of {len(tests)} tests failed: {_names(failed)}"
            return ClauseRow(clause, len(tests), FAILED, why, failed)
        passed = [r for r in tests if r.outcome == PASSED]
        skipped = [r for r in tests if r.outcome in ("skipped", "xfailed")]
        if passed:
            why = f"{len(skipped)} of {len(tests)} tests skipped: {_reasons(skipped)}" if skipped else ""
            return ClauseRow(clause, len(tests), PASSED, why)
        return ClauseRow(clause, len(tests), NOT_RUN, _not_run_reason(tests, skipped))


def _names(ids: tuple[str, ...], shown: int = 3) -> str:
    """A short list of test names (node ids without their file) or clause ids."""
    names = [nodeid.rsplit("::", 1)[-1] for nodeid in ids[:shown]]
    return ", ".join(names) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _skip_reason(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    return str(getattr(report, "wasxfail", "") or report.longreprtext)


def _reasons(records: list[TestRecord]) -> str:
    return "; ".join(dict.fromkeys(r.why for r in records if r.why)) or "no reason given"


def _not_run_reason(tests: list[TestRecord], skipped: list[TestRecord]) -> str:
    if not tests:
        return "no test of this clause was selected in this run"
    if len(skipped) == len(tests):
        return f"skipped: {_reasons(skipped)}"
    # A test naming several clauses stops at its first failure: the others are neither proved nor broken.
    others = sorted({cid for r in tests if r.outcome == FAILED for cid in r.violated})
    return f"undecided: its tests failed on other clauses ({', '.join(others)})"


def verdict_of(exit_code: int) -> str:
    """The verdict follows the exit code, so that CI, the HTML and summary.json never disagree."""
    return {0: CONFORMANT, 1: NOT_CONFORMANT}.get(int(exit_code), INCOMPLETE)


def verdict_line(verdict: str, rows: list[ClauseRow], exit_code: int) -> str:
    failed = [row for row in rows if row.outcome == FAILED]
    not_run = sum(1 for row in rows if row.outcome == NOT_RUN)
    checked = len(rows) - not_run
    tail = f"; {not_run} not run" if not_run else ""
    if verdict == CONFORMANT:
        return f"Conformant: {'all ' if checked > 1 else ''}{_plural(checked, 'clause')} checked passed{tail}."
    if verdict == NOT_CONFORMANT:
        levels = Counter(row.clause.level for row in failed)
        kinds = ", ".join(f"{n} {level}" for level, n in sorted(levels.items()))
        names = _names(tuple(row.clause.id for row in failed), shown=4)
        return f"Not conformant: {len(failed)} of {_plural(len(rows), 'clause')} failed ({kinds}): {names}{tail}."
    return f"Incomplete: the run ended with exit code {exit_code} before deciding ({checked} checked{tail})."


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# -- one failure, as the reports show it -----------------------------------------------------------


def failure_details(report: pytest.TestReport, test_clauses: list[str], redact: Redactor) -> dict[str, Any]:
    """Clauses broken, the message (expected / got) and the exchanges, from the report's text.

    The contract plugin has redacted that text already; redacting again costs little and keeps
    this module safe on its own.
    """
    lines = redact(report.longreprtext).splitlines()
    violated = [m.group(1) for m in map(CLAUSE_HEADER.match, lines[:5]) if m]
    body = [line for line in lines if not line.startswith(("violates clause", "checks clauses"))]
    # A Python traceback: its "E" lines are the assertion message; any other text is shown whole.
    assertion = [line[1:] for line in body if ERROR_LINE.match(line)]
    text = textwrap.dedent("\n".join(assertion)) if assertion else "\n".join(body)
    message = _cut(text.strip(), MESSAGE_LINES, MESSAGE_CHARS)
    exchanges = "\n\n".join(redact(part) for title, part in report.sections if title.startswith(EXCHANGES_TITLE))
    return {
        "clauses": violated or test_clauses,
        "message": message,
        "exchanges": _cut(exchanges, None, EXCHANGES_CHARS),
    }


def _cut(text: str, max_lines: int | None, max_chars: int) -> str:
    lines = text.splitlines()
    if max_lines is not None and len(lines) > max_lines:
        # Head and tail: a Schemathesis message ends with its most useful line, the curl command.
        head, tail = lines[: max_lines - TAIL_LINES], lines[-TAIL_LINES:]
        note = f"[... cut: {len(lines) - max_lines} lines; the log below has them all]"
        text = "\n".join([*head, note, *tail])
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n[... cut: {len(text) - max_chars} more characters; the log below has them all]"
    return text


def failure_card(details: dict[str, Any]) -> str:
    """The HTML block above a failed test's log: clause, expected / got, request and response."""
    clauses = registry()
    parts = ['<div class="pc-failure">']
    for cid in details["clauses"]:
        c = clauses.get(cid)
        statement = f" ({c.section}, {c.level}): {c.statement}" if c else ""
        parts.append(f'<p class="pc-clause">Violates <code>{_e(cid)}</code>{_e(statement)}</p>')
    parts.append(f'<p class="pc-label">Expected / got</p><pre class="pc-pre">{_e(details["message"])}</pre>')
    if details["exchanges"]:
        parts.append('<p class="pc-label">Request and response (key redacted; replay with the curl line)</p>')
        parts.append(f'<pre class="pc-pre">{_e(details["exchanges"])}</pre>')
    parts.append("</div>")
    return "".join(parts)


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


# -- the run's environment ---------------------------------------------------------------------------


def environment(target: Target, started: dt.datetime) -> dict[str, Any]:
    """What a report says about the run: enough to replay it, never the key."""
    run = profiles.current()
    spec = load_spec().get("info", {})
    return {
        "suite_version": __version__,
        "spec_title": str(spec.get("title", "")),
        "spec_version": str(spec.get("version", "")),
        "spec_file": spec_path().name,
        "spec_sha256": spec_checksum(),
        "target": target.name,
        "base_url": target.base_url,
        "read_only": target.read_only,
        "key_variable": target.key_env,  # where the key comes from, not the key
        "date": started.isoformat(timespec="seconds"),
        "seed": run.seed,
        "profile": run.profile.name,
        "replay": replay_command(target, run),
    }


def replay_command(target: Target, run: profiles.RunConfig) -> str:
    """The command line that repeats this run (the key stays in the environment, as always)."""
    command = ["python", "-m", "pytest"]
    if target.name not in ("embedded", "custom"):  # a named target keeps its key variable and write policy
        command += ["--target", target.name]
    if target.name != "embedded":  # the embedded server's port changes on every run
        command += ["--base-url", target.base_url]
    command += ["--contract-profile", run.profile.name, "--contract-seed", str(run.seed)]
    if target.read_only:
        command.append("--read-only")
    return shlex.join(command)


def metadata_rows(env: dict[str, Any]) -> dict[str, str]:
    """The environment as the HTML report's Environment table shows it."""
    mode = "read-only" if env["read_only"] else "read-write"
    return {
        "Suite version": f"petstore-contract {env['suite_version']}",
        "Spec": f"{env['spec_title']} {env['spec_version']} ({env['spec_file']})",
        "Spec SHA-256": env["spec_sha256"],
        "Target": f"{env['target']} ({mode})",
        "Base URL": env["base_url"],
        "Date": env["date"],
        "Seed": str(env["seed"]),
        "Profile": env["profile"],
        "Replay": env["replay"],
        "Key": f"from ${env['key_variable']} (never written anywhere)",
    }


# -- the HTML pieces -----------------------------------------------------------------------------------

# pytest-html puts the summary below the (long) Environment table; the report opens with the verdict.
STYLE = """<style>
body { display: flex; flex-direction: column; color: #555; }
body > * { order: 5; }
#title { order: 1; } body > p:first-of-type { order: 2; } .summary { order: 3; }
#environment-header { order: 6; } #environment { order: 7; } #results-table { order: 8; }
.summary__data { flex: 1 1 100%; }
.pc-verdict { font-size: 18px; font-weight: bold; padding: 10px 14px; border-radius: 4px; margin: 8px 0 14px; }
.pc-verdict--conformant { background: #e5f5e6; color: #1b5e20; border-left: 6px solid #4caf50; }
.pc-verdict--not-conformant { background: #fdecea; color: #b71c1c; border-left: 6px solid #d32f2f; }
.pc-verdict--incomplete { background: #fff4e0; color: #8a5300; border-left: 6px solid #f0a020; }
.pc-matrix { border-collapse: collapse; width: 100%; margin-bottom: 16px; color: #222; }
.pc-matrix th, .pc-matrix td { border: 1px solid #e0e0e0; padding: 4px 6px; text-align: left; vertical-align: top; }
.pc-matrix th { background: #f3f3f3; }
.pc-matrix td:last-child { width: 24%; }
.pc-matrix tr.pc-row--failed td { background: #fdecea; }
.pc-matrix tr.pc-row--not-run td { background: #f7f7f7; color: #777; }
.pc-outcome--passed { color: #2e7d32; font-weight: bold; }
.pc-outcome--failed { color: #c62828; font-weight: bold; }
.pc-outcome--not-run { color: #777; font-weight: bold; }
.pc-why { display: block; font-weight: normal; color: #666; font-size: 11px; }
.pc-failure { color: #222; border-left: 4px solid #d32f2f; padding: 4px 10px; margin: 4px 0 10px; }
.pc-clause { font-weight: bold; margin: 4px 0; }
.pc-label { margin: 8px 0 2px; color: #555; font-weight: bold; }
.pc-pre { white-space: pre-wrap; word-break: break-all; background: #f8f8f8; padding: 6px; margin: 0; }
</style>"""


def summary_html(line: str, verdict: str, rows: list[ClauseRow]) -> list[str]:
    css = "pc-verdict--" + verdict.replace(" ", "-")
    return [
        STYLE,
        f'<p class="pc-verdict {css}">{_e(line)}</p>',
        "<h2>Conformance matrix</h2>",
        _matrix_html(rows),
    ]


def _matrix_html(rows: list[ClauseRow]) -> str:
    head = "".join(f"<th>{name}</th>" for name in ("Clause", "Section", "Level", "Statement", "Tests", "Outcome"))
    body = "".join(_matrix_row(row) for row in rows)
    return f'<table class="pc-matrix"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _matrix_row(row: ClauseRow) -> str:
    kind = row.outcome.replace(" ", "-")
    why = f'<span class="pc-why">{_e(row.why)}</span>' if row.why else ""
    cells = [
        f"<code>{_e(row.clause.id)}</code>",
        _e(row.clause.section),
        _e(row.clause.level),
        _e(row.clause.statement),
        str(row.tests),
        f'<span class="pc-outcome--{kind}">{_e(row.outcome)}</span>{why}',
    ]
    return f'<tr class="pc-row--{kind}">' + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


# -- the pytest plugin ----------------------------------------------------------------------------------


class ReportPlugin:
    """Registered by the contract plugin on contract runs only (controller and xdist workers)."""

    def __init__(self, config: pytest.Config, target: Target, redact: Redactor) -> None:
        self.config = config
        self.target = target
        self.redact = redact
        self.is_worker = hasattr(config, "workerinput")
        self.report_dir = Path(config.option.petstore_report_dir or DEFAULT_REPORT_DIR).resolve()
        self.results = Results()
        self.started = dt.datetime.now(dt.UTC)
        self.html_report: Any = None
        if not self.is_worker:
            self._claim_output_paths()

    def _claim_output_paths(self) -> None:
        """Point pytest-html and junitxml at the report directory unless the user chose paths.

        This runs inside the contract plugin's pytest_configure, before theirs (which read the
        options): the conftest plugin registers last, so pluggy calls it first.
        """
        self.report_dir.mkdir(parents=True, exist_ok=True)
        self.config.addinivalue_line("environment_table_redact_list", SECRET_NAMES)
        option = self.config.option
        if hasattr(option, "htmlpath") and not option.htmlpath:
            option.htmlpath = str(self.report_dir / "report.html")
            option.self_contained_html = True  # one file to mail or attach to a ticket
        if not getattr(option, "xmlpath", None):
            option.xmlpath = str(self.report_dir / "junit.xml")

    # -- environment --------------------------------------------------------------------------

    def environment(self) -> dict[str, Any]:
        env = environment(self.target, self.started)
        return {k: self.redact(v) if isinstance(v, str) else v for k, v in env.items()}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.is_worker:
            return  # worker metadata is merged into the controller's, last one wins: add nothing there
        self._fill_metadata()
        self._junit_properties()

    def _fill_metadata(self) -> None:
        """Our rows first in pytest-metadata's dict (pytest-html's Environment table), all redacted.

        pytest-metadata calls its pytest_metadata hook in its own tryfirst pytest_configure,
        before the target is known; so the dict is filled here, before pytest-html reads it.
        """
        try:
            from pytest_metadata.plugin import metadata_key
        except ImportError:
            return
        metadata = self.config.stash.get(metadata_key, None)
        if metadata is None:
            return
        ours = metadata_rows(self.environment())
        rest = {k: v for k, v in metadata.items() if k not in ours}
        metadata.clear()
        metadata.update({**ours, **{k: self._redact_value(v) for k, v in rest.items()}})

    def _redact_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._redact_value(v) for k, v in value.items()}
        if not isinstance(value, str):
            return value
        # CI variables pytest-metadata copies (GIT_URL, CI_PROJECT_URL...) may carry a token as userinfo.
        return URL_USERINFO.sub(r"\1[REDACTED]@", self.redact(value))

    def _junit_properties(self) -> None:
        from _pytest.junitxml import xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            for name, value in self.environment().items():
                xml.add_global_property(name, value)

    # -- per test -----------------------------------------------------------------------------

    # tryfirst and registered after the contract plugin: the outermost wrapper, so the longrepr
    # and the "HTTP exchanges" section are already the contract plugin's redacted ones.
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        outcome = yield
        report: pytest.TestReport = outcome.get_result()
        if not report.failed:
            return
        clauses = [str(value) for name, value in item.user_properties if name == "clause"]
        details = failure_details(report, clauses, self.redact)
        setattr(report, FAILURE_ATTR, {"clauses": details["clauses"], "message": details["message"]})
        from pytest_html import extras

        report.extras = [*getattr(report, "extras", []), extras.html(failure_card(details))]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.is_worker:
            self.results.add(report)

    # -- pytest-html -------------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        self.html_report = report
        report.title = f"Pet Store contract report: {self.target.name} target"

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(2, "<th>Clauses</th>")

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: Any, cells: list[str]) -> None:
        ids = [str(v) for k, v in getattr(report, "user_properties", []) if k == "clause"]
        cells.insert(2, f'<td class="col-clauses">{_e(", ".join(ids))}</td>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        rows = self.results.matrix()
        verdict = verdict_of(session.exitstatus)
        line = verdict_line(verdict, rows, int(session.exitstatus))
        prefix.extend(summary_html(line, verdict, rows))
        if self.html_report is not None:
            self.html_report.title = f"Pet Store contract report: {verdict.upper()} ({self.target.name} target)"

    # -- summary.json and the terminal --------------------------------------------------------

    def summary(self, exit_code: int) -> dict[str, Any]:
        rows = self.results.matrix()
        verdict = verdict_of(exit_code)
        outcomes = Counter(row.outcome for row in rows)
        counts: dict[str, Any] = self.results.counts()
        counts["clauses"] = {
            "total": len(rows),
            "passed": outcomes[PASSED],
            "failed": outcomes[FAILED],
            "not_run": outcomes[NOT_RUN],
        }
        return {
            "verdict": verdict,
            "verdict_line": verdict_line(verdict, rows, exit_code),
            "exit_code": exit_code,
            "counts": counts,
            "clauses": [_clause_json(row) for row in rows],
            "failures": [_failure_json(r) for r in self.results.tests.values() if r.outcome == FAILED],
            "environment": self.environment(),
        }

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.is_worker:
            return
        self._fill_metadata()  # again: xdist merged the workers' metadata in since sessionstart
        text = json.dumps(self.summary(int(exitstatus)), indent=2, ensure_ascii=False)
        self.report_dir.mkdir(parents=True, exist_ok=True)
        (self.report_dir / "summary.json").write_text(self.redact(text) + "\n", encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        if self.is_worker:
            return
        rows = self.results.matrix()
        line = verdict_line(verdict_of(exitstatus), rows, int(exitstatus))
        terminalreporter.write_sep("-", f"contract verdict: {line}")
        option = self.config.option
        paths = [getattr(option, "htmlpath", None), getattr(option, "xmlpath", None), self.report_dir / "summary.json"]
        terminalreporter.write_line("contract reports: " + ", ".join(str(p) for p in paths if p))


def _clause_json(row: ClauseRow) -> dict[str, Any]:
    c = row.clause
    return {
        "id": c.id,
        "section": c.section,
        "level": c.level,
        "source": c.source,
        "statement": c.statement,
        "tests": row.tests,
        "outcome": row.outcome,
        "why": row.why,
        "failed_tests": list(row.failed_tests),
    }


def _failure_json(record: TestRecord) -> dict[str, Any]:
    return {"test": record.nodeid, "phase": record.phase, "clauses": record.violated, "message": record.message}
