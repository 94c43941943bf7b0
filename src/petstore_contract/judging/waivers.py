"""Waivers with an expiry: known violations a gate may pass over for a while, never forever.

A committed ``waivers.toml`` (the project root's, or ``--contract-waivers FILE``) lists them::

    [[waiver]]
    clause = "auth.challenge"              # every finding of this clause ...
    reason = "WWW-Authenticate lands with the gateway upgrade (TICKET-123)"
    owner = "team-gateway"
    expires = 2031-03-31                   # a TOML date or "2031-03-31"; valid through that day (UTC)

    [[waiver]]                             # ... or one finding signature (summary.json names each)
    signature = { operation = "GET /store/orders", clause = "auth.challenge", expectation = "bearer-challenge" }
    reason = "..."
    owner = "..."
    expires = 2031-03-31

A waived violation stays *violated* in the verdict and in every report, marked waived; only the
run's exit code passes over it (``Gate.exit_code``: what the verdict would be without the waived
clauses).  A waiver past its date waives nothing and fails the gate (exit 1, named); a waiver that
matched no finding is stale (a warning).  A file that cannot be read as waivers is one line
(``WaiverError``; the plugin makes it a usage error, exit 4).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from petstore_contract.core.records import CONFORMS, NOT_CONFORMANT, VIOLATED, Finding, RunResult, Signature
from petstore_contract.interface.clauses import ClauseId, clause_id
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.judging.verdict import decide

FILE_NAME = "waivers.toml"
EXPIRED_EXIT = 1
TEXT_FIELDS = ("reason", "owner")
KNOWN_FIELDS = frozenset({"clause", "signature", "reason", "owner", "expires"})


class WaiverError(Exception):
    """A waivers file that cannot be used; ``str()`` is one line naming the file and the waiver."""


@dataclass(frozen=True)
class Waiver:
    number: int  # its place in the file, from 1 (messages name it)
    clause: ClauseId
    signature: Signature | None  # None: every finding of ``clause``
    reason: str
    owner: str
    expires: date

    def matches(self, clause: str, finding: Finding) -> bool:
        if self.signature is None:
            return clause == self.clause
        return finding.signature() == self.signature

    def expired(self, today: date) -> bool:
        """Valid through its expiry date."""
        return today > self.expires

    def what(self) -> str:
        return self.clause if self.signature is None else self.signature.text()

    def describe(self) -> str:
        return f"waiver {self.number} ({self.what()}; owner {self.owner}; expires {self.expires}): {self.reason}"

    def to_dict(self) -> JsonObject:
        return {
            "number": self.number,
            "clause": self.clause,
            "signature": dict[str, JsonValue](self.signature.to_dict()) if self.signature is not None else None,
            "reason": self.reason,
            "owner": self.owner,
            "expires": self.expires.isoformat(),
        }


# -- reading the file -------------------------------------------------------------------------------


def for_run(chosen: str | None, root: Path, certifying: bool) -> tuple[str, list[Waiver]] | None:
    """The run's waivers: ``--contract-waivers FILE``, else the project root's waivers.toml when there
    (never for a certification run); None without one."""
    path = Path(chosen) if chosen else root / FILE_NAME
    if not chosen and (certifying or not path.is_file()):
        return None
    return str(path), load(path)


def load(path: str | Path) -> list[Waiver]:
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WaiverError(f"{file}: no such waivers file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise WaiverError(f"{file}: cannot be read ({type(exc).__name__})") from None
    except tomllib.TOMLDecodeError as exc:
        raise WaiverError(f"{file}: not TOML ({exc})") from None
    unknown = set(data) - {"waiver"}
    if unknown:
        raise WaiverError(f"{file}: unknown table {sorted(unknown)[0]!r}; waivers are [[waiver]] tables")
    entries = data.get("waiver", [])
    if not isinstance(entries, list):
        raise WaiverError(f"{file}: 'waiver' must be an array of tables ([[waiver]])")
    try:
        return [_waiver(number, entry) for number, entry in enumerate(entries, 1)]
    except WaiverError as exc:
        raise WaiverError(f"{file}: {exc}") from None


def _waiver(number: int, entry: object) -> Waiver:
    """One ``[[waiver]]`` table, as TOML read it (any value: the file is the user's)."""
    where = f"waiver {number}"
    if not isinstance(entry, dict):
        raise WaiverError(f"{where}: not a table")
    unknown = set(entry) - KNOWN_FIELDS
    if unknown:
        raise WaiverError(f"{where}: unknown field {sorted(unknown)[0]!r} (fields: {', '.join(sorted(KNOWN_FIELDS))})")
    if ("clause" in entry) == ("signature" in entry):
        raise WaiverError(f"{where}: name either a clause or a signature (one of them)")
    texts = {name: _text(entry, name, where) for name in TEXT_FIELDS}
    signature = _signature(entry["signature"], where) if "signature" in entry else None
    text = signature.clause if signature is not None else _text(entry, "clause", where)
    try:
        clause = clause_id(text)
    except ValueError:
        raise WaiverError(f"{where}: unknown clause {text!r}") from None
    return Waiver(number, clause, signature, texts["reason"], texts["owner"], _date(entry.get("expires"), where))


def _text(entry: dict[str, object], name: str, where: str) -> str:
    value = entry.get(name)
    if not isinstance(value, str) or not value.strip():
        raise WaiverError(f"{where}: {name} must be a non-empty string")
    return " ".join(value.split())


def _signature(value: object, where: str) -> Signature:
    if not isinstance(value, dict) or set(value) != set(Signature._fields):
        raise WaiverError(f"{where}: signature must be a table of {', '.join(Signature._fields)}")
    parts = {name: part for name, part in value.items() if isinstance(part, str)}
    if len(parts) != len(value):
        raise WaiverError(f"{where}: the signature's operation, clause and expectation are strings")
    return Signature(**parts)


def _date(value: object, where: str) -> date:
    if isinstance(value, date) and not hasattr(value, "hour"):  # a TOML date, not a date-time
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise WaiverError(f"{where}: expires must be a date (YYYY-MM-DD), got {value!r}")


# -- the gate ---------------------------------------------------------------------------------------


@dataclass
class Waived:
    """The findings one waiver waived on one clause with one signature, by their ids ("<clause>/<n>")."""

    clause: ClauseId
    signature: Signature
    waiver: Waiver
    findings: list[str] = field(default_factory=list)

    def to_dict(self) -> JsonObject:
        findings: list[JsonValue] = list(self.findings)
        return {
            "clause": self.clause,
            "signature": dict[str, JsonValue](self.signature.to_dict()),
            "findings": findings,
            "waiver": self.waiver.to_dict(),
        }


@dataclass
class Gate:
    """What the waivers did to one run: the findings they waived, those expired or stale, the exit code."""

    exit_code: int
    line: str
    file: str
    today: date
    waived: list[Waived] = field(default_factory=list)
    expired: list[Waiver] = field(default_factory=list)
    stale: list[Waiver] = field(default_factory=list)

    def to_dict(self) -> JsonObject:
        return {
            "exit_code": self.exit_code,
            "line": self.line,
            "file": self.file,
            "today": self.today.isoformat(),
            "waived": [w.to_dict() for w in self.waived],
            "expired": [w.to_dict() for w in self.expired],
            "stale": [w.to_dict() for w in self.stale],
        }


def gate(result: RunResult, waivers: list[Waiver], today: date, file: str = FILE_NAME) -> Gate:
    active = [w for w in waivers if not w.expired(today)]
    expired = [w for w in waivers if w.expired(today)]
    groups: dict[tuple[str, Signature, int], Waived] = {}
    cleared = []  # violated clauses whose every finding is waived
    for clause in result.clauses:
        if clause.outcome != VIOLATED:
            continue
        waived = 0
        for fid, finding in clause.numbered():
            waiver = next((w for w in active if w.matches(clause.id, finding)), None)
            if waiver is not None:
                _group(groups, clause.id, finding.signature(), waiver).findings.append(fid)
                waived += 1
        if clause.findings and waived == len(clause.findings):
            cleared.append(clause.id)
    used = {number for _, _, number in groups}
    stale = [w for w in active if w.number not in used]
    exit_code, line = _outcome(result, cleared, expired)
    return Gate(exit_code, line, file, today, list(groups.values()), expired, stale)


def _group(
    groups: dict[tuple[str, Signature, int], Waived], clause: str, signature: Signature, waiver: Waiver
) -> Waived:
    key = (clause, signature, waiver.number)
    if key not in groups:
        groups[key] = Waived(clause_id(clause), signature, waiver)
    return groups[key]


def _outcome(result: RunResult, cleared: list[str], expired: list[Waiver]) -> tuple[int, str]:
    """The exit code and its one line: an expired waiver fails the gate; else the verdict without the
    clauses whose every finding is waived, decided by the verdict's own rules."""
    if expired:
        names = "; ".join(w.describe() for w in expired[:3]) + (" ..." if len(expired) > 3 else "")
        return EXPIRED_EXIT, f"gate fails (exit {EXPIRED_EXIT}): {len(expired)} waiver(s) expired: {names}"
    if result.verdict != NOT_CONFORMANT:
        return result.exit_code, f"gate: exit {result.exit_code}, as the verdict says (no MUST violation to waive)"
    rows = [replace(r, outcome=CONFORMS, findings=[]) if r.id in cleared else r for r in result.clauses]
    without = decide(rows, facts=result.facts, problems=result.problems, records=[], warnings=[])
    if without.verdict == NOT_CONFORMANT:
        return without.exit_code, f"gate fails (exit {without.exit_code}): not waived: {without.reason}"
    words = f"every MUST violation is waived ({', '.join(cleared)}); without them: {without.reason}"
    return without.exit_code, f"gate: exit {without.exit_code}: {words}"
