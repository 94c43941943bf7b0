#!/usr/bin/env python3
"""A stand-alone Pet Store server whose behaviour is chosen by a catalog entry.

    PETSTORE_API_KEY=secret python selftests/blind/server.py --variant NAME [--port 0] [--preload N]

Written from the interface document only, with the standard library only. The
first line on stdout is the base URL; the server stops when killed or when its
stdin closes. `--list` prints the catalog as JSON lines.
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import html
import itertools
import json
import math
import os
import random
import re
import signal
import sys
import threading
import unicodedata
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import catalog

STATUSES = ("available", "pending", "sold")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
DEPRECATED_SINCE = 1704067200  # 2024-01-01T00:00:00Z: the operation has been deprecated since then
REMOVAL_EPOCH = 1922659200  # 2030-12-05T00:00:00Z, the removal date the document gives
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
MAX_BODY = 1 << 20
JSON_TYPE = "application/json"
NOTHING = object()  # a status filter that matches no animal at all
DEFAULT_TYPE = object()  # "the usual JSON Content-Type" (None means: send none)

# Header values of the deprecation faults (the base sends "@1704067200" and SUNSET).
DEPRECATION_VALUES = {
    "deprecation_true": "true",
    "deprecation_httpdate": "Mon, 01 Jan 2024 00:00:00 GMT",
    "deprecation_future": f"@{REMOVAL_EPOCH}",
}
SUNSET_VALUES = {"sunset_wrong_date": "Fri, 06 Dec 2030 00:00:00 GMT", "sunset_iso_format": "2030-12-05T00:00:00Z"}

# How stored names and category ids get mangled by some faults.
NAME_MANGLERS: dict[str, Callable[[str], str]] = {
    "name_trimmed": str.strip,
    "name_astral_dropped": lambda s: "".join(c for c in s if ord(c) <= 0xFFFF),
    "name_nfc_normalized": lambda s: unicodedata.normalize("NFC", s),
    "name_html_escaped": lambda s: html.escape(s, quote=False),
    "name_truncated_32": lambda s: s[:32],
}
CATEGORY_MANGLERS: dict[str, Callable[[int], int]] = {
    "categoryid_float_rounding": lambda n: int(float(n)),
    "categoryid_int32_wrap": lambda n: (n + 2**31) % 2**32 - 2**31,
}
# Operations some faults leave without authentication.
OPEN_OPERATIONS = {"auth_getpet_open": "get", "auth_create_open": "create", "auth_orders_open": "orders"}


def _error_status_string(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "status": str(body["status"])}


def _error_without_code(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != "code"}


# Error-body faults, applied in this order to {code, message, status}.
ERROR_TWEAKS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("error_codes_alt", lambda b: {**b, "code": f"PETSTORE-{b['status']}"}),
    ("error_extra_fields", lambda b: {**b, "details": [], "requestId": "req-blind"}),
    ("error_status_string", _error_status_string),
    ("error_code_missing", _error_without_code),
    ("error_status_always_400", lambda b: {**b, "status": 400}),
    ("error_wrapped", lambda b: {"error": b}),
)
CRASH_PAGE = (
    b"<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1>"
    b"<pre>Traceback (most recent call last):\n  ...\nTypeError: unexpected value</pre></body></html>"
)


class ApiError(Exception):
    """An answer with the Error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Crash(Exception):
    """A deliberate fault: the handler 'crashes' and answers an HTML 500 page."""


class Hangup(Exception):
    """A deliberate fault: the connection is closed without an answer."""


class Store:
    """The animals, in creation order, plus the id counter."""

    def __init__(self, flags: frozenset[str]) -> None:
        self.flags = flags
        self.lock = threading.Lock()
        self.pets: list[dict[str, Any]] = []
        self.by_id: dict[int, dict[str, Any]] = {}
        self.created = 0
        self.cached: list[dict[str, Any]] | None = None
        self.first_id = 2**63 if "id_above_int64" in flags else 2**53 + 1 if "big_ids" in flags else 1

    def add(self, pet: dict[str, Any], client_id: Any = None) -> dict[str, Any]:
        with self.lock:
            pet = {"id": self._next_id(client_id), **pet}
            # store_full_drops_creates: answers as if stored, but the store is "full" at 100.
            if not ("store_full_drops_creates" in self.flags and len(self.pets) >= 100):
                self.pets.append(pet)
                self.by_id.setdefault(pet["id"], pet)
            return pet

    def _next_id(self, client_id: Any) -> int:
        self.created += 1
        if "create_client_id" in self.flags and type(client_id) is int:
            return client_id
        if "id_reuse_after_writes" in self.flags:
            return (self.created - 1) % 8 + 1
        if "random_ids" in self.flags:
            return next(n for n in iter(lambda: random.randrange(1, INT64_MAX), None) if n not in self.by_id)
        return self.first_id + self.created - 1

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            if "list_stale_cache" in self.flags:
                self.cached = self.cached if self.cached is not None else list(self.pets)
                return list(self.cached)
            return list(self.pets)

    def find(self, pet_id: int) -> dict[str, Any] | None:
        with self.lock:
            if "getpet_off_by_one" in self.flags:
                pet_id += 1  # the classic 1-based id used as a 0-based index
            if "getpet_crowded_404" in self.flags:
                return next((p for p in self.pets[:100] if p["id"] == pet_id), None)
            return self.by_id.get(pet_id)

    def has_name(self, name: str) -> bool:
        with self.lock:
            return any(p["name"] == name for p in self.pets)

    def __len__(self) -> int:
        return len(self.pets)


class PetStoreServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, port: int, flags: frozenset[str], key: str) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.flags, self.key, self.store = flags, key, Store(flags)
        self.requests, self.anonymous = itertools.count(1), itertools.count(1)

    def preload(self, count: int) -> None:
        for i in range(count):
            self.store.add({"name": f"Animal {i + 1}", "categoryId": i % 7 + 1, "status": STATUSES[i % 3]})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: PetStoreServer
    routes: tuple[tuple[str, re.Pattern[str], str], ...] = (
        ("GET", re.compile(r"/v1/pets"), "list_pets"),
        ("POST", re.compile(r"/v1/pets"), "create_pet"),
        ("GET", re.compile(r"/v1/pets/([^/]+)"), "get_pet"),
        ("GET", re.compile(r"/v1/store/orders"), "list_orders"),
    )

    # --- plumbing ---
    def on(self, flag: str) -> bool:
        return flag in self.server.flags

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: a test run starts many servers

    def do_GET(self) -> None:
        self.dispatch()

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = do_GET

    def dispatch(self) -> None:
        url = urlsplit(self.path)
        self.query = parse_qs(url.query, keep_blank_values=True)
        try:
            self.body = self.read_body()
            if self.on("flaky_every_7th_500") and next(self.server.requests) % 7 == 0:
                raise ApiError(500, "internal_error", "temporary failure")
            self.route(url.path)
        except ApiError as err:
            self.fail(err.status, err.code, err.message)
        except Crash:
            self.send_raw(500, CRASH_PAGE, "text/html; charset=utf-8")
        except Hangup:
            self.close_connection = True

    def route(self, path: str) -> None:
        allowed = [method for method, pattern, _ in self.routes if pattern.fullmatch(path)]
        for method, pattern, name in self.routes:
            match = pattern.fullmatch(path)
            if match and method == self.command:
                getattr(self, name)(*match.groups())
                return
        if allowed:
            self.fail(405, "method_not_allowed", f"{self.command} is not allowed here", [("Allow", ", ".join(allowed))])
            return
        self.fail(404, "not_found", "no such resource")

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self.read_chunked()
        length = self.headers.get("Content-Length", "0").strip() or "0"
        if not re.fullmatch(r"[0-9]{1,15}", length):
            self.close_connection = True
            raise ApiError(400, "bad_request", "invalid Content-Length")
        if int(length) > MAX_BODY:
            self.close_connection = True  # the unread body would poison the connection
            raise ApiError(413, "payload_too_large", f"bodies are limited to {MAX_BODY} bytes")
        return self.rfile.read(int(length))

    def read_chunked(self) -> bytes:
        data = b""
        while True:
            size_line = self.rfile.readline(100).split(b";")[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                self.close_connection = True
                raise ApiError(400, "bad_request", "invalid chunked body") from None
            if size < 0 or len(data) + size > MAX_BODY:
                self.close_connection = True  # the rest of the body stays unread
                raise ApiError(413 if size > 0 else 400, "bad_request", "invalid or too large chunked body")
            if size == 0:
                self.rfile.readline(100)  # the CRLF after the last chunk (trailers are not supported)
                return data
            data += self.rfile.read(size)
            self.rfile.readline(100)

    # --- answers ---
    def encode(self, payload: Any) -> bytes:
        if self.on("ascii_pretty_json"):
            return json.dumps(payload, ensure_ascii=True, indent=2).encode("ascii")
        text = json.dumps(payload, ensure_ascii=False)
        return text.encode("latin-1", errors="replace") if self.on("latin1_body") else text.encode("utf-8")

    def json_type(self, status: int) -> str:
        if status >= 400 and self.on("error_problem_json"):
            return "application/problem+json"
        return JSON_TYPE + "; charset=utf-8" if self.on("charset_param") else JSON_TYPE

    def reply(
        self,
        status: int,
        payload: Any,
        headers: list[tuple[str, str]] | None = None,
        ctype: Any = DEFAULT_TYPE,
        raw: bytes | None = None,
    ) -> None:
        """Send `payload` as JSON (or `raw` as is); ctype None sends no Content-Type at all."""
        body = raw if raw is not None else self.encode(payload)
        self.send_raw(status, body, self.json_type(status) if ctype is DEFAULT_TYPE else ctype, headers)

    def fail(self, status: int, code: str, message: str, headers: list[tuple[str, str]] | None = None) -> None:
        body: Any = {"code": code, "message": message, "status": status}
        for flag, tweak in ERROR_TWEAKS:
            body = tweak(body) if self.on(flag) else body
        self.reply(status, body, headers)

    def send_raw(
        self, status: int, body: bytes, ctype: str | None, headers: list[tuple[str, str]] | None = None
    ) -> None:
        self.send_response(status)
        if ctype is not None:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or []) + self.extra_headers():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def extra_headers(self) -> list[tuple[str, str]]:
        if not self.on("extra_headers"):
            return []
        return [
            ("X-Request-Id", f"req-{id(self):x}"),
            ("Cache-Control", "no-store"),
            ("RateLimit-Limit", "1000"),
            ("RateLimit-Remaining", "999"),
        ]

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (bad request line, ...) also answer with the Error body."""
        self.close_connection = True
        body = json.dumps({"code": "bad_request", "message": message or "bad request", "status": code}).encode()
        self.send_response(code, message)
        self.send_header("Content-Type", JSON_TYPE)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if getattr(self, "command", None) != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(body)

    # --- authentication ---
    def authorized(self, operation: str) -> bool:
        """True when the request may go on; otherwise the 401 has been answered."""
        if any(self.on(flag) and operation == op for flag, op in OPEN_OPERATIONS.items()):
            return True
        verdict = self.credential()
        if verdict == "ok":
            return True
        if self.on("auth_intermittent_bypass") and next(self.server.anonymous) % 5 == 0:
            return True
        self.refuse(verdict)
        return False

    def credential(self) -> str:
        """'ok', 'missing' or 'invalid'."""
        if self.on("auth_query_key") and self.query.get("api_key", [""])[0] == self.server.key:
            return "ok"
        header = self.headers.get("Authorization", "").strip()
        if not header:
            return "missing"
        scheme, _, token = header.partition(" ")
        return "ok" if self.scheme_ok(scheme) and self.token_ok(token.strip()) else "invalid"

    def scheme_ok(self, scheme: str) -> bool:
        if self.on("auth_any_scheme"):
            return True
        if self.on("auth_scheme_case_sensitive"):
            return scheme == "Bearer"
        return scheme.lower() == "bearer"  # RFC 9110 §11.1: the scheme is case-insensitive

    def token_ok(self, token: str) -> bool:
        key = self.server.key
        if not token:
            return False
        if self.on("auth_any_token"):
            return True
        if self.on("auth_trailing_garbage"):
            return token[: len(key)] == key
        if self.on("auth_key_case_insensitive"):
            token, key = token.lower(), key.lower()
        return hmac.compare_digest(token.encode("utf-8", "replace"), key.encode("utf-8"))

    def refuse(self, verdict: str) -> None:
        status = 403 if verdict == "invalid" and self.on("auth_403_wrong_key") else 401
        headers = [] if self.on("auth_no_challenge") else [("WWW-Authenticate", self.challenge(verdict))]
        if self.on("auth_401_empty_body"):
            self.send_raw(status, b"", None, headers)
            return
        self.fail(status, "unauthorized", "missing or invalid API key", headers)

    def challenge(self, verdict: str) -> str:
        value = ("Basic" if self.on("auth_basic_challenge") else "Bearer") + ' realm="petstore"'
        if verdict == "invalid" and self.on("bearer_error_param"):
            value += ', error="invalid_token", error_description="The access token is invalid"'
        return value

    # --- GET /pets ---
    def list_pets(self) -> None:
        if not self.authorized("list"):
            return
        if self.on("crowded_list_500") and len(self.server.store) > 120:
            raise ApiError(500, "internal_error", "listing failed")
        limit, wanted = self.page_limit(), self.status_filter()
        pets = self.filtered(wanted)
        page, rest = self.cut(pets, limit)
        store_size = len(self.server.store)
        if self.on("page_duplicate") and store_size > 50 and len(page) >= 2:
            page[-1] = page[-2]
        body: Any = [self.view(p, in_list=True) for p in page]
        headers = self.list_headers(page, rest, limit)
        body = {"items": body} if self.on("list_wrapped") else body
        ctype = "text/plain; charset=utf-8" if self.on("list_text_plain") else DEFAULT_TYPE
        self.reply(200, body, headers, ctype=ctype)

    def page_limit(self) -> int | None:
        """The page size; None means no cut at all (a fault)."""
        raw = self.query.get("limit", [None])[0]
        if raw is None:
            return 50 if self.on("default_limit_50") else 20
        if self.on("limit_ignored"):
            return 20
        if not re.fullmatch(r"[+-]?[0-9]{1,30}", raw):
            if self.on("limit_text_crash"):
                raise Crash
            raise self.query_error("limit must be an integer between 1 and 100")
        return self.checked_limit(int(raw))

    def checked_limit(self, n: int) -> int | None:
        if n == 0 and self.on("limit_zero_unlimited"):
            return None
        if self.on("limit_clamped"):
            return min(max(n, 1), 100)
        low = 2 if self.on("limit_1_rejected") else 1
        high = 99 if self.on("limit_100_rejected") else 1000 if self.on("limit_above_100_honoured") else 100
        if not low <= n <= high:
            raise self.query_error("limit must be an integer between 1 and 100")
        return n

    def query_error(self, message: str) -> ApiError:
        return ApiError(422 if self.on("query_422") else 400, "invalid_query", message)

    def status_filter(self) -> Any:
        raw = self.query.get("status", [None])[0]
        if raw is None or raw in STATUSES:
            return raw
        if self.on("unknown_status_empty"):
            return NOTHING
        raise self.query_error("status must be one of available, pending, sold")

    def filtered(self, wanted: Any) -> list[dict[str, Any]]:
        pets = self.server.store.snapshot()
        if wanted is NOTHING:
            return []
        if wanted is None or self.on("filter_ignored"):
            return pets
        if wanted == "sold" and self.on("filter_drops_sold"):
            return []
        accepted = {wanted, "sold"} if wanted == "pending" and self.on("filter_leaks_sold") else {wanted}
        leak_from = 60 if self.on("crowded_filter_leak") else len(pets)
        return [p for i, p in enumerate(pets) if i >= leak_from or p.get("status") in accepted]

    def cut(self, pets: list[dict[str, Any]], limit: int | None) -> tuple[list[dict[str, Any]], int]:
        """The page and how many animals remain after it."""
        if self.on("newest_first"):
            pets = pets[::-1]
        if self.on("link_next"):
            pets = self.after_cursor(pets)
        if limit is None:
            return pets, 0
        size = limit + 1 if self.on("limit_off_by_one") else limit
        size = min(size, 25) if self.on("page_cap_25") else size
        return pets[:size], max(len(pets) - size, 0)

    def after_cursor(self, pets: list[dict[str, Any]]) -> list[dict[str, Any]]:
        raw = self.query.get("after", [""])[0]
        ids = [p["id"] for p in pets]
        if not re.fullmatch(r"[0-9]{1,19}", raw) or int(raw) not in ids:
            return pets
        return pets[ids.index(int(raw)) + 1 :]

    def list_headers(self, page: list[dict[str, Any]], rest: int, limit: int | None) -> list[tuple[str, str]]:
        headers = self.deprecation_headers() if self.on("deprecation_on_list") else []
        if self.on("link_next") and rest and page:
            query = {k: v[0] for k, v in self.query.items() if k in ("status", "limit")}
            query.update(limit=str(limit), after=str(page[-1]["id"]))
            headers.append(("Link", f'</v1/pets?{urlencode(query)}>; rel="next"'))
        return headers

    # --- POST /pets ---
    def create_pet(self) -> None:
        if self.on("auth_validation_first"):
            new = self.new_pet()
            if not self.authorized("create"):
                return
        else:
            if not self.authorized("create"):
                return
            new = self.new_pet()
        stored, echoed = self.stored_and_echoed(new)
        pet = self.server.store.add(stored, new.get("id"))
        body = self.view({**pet, "name": echoed["name"]})
        if self.on("create_missing_category"):
            body.pop("categoryId", None)
        status = 200 if self.on("create_200") else 201
        self.reply(status, body, ctype=None if self.on("create_no_content_type") else DEFAULT_TYPE)

    def new_pet(self) -> dict[str, Any]:
        """The validated NewPet (plus any client `id`), or an ApiError / deliberate fault."""
        data = self.json_body()
        if not isinstance(data, dict):
            if isinstance(data, list) and self.on("body_array_crash"):
                raise Crash
            raise self.invalid("the body must be a JSON object (NewPet)")
        if self.on("photo_urls_required") and not isinstance(data.get("photoUrls"), list):
            raise self.invalid("photoUrls is required")
        new = {"name": self.checked_name(data), "categoryId": self.checked_category(data), "id": data.get("id")}
        if "status" in data:
            new["status"] = self.checked_status(data["status"])
        return new

    def invalid(self, message: str) -> ApiError:
        return ApiError(422 if self.on("create_422") else 400, "invalid_body", message)

    def json_body(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"), parse_constant=_no_constants)
        except (UnicodeDecodeError, ValueError, RecursionError):
            if self.on("body_bad_json_hangup"):
                raise Hangup from None
            if self.on("body_form_accepted"):
                return _form(self.body)
            raise self.invalid("the body is not valid JSON") from None

    def checked_name(self, data: dict[str, Any]) -> Any:
        if "name" not in data and self.on("name_missing_accepted"):
            return ""
        name = data.get("name")
        if name is None and "name" in data and self.on("name_null_accepted"):
            return None
        if type(name) in (int, float) and self.on("name_number_coerced"):
            return str(name)
        if not isinstance(name, str):
            raise self.invalid("name is required and must be a string")
        if not _encodable(name):
            raise self.invalid("name must be valid Unicode (no lone surrogates)")
        self.name_policy(name)
        return name

    def name_policy(self, name: str) -> None:
        """Constraints the document leaves open; only some compliant variants have them."""
        if self.on("name_length_40") and not 1 <= len(name) <= 40:
            raise self.invalid("name must be 1 to 40 characters long")
        if self.on("unique_names") and self.server.store.has_name(name):
            raise self.invalid("an animal with this name already exists")

    def checked_category(self, data: dict[str, Any]) -> int:
        if "categoryId" not in data and self.on("categoryid_missing_accepted"):
            return 0
        value = data.get("categoryId")
        coerced = self.coerced_category(value)
        if coerced is not None:
            return coerced
        if type(value) is not int:
            raise self.invalid("categoryId is required and must be an integer")
        if not INT64_MIN <= value <= INT64_MAX and not self.on("categoryid_out_of_int64_accepted"):
            raise self.invalid("categoryId must fit in int64")
        return value

    def coerced_category(self, value: Any) -> int | None:
        """What the type-coercing faults make of a non-integer categoryId."""
        if isinstance(value, bool) and self.on("categoryid_bool_accepted"):
            return int(value)
        if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,18}", value) and self.on("categoryid_string_coerced"):
            return int(value)
        if isinstance(value, float) and math.isfinite(value) and self.on("categoryid_float_truncated"):
            return int(value)
        return None

    def checked_status(self, value: Any) -> Any:
        if isinstance(value, str) and self.on("status_case_folded"):
            value = value.lower()
        if isinstance(value, str) and (value in STATUSES or self.on("status_unknown_accepted")):
            return value
        raise self.invalid("status must be one of available, pending, sold")

    def stored_and_echoed(self, new: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The animal as stored, and the fields echoed in the 201 (they differ for some faults)."""
        name, category = new["name"], new["categoryId"]
        for flag, mangle in NAME_MANGLERS.items():
            name = mangle(name) if self.on(flag) and isinstance(name, str) else name
        for flag, wrap in CATEGORY_MANGLERS.items():
            category = wrap(category) if self.on(flag) else category
        stored: dict[str, Any] = {"name": name, "categoryId": category}
        stored.update(self.stored_status(new))
        echoed = dict(stored)
        if self.on("name_stored_lowercase") and isinstance(name, str):
            stored["name"] = name.lower()
        return stored, echoed

    def stored_status(self, new: dict[str, Any]) -> dict[str, Any]:
        if "status" in new:
            sold_as_pending = new["status"] == "sold" and self.on("status_sold_stored_pending")
            return {"status": "pending" if sold_as_pending else new["status"]}
        if self.on("status_null_default"):
            return {"status": None}
        return {"status": "available"} if self.on("default_status_available") else {}

    def view(self, pet: dict[str, Any], in_list: bool = False) -> dict[str, Any]:
        """An animal as sent on the wire."""
        out = dict(pet)
        if self.on("id_string"):
            out["id"] = str(out["id"])
        if self.on("pet_extra_fields"):
            out.update(tags=[], createdAt="2026-01-01T00:00:00Z")
        if in_list and self.on("list_snake_case"):
            out["category_id"] = out.pop("categoryId")
        return out

    # --- GET /pets/{petId} (deprecated) ---
    def get_pet(self, raw_id: str) -> None:
        if not self.authorized("get"):
            return
        pet_id = self.parsed_pet_id(raw_id)
        pet = self.server.store.find(pet_id) if pet_id is not None else None
        headers = self.deprecation_headers()
        if pet is None:
            self.missing_pet(pet_id, headers)
            return
        body: Any = self.view(pet)
        if self.on("getpet_empty_body"):
            self.reply(200, None, headers, raw=b"")
            return
        if self.on("getpet_python_repr"):
            self.reply(200, None, headers, raw=repr(body).encode("utf-8"))
            return
        self.reply(200, [body] if self.on("getpet_array") else body, headers)

    def parsed_pet_id(self, raw: str) -> int | None:
        if not re.fullmatch(r"-?[0-9]{1,19}", raw):
            return None
        if self.on("getpet_big_id_float"):
            return int(float(raw))
        value = int(raw)
        return value if INT64_MIN <= value <= INT64_MAX else None

    def missing_pet(self, pet_id: int | None, headers: list[tuple[str, str]]) -> None:
        if self.on("getpet_invents"):
            invented = {"id": pet_id or 1, "name": "doggie", "categoryId": 1, "status": "available"}
            self.reply(200, invented, headers)
        elif self.on("getpet_null_body"):
            self.reply(200, None, headers)
        elif self.on("getpet_400_unknown"):
            self.fail(400, "bad_request", "no animal with this id", headers)
        else:
            self.fail(404, "not_found", "no animal with this id", headers)

    def deprecation_headers(self) -> list[tuple[str, str]]:
        headers: list[tuple[str, str]] = []
        if not self.on("deprecation_missing"):
            flag = next((f for f in DEPRECATION_VALUES if self.on(f)), None)
            headers.append(("Deprecation", DEPRECATION_VALUES[flag] if flag else f"@{DEPRECATED_SINCE}"))
        if not self.on("no_sunset"):
            flag = next((f for f in SUNSET_VALUES if self.on(f)), None)
            headers.append(("Sunset", SUNSET_VALUES[flag] if flag else SUNSET))
        if self.on("deprecation_links"):
            headers.append(("Link", '<https://petstore.invalid/deprecations/getPet>; rel="deprecation"'))
            headers.append(("Link", '<https://petstore.invalid/sunset-policy>; rel="sunset"'))
            headers.append(("Link", '</v1/pets>; rel="successor-version"'))
        return headers

    # --- GET /store/orders ---
    def list_orders(self) -> None:
        if not self.authorized("orders"):
            return
        if self.on("orders_404"):
            raise ApiError(404, "not_found", "no such resource")
        if self.on("orders_html"):
            self.send_raw(200, b"<html><body><p>No orders yet.</p></body></html>", "text/html; charset=utf-8")
            return
        self.reply(200, {"orders": [], "total": 0} if self.on("orders_object") else [])


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _form(body: bytes) -> dict[str, Any]:
    """body_form_accepted: read a form body as if it were the JSON object."""
    fields = {k: v[0] for k, v in parse_qs(body.decode("latin-1")).items()}
    return {k: int(v) if re.fullmatch(r"-?[0-9]{1,18}", v) and k != "name" else v for k, v in fields.items()}


# --- command line ---
class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, no usage block
        sys.stderr.write(f"server.py: error: {message}\n")
        sys.exit(2)


def _bounded_int(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not re.fullmatch(r"[0-9]{1,9}", text) or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got {text!r}")
        return int(text)

    return parse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="server.py", description="Blind Pet Store server (one catalog entry).")
    parser.add_argument("--variant", help="catalog entry name (see --list)")
    parser.add_argument("--port", type=_bounded_int(0, 65535), default=0, help="loopback port, 0 = any free")
    parser.add_argument("--preload", type=_bounded_int(0, 100000), default=0, help="animals in the store at start")
    parser.add_argument("--list", action="store_true", help="print the catalog as JSON lines and exit")
    parser.add_argument("--ignore-stdin", action="store_true", help="keep serving when stdin closes")
    args = parser.parse_args(argv)
    if not args.list and args.variant is None:
        parser.error("--variant is required (see --list)")
    if args.variant is not None and args.variant not in catalog.BY_NAME:
        parser.error(f"unknown variant {args.variant!r} (see --list)")
    return args


def api_key() -> str:
    key = os.environ.get("PETSTORE_API_KEY", "")
    if not key or any(c.isspace() for c in key):
        sys.stderr.write("server.py: error: set PETSTORE_API_KEY to the API key (non-empty, no spaces)\n")
        sys.exit(2)
    return key


def stop_when_stdin_closes(server: PetStoreServer) -> None:
    # os.read on the raw descriptor, not sys.stdin: a daemon thread blocked inside a buffered
    # reader makes the interpreter abort at exit (SIGTERM path) while it holds the buffer's lock.
    def watch(fd: int) -> None:
        try:
            while os.read(fd, 4096):
                pass
        except OSError:
            pass
        server.shutdown()

    if sys.stdin is not None:
        threading.Thread(target=watch, args=(sys.stdin.fileno(),), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list:
        for entry in catalog.ENTRIES:
            print(json.dumps(catalog.describe(entry), ensure_ascii=False))
        return 0
    key = api_key()
    try:
        server = PetStoreServer(args.port, catalog.BY_NAME[args.variant].flags, key)
    except OSError as err:
        sys.stderr.write(f"server.py: error: cannot listen on 127.0.0.1:{args.port}: {err.strerror}\n")
        return 1
    # Before the URL is printed: a parent may send SIGTERM as soon as it has read it.
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.preload(args.preload)
    print(f"http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    if not args.ignore_stdin:
        stop_when_stdin_closes(server)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: stop quietly, no traceback
        server.serve_forever(poll_interval=0.1)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
