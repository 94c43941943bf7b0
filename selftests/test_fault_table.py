"""The fault catalog's table: each fault changes the behaviour it names on at least one request while
the reference does not, and each record names known clauses and quotes the interface document (or an
RFC it relies on); every MUST clause is broken by some fault.
"""

from __future__ import annotations

import email.utils
import http.client
import re
import select
import socket
import tomllib
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from devtools.catalog import FAULTS, RFC_QUOTES
from loopback import KEY, STATUSES, Api, each_operation, listed_ids, valid_error

ROOT = Path(__file__).resolve().parents[1]
INT64_MAX = 2**63 - 1


# -- helpers of the fault table ----------------------------------------------------------------


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
    "http_trace_echo": lambda api: api.request("TRACE", "/pets").headers.get("content-type") == "message/http",
    "http_gzip_forced": lambda api: (
        api.get(headers={"Accept-Encoding": "identity"}).headers.get("content-encoding") == "gzip"
    ),
    "http_dot_segments_redirected": lambda api: _raw_status(api, "/pets/../pets") == 301,
    "http_chunked_refused": lambda api: (
        api.request("POST", "/pets", data=iter([b'{"name": "x", "categoryId": 1}'])).status_code == 400
    ),
    "http_refusal_cut_short": lambda api: _cut_short(api, "POST", "/pets", b'{"name": "x", "categoryId": 1}'),
    "http_chunked_500": lambda api: (
        api.request("POST", "/pets", data=iter([b'{"name": "x", "categoryId": 1}'])).status_code == 500
    ),
    "http_chunked_refusal_cut_short": lambda api: _cut_short(
        api, "POST", "/pets", b'{"name": "x", "categoryId": 1}', chunked=True
    ),
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
    "documented_path_redirected": lambda api: api.get(key=None, allow_redirects=False).status_code == 308,
    "read_by_name_collision": probe_name_collision,
    # Parsers more lenient than the document (issue 45)
    "create_member_names_folded": created({"Name": "Rex", "categoryId": 1}),
    "create_status_loose_equality": created({"name": "Rex", "categoryId": 1, "status": True}),
    "read_id_base_prefix": lambda api: api.read(hex(api.seed(17)[-1]["id"])).status_code == 200,
    "read_id_leading_zero_octal": lambda api: (
        api.seed(12) and api.read("012").status_code == 200 and api.read("012").json()["id"] == 10
    ),
    "create_repeated_key_validated_first_kept_last": lambda api: (
        api.post(data=b'{"name": "a", "categoryId": 7, "categoryId": "x"}').json().get("categoryId") == "x"
    ),
    "create_replaces_held_id": lambda api: (
        (held := api.create("held"))["id"] == api.create("other", id=held["id"])["id"]
    ),
    "create_not_utf8_500": lambda api: api.post(data=b'{"name": "\xff", "categoryId": 1}').status_code == 500,
    "create_status_checked_after_insert": lambda api: (
        api.post({"name": "ghost", "categoryId": 1, "status": "adopted"}).status_code == 400
        and any(p["name"] == "ghost" for p in api.pets())
    ),
    "store_latin1_names": probe_latin1_store,
    # GET /store/orders
    "orders_404": lambda api: api.get("/store/orders").status_code != 200,
    "orders_500": lambda api: api.get("/store/orders").status_code != 200,
    "orders_500_first": lambda api: (
        [
            (answer.status_code, answer.headers.get("content-type", "").startswith("text/plain"))
            for answer in _orders(api, 3)
        ]
        == [(500, True), (200, False), (200, False)]
    ),
    "orders_500_first_error_body": lambda api: (
        [
            (answer.status_code, (answer.json() if answer.status_code == 500 else {}).get("status"))
            for answer in _orders(api, 3)
        ]
        == [(500, 500), (200, None), (200, None)]
    ),
}


def _raw_status(api: Api, target: str) -> int:
    """The status of a GET sent with its request-target exactly as written (requests would remove dot segments)."""
    where = urlsplit(api.base_url)
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=5)
    try:
        connection.request("GET", where.path + target, headers={"Authorization": f"Bearer {KEY}"})
        return connection.getresponse().status
    finally:
        connection.close()


def _cut_short(api: Api, method: str, target: str, body: bytes, chunked: bool = False) -> bool:
    """Whether a request without the key (its body ``chunked`` or not) gets an answer that starts (its status)
    and never completes."""
    where = urlsplit(api.base_url)
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=5)
    try:
        headers = {"Content-Type": "application/json"}
        if chunked:  # framed here, so that the request goes out in one write, before any answer closes it
            body, headers["Transfer-Encoding"] = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body), "chunked"
        connection.request(method, where.path + target, body=body, headers=headers)
        answer = connection.getresponse()
        try:
            answer.read()
        except (http.client.IncompleteRead, ConnectionResetError):  # a close without a lingering close: a reset
            return True
        return False
    finally:
        connection.close()


def _orders(api: Api, times: int) -> list[Any]:
    return [api.get("/store/orders") for _ in range(times)]


def test_every_fault_has_one_case() -> None:
    assert sorted(set(FAULTS) - set(CASES)) == [] and sorted(set(CASES) - set(FAULTS)) == []


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_changes_what_it_names(serve: Callable[..., Api], fault: str) -> None:
    probe = CASES[fault]
    assert not probe(serve()), f"the probe of {fault} sees the misbehaviour on the reference server"
    assert probe(serve(fault=fault)), f"{fault} ({FAULTS[fault].description}) is not seen on any request"


def test_a_refusal_cut_short_ends_with_the_servers_close_when_the_body_comes_late(serve: Callable[..., Api]) -> None:
    """``http_refusal_cut_short`` is caught on its cut answer (RFC 9112 §6.3), which must end the same way on
    a busy client: the head sent, the body a moment later, the answer still breaks off at the server's FIN,
    never at a reset (the body arriving at a connection closed with it unread) that the suite cannot judge."""
    where = urlsplit(serve(fault="http_refusal_cut_short").base_url)
    body = b'{"name": "x", "categoryId": 1}'
    with socket.create_connection((where.hostname or "127.0.0.1", where.port or 80), timeout=5) as sock:
        head = f"POST {where.path}/pets HTTP/1.1\r\nHost: {where.netloc}\r\nContent-Type: application/json\r\n"
        sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode())
        select.select([sock], [], [], 0.5)  # an answer that does not wait for the body comes within this
        sock.sendall(body)
        received = b""
        try:
            while piece := sock.recv(65536):
                received += piece
        except ConnectionResetError:
            pytest.fail(f"the cut answer ended in a reset after {received!r}")
    assert received.startswith(b"HTTP/1.1 401"), received


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
