"""The pipeline of every exchange over the whole run: every process's tally merged, and the findings no
test reported made into one record (``pipeline.py`` judges; this module gathers what it judged).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from petstore_contract.core import wire
from petstore_contract.core.records import VIOLATED, Exchange, Finding, TestRecord
from petstore_contract.interface.clauses import CLAUSE_IDS
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.interface.spec import operation_id
from petstore_contract.judging.pipeline import TEST
from petstore_contract.transport import COUNTERS_GLOB


@dataclass(frozen=True)
class Tally:
    """What the pipeline judged in one process, or in all of them (``merge``): requests judged, requests it
    did not judge (``unanswered``), its findings, and every id a create was answered with (``handed``: the
    records ``ids.handed_twice`` reads, as the pipeline wrote them).  The same record on both sides of an
    xdist process's counters file (``to_dict``/``from_dict``)."""

    judged: int = 0
    unanswered: int = 0
    findings: tuple[Finding, ...] = ()
    handed: tuple[JsonObject, ...] = ()

    def to_dict(self) -> JsonObject:
        handed: list[JsonValue] = [*self.handed]
        findings: list[JsonValue] = [f.to_dict() for f in self.findings]
        return {"judged": self.judged, "unanswered": self.unanswered, "findings": findings, "handed": handed}

    @classmethod
    def from_dict(cls, value: JsonLike) -> Tally:
        data = wire.fields(value, "pipeline")
        handed = tuple(_own(wire.fields(item, "handed")) for item in wire.items(data, "handed"))
        findings = tuple(Finding.from_dict(item) for item in wire.items(data, "findings"))
        return cls(wire.number(data, "judged"), wire.number(data, "unanswered"), findings, handed)

    def __add__(self, other: Tally) -> Tally:
        judged, unanswered = self.judged + other.judged, self.unanswered + other.unanswered
        return Tally(judged, unanswered, self.findings + other.findings, self.handed + other.handed)


def _own(data: JsonLike) -> JsonObject:
    copied = wire.copy(data)
    return copied if isinstance(copied, dict) else {}


def merge(directory: str | Path | None, own: JsonLike) -> Tally:
    """Every process's judgements and findings (beside its counters); ``own``: this process's (its
    ``Pipeline.to_dict``), without a shared directory."""
    if directory is None:
        return Tally.from_dict(own)
    total = Tally()
    for path in sorted(Path(directory).glob(COUNTERS_GLOB)):
        tally = json.loads(path.read_text(encoding="utf-8")).get("pipeline")
        if isinstance(tally, dict):
            total += Tally.from_dict(tally)
    return total


def unreported(findings: Sequence[Finding], records: list[TestRecord]) -> TestRecord | None:
    """The pipeline's findings no test reported, as one record: a finding on an exchange and clause a test
    (or another process) reported already is left out."""
    reported = {(_line(f.exchange), f.clause) for r in records for f in r.findings if f.exchange is not None}
    # Operations that serve a request with no credential at all: there the key sent elsewhere (the query,
    # another header) is served for that reason, and auth.missing says so, as the auth tests judge it.
    every = [*(f for r in records for f in r.findings), *findings]
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
