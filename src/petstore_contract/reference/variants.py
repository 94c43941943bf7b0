"""Choices a conformant server may make where the interface document is silent.

The reference server runs with ``REFERENCE``; each other entry of ``VARIANTS`` is a
differently built server that honours the document too.  The contract suite must pass
every one of them: that is how the project proves the suite raises no false alarm.

``UNJUDGEABLE`` holds fault-free servers a suite cannot judge (e.g. one that refuses every
key): useful to prove that the suite says "inconclusive" rather than pass or fail.  They are
not compliant variants and are not in ``VARIANTS``.

Every knob defaults to the reference behaviour.  Authentication comes first in every
variant: a missing or invalid key gets 401 before any 400, 404 or 422.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class Variant:
    name: str
    summary: str
    # §4.1/§8 give the bounds but not what happens outside them: reject or clamp.
    out_of_range: Literal["reject", "clamp"] = "reject"
    # The status of a rejected limit or status filter: 400, or 422 (both a 4xx Error).
    invalid_query_status: Literal[400, 422] = 400
    # §2 "Constraints on name (length, format, uniqueness): not shown".
    name_max_length: int | None = None
    reject_blank_names: bool = False
    unique_names: bool = False
    reject_angle_brackets: bool = False
    # §2 "Fields of category records ...: not shown": a server may refuse negative categoryIds.
    positive_categories: bool = False
    # §3 "The value status takes when it is omitted on creation: not shown" (None: left out).
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
    # Another list order (§4.1 shows none): by name, then id (``newest_first`` then orders ties).
    by_name: bool = False
    # Animals in the store before the run starts (other clients' data): preloaded-<n>.
    preload: int = 0
    # Another client adding animals while the run goes on: every background_every-th request
    # the server adds one animal (random status) before answering.
    background_writer: bool = False
    background_every: int = 7
    # §8 "Rate limits and quotas: not shown": every throttle_every-th request gets 429 with
    # Retry-After: 1 and is not processed (0: never).
    throttle_every: int = 0
    # The same, as a gateway's rate limit: a token bucket of rate_limit_per_second tokens a second,
    # holding one second's worth; a request that finds it empty gets 429 with Retry-After and is not
    # processed (0: no limit).  Used by selftests/test_pacing.py; not a variant of its own.
    rate_limit_per_second: float = 0.0
    # §4.4 "GET /store/orders exists. Its parameters and payloads: not shown."
    orders_need_query: bool = False
    # §7 "The set of code values: not shown".
    error_code_style: Literal["snake", "upper"] = "snake"
    www_authenticate: str = 'Bearer realm="petstore"'
    latency_seconds: float = 0.0
    extra_headers: dict[str, str] = field(default_factory=dict)
    # Not compliant (see UNJUDGEABLE): every request gets 401, the valid key included.
    reject_every_key: bool = False


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
            name="limit-422",
            summary="answers an out-of-range or non-integer limit and an unknown status with a 422 Error",
            invalid_query_status=422,
        ),
        Variant(
            name="strict-names",
            summary="names of 1-64 characters, blank names and unknown body fields rejected with 400",
            name_max_length=64,
            reject_blank_names=True,
            reject_unknown_fields=True,
        ),
        Variant(
            name="unique-names",
            summary="rejects a name some animal already has with a 400 Error",
            unique_names=True,
        ),
        Variant(
            name="no-angle-brackets",
            summary="rejects a name holding < or > with a 400 Error",
            reject_angle_brackets=True,
        ),
        Variant(
            name="positive-categories",
            summary="rejects a negative categoryId with a 400 Error",
            positive_categories=True,
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
            name="oldest-first",
            summary="lists the animals oldest first (a page of 100 never shows the 101st animal created)",
            newest_first=False,
        ),
        Variant(
            name="by-name",
            summary="lists the animals by name (code point order), then oldest first",
            newest_first=False,
            by_name=True,
        ),
        Variant(
            name="status-omitted",
            summary="leaves status out of the answer when it was omitted on creation",
            default_status=None,
        ),
        Variant(
            name="default-pending",
            summary="an animal created without status is 'pending'",
            default_status="pending",
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
            name="big-ids",
            summary="hands out odd ids above 2^53, none of them representable as a double",
            first_id=2**53 + 1,
            id_step=2,
        ),
        Variant(
            name="capped",
            summary="never returns more than 7 animals a page, whatever limit asks",
            page_cap=7,
        ),
        Variant(name="capped-10", summary="never returns more than 10 animals a page", page_cap=10),
        Variant(name="capped-50", summary="never returns more than 50 animals a page", page_cap=50),
        Variant(
            name="preloaded",
            summary="starts with 150 animals of other clients, listed newest first",
            preload=150,
        ),
        Variant(
            name="preloaded-oldest-first",
            summary="starts with 150 animals of other clients, listed oldest first",
            preload=150,
            newest_first=False,
        ),
        Variant(
            name="crowded",
            summary="starts with 1200 animals, lists oldest first, at most 50 a page: new animals are never listed",
            preload=1200,
            newest_first=False,
            page_cap=50,
        ),
        Variant(
            name="busy",
            summary="another client adds an animal (random status) every 7th request while the run goes on",
            background_writer=True,
        ),
        Variant(
            name="orders-need-query",
            summary="GET /store/orders answers a 400 Error unless a customerId query parameter is given",
            orders_need_query=True,
        ),
        Variant(
            name="throttling",
            summary="answers every 100th request 429 with Retry-After: 1 and does not process it",
            throttle_every=100,
        ),
        Variant(
            name="slow",
            summary="answers every request 20 ms late, like a remote Staging",
            latency_seconds=0.020,
        ),
    )
}

UNJUDGEABLE: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            name="rejects-every-key",
            summary="answers every request 401 with an Error body and a Bearer challenge, the valid key included",
            reject_every_key=True,
        ),
    )
}
