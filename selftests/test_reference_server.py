"""The reference server on its own: each variant and knob behaves as described, each fault changes
the behaviour it names on at least one request while the reference does not, and the catalog
quotes the interface document and names known clauses.

Every server here is a fresh app behind one loopback uvicorn (``BackgroundServer``), reached with
``requests`` and a timeout on every request: ``/<tag>/v1/...`` goes to the app registered as ``tag``.
"""

from __future__ import annotations

import dataclasses
import email.utils
import itertools
import re
import tomllib
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import requests

from devtools.catalog import FAULTS, RFC_QUOTES, UNJUDGEABLE, VARIANTS, catalog_app
from devtools.catalog.__main__ import chosen
from devtools.catalog.__main__ import parse_args as catalog_args
from petstore_contract.interface.silence import classify
from petstore_contract.reference import REFERENCE, BackgroundServer, Variant
from petstore_contract.reference.__main__ import parse_args, variant_of
from petstore_contract.reference.child import ChildServer

ROOT = Path(__file__).resolve().parents[1]
KEY = "Ref-Key-7f3A"  # letters of both cases, so that a case change is a different key
STATUSES = ("available", "pending", "sold")
INT64_MAX = 2**63 - 1
TIMEOUT = 5


# -- one loopback server, many apps ----------------------------------------------------------


class Dispatcher:
    """An ASGI app routing ``/<tag>/...`` to the app registered as ``tag`` (root_path ``/<tag>``)."""

    def __init__(self) -> None:
        self.apps: dict[str, Any] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        tag = scope["path"].split("/")[1] if scope["type"] == "http" else ""
        app = self.apps.get(tag)
        if app is None:
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b"no app registered under this tag"})
            return
        await app({**scope, "root_path": scope.get("root_path", "") + "/" + tag}, receive, send)


class Api:
    """A client of one app: the valid key unless told otherwise, a timeout on every request."""

    def __init__(self, session: requests.Session, base_url: str, app: Any) -> None:
        self.session = session
        self.base_url = base_url
        self.store = app.state.store

    def request(
        self,
        method: str,
        path: str,
        *,
        key: str | None = KEY,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        sent = {"Authorization": f"Bearer {key}"} if key is not None else {}
        sent.update(headers or {})
        return self.session.request(
            method, self.base_url + path, headers=sent, params=params, timeout=TIMEOUT, **kwargs
        )

    def get(self, path: str = "/pets", **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, body: Any = None, **kwargs: Any) -> requests.Response:
        if body is not None:
            kwargs["json"] = body
        return self.request("POST", "/pets", **kwargs)

    def create(self, name: str = "Rex", category: int = 1, **fields: Any) -> dict[str, Any]:
        answer = self.post({"name": name, "categoryId": category, **fields})
        assert answer.status_code in (200, 201), answer.text
        return answer.json()

    def seed(self, count: int, prefix: str = "seed") -> list[dict[str, Any]]:
        """``count`` animals, statuses cycling available, pending, sold (oldest first)."""
        return [self.create(f"{prefix}-{n}", n, status=STATUSES[n % 3]) for n in range(count)]

    def pets(self, **params: Any) -> Any:
        answer = self.get("/pets", params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def read(self, pet_id: Any) -> requests.Response:
        return self.get(f"/pets/{pet_id}")


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[..., Api]]:
    dispatcher = Dispatcher()
    counter = itertools.count()
    with BackgroundServer(dispatcher) as server, requests.Session() as session:  # type: ignore[arg-type]

        def start(variant: Variant = REFERENCE, fault: str | None = None, key: str = KEY) -> Api:
            tag = f"s{next(counter)}"
            app = catalog_app(key, variant, fault)
            dispatcher.apps[tag] = app
            return Api(session, f"http://{server.host}:{server.port}/{tag}/v1", app)

        yield start


# -- helpers of the fault table ----------------------------------------------------------------

OPERATIONS = (("GET", "/pets"), ("POST", "/pets"), ("GET", "/pets/1"), ("GET", "/store/orders"))


def each_operation(api: Api, **kwargs: Any) -> list[requests.Response]:
    """One request to each operation (animal 1 exists; the POST carries a valid body)."""
    api.create("first")
    return each_operation_unchecked(api, **kwargs)


def each_operation_unchecked(api: Api, **kwargs: Any) -> list[requests.Response]:
    body = {"json": {"name": "Rex", "categoryId": 1}}
    return [api.request(method, path, **kwargs, **(body if method == "POST" else {})) for method, path in OPERATIONS]


def valid_error(answer: requests.Response) -> bool:
    try:
        body = answer.json()
    except ValueError:
        return False
    return (
        isinstance(body, dict)
        and isinstance(body.get("code"), str)
        and isinstance(body.get("message"), str)
        and type(body.get("status")) is int
        and body["status"] == answer.status_code
    )


def credential_accepted(**kwargs: Any) -> Callable[[Api], bool]:
    """A request with a credential other than ``Authorization: Bearer <key>`` is served by some operation."""
    return lambda api: any(answer.status_code != 401 for answer in each_operation(api, **kwargs))


def echo_differs(**fields: Any) -> Callable[[Api], bool]:
    """The created animal does not echo the fields sent."""

    def probe(api: Api) -> bool:
        sent = {"name": "Rex", "categoryId": 1, **fields}
        answer = api.create(**{("category" if k == "categoryId" else k): v for k, v in sent.items()})
        return any(answer.get(k) != v for k, v in sent.items())

    return probe


def created(body: Any = None, **kwargs: Any) -> Callable[[Api], bool]:
    """A body the document says to reject with 400 is answered 2xx."""
    return lambda api: api.post(body, **kwargs).status_code < 300


def probe_late_names(api: Api) -> bool:
    """The 101st animal's name differs in the unfiltered list only (its status page and read are right)."""
    late = api.seed(101)[-1]
    listed = [p for p in api.pets(limit=100) if p["id"] == late["id"]]
    by_status = [p for p in api.pets(limit=100, status=late["status"]) if p["id"] == late["id"]]
    return listed[0]["name"] != late["name"] and by_status[0] == api.read(late["id"]).json() == late


def server_error(method: str, path: str, **kwargs: Any) -> Callable[[Api], bool]:
    def probe(api: Api) -> bool:
        api.seed(3)
        return api.request(method, path, **kwargs).status_code >= 500

    return probe


def deprecation_wrong(api: Api) -> bool:
    """Some read lacks ``Deprecation: @<seconds>`` (RFC 9745 sf-date)."""
    answers = [api.read(pet["id"]) for pet in api.seed(2)]
    return any(not re.fullmatch(r"@-?[0-9]{1,15}", a.headers.get("Deprecation", "")) for a in answers)


def sunset_wrong(api: Api) -> bool:
    """The Sunset is not an HTTP-date on 5 December 2030, or it is earlier than the Deprecation."""
    answer = api.read(api.create()["id"])
    try:
        sunset = email.utils.parsedate_to_datetime(answer.headers["Sunset"])
    except (KeyError, TypeError, ValueError):
        return True
    if not re.fullmatch(r"[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT", answer.headers["Sunset"]):
        return True
    deprecation = answer.headers.get("Deprecation", "@0")
    return sunset.date() != date(2030, 12, 5) or int(deprecation[1:]) > sunset.timestamp()


def challenge_missing(api: Api) -> bool:
    """Some 401 lacks a Bearer challenge."""
    answers = each_operation(api, key=None)
    return any(not a.headers.get("WWW-Authenticate", "").startswith("Bearer") for a in answers)


def error_body_wrong(api: Api) -> bool:
    return not all(valid_error(a) for a in [api.get(key=None), api.read(424242)])


def after(count: int, check: Callable[[Api], bool]) -> Callable[[Api], bool]:
    """``check`` on a store holding ``count`` animals the probe created."""

    def probe(api: Api) -> bool:
        api.seed(count)
        return check(api)

    return probe


def listed_ids(api: Api, **params: Any) -> list[int]:
    return [p["id"] for p in api.pets(**params)]


def read_other(api: Api, pet_id: int) -> bool:
    answer = api.read(pet_id)
    return answer.status_code != 200 or answer.json().get("id") != pet_id


def probe_wrong_after_50(api: Api) -> bool:
    pets = api.seed(51)
    return any(read_other(api, p["id"]) for p in pets[:3])


def probe_forgets_after_100(api: Api) -> bool:
    newest = api.seed(101)[-1]
    return newest["id"] not in listed_ids(api, status=newest["status"], limit=100)


def probe_leaks_over_100(api: Api) -> bool:
    api.seed(101)
    return any(p["status"] != s for s in STATUSES for p in api.pets(status=s, limit=100))


def probe_rejected_still_stored(api: Api) -> bool:
    before = len(api.pets(limit=100))
    rejected = api.post({"name": "ghost", "categoryId": "not a number"})
    return rejected.status_code == 400 and len(api.pets(limit=100)) > before


def probe_name_collision(api: Api) -> bool:
    api.create("twin", 1)
    second = api.create("twin", 2)
    return api.read(second["id"]).json().get("categoryId") != 2


def probe_latin1_store(api: Api) -> bool:
    created = api.post({"name": "Ŝnuĉjo 猫", "categoryId": 1}).json()  # the echo is exact
    return created["name"] == "Ŝnuĉjo 猫" and api.read(created["id"]).json()["name"] != "Ŝnuĉjo 猫"


# One case per fault: a probe that is True when the misbehaviour the fault names is seen.
CASES: dict[str, Callable[[Api], bool]] = {
    # GET /pets: shape
    "list_wraps_array": after(2, lambda api: not isinstance(api.pets(limit=5), list)),
    "list_item_id_string": after(1, lambda api: any(type(p["id"]) is not int for p in api.pets())),
    "list_item_status_uppercase": after(3, lambda api: any(p["status"] not in STATUSES for p in api.pets())),
    "list_item_missing_category": after(1, lambda api: any("categoryId" not in p for p in api.pets())),
    "list_item_category_shifted": after(2, lambda api: any(p != api.read(p["id"]).json() for p in api.pets())),
    # GET /pets: limit
    "list_rejects_limit_100": lambda api: api.get(params={"limit": 100}).status_code != 200,
    "list_rejects_limit_1": lambda api: api.get(params={"limit": 1}).status_code != 200,
    "list_ignores_limit": after(5, lambda api: len(api.pets(limit=2)) > 2),
    "list_limit_off_by_one": after(5, lambda api: len(api.pets(limit=2)) > 2),
    "list_status_ignores_limit": after(6, lambda api: len(api.pets(status="sold", limit=1)) > 1),
    "list_default_50": after(25, lambda api: len(api.pets()) > 20),
    "list_default_5": after(25, lambda api: len(api.pets()) != len(api.pets(limit=20))),
    "list_no_maximum": lambda api: api.get(params={"limit": 500}).status_code == 200,
    "list_500_on_non_integer_limit": server_error("GET", "/pets", params={"limit": "abc"}),
    "list_zero_limit_returns_all": after(3, lambda api: api.get(params={"limit": 0}).status_code == 200),
    "list_500_on_negative_limit": server_error("GET", "/pets", params={"limit": -1}),
    # GET /pets: pages filled
    "list_short_by_one": after(5, lambda api: len(api.pets(limit=3)) < 3),
    "list_filter_after_cut": after(6, lambda api: any(len(api.pets(status=s, limit=2)) < 2 for s in STATUSES)),
    "list_empty_past_store": after(2, lambda api: api.pets(limit=10) == []),
    "list_cap_inconsistent": after(25, lambda api: len(api.pets(limit=7)) < 7 and len(api.pets(limit=20)) == 20),
    "list_repeats_animal": after(4, lambda api: len(set(ids := listed_ids(api, limit=3))) < len(ids)),
    # GET /pets: status
    "list_ignores_status": after(3, lambda api: any(p["status"] != "sold" for p in api.pets(status="sold"))),
    "list_ignores_status_sold": after(
        3, lambda api: any(p["status"] != "sold" for p in api.pets(status="sold", limit=10))
    ),
    "list_ignores_status_without_limit": after(
        3, lambda api: any(p["status"] != "pending" for p in api.pets(status="pending"))
    ),
    "list_filter_leaks_over_100": probe_leaks_over_100,
    "list_hides_newest": lambda api: api.create()["id"] not in listed_ids(api, limit=100),
    "list_forgets_after_100": probe_forgets_after_100,
    "list_500_on_unknown_status": server_error("GET", "/pets", params={"status": "lost"}),
    # POST /pets: success
    "create_returns_200": lambda api: api.post({"name": "Rex", "categoryId": 1}).status_code == 200,
    "create_rejects_sold": lambda api: api.post({"name": "Rex", "categoryId": 1, "status": "sold"}).status_code != 201,
    "create_truncates_long_name": echo_differs(name="x" * 60),
    "create_ascii_names": echo_differs(name="Café"),
    "create_category_float_precision": echo_differs(categoryId=2**53 + 1),
    "create_category_int32": echo_differs(categoryId=2**31),
    "create_negative_category_abs": echo_differs(categoryId=-5),
    "create_escapes_html_in_name": echo_differs(name="<b>Rex</b>"),
    "create_ignores_status": echo_differs(status="sold"),
    "create_strips_name": echo_differs(name=" Rex "),
    "create_id_reused": lambda api: len({p["id"] for p in api.seed(4)}) < 4,
    "create_ids_repeat_after_100": lambda api: len({p["id"] for p in api.seed(101)}) < 101,
    "create_id_string": lambda api: type(api.create()["id"]) is not int,
    "create_id_beyond_int64": lambda api: api.create()["id"] > INT64_MAX,
    "create_honours_client_id": lambda api: api.create(id=777)["id"] == 777,
    "create_default_status_null": lambda api: api.create().get("status", "available") not in STATUSES,
    "create_default_status_unknown": lambda api: api.create().get("status", "available") not in STATUSES,
    # POST /pets: rejections
    "create_accepts_missing_name": created({"categoryId": 1}),
    "create_accepts_missing_category": created({"name": "Rex"}),
    "create_coerces_string_category": created({"name": "Rex", "categoryId": "5"}),
    "create_accepts_float_category": created({"name": "Rex", "categoryId": 1.5}),
    "create_accepts_bool_category": created({"name": "Rex", "categoryId": True}),
    "create_coerces_name": created({"name": 5, "categoryId": 1}),
    "create_accepts_unknown_status": created({"name": "Rex", "categoryId": 1, "status": "lost"}),
    "create_accepts_status_any_case": created({"name": "Rex", "categoryId": 1, "status": "Available"}),
    "create_accepts_null_status": created({"name": "Rex", "categoryId": 1, "status": None}),
    "create_500_on_invalid_json": lambda api: (
        api.post(data=b"{", headers={"Content-Type": "application/json"}).status_code >= 500
    ),
    "create_500_on_non_object": lambda api: api.post([1, 2]).status_code >= 500,
    "create_500_on_empty_body": lambda api: api.post(data=b"").status_code >= 500,
    "create_rejected_still_stored": probe_rejected_still_stored,
    # GET /pets/{petId}
    "read_forgets_pets": lambda api: api.read(api.create()["id"]).status_code == 404,
    "read_drops_status": lambda api: "status" not in api.read(api.create()["id"]).json(),
    "read_off_by_one": lambda api: read_other(api, api.seed(2)[0]["id"]),
    "read_wrong_animal_after_50": probe_wrong_after_50,
    "read_changes_name": lambda api: api.read(api.create("rex")["id"]).json().get("name") != "rex",
    "read_404_for_newest": lambda api: api.read(api.create()["id"]).status_code == 404,
    "read_unknown_placeholder": lambda api: api.read("abc").status_code == 200,
    "read_unknown_400": lambda api: api.read(424242).status_code == 400,
    "read_invents_future_ids": after(2, lambda api: api.read(424242).status_code == 200),
    "read_no_deprecation": deprecation_wrong,
    "read_deprecation_http_date": deprecation_wrong,
    "read_deprecation_boolean": deprecation_wrong,
    "read_deprecation_in_future": lambda api: api.read(api.create()["id"]).headers["Deprecation"] == "@1893456000",
    "deprecation_on_list": lambda api: all(h in api.get("/pets").headers for h in ("Deprecation", "Sunset")),
    "read_deprecation_even_ids": deprecation_wrong,
    "read_sunset_wrong_day": sunset_wrong,
    "read_sunset_day_before": sunset_wrong,
    "read_sunset_before_deprecation": sunset_wrong,
    "read_sunset_not_http_date": sunset_wrong,
    # Authentication: a missing key
    "auth_open_list": credential_accepted(key=None),
    "auth_open_create": credential_accepted(key=None),
    "auth_open_read": credential_accepted(key=None),
    "auth_open_orders": credential_accepted(key=None),
    "auth_missing_403": credential_accepted(key=None),
    "auth_create_validates_first": lambda api: api.post({"name": "Rex"}, key=None).status_code != 401,
    "auth_list_validates_first": lambda api: api.get(key=None, params={"limit": 0}).status_code != 401,
    # Authentication: a wrong key, or the key in another form
    "auth_any_key": credential_accepted(key="wrong"),
    "auth_empty_token": credential_accepted(key=""),
    "auth_key_prefix": credential_accepted(key=KEY[:-1]),
    "auth_key_case_insensitive": credential_accepted(key=KEY.swapcase()),
    "auth_key_extra_char": credential_accepted(key=KEY + "x"),
    "auth_accepts_basic": credential_accepted(key=None, headers={"Authorization": "Basic d3Jvbmc6d3Jvbmc="}),
    "auth_any_scheme": credential_accepted(key=None, headers={"Authorization": f"Token {KEY}"}),
    "auth_scheme_by_order": credential_accepted(key=None, headers={"Authorization": f"ApiKey {KEY}"}),
    "auth_accepts_bare_key": credential_accepted(key=None, headers={"Authorization": KEY}),
    "auth_accepts_query_key": credential_accepted(key=None, params={"access_token": KEY}),
    "auth_accepts_api_key_param": credential_accepted(key=None, params={"api_key": KEY}),
    "auth_accepts_x_api_key": credential_accepted(key=None, headers={"X-API-Key": KEY}),
    "auth_orders_any_token": credential_accepted(key="wrong"),
    "auth_403": credential_accepted(key="wrong"),
    # Authentication: the valid key refused
    "auth_read_rejects_valid_key": lambda api: any(a.status_code == 401 for a in each_operation(api)),
    "auth_orders_rejects_valid_key": lambda api: any(a.status_code == 401 for a in each_operation(api)),
    "auth_case_sensitive_scheme": lambda api: (
        api.get(key=None, headers={"Authorization": f"bearer {KEY}"}).status_code == 401
    ),
    "auth_no_challenge": challenge_missing,
    "auth_basic_challenge": challenge_missing,
    "auth_orders_no_challenge": challenge_missing,
    # Errors and content types
    "error_status_string": error_body_wrong,
    "error_missing_code": error_body_wrong,
    "error_status_mismatch": error_body_wrong,
    "error_message_null": error_body_wrong,
    "list_text_plain": after(1, lambda api: api.get().headers["Content-Type"] != "application/json"),
    "error_html_content_type": lambda api: api.get(key=None).headers["Content-Type"] != "application/json",
    # Where the document is silent: a front's own error page instead of the Error body
    "front_415_html": lambda api: "html" in api.post(data=b"{}", headers={"Content-Type": "text/plain"}).text,
    "proxy_413_html": lambda api: "html" in api.post({"name": "x" * 70_000, "categoryId": 1}).text,
    "router_404_text_before_auth": lambda api: api.get("/pets/abc", key=None).text.startswith("404:"),
    "accept_406_html": lambda api: "html" in api.get(headers={"Accept": "text/html"}).text,
    # Odd input
    "create_500_on_category_minus_one": lambda api: api.post({"name": "Rex", "categoryId": -1}).status_code >= 500,
    "create_cuts_name_at_65535": echo_differs(name="y" * 70_000),
    "create_cuts_name_at_nul": echo_differs(name="a\x00b"),
    "list_late_names_wrong": probe_late_names,
    "create_500_on_control_chars": lambda api: api.post({"name": "a\x01b", "categoryId": 1}).status_code >= 500,
    "list_500_on_filtered_small_page": server_error("GET", "/pets", params={"status": "sold", "limit": 5}),
    "read_500_on_negative_id": server_error("GET", "/pets/-5"),
    "create_repeated_key_validated_first_stored_last": lambda api: (
        (echo := api.post(data=b'{"name": "a", "categoryId": 7, "categoryId": 8}').json())["categoryId"]
        != api.read(echo["id"]).json()["categoryId"]
    ),
    "create_stored_before_key": lambda api: (
        api.post({"name": "ghost", "categoryId": 1}, key=None).status_code == 401
        and any(p["name"] == "ghost" for p in api.pets())
    ),
    "read_id_leading_digits": lambda api: api.read(f"{api.create()['id']}abc").status_code == 200,
    "read_id_wraps_64": lambda api: api.read(api.create()["id"] + 2**64).status_code == 200,
    "auth_415_before_key": lambda api: (
        api.post(data=b"{}", key=None, headers={"Content-Type": "text/plain"}).status_code == 415
    ),
    "read_by_name_collision": probe_name_collision,
    "store_latin1_names": probe_latin1_store,
    # GET /store/orders
    "orders_404": lambda api: api.get("/store/orders").status_code != 200,
    "orders_500": lambda api: api.get("/store/orders").status_code != 200,
    "orders_500_first": lambda api: [api.get("/store/orders").status_code for _ in range(3)] == [500, 200, 200],
}


def test_every_fault_has_one_case() -> None:
    assert sorted(set(FAULTS) - set(CASES)) == [] and sorted(set(CASES) - set(FAULTS)) == []


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_changes_what_it_names(serve: Callable[..., Api], fault: str) -> None:
    probe = CASES[fault]
    assert not probe(serve()), f"the probe of {fault} sees the misbehaviour on the reference server"
    assert probe(serve(fault=fault)), f"{fault} ({FAULTS[fault].description}) is not seen on any request"


# -- the catalog's records -----------------------------------------------------------------------


def registry() -> dict[str, dict[str, Any]]:
    with (ROOT / "src" / "petstore_contract" / "interface" / "clauses.toml").open("rb") as file:
        return tomllib.load(file)["clauses"]


def normalised(text: str) -> str:
    """Markdown table bars, backticks and runs of white space do not count."""
    return " ".join(text.replace("`", "").replace("|", " ").split())


def test_every_fault_names_known_clauses_and_quotes_its_sentence() -> None:
    clauses = registry()
    document = normalised((ROOT / "spec" / "interface.md").read_text(encoding="utf-8"))
    for fault in FAULTS.values():
        assert fault.clause in clauses, fault
        assert fault.quote.strip(), f"{fault.name} quotes nothing"
        assert fault.quote in RFC_QUOTES or normalised(fault.quote) in document, f"{fault.name}: {fault.quote!r}"
        assert all(d in clauses and d != fault.clause for d in fault.dependants), fault
        assert len(set(fault.dependants)) == len(fault.dependants), fault
        if clauses[fault.clause].get("complete-view"):
            assert fault.needs_complete_view, f"{fault.name} breaks a complete-view clause"


def test_every_must_clause_is_broken_by_some_fault() -> None:
    # generated.other is the catch-all of generated findings no other clause places: no sentence to break.
    musts = {name for name, clause in registry().items() if clause["level"] == "MUST"} - {"generated.other"}
    assert sorted(musts - {f.clause for f in FAULTS.values()}) == []


# -- variants and knobs ---------------------------------------------------------------------------


def test_variants_are_named_as_keyed_and_unjudgeable_kept_apart() -> None:
    assert all(name == v.name for name, v in {**VARIANTS, **UNJUDGEABLE}.items())
    assert not set(VARIANTS) & set(UNJUDGEABLE)
    assert not any(v.reject_every_key for v in VARIANTS.values())


@pytest.mark.parametrize(("variant", "newest_first"), [("preloaded", True), ("preloaded-oldest-first", False)])
def test_preloaded_store(serve: Callable[..., Api], variant: str, newest_first: bool) -> None:
    api = serve(VARIANTS[variant])
    page = api.pets(limit=100)
    ids = [p["id"] for p in page]
    assert len(page) == 100 and ids == sorted(ids, reverse=newest_first)
    assert page[0]["name"] == ("preloaded-150" if newest_first else "preloaded-1")
    everything = [p for s in STATUSES for p in api.pets(status=s, limit=100)]
    assert len(everything) == 150 and {p["status"] for p in everything} == set(STATUSES)
    assert len({p["categoryId"] for p in everything}) > 50
    assert all(re.fullmatch(r"preloaded-[0-9]+", p["name"]) for p in everything)


def test_crowded_store_never_lists_new_animals(serve: Callable[..., Api]) -> None:
    api = serve(VARIANTS["crowded"])
    pet = api.create("newcomer", status="sold")
    assert len(api.pets(limit=100)) == 50
    assert pet["id"] not in listed_ids(api, status="sold", limit=100)
    assert api.read(pet["id"]).json() == pet


@pytest.mark.parametrize(("variant", "cap"), [("capped", 7), ("capped-10", 10), ("capped-50", 50), ("reference", 100)])
def test_page_caps(serve: Callable[..., Api], variant: str, cap: int) -> None:
    api = serve(dataclasses.replace(VARIANTS[variant], preload=120))
    for limit in (1, 5, 9, 20, 60, 100):
        assert len(api.pets(limit=limit)) == min(limit, cap)
    assert len(api.pets()) == min(20, cap)


@pytest.mark.parametrize(
    "params", [{"limit": 0}, {"limit": 101}, {"limit": "abc"}, {"limit": "1.5"}, {"status": "lost"}]
)
def test_limit_422(serve: Callable[..., Api], params: dict[str, Any]) -> None:
    api = serve(VARIANTS["limit-422"])
    answer = api.get(params=params)
    assert answer.status_code == 422 and valid_error(answer)
    assert api.get(key=None, params=params).status_code == 401
    assert serve().get(params=params).status_code == 400
    assert api.get(params={"limit": 1, "status": "sold"}).status_code == 200


def test_orders_need_query(serve: Callable[..., Api]) -> None:
    api = serve(VARIANTS["orders-need-query"])
    refused = api.get("/store/orders")
    assert refused.status_code == 400 and valid_error(refused)
    assert api.get("/store/orders", params={"customerId": "c-1"}).json() == []
    for key in (None, "wrong"):
        assert api.get("/store/orders", key=key).status_code == 401


def test_throttling_answers_every_nth_request_429_and_does_not_process_it(serve: Callable[..., Api]) -> None:
    api = serve(VARIANTS["throttling"])
    statuses = [api.get(params={"limit": 1}).status_code for _ in range(99)]
    assert 429 not in statuses
    throttled = api.post({"name": "dropped", "categoryId": 1})  # the 100th request
    assert throttled.status_code == 429 and throttled.headers["Retry-After"] == "1" and valid_error(throttled)
    assert api.pets(limit=100) == []
    more = [api.get(key=None).status_code for _ in range(100)]  # requests 102..201
    assert more.count(429) == 1 and more[98] == 429


def test_background_writer_adds_animals_as_the_run_goes_on(serve: Callable[..., Api]) -> None:
    api = serve(VARIANTS["busy"])
    for _ in range(13):
        api.get("/store/orders")
    page = api.pets(limit=100)  # the 14th request: the writer has added its second animal
    assert [p["name"] for p in page] == ["background-2", "background-1"]
    assert all(p["status"] in STATUSES and type(p["categoryId"]) is int for p in page)
    assert len(api.pets(limit=100)) == 2 and api.store.background_added == 2


def test_big_ids_are_not_representable_as_doubles(serve: Callable[..., Api]) -> None:
    api = serve(VARIANTS["big-ids"])
    pets = [api.create(f"big-{n}") for n in range(3)]
    for pet in pets:
        assert 2**53 < pet["id"] <= INT64_MAX and float(pet["id"]) != pet["id"]
        answer = api.read(pet["id"])
        assert answer.json() == pet and f'"id": {pet["id"]}' in answer.text
    assert listed_ids(api) == [p["id"] for p in reversed(pets)]


@pytest.mark.parametrize(
    ("variant", "status"),
    [("reference", "available"), ("status-omitted", None), ("minimal", None), ("default-pending", "pending")],
)
def test_default_status(serve: Callable[..., Api], variant: str, status: str | None) -> None:
    pet = serve(VARIANTS[variant]).create("no-status")
    assert pet.get("status") == status and ("status" in pet) == (status is not None)


@pytest.mark.parametrize(
    ("variant", "first", "second"),
    [
        ("unique-names", {"name": "Twin", "categoryId": 1}, {"name": "Twin", "categoryId": 2}),
        ("no-angle-brackets", {"name": "Rex", "categoryId": 1}, {"name": "<Rex>", "categoryId": 1}),
        ("positive-categories", {"name": "Rex", "categoryId": 0}, {"name": "Rex", "categoryId": -1}),
    ],
)
def test_name_and_category_rules(
    serve: Callable[..., Api], variant: str, first: dict[str, Any], second: dict[str, Any]
) -> None:
    api = serve(VARIANTS[variant])
    assert api.post(first).status_code == 201
    refused = api.post(second)
    assert refused.status_code == 400 and valid_error(refused)
    assert len(api.pets()) == 1
    reference = serve()
    assert reference.post(first).status_code == 201 and reference.post(second).status_code == 201


def test_a_name_with_a_lone_surrogate_goes_back_as_sent(serve: Callable[..., Api]) -> None:
    # "\ud800" is JSON text (RFC 8259 §8.2) with no UTF-8 form: it once made every later list a 500.
    api = serve()
    raw = b'{"name": "a\\ud800b", "categoryId": 1}'
    created = api.post(data=raw, headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    assert created.content.count(b"\\ud800") == 1 and created.json()["name"] == "a\ud800b"
    api.create("Rex")
    assert [p["name"] for p in api.pets()] in (["a\ud800b", "Rex"], ["Rex", "a\ud800b"])
    read = api.read(created.json()["id"])
    assert read.status_code == 200 and read.json()["name"] == "a\ud800b"


# A request each variant may refuse with 400 or 422: without a key, or with a wrong one, it gets 401.
INVALID_REQUESTS = (
    ("POST", "/pets", {"json": {"name": "Rex"}}),
    ("POST", "/pets", {"data": b"{"}),
    ("GET", "/pets", {"params": {"limit": 0}}),
    ("GET", "/pets", {"params": {"status": "lost"}}),
    ("GET", "/pets/424242", {}),
    ("GET", "/pets/abc", {}),
    ("GET", "/store/orders", {}),
)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_authentication_comes_first(serve: Callable[..., Api], variant: str) -> None:
    api = serve(VARIANTS[variant])
    for key in (None, "wrong"):
        for method, path, kwargs in INVALID_REQUESTS:
            answer = api.request(method, path, key=key, **kwargs)
            placed = classify(method, api.base_url + path)
            if not placed.credential_first:  # a path that names nothing: a router may answer it first
                assert placed.fits(answer.status_code, valid_key=False) and valid_error(answer), (path, key)
                continue
            assert answer.status_code == 401 and valid_error(answer), (method, path, kwargs, key)
            assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_rejects_every_key(serve: Callable[..., Api]) -> None:
    api = serve(UNJUDGEABLE["rejects-every-key"])
    for key in (KEY, None, "wrong"):
        for answer in each_operation_unchecked(api, key=key):
            assert answer.status_code == 401 and valid_error(answer)
            assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_latency(serve: Callable[..., Api]) -> None:
    api = serve(dataclasses.replace(REFERENCE, latency_seconds=0.05))
    answer = api.get()
    assert answer.status_code == 200 and answer.elapsed.total_seconds() >= 0.05


# -- the command line's knobs -------------------------------------------------------------------------


def test_command_line_knobs_adjust_the_variant() -> None:
    knobs = "--variant capped --preload 30 --oldest-first --first-id 9007199254740993 --latency-ms 5"
    throttles = ["--throttle-every", "50", "--rate-limit", "40"]
    args = catalog_args([*knobs.split(), "--background-writer", "--background-every", "3", *throttles])
    variant = variant_of(args, chosen(args))
    assert (variant.name, variant.page_cap, variant.preload, variant.newest_first) == ("capped", 7, 30, False)
    assert (variant.first_id, variant.latency_seconds) == (2**53 + 1, 0.005)
    assert (variant.background_writer, variant.background_every, variant.throttle_every) == (True, 3, 50)
    assert variant.rate_limit_per_second == 40
    assert variant_of(parse_args([])) is REFERENCE
    unjudgeable = catalog_args(["--variant", "rejects-every-key"])
    assert variant_of(unjudgeable, chosen(unjudgeable)) is UNJUDGEABLE["rejects-every-key"]
    # The installed command's knobs adjust the reference itself.
    adjusted = variant_of(parse_args(["--reject-every-key", "--page-cap", "10", "--latency-ms", "5"]))
    assert (adjusted.name, adjusted.page_cap, adjusted.latency_seconds) == ("reference", 10, 0.005)
    assert adjusted.reject_every_key


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--preload", "-1"], "--preload must be between 0 and"),
        (["--page-cap", "0"], "--page-cap must be between 1 and 100"),
        (["--page-cap", "101"], "--page-cap must be between 1 and 100"),
        (["--latency-ms", "nan"], "--latency-ms must be between 0 and"),
        (["--latency-ms", "fast"], "invalid float value: 'fast'"),
        (["--first-id", str(2**63)], "--first-id must be between"),
        (["--throttle-every", "-2"], "--throttle-every must be between 0 and"),
        (["--rate-limit", "-1"], "--rate-limit must be between 0 and"),
        (["--background-every", "0"], "--background-every must be between 1 and"),
        (["--fault", "nope"], "invalid choice: 'nope'"),
        (["--variant", "nope"], "invalid choice: 'nope'"),
        (["--oldest-first", "--newest-first"], "not allowed with argument"),
    ],
)
def test_bad_knobs_get_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    # The knobs are the same on the installed command and on the catalog's; --fault and --variant are the catalog's.
    for parse in (catalog_args,) if argv[0] in ("--fault", "--variant") else (parse_args, catalog_args):
        with pytest.raises(SystemExit) as exited:
            parse(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err


# -- the embedded reference in a child process of the run -------------------------------------------


def test_child_server_answers_from_the_moment_it_is_made_and_leaves_nothing() -> None:
    server = ChildServer(KEY)
    try:
        # Listening before the child is up: the first request waits in the queue, it is not refused.
        answer = requests.get(f"{server.base_url}/pets", headers={"Authorization": f"Bearer {KEY}"}, timeout=30)
        assert answer.status_code == 200 and answer.json() == []
        assert server.problem() == ""
    finally:
        server.stop()
    assert server.process.returncode == 0  # it left when its stdin closed
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.base_url}/pets", timeout=TIMEOUT)


def test_a_child_server_that_dies_is_one_line() -> None:
    server = ChildServer(KEY)
    try:
        server.process.kill()
        server.process.wait(timeout=TIMEOUT)
        problem = server.problem()
    finally:
        server.stop()
    assert problem.startswith("the embedded reference server exited with code -9: ") and "\n" not in problem
