"""Round 3's catalog: compliant Pet Store servers on real frameworks, and a few faulty copies.

Every entry has ``name``, ``kind`` ("fault" or "compliant"), ``quote`` (a compliant server: the
silences its framework's choices fill; a fault: the sentence it breaks), ``description``, ``store``
("empty" or "crowded": the store its self-proof uses; the scorer runs a compliant server on both),
``framework`` (the module ``<framework>_app.py`` that builds it), ``proxy`` ("nginx" or None) and
``flags``. A compliant entry lists its ``choices``: the status it answers to each silent-area probe
of ``probes.py`` (the self-proof holds it to them). A fault names the ``probe`` that shows it and
the ``shows`` the answer has there (``html`` or ``text`` or ``json``: a JSON body that is not the Error body).
"""

from __future__ import annotations

from typing import Any

CROWDED_PRELOAD = 150

S_HTTP = (
    "Where the document is silent (§4.4 other operations not shown; §1 names only application/json; "
    "§7 lists 400, 401 and 404 for the documented operations only), HTTP's semantics (RFC 9110 §15.5) "
    "pick the status; §7 still asks the Error body."
)
Q_ERROR = (
    '§7: "All error responses use the Error body (`code`, `message`, `status`; all required). '
    '`status` repeats the HTTP status code."'
)


def compliant(name: str, framework: str, description: str, choices: dict[str, int], **extra: Any) -> dict[str, Any]:
    entry = {"name": name, "kind": "compliant", "quote": S_HTTP, "description": description, "store": "crowded"}
    return entry | {"framework": framework, "proxy": None, "flags": [], "choices": choices} | extra


def fault(name: str, base: str, description: str, flag: str, probe: str, shows: str, **extra: Any) -> dict[str, Any]:
    parent = BY_NAME[base]
    entry = {"name": name, "kind": "fault", "quote": Q_ERROR, "description": description, "store": "empty"}
    entry |= {"framework": parent["framework"], "proxy": parent["proxy"], "flags": [flag]}
    return entry | {"probe": probe, "shows": shows, "base": base} | extra


# The silent-area probes (probes.SILENT), by the status each server answers. Every 4xx carries the Error body.
COMPLIANT = [
    compliant(
        "aiohttp",
        "aiohttp",
        "aiohttp.web on its own server: key middleware first, a regex route for petId, 415 for a "
        "non-JSON POST, aiohttp's 405 and 413 (client_max_size 1 MiB) with the Error body.",
        {"malformed_id_no_key": 401, "malformed_id": 404, "text_body": 415, "delete": 405, "html_only": 200}
        | {"big_body": 201, "limit_zero": 400},
    ),
    compliant(
        "falcon_waitress",
        "falcon",
        "Falcon on waitress with the tutorial's middleware: key first, then 406 for an Accept without "
        "JSON and 415 for a non-JSON POST; Falcon's int converter with int64 bounds; HTTPInvalidParam 400.",
        {"malformed_id_no_key": 401, "malformed_id": 404, "text_body": 415, "delete": 405, "html_only": 406}
        | {"big_body": 201, "limit_zero": 400},
    ),
    compliant(
        "django_waitress",
        "django",
        "Plain Django views on waitress: a registered int64 path converter (no route otherwise: 404 "
        "before the key, checked by a view decorator), require_http_methods 405, any media type read "
        "as JSON, lists newest first, JSON handler400/404/500.",
        {"malformed_id_no_key": 404, "malformed_id": 404, "text_body": 201, "delete": 405, "html_only": 200}
        | {"big_body": 201, "limit_zero": 400},
    ),
    compliant(
        "flask_sqlalchemy",
        "flask",
        "Flask over SQLAlchemy Core (SQLite file) on Werkzeug's threaded server: key in before_request, "
        "webargs' 422 for bad query values, get_json's 415 for a non-JSON POST, Werkzeug's 404/405.",
        {"malformed_id_no_key": 401, "malformed_id": 404, "text_body": 415, "delete": 405, "html_only": 200}
        | {"big_body": 201, "limit_zero": 422},
    ),
    compliant(
        "litestar_uvicorn",
        "litestar",
        "Litestar on uvicorn: {pet_id:str} read as a decimal int64 (401 without the key, then 404), the "
        "router's 405, Litestar's ValidationException 400 (the body converted strictly), any media type read as JSON.",
        {"malformed_id_no_key": 401, "malformed_id": 404, "text_body": 201, "delete": 405, "html_only": 200}
        | {"big_body": 201, "limit_zero": 400},
    ),
    compliant(
        "tornado",
        "tornado",
        "Tornado on its HTTPServer: key in prepare(), a non-integer petId 400, limit clamped into "
        "1..100, any media type read as JSON, write_error with the Error body and Allow, ids from 1000.",
        {"malformed_id_no_key": 401, "malformed_id": 400, "text_body": 201, "delete": 405, "html_only": 200}
        | {"big_body": 201, "limit_zero": 200},
    ),
    compliant(
        "bottle_nginx",
        "bottle",
        "Bottle on wsgiref behind nginx (client_max_body_size 64k, error_page 413/414/502/504 with the "
        "Error body): 413 at the proxy, 404 before the key for a non-integer petId, 400 for a non-JSON POST.",
        {"malformed_id_no_key": 404, "malformed_id": 404, "text_body": 400, "delete": 405, "html_only": 200}
        | {"big_body": 413, "limit_zero": 400},
        proxy="nginx",
    ),
]
BY_NAME = {entry["name"]: entry for entry in COMPLIANT}

FAULTS = [
    fault(
        "aiohttp_text_404",
        "aiohttp",
        "No error middleware: aiohttp's own exceptions keep their text/plain bodies, "
        '"404: Not Found" for a petId the route does not match (/pets/abc, with the key).',
        "text_errors",
        "malformed_id",
        "text",
    ),
    fault(
        "django_html_404",
        "django_waitress",
        "No handler404 in the URLconf: a petId the converter does not match gets Django's HTML 'Not Found' page.",
        "html_404",
        "malformed_id",
        "html",
    ),
    fault(
        "litestar_default_404",
        "litestar_uvicorn",
        "Error-body handlers for ValidationException and NotAuthorizedException only: the router's 404 "
        '(and Litestar\'s own 400 for malformed JSON) keep Litestar\'s {"status_code": 404, "detail": "Not Found"}.',
        "default_errors",
        "malformed_id",
        "json",
    ),
    fault(
        "nginx_html_413",
        "bottle_nginx",
        "nginx without its error_page lines: a body over client_max_body_size gets nginx's HTML 413 page.",
        "nginx_html_pages",
        "big_body",
        "html",
    ),
]

ENTRIES = COMPLIANT + FAULTS
BY_NAME = {entry["name"]: entry for entry in ENTRIES}
