"""The catalog: faulty and compliant Pet Store servers, as data.

Every entry has ``name``, ``kind`` ("fault" or "compliant"), ``quote`` (for a
fault: the sentence it breaks, with its section; for a compliant variant: the
silence it exercises), ``description``, ``store`` ("empty" or "crowded", the
latter run with ``--preload 150``), ``style`` (``app``: Starlette + SQLite on
uvicorn; ``gateway``: the same app behind the reverse proxy of ``proxy.py``;
``hand``: the hand-written ``http.server`` service of ``handmade.py``),
``flags`` (the switches of that style) and, for a fault, ``probe`` (the probe of
``probes.py`` that shows it) and ``demo`` (what the probe sees).
"""

from __future__ import annotations

from faults import FAULTS
from quotes import (
    Q_LIMIT,
    S_CATEGORY,
    S_CODES,
    S_DEFAULT_STATUS,
    S_EXTRA,
    S_HEADERS,
    S_IDS,
    S_NAME,
    S_ORDERS,
    S_PAGING,
    S_RATE,
    A,
    G,
    H,
    compliant,
)

CROWDED_PRELOAD = 150

COMPLIANT = [
    compliant(
        "compliant",
        A,
        S_PAGING,
        "The base: Starlette + SQLite, ids from 1, lists by id ascending, status left "
        "out when omitted, 400 Error for bad query values, 404 for a non-integer petId.",
        store="empty",
    ),
    compliant("compliant_crowded", A, S_PAGING, "The base on a crowded store."),
    compliant("newest_first", A, S_PAGING, "Lists ORDER BY id DESC.", ("newest_first",)),
    compliant(
        "hand_newest_first",
        H,
        S_PAGING,
        "The hand-written in-memory service: lists newest first, its own JSON writer, "
        "Deprecation @1704067200, Sunset at 23:59:59 on 5 Dec 2030 and a deprecation Link.",
    ),
    compliant("hand_by_name", H, S_PAGING, "The hand-written service with lists ordered by name.", ("hand_by_name",)),
    compliant(
        "page_cap_50",
        A,
        Q_LIMIT,
        "Pages hold at most 50 animals even when limit is higher (limit is a maximum).",
        ("page_cap_50",),
    ),
    compliant("extra_fields", A, S_EXTRA, "Pets also carry createdAt, tags and a category object.", ("extra_fields",)),
    compliant(
        "query_422", A, S_CODES, "A bad limit or status value on GET /pets gets 422 with an Error body.", ("query_422",)
    ),
    compliant("petid_text_400", A, S_CODES, "A non-integer petId gets 400 with an Error body.", ("petid_text_400",)),
    compliant(
        "default_available",
        A,
        S_DEFAULT_STATUS,
        "A create without status makes an available animal.",
        ("default_available",),
    ),
    compliant(
        "name_rules",
        A,
        S_NAME,
        "Names must have 1 to 200 characters and no control characters (400 Error).",
        ("name_rules",),
    ),
    compliant(
        "unique_names", A, S_NAME, "A name already in the store gets 400 Error `duplicate_name`.", ("unique_names",)
    ),
    compliant(
        "category_positive",
        A,
        S_CATEGORY,
        "categoryId below 1 gets 400 Error (categories are positive).",
        ("category_positive",),
    ),
    compliant("huge_ids", A, S_IDS, "Ids are not sequential and start above 2^53 (still int64).", ("huge_ids",)),
    compliant(
        "rate_limited",
        A,
        S_RATE,
        "Every 50th request gets 429 with Retry-After: 1 and an Error body.",
        ("rate_limited",),
    ),
    compliant(
        "orders_object",
        A,
        S_ORDERS,
        'GET /store/orders answers an object {"orders": [], "total": 0}.',
        ("orders_object",),
    ),
    compliant(
        "gateway_headers",
        G,
        S_HEADERS,
        "Behind the gateway, which adds Via, X-Request-Id, Cache-Control: no-store and security headers.",
        ("gateway_headers",),
    ),
    compliant("gateway_plain", G, S_HEADERS, "Behind the gateway with no extra headers."),
]

COMPLIANT += [
    compliant(
        "next_link",
        A,
        S_PAGING,
        'Full pages carry Link: <...?limit=N&after=ID>; rel="next" and every list X-Total-Count; '
        "`after` is a cursor (id) the list accepts.",
        ("next_link",),
    ),
    compliant(
        "gateway_read_cache",
        G,
        S_HEADERS,
        "The gateway caches 200 reads of /pets/{id} for 30 s, keyed on path and Authorization "
        "(animals never change: no update operation), and says so in X-Cache.",
        ("gw_private_read_cache",),
    ),
]

COMPLIANT.append(
    compliant(
        "category_catalog",
        A,
        S_CATEGORY,
        "Only the store's categories 1 to 1000 exist: any other categoryId gets 400 Error `unknown_category`.",
        ("category_catalog",),
    )
)

ENTRIES = FAULTS + COMPLIANT
BY_NAME = {entry["name"]: entry for entry in ENTRIES}
