"""Black-box probes of round 4's servers (``requests``, loopback, every request with a timeout).

``basics`` asserts what the document states for a valid create, list and read, a missing key and an
unknown id. ``SILENT`` sends one request the document does not describe (or leaves the answer open) each;
the self-proof compares the status with a compliant entry's ``choices`` and asks the Error body of every
4xx (§7). ``FAULTS`` holds one probe per kind of fault: ``None`` where the answer is the document's, else
what is wrong; a fault's probe fails on the fault's server and passes on its base.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import requests

Answer = requests.Response
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"  # §4.3: removed on 5 December 2030, a Thursday


class Client:
    def __init__(self, base: str, key: str) -> None:
        self.base, self.key = base, key
        self.session = requests.Session()

    def call(
        self, method: str, path: str, key: bool = True, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> Answer:
        sent = {"Accept": "application/json", **({"Authorization": f"Bearer {self.key}"} if key else {})}
        return self.session.request(method, self.base + path, headers=sent | (headers or {}), timeout=20, **kwargs)

    def create(self, name: str, category: int = 7, status: str | None = "available") -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "categoryId": category} | ({"status": status} if status else {})
        answer = self.call("POST", "/pets", json=body)
        assert answer.status_code == 201, (answer.status_code, answer.text[:200])
        return dict(answer.json())

    def post_raw(self, text: str) -> Answer:
        return self.call("POST", "/pets", data=text.encode(), headers={"Content-Type": "application/json"})


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
    pet = client.create("Probe", 7, "pending")
    assert type(pet["id"]) is int and {k: pet.get(k) for k in ("name", "categoryId", "status")} == {
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
    assert read.headers.get("Sunset") == SUNSET, read.headers
    assert "Deprecation" not in listed.headers and "Sunset" not in listed.headers
    missing = client.call("GET", "/pets/9223372036854775000")
    assert missing.status_code == 404 and error_body_problem(missing) is None, missing.text[:200]
    for method, path in (("GET", "/pets"), ("POST", "/pets"), ("GET", f"/pets/{pet['id']}"), ("GET", "/store/orders")):
        body = {"json": {"name": "x", "categoryId": 1}} if method == "POST" else {}
        refused = client.call(method, path, key=False, allow_redirects=False, **body)
        assert refused.status_code == 401 and error_body_problem(refused) is None, (path, refused.text[:200])
        assert refused.headers.get("WWW-Authenticate", "").lower().startswith("bearer"), refused.headers
    assert client.call("GET", "/store/orders").status_code == 200


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
    # §4.1 / §8: the answer to a limit outside 1..100 is not shown
    "limit_zero": lambda c: c.call("GET", "/pets", params={"limit": 0}),
    # a path the document does not describe: the collection with a trailing slash
    "trailing_slash": lambda c: c.call("GET", "/pets/", allow_redirects=False),
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
    return None


def _refused(answer: Answer, what: str) -> str | None:
    if answer.status_code == 400 and error_body_problem(answer) is None:
        return None
    return f"{what}: {answer.status_code} {answer.text[:100]!r}, not a 400 Error"


def _first(*problems: str | None) -> str | None:
    return next((p for p in problems if p), None)


def petid_spellings(c: Client) -> str | None:
    """§4.3: petId is an int64 in decimal: 0x.., 0o.., 0b.., 1_0 and a leading-zero octal name no animal."""
    pets = [c.create(f"Spelled {n}") for n in range(12)]
    for pet in pets:
        n = pet["id"]
        spellings = [f"0x{n:x}", f"0o{n:o}", f"0b{n:b}"] + ([f"{str(n)[:-1]}_{str(n)[-1]}"] if n >= 10 else [])
        spellings += [f"0{n:o}"] if int(f"0{n:o}") != n else []  # read as decimal it names another id
        for spelling in spellings:
            answer = c.call("GET", f"/pets/{spelling}")
            if answer.status_code == 200 and answer.json().get("id") == n:
                return f"GET /pets/{spelling} answers animal {n}"
    return None


def letters_after_id(c: Client) -> str | None:
    """§4.3: ``{N}abc`` and ``{N}.0`` are not the int64 N."""
    n = c.create("Lettered")["id"]
    for spelling in (f"{n}abc", f"{n}.0", f"{n}e0"):
        answer = c.call("GET", f"/pets/{spelling}")
        if answer.status_code == 200:
            return f"GET /pets/{spelling} answers {answer.text[:80]!r}"
    return None


def member_case(c: Client) -> str | None:
    """RFC 8259 §8.3 and §2: a body whose only name member is ``Name`` has no ``name``."""
    return _first(
        _refused(c.post_raw('{"Name": "Cased", "categoryId": 1}'), "Name for name"),
        _refused(c.post_raw('{"name": "Cased", "CategoryID": 1}'), "CategoryID for categoryId"),
    )


def lowercase_authorization(c: Client) -> str | None:
    """RFC 9110 §5.1: field names are case-insensitive; ``authorization`` carries the key as well."""
    answer = c.call("GET", "/pets", key=False, headers={"authorization": f"Bearer {c.key}"})
    return None if answer.status_code == 200 else f"lower-case authorization: {answer.status_code}"


def status_types(c: Client) -> str | None:
    """§2: status is a PetStatus string; true, null, 1 and [] are not."""
    for value in ("true", "null", "1", '["sold"]'):
        problem = _refused(c.post_raw(f'{{"name": "Typed", "categoryId": 1, "status": {value}}}'), f"status {value}")
        if problem:
            return problem
    return None


def category_types(c: Client) -> str | None:
    """§2: categoryId is an int64; 7.5, "12", true and "0x10" are not."""
    for value in ("7.5", '"12"', "true", '"0x10"'):
        problem = _refused(c.post_raw(f'{{"name": "Typed", "categoryId": {value}}}'), f"categoryId {value}")
        if problem:
            return problem
    return None


def client_id_kept(c: Client) -> str | None:
    """§2: the id is assigned by the service; a client's id (an existing animal's) is ignored or refused."""
    first = c.create("Original")
    answer = c.call("POST", "/pets", json={"id": first["id"], "name": "Usurper", "categoryId": 2})
    if answer.status_code == 201 and answer.json().get("id") == first["id"]:
        return f"a create carrying id {first['id']} answered that id"
    read = c.call("GET", f"/pets/{first['id']}")
    if read.status_code == 200 and read.json() == first:
        return None
    return f"animal {first['id']} is now {read.text[:80]!r}"


def repeated_key(c: Client) -> str | None:
    """§2/§4.2: ``{"categoryId": 7, "categoryId": "x"}`` holds an invalid value: 400, or one int64 kept."""
    answer = c.post_raw('{"name": "Twice", "categoryId": 7, "categoryId": "x"}')
    if answer.status_code == 400:
        return _refused(answer, "a repeated categoryId")
    stored = answer.json().get("categoryId") if answer.status_code == 201 else None
    return None if type(stored) is int else f"{answer.status_code} with categoryId {stored!r}"


def refused_keeps_nothing(c: Client) -> str | None:
    """§4.2/§7: a create refused for its status leaves no animal behind (an empty store, seen whole)."""
    problem = _refused(c.post_raw('{"name": "Refused-status", "categoryId": 1, "status": "lost"}'), "status lost")
    listed = c.call("GET", "/pets", params={"limit": 100}).json()
    kept = [p for p in listed if p.get("name") == "Refused-status"]
    return problem or (f"the refused animal is listed: {kept}" if kept else None)


def collection_redirect(c: Client) -> str | None:
    """§4.1/§4.2: GET and POST /pets are answered from their Responses tables, which hold no 3xx."""
    for method in ("GET", "POST"):
        answer = c.call(method, "/pets", json={"name": "Direct", "categoryId": 1}, allow_redirects=False)
        if 300 <= answer.status_code < 400:
            return f"{method} /pets: {answer.status_code} to {answer.headers.get('Location')}"
    return None


def error_page(c: Client) -> str | None:
    """§7: the answer to a petId that names nothing (``abc``), with the key, is the Error body."""
    answer = c.call("GET", "/pets/abc")
    return error_body_problem(answer) if answer.status_code >= 400 else f"{answer.status_code}"


def invalid_json(c: Client) -> str | None:
    """§4.2/§7: a body that is not JSON gets 400 with the Error body, whatever bytes it holds."""
    return _first(
        _refused(c.post_raw('{"name": "Broken", '), "invalid JSON"),
        _refused(c.call("POST", "/pets", data=b"\xff\xfe{", headers={"Content-Type": "application/json"}), "0xFF"),
    )


def invalid_utf8(c: Client) -> str | None:
    """RFC 8259 §8.1 (JSON text is UTF-8) and §4.2/§7: a name holding the byte 0xFF is refused with a 400
    Error, or taken as the service reads it; never a 5xx, never a 4xx without the Error body."""
    answer = c.call(
        "POST", "/pets", data=b'{"name": "\xff", "categoryId": 1}', headers={"Content-Type": "application/json"}
    )
    if answer.status_code >= 500 or (answer.status_code >= 400 and error_body_problem(answer)):
        return f"a name that is not UTF-8: {answer.status_code} {answer.text[:100]!r}"
    return None


FAULTS: dict[str, Callable[[Client], str | None]] = {
    f.__name__: f
    for f in (
        petid_spellings,
        letters_after_id,
        member_case,
        lowercase_authorization,
        status_types,
        category_types,
        client_id_kept,
        repeated_key,
        refused_keeps_nothing,
        collection_redirect,
        error_page,
        invalid_json,
        invalid_utf8,
    )
}
