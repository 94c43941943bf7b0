"""The run's one HTTP transport, against loopback peers: bounds, breaker, budget, origin, throttling,
concurrency, and a Schemathesis call through its session (redaction and the guard:
``test_transport_guard.py``; proxies and TLS: ``test_transport_tls.py``; connections closed under a request
and the connections writes take: ``test_transport_connections.py``).

Every server listens on 127.0.0.1; every request has a timeout; each test checks what reached
(and what did not reach) the servers, so a transport that sends too much fails it.
"""

from __future__ import annotations

import email.utils
import gzip
import itertools
import pickle
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import requests
import schemathesis

from netpeers import PeerServer, Reply, Seen, free_port
from petstore_contract.core.redaction import REDACTED
from petstore_contract.defaults import DEFAULT_CONCURRENCY
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.transport import (
    TargetProblem,
)
from transportkit import KEY, one_line

ROOT = Path(__file__).resolve().parents[1]


# -- answers, failures, bounds --------------------------------------------------------------------


def test_request_answer_exchange_and_redaction(server: PeerServer, make_transport) -> None:
    transport = make_transport(server.base_url)
    answer = transport.request("POST", "/pets", params={"tag": "x", "token": KEY}, body=b'{"name": "Rex"}')
    assert answer.status == 200 and answer.json() == [] and answer.text == "[]"
    seen = server.requests[0]
    assert seen.headers["authorization"] == f"Bearer {KEY}" and seen.headers["content-type"] == "application/json"
    exchange = answer.exchange
    assert exchange.method == "POST" and exchange.status == 200 and exchange.response_body == "[]"
    assert exchange.url == f"{server.base_url}/pets?tag=x&token=$PETSTORE_API_KEY"
    assert ("Authorization", "Bearer $PETSTORE_API_KEY") in exchange.request_headers
    assert exchange.request_body == '{"name": "Rex"}' and exchange.response_length == 2
    command = exchange.curl("PETSTORE_API_KEY")
    assert KEY not in command and '"Authorization: Bearer $PETSTORE_API_KEY"' in command
    transport.request("GET", "/pets", headers={"Authorization": None})
    assert "authorization" not in server.requests[1].headers
    with pytest.raises(ValueError):
        replace(answer, body=b"<html>").json()
    assert transport.guard.counters() == {
        "requests": 2,
        "writes": 1,
        "no_answer": 0,
        "throttled": 0,
        "throttle_wait_s": 0.0,
        "repeats_not_sent": 0,
        "created": 0,
        "held_back": 0,
        "connection_resets": 0,
        "unknown_writes": 0,
        "stalled_answers": 0,
        "busy_resends": 0,
        "bodies_cut": 0,
        "writes_found": 0,
        "layer_requests": 0,
        "layer_kinds": 0,
        "layer_bytes": 0,
        "concurrency_min": DEFAULT_CONCURRENCY,  # never lowered: nothing stalled
    }


def test_refused_port_is_one_line_target_problem(make_transport) -> None:
    port = free_port()
    transport = make_transport(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(TargetProblem) as caught:
        transport.request("GET", "/pets", params={"limit": 1, "key": KEY})
    assert caught.value.kind == "target"
    assert one_line(caught.value) == f"GET http://127.0.0.1:{port}/v1/pets?limit=1&key={REDACTED}: connection refused"
    exchange = caught.value.exchange
    assert exchange is not None and exchange.status is None and exchange.problem == str(caught.value)
    assert transport.guard.counters()["no_answer"] == 1


# A body far larger than the cap and than what loopback sockets buffer: a client that read it whole would
# have had the server write every chunk before it answered.
HUGE_CHUNKS, CHUNK = 64_000, b"0," * 500


def test_body_over_the_cap_is_cut(make_transport) -> None:
    written = itertools.count()

    def huge(seen: Seen) -> Reply:
        def chunks() -> Iterator[bytes]:
            for _ in range(HUGE_CHUNKS):
                next(written)
                yield CHUNK

        size = str(HUGE_CHUNKS * len(CHUNK))
        return 200, {"Content-Type": "application/json", "Content-Length": size}, chunks()

    with PeerServer(huge) as peer:
        transport = make_transport(peer.base_url, max_body_bytes=100_000)
        with pytest.raises(TargetProblem) as caught:
            transport.request("GET", "/pets")
        sent = next(written)
    assert sent < HUGE_CHUNKS // 2, f"the server wrote {sent} of {HUGE_CHUNKS} chunks: the body was read on"
    assert one_line(caught.value) == (
        f"GET {peer.base_url}/pets: answer body exceeds 100000 bytes (--contract-max-body-bytes); stopped reading"
    )


def test_gzip_body_is_decoded_and_capped_decoded(make_transport) -> None:
    packed = gzip.compress(b'[{"id": 1}]' + b" " * 50_000)
    with PeerServer(lambda seen: (200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, packed)) as p:
        transport = make_transport(p.base_url)
        answer = transport.request("GET", "/pets")
        assert answer.json() == [{"id": 1}] and "Content-Encoding" not in answer.headers
        assert answer.headers["Content-Length"] == str(len(answer.body)) == "50011"
        small = make_transport(p.base_url, max_body_bytes=10_000)
        with pytest.raises(TargetProblem, match="exceeds 10000 bytes"):
            small.request("GET", "/pets")


def test_silent_target_and_echoed_key(make_transport) -> None:
    with PeerServer(lambda seen: (200, {"X-Echo": seen.headers.get("authorization", "")}, seen.body), delay=0.5) as p:
        slow = make_transport(p.base_url, timeout=0.2)
        with pytest.raises(TargetProblem) as caught:
            slow.request("GET", "/pets")
        assert one_line(caught.value) == f"GET {p.base_url}/pets: no answer within 0.2 s"
        answer = make_transport(p.base_url).request("PUT", "/pets/1", body=f'{{"name": "{KEY}"}}'.encode())
    # The key the target echoes back is recorded as the variable, never in clear.
    assert answer.body == f'{{"name": "{KEY}"}}'.encode()
    assert answer.exchange.response_body == '{"name": "$PETSTORE_API_KEY"}'
    assert answer.exchange.header("X-Echo") == "Bearer $PETSTORE_API_KEY"
    assert KEY not in repr(answer.exchange)


TRICKLE_BYTES, TRICKLE_PAUSE = 1000, 0.05  # one byte every 50 ms: the whole body in 50 s


def trickle(seen: Seen) -> Reply:
    def chunks() -> Iterator[bytes]:
        for _ in range(TRICKLE_BYTES):
            yield b" "
            time.sleep(TRICKLE_PAUSE)

    return 200, {"Content-Type": "application/json", "Content-Length": str(TRICKLE_BYTES)}, chunks()


def test_trickling_body_meets_the_deadline(make_transport) -> None:
    with PeerServer(trickle) as peer:
        transport = make_transport(peer.base_url, timeout=0.3)  # each byte arrives well within the timeout
        started = time.monotonic()
        with pytest.raises(TargetProblem) as caught:
            transport.request("GET", "/pets")
        elapsed = time.monotonic() - started
    # Bounds from what the test configures, not from the machine's speed: not before the body's limit
    # (3 x the timeout), and long before the trickle's whole body (a client without the limit reads on).
    assert 3 * 0.3 <= elapsed < TRICKLE_BYTES * TRICKLE_PAUSE / 2, elapsed
    assert caught.value.kind == "target"
    assert (
        one_line(caught.value)
        == f"GET {peer.base_url}/pets: answer still arriving after 0.9 s (the limit is 3 x --contract-request-timeout);"
        " stopped reading"
    )


# An answer that started and never completed (RFC 9112 §6.3), on a connection the target did not reset: its
# answer, judged (kind "incomplete"), not the network's.  (head, what of the body is sent, why it is short)
ERROR_START = b'{"code": "unauthorized", "mes'
CUT_SHORT = {
    "fewer-bytes": (
        {"Content-Length": "1000", "Connection": "close"},
        [ERROR_START],
        "the answer ended before its framing did (fewer bytes than its Content-Length)",
    ),
    "no-last-chunk": (
        {"Transfer-Encoding": "chunked", "Connection": "close"},
        [b"%x\r\n%s\r\n" % (len(ERROR_START), ERROR_START)],
        "the answer ended before its framing did (chunked, without its last chunk)",
    ),
    "stalled": (
        {"Content-Length": "1000"},  # the connection stays open, nothing more comes
        [ERROR_START],
        "answer body stalled: nothing more arrived within the request timeout",
    ),
}


@pytest.mark.parametrize("case", list(CUT_SHORT))
def test_an_answer_cut_short_is_the_targets_answer_judged(case: str, make_transport) -> None:
    head, body, why = CUT_SHORT[case]
    with PeerServer(lambda seen: (401, {"Content-Type": "application/json", **head}, iter(body))) as peer:
        transport = make_transport(peer.base_url, timeout=0.5)
        with pytest.raises(TargetProblem) as caught:
            transport.request(
                "POST", "/pets", body=b'{"name": "Rex", "categoryId": 1}', headers={"Authorization": None}
            )
    assert caught.value.kind == "incomplete" and one_line(caught.value) == f"POST {peer.base_url}/pets: {why}"
    exchange = caught.value.exchange
    assert exchange is not None and exchange.status == 401 and exchange.response_body == ERROR_START.decode()
    counters = transport.guard.counters()
    # The target answered: no request went unanswered, the write's outcome is its status's (refused).
    assert counters["requests"] == 1 and counters["no_answer"] == 0 and counters["unknown_writes"] == 0


def test_breaker_opens_after_n_and_then_sends_nothing(make_transport) -> None:
    with PeerServer(lambda seen: None) as peer:  # reads every request, never answers
        transport = make_transport(peer.base_url, circuit_breaker=3)
        messages = []
        for _ in range(5):
            with pytest.raises(TargetProblem) as caught:
                transport.request("GET", "/pets")
            messages.append(one_line(caught.value))
        assert len(peer.requests) == 6  # each of the 3 sent once more on a fresh connection, then nothing
    cause = f"GET {peer.base_url}/pets: the target closed the connection without answering"
    assert messages[:3] == [cause] * 3
    assert (
        messages[3:]
        == [f"target unusable: 3 requests in a row got no answer (last: {cause}); no more requests are sent"] * 2
    )
    assert transport.guard.counters()["requests"] == 6
    assert transport.guard.first_problem == cause


def test_spent_budget_sends_nothing(server: PeerServer, make_transport) -> None:
    transport = make_transport(server.base_url, deadline=time.time() - 0.1, budget=30.0)
    with pytest.raises(TargetProblem) as caught:
        transport.request("GET", "/pets")
    assert caught.value.kind == "budget"
    assert one_line(caught.value) == "run budget of 30 s spent (--contract-run-budget); request not sent"
    copied = pickle.loads(pickle.dumps(caught.value))
    assert (type(copied), copied.kind, str(copied)) == (TargetProblem, "budget", str(caught.value))
    with pytest.raises(TargetProblem):
        transport.session().get(server.base_url + "/pets", timeout=2)
    assert server.requests == [] and transport.guard.counters()["requests"] == 0


def test_budget_cuts_a_slow_request_short(make_transport) -> None:
    with PeerServer(delay=30.0) as peer:  # the answer comes long after the budget (and before the timeout)
        transport = make_transport(peer.base_url, timeout=60.0, deadline=time.time() + 0.5, budget=0.5)
        started = time.monotonic()
        with pytest.raises(TargetProblem) as caught:
            transport.request("GET", "/pets")
        assert time.monotonic() - started < peer.delay, "cut at the budget, not when the answer came"
    assert caught.value.kind == "budget"
    assert (
        one_line(caught.value)
        == f"run budget of 0.5 s spent (--contract-run-budget); GET {peer.base_url}/pets was cut short"
    )


# -- origin ---------------------------------------------------------------------------------------


def test_redirect_to_another_origin_is_not_followed(make_transport) -> None:
    with PeerServer() as other:

        def respond(seen: Seen) -> Reply:
            if seen.path.startswith("/v1/old"):
                return 301, {"Location": "/v1/pets"}, b""
            if seen.path.startswith("/v1/away"):
                return 302, {"Location": f"{other.base_url}/pets"}, b""
            return 200, {}, b"[]"

        with PeerServer(respond) as peer:
            transport = make_transport(peer.base_url)
            assert transport.request("GET", "/old").status == 200  # same origin: followed
            with pytest.raises(TargetProblem) as caught:
                transport.request("GET", "/away")
            assert one_line(caught.value) == (
                f"GET {peer.base_url}/away was redirected to another origin ({other.origin}); "
                "not followed, so the API key stays with the target"
            )
            assert caught.value.exchange is not None and caught.value.exchange.status == 302
            session = transport.session()  # requests follows redirects itself: the adapter refuses the hop
            with pytest.raises(TargetProblem) as refused:
                session.get(peer.base_url + "/away", headers=transport.auth_headers(), timeout=2)
            assert "is not the target's origin" in one_line(refused.value)
            not_followed = session.get(peer.base_url + "/away", timeout=2, allow_redirects=False)
            assert not_followed.status_code == 302
            with pytest.raises(TargetProblem):
                session.get(other.base_url + "/pets", timeout=2)
        assert other.requests == []  # neither the request nor the key reached the other host
        assert [s.path for s in peer.requests] == ["/v1/old", "/v1/pets", "/v1/away", "/v1/away", "/v1/away"]


# -- throttling -----------------------------------------------------------------------------------


def test_throttled_requests_are_waited_out(make_transport) -> None:
    lock = threading.Lock()
    throttled: set[str] = set()

    def respond(seen: Seen) -> Reply:
        with lock:
            first = seen.method + seen.path not in throttled
            throttled.add(seen.method + seen.path)
        if first and seen.method == "POST":
            return 429, {"Retry-After": "1"}, b""
        if first and seen.path.endswith(("/0", "/4")):
            return 429, {"Retry-After": "1"}, b""
        if first and seen.path.endswith("/6"):  # an HTTP-date, about 1 s ahead
            return 503, {"Retry-After": email.utils.formatdate(time.time() + 1, usegmt=True)}, b""
        return (201 if seen.method == "POST" else 200), {}, b"{}"

    with PeerServer(respond) as peer:
        transport = make_transport(peer.base_url, concurrency=8)
        started = time.monotonic()
        answers = transport.map(lambda i: transport.request("GET", f"/pets/{i}").status, range(8))
        created = transport.request("POST", "/pets", body=b'{"name": "Rex"}')
        elapsed = time.monotonic() - started
    assert answers == [200] * 8 and created.status == 201
    assert len(peer.requests) == 8 + 3 + 2
    counters = transport.guard.counters()
    assert counters["throttled"] == 4 and counters["requests"] == 13 and counters["writes"] == 2
    assert 2.0 <= counters["throttle_wait_s"] <= 4.0
    # Every sender waits out each Retry-After (pacing.py), and the throttled requests slow the pace
    # after them: two or three pauses of about 1 s one after the other (what each waited is counted
    # above: the machine's speed adds to the time, never to the waits).
    assert elapsed > 1.5, elapsed
    assert counters["concurrency_min"] < 8


def test_503_with_retry_after_is_waited_out_for_a_post_too(make_transport) -> None:
    """RFC 9110 §15.6.4: the server could not handle the request (a rolling deploy's drained instance):
    the same wait for every method as for a 429."""
    first = (503, {"Retry-After": "0"}, b"<html>")
    arrived = itertools.count(1)
    with PeerServer(lambda seen: first if next(arrived) == 1 else (201, {}, b"{}")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("POST", "/pets", body=b"{}").status == 201
        assert len(peer.requests) == 2 and transport.guard.counters()["throttled"] == 1


def test_retry_after_is_capped_and_never_outlives_the_budget(make_transport) -> None:
    with PeerServer(lambda seen: (429, {"Retry-After": "3600"}, b"")) as peer:
        capped = make_transport(peer.base_url, retry_after_cap=0.2)
        assert capped.request("GET", "/pets").status == 429  # still throttled: the last answer, no exception
        assert len(peer.requests) == 4  # 3 re-sends at most
        # What the transport waited (the waits it chose, whatever the machine's speed): 3 x the cap.
        assert (capped.guard.counters()["throttled"], capped.guard.counters()["throttle_wait_s"]) == (3, 0.6)

        budgeted = make_transport(peer.base_url, deadline=time.time() + 2, budget=2.0)
        assert budgeted.request("GET", "/pets").status == 429
        # The capped wait (30 s) would outlive the budget: no wait.
        assert len(peer.requests) == 5 and budgeted.guard.counters()["throttled"] == 0
        assert budgeted.guard.counters()["throttle_wait_s"] == 0

    # A budget of twice the Retry-After: the first wait fits (the first answer comes within 2 s), the second
    # never can (it would start 2 s or more into the budget).
    with PeerServer(lambda seen: (429, {"Retry-After": "2"}, b"")) as peer:
        budgeted = make_transport(peer.base_url, deadline=time.time() + 4, budget=4.0)
        started = time.monotonic()
        assert budgeted.request("GET", "/pets").status == 429
        assert time.monotonic() - started >= 2  # the one wait was waited out
        assert len(peer.requests) == 2
        assert (budgeted.guard.counters()["throttled"], budgeted.guard.counters()["throttle_wait_s"]) == (1, 2.0)


# -- concurrency ----------------------------------------------------------------------------------


def test_map_order_errors_and_serial_mode(make_transport) -> None:
    transport = make_transport("http://127.0.0.1:9/v1", concurrency=4)
    done: list[int] = []

    def work(item: int) -> int:
        time.sleep(0.01 * (5 - item))
        done.append(item)
        if item in (1, 3):
            raise ValueError(f"item {item}")
        return item * 10

    assert transport.map(lambda i: i * 2, range(6)) == [0, 2, 4, 6, 8, 10]
    with pytest.raises(ValueError, match="item 1") as caught:
        transport.map(work, range(5))
    assert sorted(done) == [0, 1, 2, 3, 4]  # every item ran before the first error was raised
    assert "1 more of 5 items failed too" in caught.value.__notes__
    serial = make_transport("http://127.0.0.1:9/v1", concurrency=1)
    threads: list[str] = []
    assert serial.map(lambda i: threads.append(threading.current_thread().name) or i, [3, 1, 2]) == [3, 1, 2]
    assert set(threads) == {threading.current_thread().name}


# -- Schemathesis ---------------------------------------------------------------------------------


def test_schemathesis_call_through_the_transport_session(make_transport) -> None:
    schema = schemathesis.openapi.from_path(ROOT / "spec" / "openapi.yaml")
    case = schema["/pets"]["GET"].Case(query={"limit": 1})
    with BackgroundServer(build_app(KEY)) as reference:
        transport = make_transport(reference.base_url)
        session = transport.session()
        response = case.call(base_url=reference.base_url, session=session, headers=transport.auth_headers())
        assert response.status_code == 200 and response.json() == []
        case.validate_response(response)
        exchange = transport.exchange(response)
        assert exchange.status == 200 and exchange.url == f"{reference.base_url}/pets?limit=1"
        assert ("Authorization", "Bearer $PETSTORE_API_KEY") in exchange.request_headers
        assert exchange.header("content-type") == "application/json" and exchange.response_body == "[]"
        assert session.headers.get("Authorization") is None  # the key stays out of the shared session
        with pytest.raises(TargetProblem, match="is not the target's origin"):
            case.call(base_url=f"http://127.0.0.1:{free_port()}/v1", session=session, timeout=2)
    assert transport.guard.counters()["requests"] == 1


def test_each_session_is_new_and_shares_the_one_adapter(make_transport) -> None:
    transport = make_transport("http://127.0.0.1:9/v1")
    first, second = transport.session(), transport.session()
    assert first is not second and first.trust_env is False and second.trust_env is False
    assert first.get_adapter("http://x") is second.get_adapter("https://x") is transport.adapter
    assert first.max_redirects == 3
    assert len(set(itertools.chain(first.adapters.values(), second.adapters.values()))) == 1
    assert isinstance(first, requests.Session)
