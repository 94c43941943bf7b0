"""The waivers' outcome (``RunResult.gate``, ``waivers.Gate.to_dict``) as the outputs read it: each waived
signature a ``WaivedEntry``, each waiver one line.  The gate is JSON (it crosses into summary.json as it
is), so every value is narrowed here before an output reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from petstore_contract.core.records import RunResult
from petstore_contract.interface.jsontypes import JsonLike


@dataclass(frozen=True)
class WaivedEntry:
    """One waived signature of a violated clause: what it names, how many findings, by which waiver."""

    clause: str
    operation: str  # "" for a signature without one
    expectation: str
    findings: int
    waiver: str  # the waiver in one line (``waiver_text``)


def waiver_text(waiver: JsonLike) -> str:
    """A waiver (``Waiver.to_dict``) in one line: what it names, its owner and expiry, its reason."""
    signature = _field(waiver, "signature")
    if isinstance(signature, Mapping) and signature:
        what = " · ".join(str(value) for value in signature.values())
    else:
        what = f"{_field(waiver, 'clause')}"
    number, owner, expires = _field(waiver, "number"), _field(waiver, "owner"), _field(waiver, "expires")
    return f"waiver {number} ({what}; owner {owner}; expires {expires}): {_field(waiver, 'reason')}"


def waived_entries(result: RunResult) -> list[WaivedEntry]:
    """The gate's waived signatures (none without a waivers file), read from ``Gate.to_dict``."""
    entries = _field(result.gate, "waived")
    return [_waived_entry(entry) for entry in entries] if isinstance(entries, list) else []


def _waived_entry(entry: JsonLike) -> WaivedEntry:
    signature = _field(entry, "signature")
    operation, findings = _field(signature, "operation"), _field(entry, "findings")
    return WaivedEntry(
        clause=f"{_field(entry, 'clause')}",
        operation=operation if isinstance(operation, str) else "",
        expectation=f"{_field(signature, 'expectation')}",
        findings=len(findings) if isinstance(findings, list) else 0,
        waiver=waiver_text(_field(entry, "waiver")),
    )


def listed_waivers(result: RunResult, name: str) -> list[str]:
    """Each waiver the gate lists under ``name`` ("expired", "stale"), in one line."""
    listed = _field(result.gate, name)
    return [waiver_text(waiver) for waiver in listed] if isinstance(listed, list) else []


def _field(data: JsonLike, name: str) -> JsonLike:
    """``data[name]`` of a JSON object, None for anything else."""
    return data.get(name) if isinstance(data, Mapping) else None


def waived_clauses(result: RunResult) -> dict[str, list[WaivedEntry]]:
    """Clause id -> the waived signatures of its findings (each with its waiver and its count of findings)."""
    found: dict[str, list[WaivedEntry]] = {}
    for entry in waived_entries(result):
        found.setdefault(entry.clause, []).append(entry)
    return found
