"""A target that cannot be judged: the pre-flight proves it, the run stops, and every output says only that.

One row per unusable target (a closed port, TLS on a port that speaks plain HTTP, plain HTTP on a port
that speaks TLS, an HTML page at the base URL, another JSON service, a wrong key, a server that
rejects every key in a read-only run).  Each runs the contract suite as a user would
(``run_hosted``: the launcher's command line, the key in the environment) and holds every output to
what happened:

- exit 6, the one reason in summary.json and in the terminal's last line;
- JUnit: no failure at all (exit 6 is never a red test), every test of the suite skipped with the
  reason, the verdict's testcase an error;
- the requests and writes the pre-flight needed to prove it, and no more (no speed bound: requests,
  not seconds);
- no reason, note, coverage line or warning speaks of a store, of held-back creates or of a selection,
  none of which happened;
- report.html on one screen: the reason said once, the page a few kilobytes.

A key refused only after the pre-flight (it met a 5xx) voids every judgement at the end: no test that
failed as it ran stays a JUnit failure.  And the other way round (specificity): no fault or compliant
variant of the catalog is called unusable by the pre-flight, which asks each once (twice where its list
is no list: an id probe).
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools import SuiteRun
from devtools.catalog import FAULTS, UNJUDGEABLE, VARIANTS, catalog_app
from hosted import run_hosted
from hostile import HostileServer, free_port, not_json, other_json_api, refuses_after_a_5xx
from petstore_contract.reference import REFERENCE, BackgroundServer, build_app
from petstore_contract.run import Run, RunSettings, preflight
from test_hostile import TlsReference

KEY = "unusable-selftest-key-7d20b4"
ARGS = ("--contract-profile", "quick", "--contract-request-timeout", "2", "--contract-circuit-breaker", "3")
REPORTS = ("summary.json", "summary.md", "report.html", "junit.xml")
# Words of things that never happened when the store was never read (issue 58's false reasons).
UNTRUE = re.compile(r"(?<![/\w])store(?![/\w])|held back|crowded|not selected|empty store")
HTML_LIMIT = 20_000  # bytes: the page of a run that judged nothing (a judged run's is 60-300 KB)


@dataclass(frozen=True)
class Unusable:
    """One unusable target: how to serve it, what the run must say, what it may cost."""

    name: str
    serve: Callable[[Path], Iterator[str]]  # a context manager's generator: yields the base URL
    reason: str  # a regex the one reason matches
    requests: int  # at most this many requests
    writes: int = 0  # at most this many writes
    args: tuple[str, ...] = ()
    key: str = KEY


def _closed(_: Path) -> Iterator[str]:
    yield f"http://127.0.0.1:{free_port()}/v1"


def _hostile(handler: Callable[..., None]) -> Callable[[Path], Iterator[str]]:
    def serve(_: Path) -> Iterator[str]:
        with HostileServer(handler) as server:
            yield server.base_url

    return serve


def _reference(variant: object = REFERENCE, scheme: str = "http") -> Callable[[Path], Iterator[str]]:
    def serve(_: Path) -> Iterator[str]:
        with BackgroundServer(build_app(KEY, variant)) as server:  # type: ignore[arg-type]
            yield server.base_url.replace("http://", f"{scheme}://", 1)

    return serve


def _tls_asked_over_http(where: Path) -> Iterator[str]:
    import trustme

    ca = trustme.CA()
    issued = ca.issue_cert("127.0.0.1")
    cert, key = where / "cert.pem", where / "key.pem"
    issued.cert_chain_pems[0].write_to_path(str(cert))
    issued.private_key_pem.write_to_path(str(key))
    with TlsReference(cert, key) as server:
        yield server.base_url.replace("https://", "http://", 1)


NO_ANSWER = r"^the target did not answer: GET http://127\.0\.0\.1:\d+/v1/pets\?limit=1: "
ROWS = [
    Unusable("closed-port", _closed, NO_ANSWER + "connection refused$", requests=3),
    # The same under xdist: the controller's pre-flight decides, and its workers run no test and send nothing.
    Unusable("closed-port-xdist", _closed, NO_ANSWER + "connection refused$", requests=3, args=("-n", "2")),
    Unusable(
        "https-to-plain-http",
        _reference(scheme="https"),
        r"^the target did not answer: TLS error talking to https://127\.0\.0\.1:\d+: the target does not speak TLS "
        r"on that port$",
        requests=3,
    ),
    Unusable(
        "http-to-tls",
        _tls_asked_over_http,
        NO_ANSWER + r"(connection reset|the target closed)",
        # each of the 3 asked once more on a new connection: it closed as the GET went out (RFC 9112 §9.3.1)
        requests=6,
    ),
    Unusable(
        "html-page",
        _hostile(not_json),
        r"^the target is not the Pet Store service: GET /pets answered 200 text/html \(an HTML page\); "
        r"GET /pets/\{petId\} answered .*; GET /store/orders answered .*: check the base URL$",
        requests=3,
    ),
    Unusable(
        "other-json-service",
        _hostile(other_json_api),
        r"^the target is not the Pet Store service: GET /pets answered 404 application/json \(JSON of no shape",
        requests=3,
    ),
    Unusable(
        "wrong-key",
        _reference(),
        r"^the configured key was rejected on every operation \(401 to GET /pets, GET /pets/\{petId\}, "
        r"GET /store/orders, POST /pets\): check PETSTORE_API_KEY$",
        requests=4,  # the key asked once on each of the 4 operations; the POST created nothing
        writes=1,
        key="not-the-" + KEY,
    ),
    Unusable(
        "rejects-every-key-read-only",
        _reference(UNJUDGEABLE["rejects-every-key"]),
        r"^the configured key was rejected on every read operation \(401 to GET /pets, GET /pets/\{petId\}, "
        r"GET /store/orders; POST /pets not asked: read-only run\): check PETSTORE_API_KEY$",
        requests=3,
        args=("--contract-read-only",),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_an_unusable_target_stops_the_run_with_one_reason(row: Unusable, tmp_path: Path) -> None:
    with contextmanager(row.serve)(tmp_path) as base_url:
        run = run_hosted(base_url, row.key, *ARGS, *row.args, keep=REPORTS, timeout=300)
    context = run.output[-3000:]
    reason = str(run.summary.get("reason", ""))
    assert (run.exit_code, run.verdict) == (6, "inconclusive"), context
    assert re.search(row.reason, reason), f"{row.reason!r} not in {reason!r}"
    assert run.output.rstrip().splitlines()[-1] == f"Inconclusive: {reason}", context
    assert "Traceback" not in run.output, context
    assert run.summary["requests"] <= row.requests and run.summary["writes"] <= row.writes, run.summary
    assert run.summary["created"] == 0 and not run.summary["held_back"], run.summary
    tests = run.summary["tests"]
    assert tests["conforms"] == tests["violated"] == tests["error"] == 0, tests
    assert_junit(run, reason)
    assert_only_true_reasons(run, reason, selected="--contract-read-only" not in row.args)
    assert_one_screen(run, reason)
    assert KEY not in run.output and all(KEY not in text for text in run.reports.values())


def assert_junit(run: SuiteRun, reason: str) -> None:
    """No failure (exit 6 is no red test), none with an empty message; the suite's tests skipped with the reason."""
    root = ET.fromstring(run.reports["junit.xml"])
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    assert sum(int(s.get("failures", "0")) for s in suites) == 0
    assert not list(root.iter("failure")), "a test that judged nothing failed"
    ours = [c for c in root.iter("testcase") if c.get("classname", "").startswith("tests.")]
    assert ours, "no testcase of the suite in junit.xml"
    for case in ours:
        outcome = [e for e in case if e.tag in ("skipped", "error", "failure")]
        assert [e.tag for e in outcome] == ["skipped"], (case.get("name"), [e.tag for e in outcome])
        message = outcome[0].get("message") or ""
        assert message.strip() and (reason in message or "not selected: read-only run" in message), message
    verdict = [c for c in root.iter("testcase") if c.get("name") == "verdict"]
    assert [e.tag for e in verdict[0]] == ["error"] and verdict[0][0].get("message") == f"Inconclusive: {reason}"


def assert_only_true_reasons(run: SuiteRun, reason: str, *, selected: bool) -> None:
    """Every reason, note, coverage line, warning and closing line: nothing that did not happen (a
    read-only run does leave its writing tests not selected)."""
    summary = run.summary
    said = [reason, *summary["problems"], *summary["warnings"], *summary["coverage"]["not_observed"]]
    said += [note["reason"] for clause in summary["clauses"] for note in clause.get("notes", ())]
    said += run.output.split("==", 1)[-1].splitlines()[-8:]  # the plugin's closing lines
    said += run.reports["summary.md"].splitlines()
    untrue = [line for line in said if UNTRUE.search(line if selected else line.replace("not selected", ""))]
    assert not untrue, untrue
    notes = {(n["kind"], n["reason"]) for c in summary["clauses"] for n in c.get("notes", ())}
    assert notes == {("target", reason)}, notes


def assert_one_screen(run: SuiteRun, reason: str) -> None:
    page = run.reports["report.html"]
    assert len(page.encode()) < HTML_LIMIT, len(page.encode())
    assert page.count(html.escape(reason, quote=False)) == 1, page.count(html.escape(reason, quote=False))
    assert 'id="matrix"' not in page and 'id="coverage"' not in page


def test_a_key_refused_after_the_pre_flight_leaves_no_failed_test() -> None:
    """The pre-flight met a 5xx (the service's or the deployment's: the run judges it), then every request
    was refused: the run voids every judgement (the key was rejected), and no test that failed as it ran is
    a failure in JUnit: each is skipped with the reason."""
    with HostileServer(refuses_after_a_5xx()) as server:
        run = run_hosted(server.base_url, KEY, *ARGS, keep=REPORTS, timeout=300)
    assert (run.exit_code, run.verdict) == (6, "inconclusive"), run.output[-3000:]
    assert (
        run.summary["reason"]
        == "the configured key was rejected on every operation asked with it: check PETSTORE_API_KEY"
    )
    root = ET.fromstring(run.reports["junit.xml"])
    assert sum(int(s.get("failures", "0")) for s in root.iter("testsuite")) == 0
    assert not list(root.iter("failure")), "a test whose judgement the verdict voided failed"
    voided = [
        e for e in root.iter("skipped") if e.get("type") == "undecided" and "key was rejected" in e.get("message", "")
    ]
    assert voided, "no test that failed as it ran was kept as skipped with the reason"


# -- specificity: no server of the catalog is called unusable -------------------------------------------

CATALOG = [("fault", name) for name in FAULTS] + [("variant", name) for name in VARIANTS]
SLICE = CATALOG[::10]  # tier 1: every tenth server of the catalog; tier 2: every one


def unusable_among(servers: list[tuple[str, str]]) -> list[tuple[str, int, str]]:
    """The catalog's servers the pre-flight alone calls unusable, or asks more than twice (kind, requests, why)."""
    found = []
    for kind, name in servers:
        app = catalog_app(KEY, REFERENCE, name) if kind == "fault" else catalog_app(KEY, VARIANTS[name])
        with BackgroundServer(app) as server:
            seen, requests = _preflight(server.base_url)
        if seen.unjudged or seen.problem or requests > 2:
            found.append((f"{kind} {name}", requests, seen.unjudged or seen.problem))
    return found


def _preflight(base_url: str) -> tuple[preflight.Preflight, int]:
    """The pre-flight of a read-write run against ``base_url``, and the requests it sent."""
    run = Run(RunSettings("custom", base_url, "PETSTORE_API_KEY", read_only=False), KEY)
    try:
        seen = preflight.check(
            run.api, key_env="PETSTORE_API_KEY", read_only=False, new_pet=lambda: run.new_pet("preflight", None)
        )
        return seen, int(run.guard.counters()["requests"])
    finally:
        run.close()


def test_no_server_of_the_catalog_slice_is_unusable() -> None:
    """A fault breaks a sentence and a compliant variant chooses where the document is silent: each is the
    service, judged; the pre-flight asks it once (twice where the list is no list: an id probe)."""
    assert not unusable_among(SLICE)


@pytest.mark.tier_2
def test_no_server_of_the_catalog_is_unusable() -> None:
    assert not unusable_among(CATALOG)
