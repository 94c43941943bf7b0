"""The knobs of the reference server: ``Variant``, every choice a conformant server may make where
the interface document is silent, and ``REFERENCE``, the choices the embedded reference makes.

Every knob defaults to the reference behaviour; the command line's knobs (``--preload``,
``--page-cap``, ...) set fields of ``REFERENCE``.  Authentication comes first whatever the knobs: a
missing or invalid key gets 401 before any 400, 404 or 422.

The catalog of differently built servers that honour the document too (the compliant variants the
self-tests run the suite against, and the fault-free servers no suite can judge) is a development
tool of the checkout, not part of the package: ``devtools/catalog/variants.py``.
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
    # Not compliant (an unjudgeable target of the catalog): every request gets 401, the valid key included.
    reject_every_key: bool = False


REFERENCE = Variant(name="reference", summary="the embedded reference server")
