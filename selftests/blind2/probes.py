"""Probes: black-box checks of what the document states, with real HTTP requests.

A probe takes a ``Client`` (base URL + key) and raises ``AssertionError`` when
the server breaks a stated rule. Probes only ask for what the document (or a
cited RFC) states, and accept every answer the document leaves open (a 400
Error for a name or category rule, extra fields, any list order, pages smaller
than the limit, 429 with Retry-After). They must hold on a store other probes
have already used.
"""

from __future__ import annotations

import base64
import calendar
import email.utils
import itertools
import json
import re
import time
from collections.abc import Callable
from typing import Any

import requests

STATUSES = ("available", "pending", "sold")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
TIMEOUT = 60
SUNSET_DAY = (2030, 12, 5)
_counter = itertools.count(1)


def unique(prefix: str) -> str:
    return f"{prefix}{time.monotonic_ns() % 10**9}x{next(_counter)}"


class Answer:
    def __init__(self, response: requests.Response, what: str) -> None:
        self.status = response.status_code
        self.headers = response.headers
        self.content = response.content
        self.what = what

    def __repr__(self) -> str:
        return f"{self.what} -> {self.status} {self.content[:160]!r}"

    def json(self) -> Any:
        media = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        assert media == "application/json", f"{self!r}: Content-Type {media!r}, not JSON"
        try:
            return json.loads(self.content)
        except ValueError as exc:
            raise AssertionError(f"{self!r}: body is not JSON ({exc})") from None


class Client:
    def __init__(self, base: str, key: str) -> None:
        self.base = base.rstrip("/")
        self.key = key
        self.session = requests.Session()

    def call(
        self,
        method: str,
        path: str,
        *,
        auth: str | None = "good",
        body: Any = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> Answer:
        headers = {}
        if auth == "good":
            headers["Authorization"] = f"Bearer {self.key}"
        elif auth is not None:
            headers["Authorization"] = auth
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = content_type
        what = f"{method} {path}"
        for _ in range(6):
            try:
                r = self.session.request(method, self.base + path, headers=headers, data=data, timeout=TIMEOUT)
            except requests.RequestException as exc:
                raise AssertionError(f"{what}: transport error {exc!r}") from None
            if r.status_code == 429 and r.headers.get("Retry-After", "").isdigit():
                time.sleep(min(int(r.headers["Retry-After"]), 2))
                continue
            return Answer(r, what)
        raise AssertionError(f"{what}: 429 six times")

    def create(self, body: dict[str, Any], **kw: Any) -> Answer:
        return self.call("POST", "/pets", body=body, **kw)


# checks ------------------------------------------------------------------------
def is_int64(value: Any) -> bool:
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def expect_pet(value: Any, where: str) -> dict[str, Any]:
    assert isinstance(value, dict), f"{where}: a Pet is an object, got {value!r:.80}"
    assert is_int64(value.get("id")), f"{where}: id {value.get('id')!r} is not an int64"
    assert isinstance(value.get("name"), str), f"{where}: name {value.get('name')!r:.40}"
    assert is_int64(value.get("categoryId")), (
        f"{where}: categoryId {value.get('categoryId', '<missing>')!r} is not an int64"
    )
    if "status" in value:
        assert value["status"] in STATUSES, f"{where}: status {value['status']!r}"
    return value


def expect_error(answer: Answer, status: int) -> dict[str, Any]:
    assert answer.status == status, f"{answer!r}: expected {status}"
    body = answer.json()
    assert isinstance(body, dict), f"{answer!r}: Error is an object"
    for field in ("code", "message"):
        assert isinstance(body.get(field), str), f"{answer!r}: Error.{field} missing"
    assert type(body.get("status")) is int, f"{answer!r}: Error.status is not an integer"
    assert body["status"] == answer.status, f"{answer!r}: Error.status != HTTP status"
    return body


CHALLENGE = re.compile(r"(?:^|,)\s*bearer\s+[!#$%&'*+.^_`|~0-9a-z-]+\s*=", re.IGNORECASE)


def expect_401(answer: Answer) -> None:
    expect_error(answer, 401)
    challenge = answer.headers.get("WWW-Authenticate")
    assert challenge, f"{answer!r}: 401 without WWW-Authenticate"
    assert CHALLENGE.search(challenge), (
        f"{answer!r}: WWW-Authenticate {challenge!r} has no Bearer challenge with an auth-param"
    )


def expect_created(answer: Answer, sent: dict[str, Any]) -> dict[str, Any]:
    assert answer.status == 201, f"{answer!r}: a valid create gets 201"
    pet = expect_pet(answer.json(), repr(answer))
    for field in ("name", "categoryId", "status"):
        if field in sent:
            assert pet.get(field) == sent[field], (
                f"{answer.what}: sent {field}={sent[field]!r:.60}, got {pet.get(field)!r:.60}"
            )
    return pet


def expect_read(c: Client, pet: dict[str, Any]) -> None:
    answer = c.call("GET", f"/pets/{pet['id']}")
    assert answer.status == 200, f"{answer!r}: the created animal reads back"
    got = expect_pet(answer.json(), repr(answer))
    assert got == pet, f"{answer.what}: read {got!r:.120} != created {pet!r:.120}"


def created_or_refused(c: Client, body: dict[str, Any]) -> dict[str, Any] | None:
    """A value the document leaves open to rules: 201 exactly as sent, or 400 Error."""
    answer = c.create(body)
    if answer.status == 400:
        expect_error(answer, 400)
        return None
    pet = expect_created(answer, body)
    expect_read(c, pet)
    return pet


def expect_list(answer: Answer, limit: int) -> list[dict[str, Any]]:
    assert answer.status == 200, f"{answer!r}: expected 200"
    items = answer.json()
    assert isinstance(items, list), f"{answer!r}: a list is a JSON array"
    assert len(items) <= limit, f"{answer.what}: {len(items)} animals, limit {limit}"
    for item in items:
        expect_pet(item, answer.what)
    ids = [item["id"] for item in items]
    assert len(set(ids)) == len(ids), f"{answer.what}: an id appears twice"
    return items


SF_DATE = re.compile(r"@(-?[0-9]{1,15})(;.*)?")
IMF = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ([0-9]{4}) "
    r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT"
)


def check_deprecation(answer: Answer) -> None:
    deprecation = answer.headers.get("Deprecation")
    sunset = answer.headers.get("Sunset")
    since = None
    if deprecation is not None:
        match = SF_DATE.fullmatch(deprecation.strip())
        assert match, f"{answer!r}: Deprecation {deprecation!r} is not a Structured Field Date"
        since = int(match.group(1))
    if sunset is not None:
        assert IMF.fullmatch(sunset.strip()), f"{answer!r}: Sunset {sunset!r} is not IMF-fixdate"
        parsed = email.utils.parsedate_to_datetime(sunset)
        assert (parsed.year, parsed.month, parsed.day) == SUNSET_DAY, (
            f"{answer!r}: Sunset {sunset!r} is not 5 December 2030"
        )
        assert parsed.strftime("%a") == sunset[:3], f"{answer!r}: Sunset weekday is wrong"
        if since is not None:
            assert calendar.timegm(parsed.utctimetuple()) >= since, (
                f"{answer!r}: Sunset {sunset!r} is earlier than Deprecation {deprecation!r}"
            )


def new_pet(c: Client, **fields: Any) -> dict[str, Any]:
    body = {"name": unique("Rex"), "categoryId": 1, **fields}
    return expect_created(c.create(body), body)


# probes ------------------------------------------------------------------------
def auth_missing(c: Client) -> None:
    """No Authorization header: 401 Error with a Bearer challenge, on every operation."""
    expect_401(c.call("GET", "/pets", auth=None))
    expect_401(c.create({"name": unique("Rex"), "categoryId": 1}, auth=None))
    expect_401(c.create({}, auth=None))
    expect_401(c.call("GET", "/pets/1", auth=None))
    expect_401(c.call("GET", f"/pets/{INT64_MAX}", auth=None))
    expect_401(c.call("GET", "/store/orders", auth=None))


def auth_invalid(c: Client) -> None:
    """A wrong, truncated, extended or empty key, or another scheme: 401 everywhere."""
    pet = new_pet(c)
    assert c.call("GET", f"/pets/{pet['id']}").status == 200, "the animal reads with the key"
    assert c.call("GET", "/pets").status == 200, "the list reads with the key"
    basic = base64.b64encode(f"user:{c.key}".encode()).decode()
    bad = [
        "Bearer wrong-key",
        f"Bearer {c.key[:-1]}",
        f"Bearer {c.key}x",
        f"Bearer {c.key.swapcase()}",
        "Bearer ",
        f"Basic {basic}",
        f"Token {c.key}",
        c.key,
    ]
    for header in bad:
        expect_401(c.call("GET", "/pets", auth=header))
    for header in bad[:4]:
        expect_401(c.create({"name": unique("Rex"), "categoryId": 1}, auth=header))
        expect_401(c.call("GET", f"/pets/{pet['id']}", auth=header))
        expect_401(c.call("GET", "/store/orders", auth=header))


def auth_scheme_case(c: Client) -> None:
    """The auth-scheme is case-insensitive (RFC 9110 §11.1)."""
    for scheme in ("bearer", "BEARER", "BeArEr"):
        answer = c.call("GET", "/pets?limit=1", auth=f"{scheme} {c.key}")
        expect_list(answer, 1)


def list_limits(c: Client) -> None:
    """Default page of at most 20, pages of at most `limit`, limit 1 and 100 valid."""
    for _ in range(6):
        new_pet(c)
    expect_list(c.call("GET", "/pets"), 20)
    for limit in (1, 5, 20, 100):
        expect_list(c.call("GET", f"/pets?limit={limit}"), limit)
    expect_list(c.call("GET", "/pets"), 20)


def list_status_filter(c: Client) -> None:
    """status=s lists only animals whose status is s, at most `limit` of them."""
    for status in STATUSES:
        new_pet(c, status=status)
    expect_list(c.call("GET", "/pets?limit=100"), 100)
    for status in STATUSES:
        for limit in (100, 5):
            items = expect_list(c.call("GET", f"/pets?status={status}&limit={limit}"), limit)
            others = [i for i in items if i.get("status") != status]
            assert not others, f"status={status}: got {others[0]!r:.100}"
        items = expect_list(c.call("GET", f"/pets?status={status}"), 20)
        assert all(i.get("status") == status for i in items), f"status={status}, default limit"


def list_matches_read(c: Client) -> None:
    """A list item is the same Pet as GET /pets/{id} answers."""
    new_pet(c, name="Bartholomew " + "the Magnificent " * 6, status="pending")
    for query in ("?limit=100", "?status=pending&limit=100"):
        answer = c.call("GET", f"/pets{query}")
        items = expect_list(answer, 100)
        sample = items[:3] + items[-3:] + [i for i in items if len(i["name"]) > 64]
        for item in sample:
            read = c.call("GET", f"/pets/{item['id']}")
            assert read.status == 200, f"{read!r}: a listed animal reads"
            assert read.json() == item, f"list item {item!r:.100} != read {read.json()!r:.100}"


def create_plain(c: Client) -> None:
    """Plain valid creates get 201 Pet, as sent, and read back the same."""
    for status in (*STATUSES, None):
        body: dict[str, Any] = {"name": unique("Rex"), "categoryId": 1}
        if status:
            body["status"] = status
        pet = expect_created(c.create(body), body)
        expect_read(c, pet)


def create_content_type(c: Client) -> None:
    """application/json with a charset parameter is still application/json."""
    body = {"name": unique("Rex"), "categoryId": 2}
    answer = c.create(body, content_type="application/json; charset=utf-8")
    expect_read(c, expect_created(answer, body))


NAMES = [
    "",
    " ",
    "Mr. Whiskers",
    "O'Malley",
    'Rex "the dog"',
    "Zoë",
    "Rex \U0001f436",
    "\u732b\u306e\u30bf\u30de",
    "tab\there",
    "line\nbreak",
    "back\\slash",
    "nul\x00byte",
    "\x01\x1f\x7f\u0085",
    "x" * 10_000,
    "y" * 100_000,
]


def create_names(c: Client) -> None:
    """Any string is a name: 201 with that exact name (or a 400 Error for a name rule)."""
    for name in NAMES:
        created_or_refused(c, {"name": name, "categoryId": 3})


def create_huge_name(c: Client) -> None:
    """A 1,000,000-character name: 201 exactly, or a 400/413 Error."""
    body = {"name": "z" * 1_000_000, "categoryId": 3}
    answer = c.create(body)
    if answer.status in (400, 413):
        expect_error(answer, answer.status)
        return
    expect_read(c, expect_created(answer, body))


CATEGORIES = [0, -1, 2**31 - 1, 2**31, 2**32, 2**53 + 1, -(2**53) - 1, INT64_MAX, INT64_MIN]


def create_categories(c: Client) -> None:
    """Any int64 categoryId: 201 with that exact value (or a 400 Error for a category rule)."""
    for category in CATEGORIES:
        created_or_refused(c, {"name": unique("Cat"), "categoryId": category})


INVALID_BODIES: list[Any] = [
    {},
    {"categoryId": 1},
    {"name": "Rex"},
    {"name": "Rex", "categoryId": "5"},
    {"name": "Rex", "categoryId": True},
    {"name": "Rex", "categoryId": 1.5},
    {"name": "Rex", "categoryId": None},
    {"name": 123, "categoryId": 1},
    {"name": None, "categoryId": 1},
    {"name": "Rex", "categoryId": 1, "status": "unknown"},
    {"name": "Rex", "categoryId": 1, "status": "Available"},
    {"name": "Rex", "categoryId": 2**63},
    {"name": "Rex", "categoryId": INT64_MIN - 1},
    b"not json",
    b"[1, 2]",
    b'"Rex"',
    b'{"name": "Rex", "categoryId": 1',
    b"",
]


def create_invalid(c: Client) -> None:
    """Missing required fields or invalid values: 400 Error."""
    for body in INVALID_BODIES:
        raw = isinstance(body, bytes)
        answer = c.call("POST", "/pets", raw=body) if raw else c.create(body)
        expect_error(answer, 400)


MISSING_IDS = [0, -1, 2**31, 2**53 + 1, INT64_MAX, INT64_MIN]


def read_missing(c: Client) -> None:
    """An id no animal has: 404 Error (or, should an animal have it, that animal)."""
    new_pet(c)
    for pet_id in MISSING_IDS:
        answer = c.call("GET", f"/pets/{pet_id}")
        if answer.status == 200:
            pet = expect_pet(answer.json(), repr(answer))
            assert pet["id"] == pet_id, f"{answer!r}: GET /pets/{pet_id} answered another animal"
            continue
        expect_error(answer, 404)


def read_deprecation(c: Client) -> None:
    """Deprecation (when sent) is a Structured Field Date, Sunset 5 December 2030 IMF-fixdate."""
    pet = new_pet(c)
    check_deprecation(c.call("GET", f"/pets/{pet['id']}"))
    check_deprecation(c.call("GET", f"/pets/{INT64_MAX}"))


def list_not_deprecated(c: Client) -> None:
    """Only getPet is deprecated: listPets and createPet carry no Deprecation."""
    for answer in (
        c.call("GET", "/pets"),
        c.call("GET", "/pets?status=available&limit=3"),
        c.create({"name": unique("Rex"), "categoryId": 1}),
    ):
        assert "Deprecation" not in answer.headers, f"{answer!r}: Deprecation on {answer.what}"


def ids_unique(c: Client) -> None:
    """Every create gets its own id, and each id reads its own animal."""
    pets = [new_pet(c) for _ in range(3)]
    ids = [p["id"] for p in pets]
    assert len(set(ids)) == 3, f"three creates got ids {ids}"
    for pet in pets:
        expect_read(c, pet)


def orders(c: Client) -> None:
    """GET /store/orders exists: a 2xx JSON answer with the key."""
    answer = c.call("GET", "/store/orders")
    assert 200 <= answer.status < 300, f"{answer!r}: GET /store/orders exists"
    answer.json()


def method_not_allowed(c: Client) -> None:
    """Methods the paths do not support: an error uses the Error body, a 405 has Allow."""
    pet = new_pet(c)
    for method, path in (("DELETE", f"/pets/{pet['id']}"), ("PUT", "/pets"), ("DELETE", "/store/orders")):
        answer = c.call(method, path)
        if answer.status == 405:
            assert answer.headers.get("Allow") is not None, f"{answer!r}: 405 without Allow"
        if answer.status >= 400:
            expect_error(answer, answer.status)


def read_after_miss(c: Client) -> None:
    """An animal read (404) before it existed reads (200) once created."""
    first = new_pet(c)
    guess = first["id"] + 1
    before = c.call("GET", f"/pets/{guess}")
    assert before.status in (200, 404), f"{before!r}"
    second = new_pet(c)
    expect_read(c, second)


PROBES: dict[str, Callable[[Client], None]] = {
    f.__name__: f
    for f in (
        auth_missing,
        auth_invalid,
        auth_scheme_case,
        list_limits,
        list_status_filter,
        list_matches_read,
        create_plain,
        create_content_type,
        create_names,
        create_huge_name,
        create_categories,
        create_invalid,
        read_missing,
        read_deprecation,
        list_not_deprecated,
        ids_unique,
        orders,
        method_not_allowed,
        read_after_miss,
    )
}
