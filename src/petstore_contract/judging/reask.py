"""Reproduced or seen once: each violation found by a request safe to repeat is asked once more.

At the end of the run, before the reports, every finding whose recorded request is a GET or HEAD to
the target is sent again (the key put back where the record shows its variable) through the run's
own transport, so that it counts in the run's requests and meets the budget, the timeouts, the
circuit breaker and the origin guard; the answer is judged by the check the finding recorded
(``rejudge``).  The finding then says:

- ``reproduced``: the same check failed again (a 5xx: twice more, in a row);
- ``seen once``: the target answered and the check held (an intermittent fault is still a fault:
  the finding stays, the verdict does not change) — but for a finding whose answer was a 5xx, which
  ``flicker.set_aside`` hands to the deployment;
- ``not re-asked``, with the reason: not a safe method (never a POST), no request recorded, no check
  that judges one answer again, a request not kept whole, the limit of re-asks, the budget spent,
  or no answer.

A finding whose answer was a 5xx is asked again whatever its check (a generated check's too): the
question is whether the 5xx comes again (``expect.no_server_error``), not the check that happened to
meet it (an HTML gateway page breaks ``errors.body`` and ``json.content-type`` as much as it breaks
the clause of the test that sent the request).

Identical requests are sent once and judged by each finding's check; at most ``MAX_REASKS`` go out,
side by side on the run's pool, the first finding of each signature before the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import requests

from petstore_contract.core.records import (
    NOT_REASKED,
    REPRODUCED,
    SEEN_ONCE,
    Exchange,
    Finding,
    Repeat,
    Signature,
    TestRecord,
)
from petstore_contract.core.redaction import REDACTED
from petstore_contract.judging import checks as rejudge
from petstore_contract.judging import expect
from petstore_contract.transport import Answer, TargetProblem, Transport, origin, throttling

SAFE_METHODS = frozenset({"GET", "HEAD"})  # RFC 9110 §9.2.1: asking again changes nothing
MAX_REASKS = 50  # requests per run: a target with hundreds of findings costs a bounded tail
CUT_MARK = "… [cut: "  # record.cut's mark: the value is not whole
NOT_RESENT = frozenset({"content-length", "host", "transfer-encoding"})  # the client sets them anew
# Schemathesis' fresh id per generated case (``generated.TEST_CASE_HEADER``): not part of what is
# asked, so two cases that differ only there are one request.
PER_CASE = frozenset({"x-schemathesis-testcaseid"})
DETAIL = 300  # characters of a repeat_detail line

# A request as recorded (redacted): identical findings' requests are one request.
Request = tuple[str, str, tuple[tuple[str, str], ...], str | None]


@dataclass(frozen=True)
class NotAsked:
    """Why a finding is not asked again, or why its request got no answer: the finding's ``repeat_detail``."""

    reason: str


# What to do with one finding: its request and check, or why it is not asked again.
Plan = tuple[Request, rejudge.Check] | NotAsked


@dataclass(frozen=True)
class Reasked:
    """The records with every finding marked, and how many requests went out again."""

    records: list[TestRecord]
    sent: int


def server_error(exchange: Exchange | None) -> bool:
    """A 5xx answer that is no throttling (a 503 with Retry-After is waited out, never judged)."""
    return (
        exchange is not None
        and exchange.status is not None
        and exchange.status >= 500
        and not throttling(exchange.status, exchange.header("Retry-After"))
    )


def whole(exchange: Exchange) -> bool:
    """The recorded request can be sent again as it went: nothing cut, no encoding of the key redacted."""
    parts = [exchange.url, exchange.request_body or "", *(value for _, value in exchange.request_headers)]
    return not any(REDACTED in part or CUT_MARK in part for part in parts)


def resend(transport: Transport, exchange: Exchange, timeout: float | None = None) -> Answer:
    """The recorded request once more through ``transport``, the key put back from its placeholder.

    Raises TargetProblem (no answer, budget, breaker, another origin) or what requests raises for a
    request it will not send."""
    variable, key = "$" + transport.options.key_env, transport.options.api_key

    def filled(text: str) -> str:
        return text.replace(variable, key) if key else text

    headers = {name: filled(value) for name, value in exchange.request_headers if name.lower() not in NOT_RESENT}
    body = filled(exchange.request_body).encode("utf-8") if exchange.request_body is not None else None
    # A session of its own (the transport's adapter and pool underneath); never closed: closing a
    # session closes its adapters, and this one is the run's.
    session = transport.session()
    response = session.request(
        exchange.method,
        filled(exchange.url),
        headers=headers,
        data=body,
        timeout=timeout or transport.options.timeout,
        allow_redirects=False,
    )
    return Answer(response.status_code, response.headers, response.content, transport.exchange(response))


def again(records: list[TestRecord], transport: Transport, blocked: str = "") -> Reasked:
    """Every finding of ``records`` asked again where it can be (``blocked``: why none may be)."""
    blocked = blocked or transport.guard.budget_spent() or transport.guard.breaker_open() or ""
    target = transport.origin
    plans = {
        (r, f): _plan(finding, target, blocked)
        for r, record in enumerate(records)
        for f, finding in enumerate(record.findings)
    }
    chosen = _chosen(records, plans)
    answers = dict(zip(chosen, transport.map(lambda request: _ask(transport, request), chosen), strict=True))
    # A 5xx that comes again is asked a third time: a flickering gateway gives the same request two 5xx
    # in a row rarely (1 % of answers: 1 in 10,000), a service that fails on it every time.
    fivexx = {
        plan[0]
        for (r, f), plan in plans.items()
        if not isinstance(plan, NotAsked) and server_error(records[r].findings[f].exchange)
    }
    twice = [r for r, answer in answers.items() if r in fivexx and isinstance(answer, Answer) and answer.status >= 500]
    for request, third in zip(twice, transport.map(lambda request: _ask(transport, request), twice), strict=True):
        if isinstance(third, Answer) and third.status < 500:
            answers[request] = third
    marked = [
        replace(record, findings=[_marked(finding, plans[r, f], answers) for f, finding in enumerate(record.findings)])
        for r, record in enumerate(records)
    ]
    return Reasked(marked, len(chosen) + len(twice))


def _plan(finding: Finding, target: str, blocked: str) -> Plan:
    exchange = finding.exchange
    if blocked:
        return NotAsked(blocked)
    if exchange is None:
        return NotAsked("no request was recorded with it")
    if exchange.method.upper() not in SAFE_METHODS:
        return NotAsked(f"{exchange.method.upper()} is not safe to repeat (only GET and HEAD are asked again)")
    if origin(exchange.url) != target:
        return NotAsked("its request went to another origin than the target's")
    if not whole(exchange):
        return NotAsked("the recorded request is not whole (a value cut, or an encoding of the key redacted)")
    if server_error(exchange):
        check: rejudge.Check = expect.no_server_error
    else:
        try:
            check = rejudge.check_for(finding.expectation)
        except rejudge.CannotRejudge as exc:
            return NotAsked(str(exc))
    headers = tuple((name, value) for name, value in exchange.request_headers if name.lower() not in PER_CASE)
    return (exchange.method, exchange.url, headers, exchange.request_body), check


def _chosen(records: list[TestRecord], plans: dict[tuple[int, int], Plan]) -> list[Request]:
    """Each distinct request once, the first finding of each signature first, at most ``MAX_REASKS``."""
    first: dict[Request, int] = {}
    leading: set[Request] = set()
    signatures: set[Signature] = set()
    for (r, f), plan in plans.items():
        if isinstance(plan, NotAsked):
            continue
        request = plan[0]
        first.setdefault(request, len(first))
        signature = records[r].findings[f].signature()
        if signature not in signatures:
            signatures.add(signature)
            leading.add(request)
    ranked = sorted(first, key=lambda request: (request not in leading, first[request]))
    return ranked[:MAX_REASKS]


def _ask(transport: Transport, request: Request) -> Answer | NotAsked:
    """The answer, or why there is none (never raises: one failure must not stop the rest)."""
    method, url, headers, body = request
    try:
        return resend(transport, Exchange(method, url, headers, body))
    except TargetProblem as problem:
        return NotAsked(f"no answer: {problem}")
    except (requests.exceptions.RequestException, ValueError) as exc:  # a header requests will not send
        line = " ".join(str(exc).split())[:200]
        return NotAsked(f"the recorded request cannot be sent again ({type(exc).__name__}: {line})")


def _marked(finding: Finding, plan: Plan, answers: dict[Request, Answer | NotAsked]) -> Finding:
    if isinstance(plan, NotAsked):
        return _with(finding, NOT_REASKED, plan.reason)
    request, check = plan
    answer = answers.get(request)
    if answer is None:
        return _with(finding, NOT_REASKED, f"the limit of {MAX_REASKS} re-asks per run was reached")
    if isinstance(answer, NotAsked):
        return _with(finding, NOT_REASKED, answer.reason)
    return _judged(finding, check, answer)


def _judged(finding: Finding, check: rejudge.Check, answer: Answer) -> Finding:
    asked = f"asked again at the end of the run: HTTP {answer.status}"
    if throttling(answer.status, answer.headers.get("Retry-After")):  # past its waits: not handled
        return _with(finding, NOT_REASKED, f"{asked} (throttled): not judged")
    try:
        mismatch = rejudge.judge(check, answer)
    except rejudge.CannotRejudge as exc:
        # The answer is no longer one the check applies to (a 401's challenge, now a 200): the
        # violation it recorded was not seen again.
        return _with(finding, SEEN_ONCE, f"{asked}; {exc}")
    if mismatch is None:
        if server_error(finding.exchange) and finding.exchange is not None:
            return _with(finding, SEEN_ONCE, f"{asked}; the {finding.exchange.status} did not come again")
        return _with(finding, SEEN_ONCE, f"{asked}; {finding.expectation} held")
    return _with(finding, REPRODUCED, f"{asked}; expected {mismatch.expected}; observed {mismatch.observed}")


def _with(finding: Finding, repeat: Repeat, detail: str) -> Finding:
    line = " ".join(detail.split())
    return replace(finding, repeat=repeat, repeat_detail=line if len(line) <= DETAIL else line[: DETAIL - 1] + "…")
