"""What the run knows about an exchange that got a 5xx: the service's answer, or the deployment's.

A gateway answers 502/504 for an upstream that is restarting, a load balancer 503 for an instance it
drains: such a page is no answer of the service, and blaming the clause whose test happened to meet
it (``auth.invalid`` for a request with a wrong key) would be false.  RFC 9110 §9.2.2 lets a client
ask a GET or HEAD again, and ``reask`` does so for every finding whose answer was a 5xx.  After it:

- a 5xx that came again is the service's (reproduced): the finding stands on its clause;
- a 5xx the same request did not get again (seen once) is the deployment's: the finding is set
  aside, its clause in that test is undecided (kind ``deployment``, blocking), and the run is
  inconclusive with one line naming what happened — never *not conformant* on it, and never
  *conformant* either: a service that answers 5xx now and then is not passed;
- a 5xx to a write cannot be asked again (RFC 9110 §9.2.2), and its write's outcome is unknown: it is
  set aside with the others when the run has shown the deployment flickering (some 5xx seen once,
  none reproduced), and stands as a finding otherwise (a service that fails on a body, every time).

A 5xx whose body is the document's Error body (``code`` and ``message`` strings, ``status`` the HTTP
status: §2, §7) is the service's answer, whoever relayed it: a gateway or a web server in front of the
service does not know the service's Error schema, and answers in its own form (an HTML page, a text
line, its own JSON).  Not given again to the same request, it is still the service failing a valid
request now and then (§4's Responses tables list no 5xx): its finding stands, seen once or reproduced,
and the run is *not conformant* on its clause.  Only a 5xx in another form is the deployment's
(the line between the two is drawn by ``services_own``).

Findings that are not 5xx keep their judgement, seen once or not.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace

from petstore_contract.core.records import (
    DEPLOYMENT,
    NOT_REASKED,
    REPRODUCED,
    SEEN_ONCE,
    UNDECIDED,
    VIOLATED,
    Exchange,
    Finding,
    Note,
    TestRecord,
)
from petstore_contract.judging.reask import server_error


@dataclass(frozen=True)
class SetAside:
    """The records without the deployment's 5xx findings, and the run's one line about them ("" if none)."""

    records: list[TestRecord]
    problem: str


def set_aside(records: list[TestRecord]) -> SetAside:
    """The 5xx findings that were the deployment's, set aside (see the module's docstring)."""
    fivexx = [f for r in records for f in r.findings if server_error(f.exchange) and not services_own(f.exchange)]
    once = [f for f in fivexx if f.repeat == SEEN_ONCE]
    if not once or any(f.repeat == REPRODUCED for f in fivexx):
        return SetAside(records, "")
    aside = [f for f in fivexx if f.repeat in (SEEN_ONCE, NOT_REASKED)]
    return SetAside([_without(record, aside) for record in records], _line(aside))


def services_own(exchange: Exchange | None) -> bool:
    """The answer carries the document's Error body, its ``status`` the answer's own (§2, §7): the service's."""
    if exchange is None or exchange.status is None:
        return False
    try:
        body = json.loads(exchange.response_body or "")
    except (ValueError, RecursionError):
        return False
    if not isinstance(body, dict):
        return False
    strings = isinstance(body.get("code"), str) and isinstance(body.get("message"), str)
    status = body.get("status")
    return strings and isinstance(status, int) and not isinstance(status, bool) and status == exchange.status


def _without(record: TestRecord, aside: list[Finding]) -> TestRecord:
    kept = [f for f in record.findings if not any(f is a for a in aside)]
    if len(kept) == len(record.findings):
        return record
    judged, notes = dict(record.judged), list(record.notes)
    for finding in record.findings:
        if finding in kept or any(k.clause == finding.clause for k in kept):
            continue
        if judged.get(finding.clause) == VIOLATED:
            judged[finding.clause] = UNDECIDED
            status = finding.exchange.status if finding.exchange is not None else "5xx"
            reason = f"its answer was a {status} of the deployment, not given again to the same request"
            note = Note((finding.clause,), DEPLOYMENT, reason)
            if note not in notes:
                notes.append(note)
    outcome = record.outcome
    if outcome == VIOLATED and VIOLATED not in judged.values():
        outcome = UNDECIDED
    return replace(record, findings=kept, judged=judged, notes=notes, outcome=outcome)


def _line(aside: list[Finding]) -> str:
    requests = {(f.exchange.method, f.exchange.url, f.repeat): f.exchange.status for f in aside if f.exchange}
    statuses = " and ".join(str(status) for status in sorted(Counter(requests.values()), key=str))
    reads = sum(1 for _, _, repeat in requests if repeat == SEEN_ONCE)
    writes = len(requests) - reads
    tail = f" (and to {writes} write{'s' * (writes != 1)}, whose outcome is unknown)" if writes else ""
    return (
        f"the deployment answered {statuses} to {reads} request{'s' * (reads != 1)} that answered as documented "
        f"when asked again{tail}: a deploy or a gateway? rerun"
    )
