"""Black-box probes of round 3's servers (``requests``): the documented basics and the silent-area requests.

``basics`` asserts what the document states for a valid create, list and read, and for a missing key.
``SILENT`` sends one request the document does not describe (or describes only in part) each; the
self-proof compares the status with the entry's ``choices`` and asks the Error body of every 4xx (§7).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import requests

BIG_NAME = 70 * 1024  # characters: over nginx's 64 KiB client_max_body_size, under every framework's limit
Answer = requests.Response


class Client:
    def __init__(self, base: str, key: str) -> None:
        self.base, self.key = base, key
        self.session = requests.Session()

    def call(
        self, method: str, path: str, key: bool = True, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> Answer:
        sent = {"Accept": "application/json", **({"Authorization": f"Bearer {self.key}"} if key else {})}
        return self.session.request(method, self.base + path, headers=sent | (headers or {}), timeout=20, **kwargs)


def error_body_problem(answer: Answer) -> str | None:
    """None when the answer carries §7's Error body as application/json, else what is wrong."""
    media = answer.headers.get("Content-Type", "").split(";")[0].strip()
    if media != "application/json":
        return f"Content-Type {media or 'none'}: {answer.text[:80]!r}"
    try:
        body = answer.json()
    except ValueError:
        return f"not JSON: {answer.text[:80]!r}"
    ok = isinstance(body, dict) and isinstance(body.get("code"), str) and isinstance(body.get("message"), str)
    if not ok or type(body.get("status")) is not int or body["status"] != answer.status_code:
        return f"not the Error body: {json.dumps(body)[:120]}"
    return None


def basics(client: Client) -> None:
    """A valid create, list and read (§4.1-4.3), the deprecation headers (§9.3), 401 and 404 (§5.3, §7)."""
    created = client.call("POST", "/pets", json={"name": "Probe", "categoryId": 7, "status": "pending"})
    assert created.status_code == 201, (created.status_code, created.text[:200])
    pet = created.json()
    assert isinstance(pet["id"], int) and {k: pet[k] for k in ("name", "categoryId", "status")} == {
        "name": "Probe",
        "categoryId": 7,
        "status": "pending",
    }, pet
    listed = client.call("GET", "/pets", params={"limit": 5, "status": "pending"})
    assert listed.status_code == 200 and isinstance(listed.json(), list), listed.text[:200]
    assert 1 <= len(listed.json()) <= 5 and all(p["status"] == "pending" for p in listed.json())
    read = client.call("GET", f"/pets/{pet['id']}")
    assert read.status_code == 200 and read.json() == pet, (read.status_code, read.text[:200])
    assert read.headers.get("Deprecation", "").startswith("@"), read.headers
    assert read.headers.get("Sunset") == "Thu, 05 Dec 2030 00:00:00 GMT", read.headers
    assert "Deprecation" not in listed.headers and "Deprecation" not in created.headers
    missing = client.call("GET", "/pets/9223372036854775000")
    assert missing.status_code == 404 and error_body_problem(missing) is None, missing.text[:200]
    for method, path in (("GET", "/pets"), ("POST", "/pets"), ("GET", f"/pets/{pet['id']}"), ("GET", "/store/orders")):
        body = {"json": {"name": "x", "categoryId": 1}} if method == "POST" else {}
        refused = client.call(method, path, key=False, **body)
        assert refused.status_code == 401 and error_body_problem(refused) is None, (path, refused.text[:200])
        assert refused.headers.get("WWW-Authenticate", "").lower().startswith("bearer"), refused.headers
    orders = client.call("GET", "/store/orders")
    assert orders.status_code == 200, orders.text[:200]


SILENT: dict[str, Callable[[Client], Answer]] = {
    # a petId that is no int64: a route that does not match, or a malformed parameter
    "malformed_id_no_key": lambda c: c.call("GET", "/pets/abc", key=False),
    "malformed_id": lambda c: c.call("GET", "/pets/abc"),
    # §1 names application/json only: a valid NewPet sent as text/plain
    "text_body": lambda c: c.call(
        "POST", "/pets", data=json.dumps({"name": "Plain", "categoryId": 1}), headers={"Content-Type": "text/plain"}
    ),
    # §4.4: other operations not shown
    "delete": lambda c: c.call("DELETE", "/pets"),
    # a client that accepts HTML only
    "html_only": lambda c: c.call("GET", "/pets", params={"limit": 1}, headers={"Accept": "text/html"}),
    # §2 Gaps: name constraints not shown; a 70 KiB body
    "big_body": lambda c: c.call("POST", "/pets", json={"name": "B" * BIG_NAME, "categoryId": 1}),
    # §4.1 / §8: the answer to a limit outside 1..100 is not shown
    "limit_zero": lambda c: c.call("GET", "/pets", params={"limit": 0}),
}


def silent_problem(name: str, answer: Answer, expected: int) -> str | None:
    """None when the answer is the entry's declared choice, with the Error body (and Allow, challenge) it needs."""
    if answer.status_code != expected:
        return f"{name}: {answer.status_code} where the entry says {expected}: {answer.text[:120]!r}"
    if expected < 400:
        return None
    problem = error_body_problem(answer)
    if problem:
        return f"{name}: {expected} without the Error body ({problem})"
    if expected == 405 and "GET" not in answer.headers.get("Allow", ""):
        return f"{name}: 405 without Allow (RFC 9110 §15.5.6)"
    if expected == 401 and not answer.headers.get("WWW-Authenticate", "").lower().startswith("bearer"):
        return f"{name}: 401 without a Bearer challenge (RFC 9110 §11.6.1)"
    return None


def shows(answer: Answer) -> str:
    """What kind of body an error answer has: ``error`` (§7's), ``html``, ``text`` or ``json`` (another JSON)."""
    if error_body_problem(answer) is None:
        return "error"
    media = answer.headers.get("Content-Type", "").split(";")[0].strip()
    if media == "text/html" or answer.text.lstrip().lower().startswith(("<!doctype html", "<html")):
        return "html"
    return "json" if media == "application/json" else "text"
