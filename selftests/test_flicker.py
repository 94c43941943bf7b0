"""A flickering deployment gets the verdict a CI gate needs (issue 44): each row of the issue's table,
reproduced by ``flicker.FlickerProxy`` in front of the reference, with the verdict its last column asks for.

The reference conforms, so whatever a run blames on it is the proxy's doing: a transient failure of the
deployment makes the run conformant, or inconclusive with the cause named, never not conformant; a
store that forgets (the restart) breaks ``create.id`` in fact.  A fault of the catalog whose 500 is
reproducible stays caught behind the same proxy.

Each run is a quick one (``--contract-profile quick``) in a suite host (``hosted.run_hosted``); the
slow rows take small values (a 2 s stall, a 1 s request timeout for the trickle).  Every fault is seeded
and counted by the proxy, and each test first checks that its row did happen, so that a pass is never
a run in which the proxy did nothing.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import requests
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from devtools import SuiteRun
from devtools.catalog import FAULTS, catalog_app
from flicker import (
    FlickerProxy,
    Mode,
    gateway_502,
    idle_reset,
    reset_after_answer,
    restart,
    rolling_deploy,
    stall,
    trickle,
)
from flickerwire import NGINX_502
from gatekit import QUICK
from hosted import run_hosted
from petstore_contract.reference import REFERENCE, build_app

KEY = "flicker-" + secrets.token_urlsafe(12)  # never printed: the runs get it in their environment
SEED = 44  # the proxy's: 7 gateway pages in the first 608 requests; a lost create at a rate of 2 % of the POSTs
# A GET whose 500 comes back every time it is asked (faults.toml: "answers 500 to GET /store/orders").
REPRODUCIBLE_500 = "orders_500"


def reference() -> Any:
    return build_app(KEY, REFERENCE)


def behind(make_app: Callable[[], Any], *modes: Mode, args: tuple[str, ...] = ()) -> tuple[SuiteRun, FlickerProxy]:
    """A quick suite run against ``make_app``'s server behind the proxy with ``modes``; the proxy, stopped,
    keeps its counts and its upstreams' stores for the test to read."""
    with FlickerProxy(make_app, *modes, seed=SEED) as proxy:
        run = run_hosted(proxy.base_url, KEY, *QUICK, *args, keep=("summary.json", "junit.xml"), timeout=300)
    # The proxy's own trouble with its upstream would be a fault no mode asked for.
    assert proxy.counts.upstream_failures == 0, proxy.counts
    # A finding set aside as the deployment's is no violation: its test is no failure either (JUnit's
    # failures >= 1 exactly when the exit code is 1).
    junit = ET.fromstring(run.reports["junit.xml"])
    failures = sum(int(suite.get("failures", "0")) for suite in junit.iter("testsuite"))
    assert (failures >= 1) == (run.exit_code == 1), (failures, run.exit_code, told(run, proxy))
    return run, proxy


def told(run: SuiteRun, proxy: FlickerProxy) -> str:
    """What a failed assertion shows: the verdict, the clauses and what the proxy did (never the key)."""
    summary = run.summary
    return (
        f"verdict {run.verdict} (exit {run.exit_code}): {summary.get('reason')!r}; violated {sorted(run.violated())}; "
        f"undecided {sorted(run.clauses('undecided'))}; warnings {summary.get('warnings')}; "
        f"facts {facts(summary)}; proxy {proxy.counts}\n{run.output[-2000:]}"
    )


def facts(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def counted(summary: dict[str, Any], word: str) -> int:
    """The sum of summary.json's counters whose name holds ``word`` (``throttled``, ``..._resets``, ``stalled_...``)."""
    return int(sum(v for k, v in facts(summary).items() if word in k))


def said(run: SuiteRun) -> str:
    """Everything the run says in words: reason, verdict line, warnings, problems and every note's reason."""
    summary = run.summary
    notes = [n["reason"] for c in summary.get("clauses", ()) for n in c.get("notes", ())]
    lines = [summary.get("reason", ""), summary.get("verdict_line", ""), *summary.get("warnings", ())]
    return "\n".join([*lines, *summary.get("problems", ()), *notes])


# -- the proxy itself: framing, keep-alive, and each mode at rate 1 (no suite run) -------------------


def framings() -> Starlette:
    """An upstream answering in each framing: Content-Length, chunked, and a HEAD."""

    async def sized(request: Request) -> Response:
        return Response(b"x" * 1000, media_type="text/plain")

    async def chunked(request: Request) -> StreamingResponse:
        async def parts() -> Any:
            for n in range(5):
                yield f"part-{n};".encode()

        return StreamingResponse(parts(), media_type="text/plain")

    return Starlette(routes=[Route("/v1/sized", sized, methods=["GET", "HEAD"]), Route("/v1/chunked", chunked)])


def test_the_proxy_relays_every_framing_on_one_kept_alive_connection() -> None:
    with FlickerProxy(framings) as proxy, requests.Session() as session:
        for _ in range(3):
            chunked = session.get(proxy.base_url + "/chunked", timeout=5)
            assert chunked.headers.get("transfer-encoding") == "chunked"
            assert chunked.text == "".join(f"part-{n};" for n in range(5))
            assert session.get(proxy.base_url + "/sized", timeout=5).content == b"x" * 1000
            head = session.head(proxy.base_url + "/sized", timeout=5)
            assert head.status_code == 200 and head.headers["content-length"] == "1000" and head.content == b""
    assert proxy.counts.connections == 1 and proxy.counts.forwarded == 9, proxy.counts


def test_each_mode_does_what_it_says() -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    pet = {"name": "flicker-mode", "categoryId": 1}
    with requests.Session() as session:
        with FlickerProxy(reference, gateway_502(1.0)) as proxy:
            page = session.get(proxy.base_url + "/pets", headers=auth, timeout=5)
        assert (page.status_code, page.headers["content-type"], page.content) == (502, "text/html", NGINX_502)
        with FlickerProxy(reference, rolling_deploy(seconds=60, start_after=0)) as proxy:
            busy = session.post(proxy.base_url + "/pets", json=pet, headers=auth, timeout=5)
        assert (busy.status_code, busy.headers["retry-after"], proxy.counts.refused["POST"]) == (503, "1", 1)
        with FlickerProxy(reference, reset_after_answer(1.0, methods={"POST"})) as proxy:
            create = requests.Request("POST", proxy.base_url + "/pets", json=pet, headers=auth)
            prepared = session.prepare_request(create)
            for _ in "ab":  # the same bytes again on a fresh connection: what a transport's resend looks like
                with pytest.raises(requests.ConnectionError):
                    session.send(prepared, timeout=5)
            (store,) = proxy.stores()
        assert proxy.counts.lost_creates == [pet, pet] and len(store.pets) == 2, proxy.counts
        assert proxy.counts.sent_again == [prepared.body], proxy.counts
        with FlickerProxy(reference, restart(after=1)) as proxy:
            ids = [session.post(proxy.base_url + "/pets", json=pet, headers=auth, timeout=5).json()["id"] for _ in "ab"]
        assert ids[0] == ids[1] and proxy.counts.restarts == 1, ids
        # Lower bounds only: a slow machine makes these longer, never shorter.
        with FlickerProxy(framings, stall(every=2, seconds=0.3), trickle(bytes_per_write=100, delay=0.05)) as proxy:
            started = time.monotonic()
            bodies = [session.get(proxy.base_url + "/sized", timeout=5).content for _ in "ab"]
            took = time.monotonic() - started
        assert bodies == [b"x" * 1000] * 2 and took >= 0.3 + 2 * 9 * 0.05, took
        assert (proxy.counts.stalls, proxy.counts.trickles) == (1, 2), proxy.counts


@pytest.mark.tier_2
def test_the_proxy_alone_passes_the_reference() -> None:
    """Tier 2: in tier 1, every row's test shows the proxy relaying what it does not break."""
    run, proxy = behind(reference)
    assert proxy.counts.forwarded == proxy.counts.requests > 0, proxy.counts
    assert run.verdict == "conformant" and run.exit_code == 0, told(run, proxy)


def test_one_percent_of_gateway_502_pages_is_named_never_blamed() -> None:
    """Row 1: a 502 seen once and fine when asked again is the deployment's, not a breach of ``auth.*``."""
    run, proxy = behind(reference, gateway_502(0.01))
    assert proxy.counts.gateway_502 > 0, proxy.counts
    assert run.verdict in ("conformant", "inconclusive"), told(run, proxy)
    assert not {c for c in run.violated() if c.startswith(("auth.", "list."))}, told(run, proxy)
    assert "502" in said(run), f"the 502 pages go unnamed: {told(run, proxy)}"  # "name it as what it is"
    if run.verdict == "inconclusive":
        reason = run.summary["reason"]
        assert "502" in reason and "asked again" in reason, told(run, proxy)


def test_a_rolling_deploy_is_waited_out_for_every_method() -> None:
    """Row 2: 3 s of 503 + Retry-After: 1 during set-up's writes; the POSTs refused wait like the GETs."""
    run, proxy = behind(reference, rolling_deploy(seconds=3, start_after=30))
    refused = proxy.counts.refused_posts
    assert refused, proxy.counts  # the row: writes were refused
    judged_503 = [f for f in run.findings() if (f.get("exchange") or {}).get("status") == 503]
    assert not judged_503, f"judged on a 503 with Retry-After: {judged_503[:2]}\n{told(run, proxy)}"
    assert run.verdict == "conformant" and counted(run.summary, "throttled") > 0, told(run, proxy)
    # "The same wait for every operation the 503 refused": each refused write went out again after it.
    dropped = [body for body in refused if not proxy.counts.posts[body]]
    assert not dropped, f"{len(dropped)} of {len(refused)} refused POSTs never sent again: {dropped[:2]}"


def test_a_create_whose_answer_was_lost_is_never_sent_again() -> None:
    """Row 3: a POST reset after the upstream created the animal is an unknown write, not a repeated one."""
    run, proxy = behind(reference, reset_after_answer(0.02, methods={"POST"}))
    lost = proxy.counts.lost_creates
    assert lost, proxy.counts  # the row: at least one create applied whose answer never came back
    again = proxy.counts.sent_again
    assert not again, f"sent again after its connection was reset: {again}\n{told(run, proxy)}"
    # The store itself: a lost create whose name the run sent once holds one animal, never two.  (Not every
    # name is the run's alone: generated creates and some tables repeat theirs, so those are left out.)
    (store,) = proxy.stores()
    held = Counter(pet["name"] for pet in store.pets.values() if isinstance(pet["name"], str))
    sent = _names(proxy.counts.posts.elements()) - _names(again)
    twice = [name for body in lost if sent[name := str(body.get("name"))] == 1 and held[name] > 1]
    assert not twice, f"created twice: {twice}\n{told(run, proxy)}"
    # Every reset the proxy made reached a client waiting for its answer: each is one the run saw.
    assert counted(run.summary, "reset") >= proxy.counts.resets, f"resets not in summary.json: {told(run, proxy)}"
    assert run.verdict in ("conformant", "inconclusive"), told(run, proxy)
    if run.verdict == "inconclusive":
        assert re.search(r"lost|reset", run.summary["reason"]), told(run, proxy)
    # An undecided clause's declared reason is checked against the store as it was.
    false = [line for line in said(run).splitlines() if "100 animals or fewer" in line and len(store.pets) > 100]
    assert not false, f"the store held {len(store.pets)} animals: {false[:1]}\n{told(run, proxy)}"


def test_a_keep_alive_race_loses_no_write() -> None:
    """A kept-alive connection idle 0.2 s or more is reset as its next request arrives, unread (the keep-alive
    timeout's race, RFC 9112 §9.6): the reads are sent once more, no write ever goes out on such a connection,
    and the run is conformant with no write lost."""
    run, proxy = behind(reference, idle_reset(0.2))
    races = proxy.counts.idle_resets
    assert sum(races.values()) > 0, proxy.counts  # the row: requests did arrive on idle connections
    assert races["POST"] == 0, f"writes sent on idle connections: {told(run, proxy)}"
    assert run.verdict == "conformant" and run.summary["unknown_writes"] == 0, told(run, proxy)


# Tier 2: in tier 1, test_a_keep_alive_race_loses_no_write shows the mechanism on one run.
@pytest.mark.tier_2
def test_ten_runs_behind_the_keep_alive_race_are_conformant() -> None:
    """The users' measure: 10 of 10 runs conformant behind the race, no write lost, no write on an idle connection."""
    outcomes = []
    for _ in range(10):
        run, proxy = behind(reference, idle_reset(0.2))
        outcomes.append((run.verdict, run.summary.get("unknown_writes"), proxy.counts.idle_resets["POST"]))
    assert outcomes == [("conformant", 0, 0)] * 10, outcomes


def _names(bodies: Iterable[bytes]) -> Counter[str]:
    """The names of POST bodies that are JSON objects with a string name, counted."""
    names: Counter[str] = Counter()
    for body in bodies:
        try:
            parsed = json.loads(body)
        except ValueError:
            continue
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            names[parsed["name"]] += 1
    return names


def test_a_restart_that_hands_ids_out_again_breaks_create_id() -> None:
    """Row 4: the store starts over mid-run; ids handed out twice are ``create.id``'s, and the cause is named."""
    run, proxy = behind(reference, restart(after=300))
    first, second = proxy.stores()
    assert proxy.counts.restarts == 1 and second.pets and set(first.pets) & set(second.pets), proxy.counts
    assert run.verdict == "not_conformant" and "create.id" in run.violated(), told(run, proxy)
    words = said(run).lower()
    assert "no longer found" in words or "restart" in words, told(run, proxy)


@pytest.mark.tier_2
def test_stalled_answers_are_judged_and_reported() -> None:
    """Row 5: every 50th answer held 2 s (within the 3 s request timeout): conformant, the stalls said."""
    run, proxy = behind(reference, stall(every=50, seconds=2), args=("--contract-request-timeout", "3"))
    assert proxy.counts.stalls > 0, proxy.counts
    assert run.verdict == "conformant", told(run, proxy)
    reported = counted(run.summary, "stall") > 0 or any("stall" in w for w in run.summary.get("warnings", ()))
    assert reported, f"no report mentions the {proxy.counts.stalls} stalls: {told(run, proxy)}"


@pytest.mark.tier_2
def test_a_trickling_answer_names_its_limit() -> None:
    """Row 6: bodies in 1-byte writes 0.1 s apart, each gap within the 1 s timeout, the body past 3 s."""
    run, proxy = behind(reference, trickle(bytes_per_write=1, delay=0.1), args=("--contract-request-timeout", "1"))
    assert proxy.counts.trickles > 0, proxy.counts
    reason = run.summary.get("reason", "")
    assert run.verdict == "inconclusive", told(run, proxy)
    assert re.search(r"answer( body)? still arriving after", reason), told(run, proxy)
    assert "--contract-request-timeout" in reason and "did not answer" not in reason, told(run, proxy)


# Tier 2: in tier 1, test_repeat_findings.py shows a steady fault reproduced and a 5xx seen once set aside.
@pytest.mark.tier_2
@pytest.mark.parametrize("flicker", [False, True], ids=["steady", "with-502-flicker"])
def test_a_reproducible_500_stays_caught_behind_the_proxy(flicker: bool) -> None:
    fault = FAULTS[REPRODUCIBLE_500]
    modes = (gateway_502(0.01),) if flicker else ()
    run, proxy = behind(lambda: catalog_app(KEY, REFERENCE, REPRODUCIBLE_500), *modes)
    assert proxy.counts.gateway_502 > 0 or not flicker, proxy.counts
    # Reproduced, the 500 is the service's: the gateway's 502s beside it set nothing aside (judging/flicker.py).
    assert run.verdict == "not_conformant" and fault.clause in run.violated(), told(run, proxy)
