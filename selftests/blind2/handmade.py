"""A hand-written Pet Store on ``http.server`` with an in-memory store.

A different team's style: no framework, its own routing, its own JSON writer,
lists newest first (or by name). Correct by default; the flags of a catalog
entry turn on the mistakes such hand-written servers make.
"""

from __future__ import annotations

import hmac
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from store import STATUSES, MemoryStore

INT64 = range(-(2**63), 2**63)
DEPRECATED_HEADERS = {
    "Deprecation": "@1704067200",  # 2024-01-01
    "Sunset": "Thu, 05 Dec 2030 23:59:59 GMT",
    "Link": '<https://petstore.example/deprecations/getPet>; rel="deprecation"',
}


def escape_strict(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def escape_naive(text: str) -> str:
    """Only the quote is escaped: backslashes and control characters go out raw."""
    return '"' + text.replace('"', '\\"') + '"'


def write_json(value: Any, escape: Any) -> str:
    """The team's own JSON writer (dicts, lists, strings, ints, None)."""
    if isinstance(value, dict):
        items = (f"{escape(str(k))}:{write_json(v, escape)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write_json(v, escape) for v in value) + "]"
    if isinstance(value, str):
        return escape(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(int(value))


class Answer(Exception):
    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers or {}


def error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Answer:
    return Answer(status, {"code": code, "message": message, "status": status}, headers)


class HandService:
    def __init__(self, flags: frozenset[str], key: str, order: str) -> None:
        self.flags = flags
        self.key = key
        self.store = MemoryStore(order, "hand_sorted_no_limit" in flags)

    def check_key(self, header: str | None) -> None:
        if header is None:
            raise error(401, "unauthenticated", "missing API key", {"WWW-Authenticate": 'Bearer realm="pets"'})
        parts = header.split(None, 1)
        if (
            len(parts) == 2
            and parts[0].lower() == "bearer"
            and hmac.compare_digest(parts[1].strip().encode(), self.key.encode())
        ):
            return
        raise error(
            401,
            "unauthenticated",
            "invalid API key",
            {"WWW-Authenticate": 'Bearer realm="pets", error="invalid_token"'},
        )

    def route(self, method: str, target: str, auth: str | None, body: bytes) -> Answer:
        url = urlsplit(target)
        path = url.path.rstrip("/")
        if path not in ("/v1/pets", "/v1/store/orders") and not path.startswith("/v1/pets/"):
            self.check_key(auth)
            return error(404, "not_found", "unknown path")
        self.check_key(auth)
        if path == "/v1/pets":
            if method == "GET":
                return self.list(parse_qs(url.query, keep_blank_values=True))
            if method == "POST":
                return self.create(body)
            return error(405, "method_not_allowed", method, {"Allow": "GET, HEAD, POST"})
        if path == "/v1/store/orders":
            if method != "GET":
                return error(405, "method_not_allowed", method, {"Allow": "GET, HEAD"})
            return Answer(200, [])
        if method != "GET":
            return error(405, "method_not_allowed", method, {"Allow": "GET, HEAD"})
        return self.read(path[len("/v1/pets/") :])

    def pet(self, pet: dict[str, Any]) -> dict[str, Any]:
        out = {"id": pet["id"], "name": pet["name"], "categoryId": pet["categoryId"]}
        if pet["status"] is not None:
            out["status"] = pet["status"]
        return out

    def list(self, query: dict[str, list[str]]) -> Answer:
        limit = 20
        if "limit" in query:
            raw = query["limit"][-1]
            if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 100:
                return error(400, "bad_limit", "limit is an integer from 1 to 100")
            limit = int(raw)
        status = query.get("status", [None])[-1]
        if status is not None and status not in STATUSES:
            return error(400, "bad_status", "status is available, pending or sold")
        return Answer(200, [self.pet(p) for p in self.store.list(limit, status)])

    def create(self, raw: bytes) -> Answer:
        try:
            body = json.loads(raw)
        except ValueError:
            return error(400, "bad_json", "the body is not JSON")
        if not isinstance(body, dict):
            return error(400, "bad_body", "the body is a JSON object")
        name, category = body.get("name"), body.get("categoryId")
        if not isinstance(name, str):
            return error(400, "bad_name", "name is a required string")
        if type(category) is not int or category not in INT64:
            return error(400, "bad_category", "categoryId is a required int64")
        status = body.get("status")
        if "status" in body and status not in STATUSES:
            return error(400, "bad_status", "status is available, pending or sold")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            return error(400, "bad_name", "name is not valid Unicode")
        pet = self.store.add(name, category, status)
        return Answer(201, self.pet(pet), {"Location": f"/v1/pets/{pet['id']}"})

    def read(self, raw_id: str) -> Answer:
        headers = dict(DEPRECATED_HEADERS)
        if not re.fullmatch(r"-?\d+", raw_id, re.ASCII) or int(raw_id) not in INT64:
            return error(404, "not_found", "no such animal", headers)
        pet_id = int(raw_id)
        naive = "hand_index_lookup" in self.flags
        pet = self.store.by_index(pet_id - 1) if naive else self.store.get(pet_id)
        if pet is None:
            return error(404, "not_found", f"no animal {pet_id}", headers)
        return Answer(200, self.pet(pet), headers)


def serve_hand(flags: frozenset[str], key: str, port: int, preload: int) -> ThreadingHTTPServer:
    by_name = flags & {"hand_by_name", "hand_sorted_no_limit"}
    order = "name" if by_name else "newest"
    service = HandService(flags, key, order)
    service.store.preload(preload)
    escape = escape_naive if "hand_json_unescaped" in flags else escape_strict
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        server_version = "pets/0.3"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            try:
                with lock:
                    method = "GET" if self.command == "HEAD" else self.command
                    result = service.route(method, self.path, self.headers.get("Authorization"), body)
            except Answer as raised:
                result = raised
            text = write_json(result.body, escape)
            data = text.encode("utf-8")
            self.send_response(result.status)
            self.send_header("Content-Type", "application/json")
            for k, v in result.headers.items():
                self.send_header(k, v)
            if "hand_content_length_chars" in flags:
                self.send_header("Content-Length", str(len(text)))
            else:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = answer

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd
