"""The pipeline of every exchange over the whole run: every process's tally merged, and the findings no
test reported made into one record (``pipeline.py`` judges; this module gathers what it judged).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from petstore_contract.core.records import VIOLATED, Exchange, Finding, TestRecord
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.spec import operation_id
from petstore_contract.judging.pipeline import TEST
from petstore_contract.transport import COUNTERS_GLOB


def merge(directory: str | Path | None, own: dict[str, Any]) -> dict[str, Any]:
    """Every process's judgements and findings (beside its counters); ``own``: this process's, without a
    shared directory."""
    tallies = [own]
    if directory is not None:
        tallies = []
        for path in sorted(Path(directory).glob(COUNTERS_GLOB)):
            tally = json.loads(path.read_text(encoding="utf-8")).get("pipeline")
            if isinstance(tally, dict):
                tallies.append(tally)
    return {
        "judged": sum(int(t["judged"]) for t in tallies),
        "unanswered": sum(int(t["unanswered"]) for t in tallies),
        "findings": [Finding.from_dict(data) for t in tallies for data in t["findings"]],
        "handed": [handed for t in tallies for handed in t.get("handed", ())],
    }


def unreported(findings: list[Finding], records: list[TestRecord]) -> TestRecord | None:
    """The pipeline's findings no test reported, as one record: a finding on an exchange and clause a test
    (or another process) reported already is left out."""
    reported = {(_line(f.exchange), f.clause) for r in records for f in r.findings if f.exchange is not None}
    # Operations that serve a request with no credential at all: there the key sent elsewhere (the query,
    # another header) is served for that reason, and auth.missing says so, as the auth tests judge it.
    every = [f for r in records for f in r.findings] + findings
    served_bare = {
        _operation(f.exchange) for f in every if f.clause == CLAUSE_IDS.auth_missing and f.exchange is not None
    }
    kept: list[Finding] = []
    for finding in findings:
        if finding.exchange is None:
            continue
        if (_line(finding.exchange), finding.clause) in reported:
            continue
        if (
            finding.clause == CLAUSE_IDS.auth_invalid
            and _bare(finding.exchange)
            and _operation(finding.exchange) in served_bare
        ):
            continue
        reported.add((_line(finding.exchange), finding.clause))
        kept.append(finding)
    if not kept:
        return None
    clauses = tuple(dict.fromkeys(f.clause for f in kept))
    examined = {cid: sum(1 for f in kept if f.clause == cid) for cid in clauses}  # each finding judged an exchange
    return TestRecord(TEST, clauses, VIOLATED, dict.fromkeys(clauses, VIOLATED), kept, examined=examined)


def _bare(exchange: Exchange) -> bool:
    """The request had no Authorization header (what it carried elsewhere aside)."""
    return not any(name.lower() == "authorization" for name, _ in exchange.request_headers)


def _operation(exchange: Exchange) -> str:
    return operation_id(exchange.method, exchange.url)


def _line(exchange: Exchange) -> tuple[str, str, int | None]:
    return (exchange.method, exchange.url, exchange.status)
