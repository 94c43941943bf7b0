"""The Pet Store as a CGI script over SQLite, the way a small shop runs one under Apache httpd (mod_cgid).

Python's standard library only (a CGI process starts for every request: no framework to import), with
blind round 3's domain layer (``selftests/blind3/domain.py``: the document's rules written once) and one
SQLite file shared by every process.  What the web server hands a CGI script is RFC 3875's: the method,
``PATH_INFO`` (decoded), ``QUERY_STRING``, ``CONTENT_TYPE``/``CONTENT_LENGTH``, the body on stdin, and
``HTTP_AUTHORIZATION`` only when httpd is told to pass it (``CGIPassAuth On``).  The answer goes to
stdout as a ``Status`` line, headers, a blank line, the body.

Environment (``SetEnv`` in the generated config): ``PETSTORE_API_KEY``, ``PETSTORE_CGI_STORE`` (the folder
of the SQLite file), ``PETSTORE_CGI_DRAIN`` ("1": read what is left of a body the script answered without
reading, before it exits).  Without the drain, a refusal before the body (the 401 of a create without the
key) leaves the body unread in httpd's pipe to the script: httpd's read of the answer then fails and the
client gets an answer that never completes (RFC 9112 §9.6 is the server's to honour, not the client's).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "blind3"))
from domain import (
    STATUSES,
    bearer_problem,
    deprecation,
    error_body,
    limit_value,
    new_pet,
    new_pet_problem,
    pet_id_value,
    unauthorized,
)

SINCE = 1717200000  # deprecated since 2024-06-01T00:00:00Z (RFC 9745: a date in the past)
MAX_BODY = 1 << 20  # a NewPet is small; a larger body (with the key) is refused 413 after it was read
REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 401: "Unauthorized"}
REASONS |= {404: "Not Found", 405: "Method Not Allowed", 413: "Content Too Large", 415: "Unsupported Media Type"}
REASONS |= {500: "Internal Server Error"}
Answer = tuple[int, Any, dict[str, str]]


def database(folder: str) -> sqlite3.Connection:
    db = sqlite3.connect(Path(folder) / "pets.db", timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS pets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,"
        " category_id INTEGER NOT NULL, status TEXT)"
    )
    return db


def as_pet(row: tuple[int, str, int, str | None]) -> dict[str, Any]:
    pet: dict[str, Any] = {"id": row[0], "name": row[1], "categoryId": row[2]}
    if row[3] is not None:
        pet["status"] = row[3]
    return pet


def error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Answer:
    return status, error_body(status, code, message), headers or {}


def list_pets(db: sqlite3.Connection, query: str) -> Answer:
    args = parse_qs(query, keep_blank_values=True, errors="replace")
    limit = limit_value(args["limit"][0] if "limit" in args else None)
    if limit is None:
        return error(400, "invalid_limit", "limit must be an integer from 1 to 100")
    status = args["status"][0] if "status" in args else None
    if status is not None and status not in STATUSES:
        return error(400, "invalid_status", "status must be one of available, pending, sold")
    where, values = ("WHERE status = ?", (status, limit)) if status else ("", (limit,))
    rows = db.execute(f"SELECT id, name, category_id, status FROM pets {where} ORDER BY id LIMIT ?", values)
    return 200, [as_pet(row) for row in rows], {}


def read_body(length: int) -> bytes:
    return sys.stdin.buffer.read(length) if length > 0 else b""


def create_pet(db: sqlite3.Connection, environ: dict[str, str], length: int) -> Answer:
    media = environ.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    if media != "application/json":
        return error(415, "unsupported_media_type", "the body must be application/json")
    if length > MAX_BODY:
        return error(413, "content_too_large", "a NewPet is far smaller")
    try:
        body = json.loads(read_body(length))
    except (ValueError, UnicodeDecodeError):
        return error(400, "invalid_json", "the body is not JSON")
    trouble = new_pet_problem(body)
    if trouble:
        return error(400, "invalid_pet", trouble)
    pet = new_pet(body)
    cursor = db.execute(
        "INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?)",
        (pet["name"], pet["categoryId"], pet.get("status")),
    )
    return 201, {"id": cursor.lastrowid, **pet}, {}


def get_pet(db: sqlite3.Connection, raw_id: str) -> Answer:
    pet_id = pet_id_value(raw_id)
    row = db.execute("SELECT id, name, category_id, status FROM pets WHERE id = ?", (pet_id,)).fetchone()
    if pet_id is None or row is None:
        return error(404, "not_found", "no animal with this id", deprecation(SINCE))
    return 200, as_pet(row), deprecation(SINCE)


def route(environ: dict[str, str], length: int) -> Answer:
    trouble = bearer_problem(environ.get("HTTP_AUTHORIZATION"), environ.get("PETSTORE_API_KEY", ""))
    if trouble:
        body, headers = unauthorized(trouble)
        return 401, body, headers
    method = environ.get("REQUEST_METHOD", "GET")
    read = "GET" if method == "HEAD" else method  # httpd drops a HEAD answer's body itself
    path = environ.get("PATH_INFO", "")
    segments = path.split("/")
    db = database(environ["PETSTORE_CGI_STORE"])
    try:
        if path == "/pets":
            if read == "GET":
                return list_pets(db, environ.get("QUERY_STRING", ""))
            if read == "POST":
                return create_pet(db, environ, length)
            return error(405, "method_not_allowed", f"{method} is not offered here", {"Allow": "GET, HEAD, POST"})
        if (len(segments) == 3 and segments[1] == "pets") or path == "/store/orders":
            if read != "GET":
                return error(405, "method_not_allowed", f"{method} is not offered here", {"Allow": "GET, HEAD"})
            return get_pet(db, segments[2]) if segments[1] == "pets" else (200, [], {})
        return error(404, "not_found", "no such resource")
    finally:
        db.close()


def main() -> None:
    environ = dict(os.environ)
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    try:
        status, body, headers = route(environ, length)
    except Exception:  # a vendor's last resort: the Error body, never a traceback on the wire
        status, body, headers = error(500, "internal_error", "internal error")
    payload = json.dumps(body).encode()
    head = [f"Status: {status} {REASONS.get(status, '')}", "Content-Type: application/json"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    head += [f"Content-Length: {len(payload)}"]
    sys.stdout.buffer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
    sys.stdout.flush()
    if environ.get("PETSTORE_CGI_DRAIN") == "1":
        while sys.stdin.buffer.read(1 << 16):  # the body httpd still holds for us, read to its end
            pass


if __name__ == "__main__":
    main()
