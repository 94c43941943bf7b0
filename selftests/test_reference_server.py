"""The reference server on its own: each variant and knob behaves as described, on the command line
too, and the embedded reference's child process (the fault table is ``test_fault_table.py``'s).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest
import requests

from devtools.catalog import UNJUDGEABLE, VARIANTS
from devtools.catalog.__main__ import chosen
from devtools.catalog.__main__ import parse_args as catalog_args
from loopback import (
    KEY,
    STATUSES,
    TIMEOUT,
    Api,
    each_operation_unchecked,
    listed_ids,
    valid_error,
)
from petstore_contract.interface.silence import classify
from petstore_contract.reference import REFERENCE
from petstore_contract.reference.__main__ import parse_args, variant_of
from petstore_contract.reference.child import ChildServer

INT64_MAX = 2**63 - 1


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
                assert placed.fits(answer.status_code) and valid_error(answer), (path, key)
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
