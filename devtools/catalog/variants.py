"""The compliant variants and the unjudgeable targets: servers built from the reference's knobs
(``Variant``, ``petstore_contract/reference/variants.py``), each making other choices where the
interface document is silent.

Each entry of ``VARIANTS`` (``REFERENCE`` first) is a differently built server that honours the
document too.  The contract suite must pass every one of them: that is how the project proves the
suite raises no false alarm.

``UNJUDGEABLE`` holds fault-free servers a suite cannot judge (e.g. one that refuses every key):
useful to prove that the suite says "inconclusive" rather than pass or fail.  They are not compliant
variants and are not in ``VARIANTS``.
"""

from __future__ import annotations

from petstore_contract.reference.variants import REFERENCE, Variant

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
        Variant(name="capped-1", summary="never returns more than one animal a page, whatever limit asks", page_cap=1),
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
        # Behind a front (fronts.FRONTED): what a framework or a proxy answers where the document is
        # silent, each refusal a 4xx HTTP fits to the request, with the Error body (§7).
        Variant(
            name="framework-415",
            summary="answers 415 with an Error body to a POST whose body is not declared JSON (aiohttp, Express)",
        ),
        Variant(
            name="framework-422",
            summary="answers 422 with an Error body to a body not declared JSON and to a petId that is no int64 "
            "(FastAPI)",
        ),
        Variant(
            name="proxy-413-64k",
            summary="stands behind a reverse proxy that answers 413 with an Error body to a body over 64 KiB",
        ),
        Variant(
            name="accept-406",
            summary="answers 406 with an Error body to an Accept that admits no JSON",
        ),
        Variant(
            name="router-404-before-auth",
            summary="its router answers a path that names nothing (/pets/abc, /pets/, /PETS) 404 with an Error "
            "body before any key is read (connexion)",
        ),
        Variant(
            name="integral-numbers",
            summary="accepts an integer in another JSON spelling (1e3, 1000.0) as that integer (choices.RULED)",
        ),
        Variant(
            name="slash-redirect",
            summary="its router answers a path with a trailing slash (/pets/, /pets/5/) 308 to the path without "
            "it, before any key is read: a path the document does not describe, HTTP's to decide (fronts.FRONTED)",
        ),
        Variant(
            name="repeated-key-refused",
            summary="refuses a body that gives a member name twice with a 400 Error (choices.STORED)",
        ),
        Variant(
            name="lenient-utf8",
            summary="reads a body's bytes that are not UTF-8 as U+FFFD and creates the animal, as Go's and Node's "
            "decoders do (RFC 8259 §9; choices.STORED)",
        ),
        Variant(
            name="deprecation-parameters",
            summary='sends Deprecation: @1767225600;reason="replaced by GET /pets", a Date with a parameter '
            "(RFC 9651 §3.1.2: parameters on an Item; choices.RULED)",
        ),
        Variant(
            name="router-400-before-auth",
            summary="its router answers a path that names nothing 400 with an Error body before any key is read",
        ),
        Variant(
            name="gzip-by-word",
            summary="its web server gzips an answer whenever Accept-Encoding names gzip, gzip;q=0 too (lighttpd's "
            "mod_deflate): RFC 9110 §12.5.3's SHOULD not met, a warning (fronts.FRONTED)",
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
