"""Choices a conformant server may make where the interface document is silent.

The reference server runs with ``REFERENCE``; each other entry of ``VARIANTS`` is a
differently built server that honours the document too.  The contract suite must pass
every one of them: that is how the project proves the suite raises no false alarm.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Variant:
    name: str
    summary: str
    # §4.1/§8 give the bounds but not what happens outside them: reject (400) or clamp.
    out_of_range: Literal["reject", "clamp"] = "reject"
    # §2 "Constraints on name: not shown".
    name_max_length: int | None = None
    reject_blank_names: bool = False
    # §3 "The value status takes when it is omitted on creation: not shown".
    default_status: str | None = "available"
    # Unknown body fields: the document does not say.
    reject_unknown_fields: bool = False
    # Extra response fields and paging headers (§4.4: paging beyond limit not shown).
    extra_fields: bool = False
    paging_headers: bool = False
    # Id allocation: only "int64, unique" is stated.
    first_id: int = 1
    id_step: int = 1
    # A page size cap below limit (§4.1: limit is a maximum, not a promise).
    page_cap: int = 100
    newest_first: bool = True
    # §7 "The set of code values: not shown".
    error_code_style: Literal["snake", "upper"] = "snake"
    www_authenticate: str = 'Bearer realm="petstore"'
    latency_seconds: float = 0.0
    extra_headers: dict[str, str] = field(default_factory=dict)


REFERENCE = Variant(name="reference", summary="the embedded reference server")

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        REFERENCE,
        Variant(
            name="clamping",
            summary="clamps out-of-range or malformed limit and ignores an unknown status filter",
            out_of_range="clamp",
        ),
        Variant(
            name="strict-names",
            summary="names of 1-64 characters, blank names and unknown body fields rejected with 400",
            name_max_length=64,
            reject_blank_names=True,
            reject_unknown_fields=True,
        ),
        Variant(
            name="minimal",
            summary="omits a status that was not given, lists oldest first, upper-case error codes, "
            "RFC 6750 error parameters in WWW-Authenticate",
            default_status=None,
            newest_first=False,
            error_code_style="upper",
            www_authenticate='Bearer realm="api", error="invalid_token", error_description="bad key"',
        ),
        Variant(
            name="decorated",
            summary="adds response fields, paging headers and large sparse int64 ids",
            extra_fields=True,
            paging_headers=True,
            first_id=2**62 + 12345,
            id_step=7919,
            extra_headers={"X-Request-Id": "decorated"},
        ),
        Variant(
            name="capped",
            summary="never returns more than 7 animals a page, whatever limit asks",
            page_cap=7,
        ),
        Variant(
            name="slow",
            summary="answers every request 20 ms late, like a remote Staging",
            latency_seconds=0.020,
        ),
    )
}
