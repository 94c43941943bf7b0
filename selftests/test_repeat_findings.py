"""Reproduced or seen once: each finding of a GET or HEAD is asked once more at the end of the run.

First ``reask`` alone, against the reference server on loopback (the requests it sends are counted
at the server): identical requests go out once, the key is put back from its placeholder, a POST or
a finding without a check to run again is not re-asked (with the reason), the run's limit, budget and
an absent target are honoured.  Then three suite runs (targeted tests only, so that the first request
to meet a fault is a targeted test's): a 500 to the first authorised ``GET /store/orders`` only is
the deployment's (seen once: the run is inconclusive and says so, ``judging.flicker``), a steady one
*reproduced* and not conformant, a POST finding *not re-asked*; every report says which.
"""

from __future__ import annotations

import json
import secrets
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import reportdata
from devtools.catalog import catalog_app
from devtools.launcher import SuiteRun
from hosted import run_hosted
from petstore_contract.core.records import (
    NOT_REASKED,
    REPRODUCED,
    SEEN_ONCE,
    Exchange,
    Finding,
    TestRecord,
)
from petstore_contract.judging import reask
from petstore_contract.reference import BackgroundServer
from petstore_contract.reporting import html, junit, markdown, summary_json
from petstore_contract.transport import Transport, TransportOptions

KEY = "reask-" + secrets.token_urlsafe(12)
BEARER = (("Authorization", "Bearer $PETSTORE_API_KEY"), ("Accept", "application/json"))
TARGETED = ("--contract-profile", "quick", "-m", "not generated")
KEPT = ("summary.json", "summary.md", "report.html", "junit.xml")


class Served:
    """A reference server (with a fault, or none) and a transport to it, as a run's."""

    def __init__(self, server: BackgroundServer, transport: Transport) -> None:
        self.server, self.transport = server, transport
        self.base_url = server.base_url

    @property
    def received(self) -> int:
        return int(self.server.app.state.store.request_count)


def served(fault: str | None = None, **options: Any) -> Iterator[Served]:
    with BackgroundServer(catalog_app(KEY, fault=fault)) as server:
        transport = Transport(TransportOptions(base_url=server.base_url, api_key=KEY, **options))
        try:
            yield Served(server, transport)
        finally:
            transport.close()


@pytest.fixture
def reference() -> Iterator[Served]:
    yield from served()


@pytest.fixture
def broken_orders() -> Iterator[Served]:
    yield from served("orders_500")


def finding(
    base_url: str,
    path: str,
    expectation: str,
    method: str = "GET",
    headers: tuple[tuple[str, str], ...] = BEARER,
    status: int = 500,
) -> Finding:
    exchange = Exchange(method, base_url + path, headers, None, status, (), "", 0)
    return Finding("orders.available", "no 5xx answer", "HTTP 500", exchange, "t::x", expectation=expectation)


def marked(records: list[TestRecord]) -> list[Finding]:
    return [f for record in records for f in record.findings]


# -- reask alone ----------------------------------------------------------------------------------


def test_identical_requests_go_out_once_each_finding_judged_by_its_own_check(broken_orders: Served) -> None:
    url = broken_orders.base_url
    first = TestRecord("t::a", ("orders.available",), findings=[finding(url, "/store/orders", "no-5xx", status=200)])
    media = finding(url, "/store/orders", "json-media-type", status=200)
    second = TestRecord("t::b", ("json.content-type",), findings=[media])
    before = broken_orders.received
    done = reask.again([first, second], broken_orders.transport)
    assert done.sent == 1 and broken_orders.received - before == 1, "one request for two findings of it"
    assert broken_orders.transport.guard.counters()["requests"] == 1, "the re-ask counts in the run's requests"
    no_5xx, media = marked(done.records)
    assert no_5xx.repeat == REPRODUCED and "HTTP 500" in no_5xx.repeat_detail, no_5xx.repeat_detail
    assert media.repeat == SEEN_ONCE, media.repeat_detail  # the 500 is JSON: its media type holds
    assert [r.nodeid for r in done.records] == ["t::a", "t::b"]


def test_generated_cases_that_differ_only_by_their_case_id_are_one_request(reference: Served) -> None:
    cases = [
        finding(reference.base_url, "/pets", "status:200", headers=(*BEARER, ("X-Schemathesis-TestCaseId", case)))
        for case in ("AbCdEf", "GhIjKl")
    ]
    done = reask.again([TestRecord("t::a", ("list.shape",), findings=cases)], reference.transport)
    assert done.sent == 1 == reference.received
    assert [f.repeat for f in marked(done.records)] == [SEEN_ONCE, SEEN_ONCE]


def test_the_key_is_put_back_and_never_shown(reference: Served) -> None:
    record = TestRecord(
        "t::a", ("orders.available",), findings=[finding(reference.base_url, "/store/orders", "status:200", status=404)]
    )
    (again,) = marked(reask.again([record], reference.transport).records)
    # Without the key the reference answers 401, and status:200 would fail again.
    assert again.repeat == SEEN_ONCE and again.repeat_detail.endswith("status:200 held"), again.repeat_detail
    assert KEY not in json.dumps(again.to_dict())


def test_what_is_not_asked_again_says_why(reference: Served) -> None:
    url = reference.base_url
    cases = {
        "POST is not safe to repeat": finding(url, "/pets", "status:201", method="POST"),
        "no request was recorded": replace(finding(url, "/pets", "status:200"), exchange=None),
        "Schemathesis' checks judge": finding(url, "/pets", "schemathesis:JsonSchemaError", status=200),
        "records no kind": finding(url, "/pets", "", status=200),
        "not whole": finding(url, "/pets", "status:200", headers=(("Authorization", "Basic [REDACTED]"),)),
        "another origin": finding("http://127.0.0.1:9/v1", "/pets", "status:200"),
    }
    record = TestRecord("t::a", ("orders.available",), findings=list(cases.values()))
    done = reask.again([record], reference.transport)
    assert done.sent == 0 and reference.received == 0
    for why, again in zip(cases, marked(done.records), strict=True):
        assert again.repeat == NOT_REASKED and why in again.repeat_detail, (why, again.repeat_detail)


def test_a_blocked_or_spent_run_sends_nothing() -> None:
    for options, blocked, why in (({}, "the run was interrupted", "interrupted"), ({"deadline": 1.0}, "", "budget")):
        for server in served(**options):
            record = TestRecord(
                "t::a", ("orders.available",), findings=[finding(server.base_url, "/pets", "status:200")]
            )
            done = reask.again([record], server.transport, blocked)
            (again,) = marked(done.records)
            assert done.sent == 0 and server.received == 0
            assert again.repeat == NOT_REASKED and why in again.repeat_detail, again.repeat_detail


def test_no_answer_is_not_re_asked() -> None:
    transport = Transport(TransportOptions(base_url="http://127.0.0.1:9/v1", api_key=KEY, timeout=2))
    record = TestRecord("t::a", ("orders.available",), findings=[finding("http://127.0.0.1:9/v1", "/pets", "no-5xx")])
    try:
        (again,) = marked(reask.again([record], transport).records)
    finally:
        transport.close()
    assert again.repeat == NOT_REASKED and again.repeat_detail.startswith("no answer: "), again.repeat_detail


def test_at_most_the_limit_each_signature_first(reference: Served) -> None:
    url = reference.base_url
    lists = [finding(url, f"/pets?limit={n}", "status:200") for n in range(1, reask.MAX_REASKS + 11)]
    orders = finding(url, "/store/orders", "status:200")  # another signature, found last
    done = reask.again([TestRecord("t::a", ("list.shape",), findings=[*lists, orders])], reference.transport)
    found = marked(done.records)
    assert done.sent == reask.MAX_REASKS == reference.received
    assert found[-1].repeat == SEEN_ONCE, "the first finding of each signature goes before the rest"
    skipped = [f for f in found if f.repeat == NOT_REASKED]
    assert len(skipped) == 11 and all("limit of 50 re-asks" in f.repeat_detail for f in skipped)


def test_the_repeat_travels_with_the_finding_and_leaves_its_signature_alone() -> None:
    plain = finding("http://127.0.0.1:1/v1", "/store/orders", "no-5xx")
    again = replace(plain, repeat=SEEN_ONCE, repeat_detail="asked again at the end of the run: HTTP 200")
    assert again.signature() == plain.signature()
    assert Finding.from_dict(again.to_dict()) == again
    record = TestRecord("t::a", ("orders.available",), findings=[again])
    assert TestRecord.from_dict(json.loads(json.dumps(record.to_dict()))).findings == [again]


# -- the suite, end to end ------------------------------------------------------------------------


def suite_run(fault: str) -> tuple[SuiteRun, int]:
    """A targeted-only run against ``fault``; and the requests the server received."""
    app = catalog_app(KEY, fault=fault)
    with BackgroundServer(app) as server:
        run = run_hosted(server.base_url, KEY, *TARGETED, keep=KEPT)
    return run, int(app.state.store.request_count)


def findings_of(run: SuiteRun, clause: str) -> list[dict[str, Any]]:
    return [f for f in run.findings() if f["clause"] == clause]


def test_a_5xx_seen_once_is_the_deployments_and_the_run_inconclusive() -> None:
    """A 500 the same GET did not get again is no answer to judge (a deploy, a gateway: judging.flicker):
    never not conformant on the clause of the test that met it, never conformant either."""
    run, received = suite_run("orders_500_first")
    assert run.verdict == "inconclusive" and run.exit_code == 6, run.output[-3000:]
    assert run.summary["reason"] == (
        "the deployment answered 500 to 1 request that answered as documented when asked again: "
        "a deploy or a gateway? rerun"
    )
    assert not findings_of(run, "orders.available")
    (orders,) = [c for c in run.summary["clauses"] if c["id"] == "orders.available"]
    assert orders["outcome"] == "undecided" and orders["notes"][0]["kind"] == "deployment", orders
    assert run.count("reasked") == 1 and run.count("requests") == received, "the re-ask counts in the requests"
    jsonschema.validate(run.summary, summary_json.schema())
    assert run.summary["reason"] in run.reports["report.html"] and run.summary["reason"] in run.reports["summary.md"]
    assert KEY not in "".join(run.reports.values())


def test_a_steady_fault_is_reproduced() -> None:
    run, _ = suite_run("orders_500")
    assert run.verdict == "not_conformant", run.output[-3000:]
    found = findings_of(run, "orders.available")
    assert found and all(f["repeat"] == "reproduced" for f in found), found
    assert "HTTP 500" in found[0]["repeat_detail"]
    assert "reproduced" in run.reports["report.html"] and "Asked again: **reproduced**" in run.reports["summary.md"]
    # The orders test fails on it: JUnit's one-line message says so, the failure's body says what came back.
    messages = [line for line in run.reports["junit.xml"].splitlines() if 'message="orders.available: expected' in line]
    assert messages and all(') · reproduced">' in line for line in messages), messages
    assert "Asked again at the end of the run:" in run.reports["junit.xml"]


def test_a_post_finding_is_not_re_asked() -> None:
    run, _ = suite_run("create_returns_200")
    assert run.verdict == "not_conformant", run.output[-3000:]
    posts = [f for f in run.findings() if f["exchange"] and f["exchange"]["method"] == "POST"]
    assert posts and all(f["repeat"] == "not_reasked" for f in posts)
    assert all(f["repeat_detail"].startswith("POST is not safe to repeat") for f in posts)
    assert run.count("reasked") == 0


# -- the reports ----------------------------------------------------------------------------------


def test_every_report_says_which_next_to_each_finding() -> None:
    result = reportdata.not_conformant(long=0)
    page = html.render(result)
    assert "reproduced \u00d79, seen once \u00d73" in page, "a folded group of mixed outcomes counts each"
    assert '<span class="pill not_reasked">not re-asked</span>' in page
    assert "<dt>Asked again</dt><dd>seen once: asked again at the end of the run: HTTP 200; status:200 held" in page
    assert "Asked again: **" in markdown.render(result)
    document = summary_json.document(result)
    jsonschema.validate(document, summary_json.schema())
    repeats = {f["repeat"] for c in document["clauses"] for f in c["findings"]}
    assert repeats == {"reproduced", "seen_once", "not_reasked"}


def test_junit_names_the_repeat_once_however_often_it_is_rewritten(tmp_path: Path) -> None:
    line = "orders.available: expected no 5xx answer; observed HTTP 500 (GET http://127.0.0.1:1/v1/store/orders)"
    path = tmp_path / "junit.xml"
    path.write_text(
        '<testsuites><testsuite name="pytest" tests="1" failures="1">'
        f'<testcase classname="tests.test_orders" name="test_orders"><failure message="{line}">{line}</failure>'
        "</testcase></testsuite></testsuites>",
        encoding="utf-8",
    )
    found = replace(
        finding("http://127.0.0.1:1/v1", "/store/orders", "no-5xx"), repeat=SEEN_ONCE, repeat_detail="HTTP 200"
    )
    result = reportdata.not_conformant(long=0)
    result.records = [TestRecord("tests/test_orders.py::test_orders", ("orders.available",), findings=[found])]
    junit.rewrite(path, result)
    junit.rewrite(path, result)
    failure = ET.parse(path).getroot().find(".//failure")
    assert failure is not None and failure.get("message") == line + " · seen once"
    assert (failure.text or "").count("Asked again at the end of the run:") == 1
    assert "orders.available: seen once: HTTP 200" in (failure.text or "")
