"""Run results as data, for the report tests and the documentation's screenshots.

Three runs over the real clause registry: a conformant one (two clauses need a store the suite can
see whole, one SHOULD clause is a warning), a not-conformant one (150 findings over 12 MUST clauses,
10,000-character names, URLs and bodies, markup in what the server sent, 12 identical findings on
one clause) and an inconclusive one (the target refused every connection: the pre-flight's reason on every clause).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from petstore_contract.core.records import (
    CONFORMANT,
    CONFORMS,
    INCONCLUSIVE,
    NOT_CONFORMANT,
    NOT_REASKED,
    NOT_SELECTED,
    PRECONDITION,
    REPRODUCED,
    SEEN_ONCE,
    STORE_TOO_LARGE,
    TARGET,
    UNDECIDED,
    VIOLATED,
    ClauseResult,
    Exchange,
    Finding,
    Note,
    RunResult,
    TestRecord,
    cut,
)
from petstore_contract.interface.clauses import registry

KEY_VARIABLE = "PETSTORE_API_KEY"
BASE_URL = "http://127.0.0.1:8765/v1"
REFUSED_URL = "http://127.0.0.1:9/v1"
LONG = 10_000
HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>"
# Twelve identical findings fold into one entry counted 12 times on this clause.
FOLDED_CLAUSE = "list.limit.fills"
VIOLATED_CLAUSES = (
    "list.limit.fills",
    "list.limit.honoured",
    "list.shape",
    "list.status.filter",
    "list.page.distinct",
    "create.created",
    "create.echo",
    "create.reject.required",
    "read.not-found",
    "auth.invalid",
    "errors.body",
    "json.content-type",
)
FINDINGS = 150


def facts(base_url: str = BASE_URL, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "target": "embedded",
        "base_url": base_url,
        "mode": "read-write",
        "profile": "standard",
        "seed": 1234567,
        "run_id": "k3v9q2",
        "concurrency": 4,
        "started": "2025-05-04T10:11:12Z",
        "finished": "2025-05-04T10:12:54Z",
        "duration_s": 102.4,
        "requests": 1873,
        "writes": 211,
        "no_answer": 0,
        "throttled": 2,
        "throttle_wait_s": 3.25,
        "concurrency_min": 2,
        "suite_version": "0.1.0",
        "spec_sha256": "9f2c" * 16,
        "key_env": KEY_VARIABLE,
    }
    data.update(changes)
    data["replay"] = f"pytest --pyargs petstore_contract --base-url {data['base_url']} --contract-seed {data['seed']}"
    return data


def _row(clause_id: str, outcome: str, **fields: Any) -> ClauseResult:
    clause = registry()[clause_id]
    tests = fields.pop("tests", [f"tests/test_{clause_id.split('.')[0]}.py::test_{clause_id.replace('.', '_')}"])
    return ClauseResult(
        id=clause.id,
        section=clause.section,
        level=clause.level,
        quote=clause.quote,
        outcome=outcome,
        tests=tests if outcome != NOT_SELECTED else [],
        needs_complete_view=clause.complete_view,
        **fields,
    )


def _exchange(method: str, url: str, status: int | None = 200, body: str = "[]", request_body: str | None = None):
    headers = (("Authorization", f"Bearer ${KEY_VARIABLE}"), ("Accept", "application/json"))
    if request_body is not None:
        headers = (*headers, ("Content-Type", "application/json"))
    return Exchange(
        method=method,
        url=url,
        request_headers=headers,
        request_body=request_body,
        status=status,
        response_headers=(("Content-Type", "application/json"), ("Content-Length", str(len(body)))),
        response_body=cut(body),
        response_length=len(body),
        problem="" if status is not None else "connection reset by peer after 30.0 s",
    )


def _records(clauses: list[ClauseResult]) -> list[TestRecord]:
    records: dict[str, TestRecord] = {}
    for clause in clauses:
        for nodeid in clause.tests:
            record = records.setdefault(nodeid, TestRecord(nodeid, ()))
            record.clauses = (*record.clauses, clause.id)
            if clause.outcome == VIOLATED:
                record.outcome = VIOLATED
                record.findings += [f for f in clause.findings if f.test == nodeid]
            elif clause.outcome == UNDECIDED and record.outcome == CONFORMS:
                record.outcome = UNDECIDED
                record.notes += clause.notes
    return list(records.values())


def conformant() -> RunResult:
    clauses = []
    for cid, clause in registry().items():
        if clause.complete_view:
            note = Note(
                (cid,), STORE_TOO_LARGE, "the store holds 12,408 animals; the suite sees whole stores up to 500"
            )
            clauses.append(_row(cid, UNDECIDED, notes=[note]))
        elif cid == "auth.challenge.quiet":  # the one SHOULD clause the run misses: a warning
            url = f"{BASE_URL}/pets?limit=5"
            body = '{"code": "unauthorized", "message": "no key", "status": 401}'
            exchange = Exchange(
                "GET",
                url,
                (("Accept", "application/json"),),  # the request without credentials
                status=401,
                response_headers=(("WWW-Authenticate", 'Bearer error="invalid_token"'),),
                response_body=body,
                response_length=len(body),
            )
            finding = Finding(
                cid,
                "a challenge without an error code when the request had no credentials",
                'WWW-Authenticate: Bearer error="invalid_token"',
                exchange,
                f"tests/test_auth.py::test_{cid.replace('.', '_')}",
            )
            clauses.append(_row(cid, VIOLATED, findings=[finding]))
        else:
            clauses.append(_row(cid, CONFORMS))
    should = next(c for c in clauses if c.outcome == VIOLATED)
    whole = [c.id for c in clauses if c.outcome == UNDECIDED]
    return RunResult(
        verdict=CONFORMANT,
        # as the plugin's verdict rules word it
        reason=(
            f"{len(clauses) - len(whole) - 1} of {len(clauses) - 1} clauses conform; {len(whole)} need a store "
            f"the suite can see whole: {', '.join(whole)}"
        ),
        facts=facts(),
        clauses=clauses,
        tests={"tests": 90, "conforms": 87, "violated": 1, "undecided": 2},
        warnings=[
            "the target answered 3 requests slower than 2 s (slowest: 4.1 s, GET /pets?limit=100)",
            f"{should.id} ({should.level}): {should.findings[0].summary()}",  # the plugin lists SHOULD clauses too
        ],
        records=_records(clauses),
    )


def _findings(long: int) -> dict[str, list[Finding]]:
    """150 findings over the 12 violated clauses, with names, URLs and bodies ``long`` characters long."""
    long_name = "N" * long or "Rex"
    long_url = f"{BASE_URL}/pets?limit=5&status=available&name=" + ("x" * long or "Rex")
    long_body = '[{"id": 1, "name": "' + ("y" * long or "Rex") + '", "categoryId": 1, "status": "available"}]'
    by_clause: dict[str, list[Finding]] = {cid: [] for cid in VIOLATED_CLAUSES}
    # 12 identical findings: same clause, expectation and observation, seen by 12 tests.
    for index in range(12):
        exchange = _exchange("GET", f"{BASE_URL}/pets?limit=5", 200, '[{"id": 1}, {"id": 2}, {"id": 3}]')
        by_clause[FOLDED_CLAUSE].append(
            Finding(
                FOLDED_CLAUSE,
                "5 animals (limit=5, 40 matching animals, page cap 100)",
                "3 animals",
                exchange,
                f"tests/test_list.py::test_limit_fills[case{index}]",
                # asked again at the run's end: 9 reproduced, 3 seen once (one group, mixed)
                repeat=REPRODUCED if index < 9 else SEEN_ONCE,
                repeat_detail=f"asked again at the end of the run: HTTP 200; {'3' if index < 9 else '5'} animals",
            )
        )
    # The rest spread over the other clauses, many of them distinct, some enormous.
    others = [cid for cid in VIOLATED_CLAUSES if cid != FOLDED_CLAUSE]
    for index in range(FINDINGS - 12):
        cid = others[index % len(others)]
        test = f"tests/test_generated.py::test_case[{index}]"
        if index % 23 == 0:
            test = f"tests/test_generated.py::test_case[{long_name}-{index}]"
        if index % 7 == 0:
            exchange = _exchange("GET", long_url, 200, long_body)
            observed = f"an animal named {long_name} {HOSTILE} (#{index})"
        elif index % 11 == 0:
            exchange = _exchange("POST", f"{BASE_URL}/pets", None, "", request_body='{"name": "' + long_name + '"}')
            observed = f"no answer: the connection was reset (#{index})"
        elif index % 13 == 0:
            exchange = None
            observed = f"a 404 for id {index} that the suite had just created"
        else:
            exchange = _exchange(
                "POST",
                f"{BASE_URL}/pets",
                500,
                '{"error": "internal", "trace": "' + HOSTILE + '"}',
                request_body='{"name": "Rex \'the\' $dog", "categoryId": 1}',
            )
            observed = f"HTTP 500 with a body that is not an Error (#{index % 5})"
        by_clause[cid].append(
            Finding(
                cid,
                f"an answer that satisfies {cid}",
                observed,
                exchange,
                test,
                "generated" if index % 2 else "targeted",
                **_asked_again(exchange, index, long_name),
            )
        )
    assert sum(len(v) for v in by_clause.values()) == FINDINGS
    return by_clause


def _asked_again(exchange: Exchange | None, index: int, long_name: str) -> dict[str, str]:
    """What asking a finding again at the run's end said: a GET reproduced or seen once, the rest not re-asked."""
    if exchange is None:
        return {"repeat": NOT_REASKED, "repeat_detail": "no request was recorded with it"}
    if exchange.method != "GET":
        return {
            "repeat": NOT_REASKED,
            "repeat_detail": "POST is not safe to repeat (only GET and HEAD are asked again)",
        }
    if index % 2:
        return {"repeat": SEEN_ONCE, "repeat_detail": "asked again at the end of the run: HTTP 200; status:200 held"}
    detail = f"asked again at the end of the run: HTTP 200; observed an animal named {long_name} {HOSTILE}"
    return {"repeat": REPRODUCED, "repeat_detail": detail}


def not_conformant(long: int = LONG) -> RunResult:
    findings = _findings(long)
    clauses = []
    for cid in registry():
        if cid in findings:
            tests = list(dict.fromkeys(f.test for f in findings[cid]))
            clauses.append(_row(cid, VIOLATED, findings=findings[cid], tests=tests))
        elif cid == "stateful.round-trip":
            note = Note((cid,), PRECONDITION, "no animal could be created to read back", blocked_by="create.created")
            clauses.append(_row(cid, UNDECIDED, notes=[note]))
        elif cid == "orders.available":
            clauses.append(_row(cid, NOT_SELECTED))
        elif cid == "list.status.found":
            note = Note(
                (cid,),
                STORE_TOO_LARGE,
                "the store holds more animals than one page can show: " + ("z" * long or "12,408"),
            )
            clauses.append(_row(cid, UNDECIDED, notes=[note]))
        else:
            clauses.append(_row(cid, CONFORMS))
    violated = [c.id for c in clauses if c.outcome == VIOLATED]
    must = sum(1 for c in clauses if c.level == "MUST" and c.outcome != NOT_SELECTED)
    shown = ", ".join(violated[:5])
    return RunResult(
        verdict=NOT_CONFORMANT,
        reason=f"{len(violated)} of {must} MUST clauses violated: {shown} and {len(violated) - 5} more",
        facts=facts(base_url=BASE_URL + "/" + "p" * long, target="staging-" + "t" * long)
        if long
        else facts(base_url="https://staging.petstore.example/v1", target="staging"),
        clauses=clauses,
        tests={"tests": 100, "conforms": 61, "violated": 37, "undecided": 2},
        warnings=["a warning with a long value: " + "w" * long] if long else [],
        records=_records(clauses),
    )


def inconclusive() -> RunResult:
    reason = f"the target did not answer: GET {REFUSED_URL}/pets?limit=1: connection refused"
    clauses = []
    for cid in registry():
        note = Note((cid,), TARGET, reason)  # as the pre-flight leaves every clause (plugin/session.py)
        clauses.append(_row(cid, UNDECIDED, notes=[note]))
    return RunResult(
        verdict=INCONCLUSIVE,
        reason=reason,
        facts=facts(base_url=REFUSED_URL, target="custom", requests=3, writes=0, duration_s=0.4),
        clauses=clauses,
        tests={"tests": 90, "undecided": 90},
        records=_records(clauses),
    )


RUNS = {"conformant": conformant, "not-conformant": not_conformant, "inconclusive": inconclusive}
# For the documentation: the same runs without the 10,000-character values.
SCREENSHOT_RUNS = {**RUNS, "not-conformant": lambda: not_conformant(long=0)}


def chromium_path() -> str | None:
    """The Chromium to drive: $PETSTORE_CHROMIUM, else chromium or chromium-browser on PATH."""
    configured = os.environ.get("PETSTORE_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")
