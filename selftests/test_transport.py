"""The run's one HTTP transport, against loopback peers: bounds, breaker, budget, origin, throttling,
proxies, mutual TLS, concurrency, redaction, and a Schemathesis call through its session.

Every server listens on 127.0.0.1; every request has a timeout; each test checks what reached
(and what did not reach) the servers, so a transport that sends too much fails it.
"""

from __future__ import annotations

import email.utils
import gzip
import itertools
import os
import pickle
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import requests
import schemathesis
import trustme

from netpeers import ForwardProxy, PeerServer, Reply, Seen, free_port
from petstore_contract.core.records import Exchange
from petstore_contract.core.redaction import REDACTED, Redactor
from petstore_contract.reference import BackgroundServer, build_app
from petstore_contract.transport import (
    BREAKER_FILE,
    RunGuard,
    TargetProblem,
    Transport,
    TransportOptions,
    merge_counters,
    parse_retry_after,
)

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-4f9a2c7e1b"


def options(base_url: str, **changes: object) -> TransportOptions:
    return replace(TransportOptions(base_url=base_url, api_key=KEY, timeout=2.0), **changes)  # type: ignore[arg-type]


@pytest.fixture
def make_transport() -> Iterator[object]:
    made: list[Transport] = []

    def make(base_url: str, **changes: object) -> Transport:
        transport = Transport(options(base_url, **changes))
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()


@pytest.fixture
def server() -> Iterator[PeerServer]:
    with PeerServer() as peer:
        yield peer


def one_line(problem: TargetProblem) -> str:
    text = str(problem)
    assert "\n" not in text and "Traceback" not in text and KEY not in text
    return text


# -- redaction ------------------------------------------------------------------------------------


def test_redactor_replaces_key_and_its_encodings() -> None:
    key = "s3cr3t/key+value=="
    redact = Redactor(key)
    import base64
    from urllib.parse import quote

    b64 = base64.b64encode(f"user:{key}".encode()).decode()
    text = f"Bearer {key}; q={quote(key, safe='')}; basic {b64}"
    assert redact(text) == f"Bearer {REDACTED}; q={REDACTED}; basic {REDACTED}"
    assert redact.for_exchange(text) == f"Bearer $PETSTORE_API_KEY; q={REDACTED}; basic {REDACTED}"
    assert Redactor(key, "STAGING_KEY").for_exchange(f"Bearer {key}") == "Bearer $STAGING_KEY"
    assert redact.note == ""


def test_redactor_short_key_only_as_whole_token() -> None:
    redact = Redactor("k")
    assert "shorter than 8 characters" in redact.note and "\n" not in redact.note
    assert redact("Authorization: Bearer k") == f"Authorization: Bearer {REDACTED}"
    assert redact.for_exchange("Bearer k") == "Bearer $PETSTORE_API_KEY"
    # Surrounding text is never corrupted: "k" inside words, paths or values stays.
    untouched = 'kind: ok, keys=k1 /k/ k.k k-k {"kok": 1} key=k'
    assert redact(untouched) == untouched
    assert redact('{"name": "k"} k') == f'{{"name": "{REDACTED}"}} {REDACTED}'


def test_redactor_without_key_and_with_regex_characters() -> None:
    assert Redactor(None)("Bearer anything") == "Bearer anything"
    assert Redactor("")("x") == "x"
    key = "a+b*c?d(1)[2]$"
    assert Redactor(key)(f"x {key} y") == f"x {REDACTED} y"


# -- guard ----------------------------------------------------------------------------------------


def test_guard_budget_and_timeout() -> None:
    guard = RunGuard(deadline=time.time() + 100, budget=100)
    assert guard.budget_spent() is None
    assert guard.timeout(10) == 10
    assert 0 < RunGuard(deadline=time.time() + 2).timeout(10) <= 2
    spent = RunGuard(deadline=time.time() - 1, budget=30)
    with pytest.raises(TargetProblem) as caught:
        spent.check()
    assert caught.value.kind == "budget"
    assert str(caught.value) == "run budget of 30 s spent (--contract-run-budget); request not sent"
    assert spent.first_problem == str(caught.value)


def test_guard_breaker_opens_after_n_in_a_row_and_is_shared(tmp_path: Path) -> None:
    shared = tmp_path / "run"
    one, other = RunGuard(trip_after=3, shared_dir=shared), RunGuard(trip_after=3, shared_dir=shared)
    one.failed("a: refused")
    one.failed("b: refused")
    one.answered()  # not in a row
    one.failed("c: refused")
    one.failed("d: refused")
    assert one.breaker_open() is None and other.breaker_open() is None
    one.failed("e: refused")
    expected = "target unusable: 3 requests in a row got no answer (last: e: refused); no more requests are sent"
    assert one.breaker_open() == expected
    assert (shared / BREAKER_FILE).read_text().strip() == expected
    with pytest.raises(TargetProblem) as caught:
        other.check()  # another guard (process) sharing the directory
    assert (caught.value.kind, str(caught.value)) == ("target", expected)
    assert one.first_problem == "a: refused"
    assert one.counters()["no_answer"] == 5
    # A separate process of the run sees it too.
    code = "from petstore_contract.transport import RunGuard; import sys; RunGuard(shared_dir=sys.argv[1]).check()"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(shared)], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert done.returncode == 1 and expected in done.stderr


def test_guard_breaker_disabled_and_counters_merged(tmp_path: Path) -> None:
    never = RunGuard(trip_after=0)
    for _ in range(10):
        never.failed("refused")
    never.check()
    first, second = RunGuard(), RunGuard()
    first.count_sent("GET")
    first.count_sent("POST")
    second.count_sent("delete")
    second.count_throttled(1.5)
    second.count_repeat()
    first.note_concurrency(8)
    second.note_concurrency(8)
    second.note_concurrency(2)  # throttled down to 2 in flight: the run's lowest, not a sum
    failed = Exchange("POST", "http://127.0.0.1:1/v1/pets", status=500, response_body="oops")
    second.note_server_error(failed)
    second.note_server_error(failed)  # the same request line and status: kept once
    first.write_counters(tmp_path / "counters-gw0.json")
    second.write_counters(tmp_path / "counters-gw1.json")
    (tmp_path / "unrelated.json").write_text('{"requests": 100}')
    assert merge_counters(tmp_path) == {
        "requests": 3,
        "writes": 2,
        "no_answer": 0,
        "throttled": 1,
        "throttle_wait_s": 1.5,
        "repeats_not_sent": 1,
        "resent_writes": 0,
        "created": 0,
        "held_back": 0,
        "concurrency_min": 2,
        "server_errors": [failed.to_dict()],
    }


def test_parse_retry_after() -> None:
    now = time.time()
    assert parse_retry_after("120") == 120
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    later = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= parse_retry_after(later, now) <= 31  # type: ignore[operator]
    assert parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now) == 0


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
    assert KEY not in exchange.curl() and '"Authorization: Bearer $PETSTORE_API_KEY"' in exchange.curl()
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
        "resent_writes": 0,
        "created": 0,
        "held_back": 0,
        "concurrency_min": 8,
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


def test_body_over_the_cap_is_cut(make_transport) -> None:
    big = b"[" + b"0," * 1_000_000 + b"0]"
    with PeerServer(lambda seen: (200, {"Content-Type": "application/json"}, big)) as peer:
        transport = make_transport(peer.base_url, max_body_bytes=100_000)
        started = time.monotonic()
        with pytest.raises(TargetProblem) as caught:
            transport.request("GET", "/pets")
        assert time.monotonic() - started < 2
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


def trickle(seen: Seen) -> Reply:
    def chunks() -> Iterator[bytes]:
        for _ in range(1000):
            yield b" "
            time.sleep(0.05)

    return 200, {"Content-Type": "application/json", "Content-Length": "1000"}, chunks()


def test_trickling_body_meets_the_deadline(make_transport) -> None:
    with PeerServer(trickle) as peer:
        transport = make_transport(peer.base_url, timeout=0.3)  # each byte arrives well within the timeout
        started = time.monotonic()
        with pytest.raises(TargetProblem) as caught:
            transport.request("GET", "/pets")
        elapsed = time.monotonic() - started
    assert 0.8 < elapsed < 2.0
    assert caught.value.kind == "target"
    assert (
        one_line(caught.value) == f"GET {peer.base_url}/pets: answer body still arriving after 0.9 s; stopped reading"
    )


def test_breaker_opens_after_n_and_then_sends_nothing(make_transport) -> None:
    with PeerServer(lambda seen: None) as peer:  # reads every request, never answers
        transport = make_transport(peer.base_url, trip_after=3)
        messages = []
        for _ in range(5):
            with pytest.raises(TargetProblem) as caught:
                transport.request("GET", "/pets")
            messages.append(one_line(caught.value))
        assert len(peer.requests) == 3
    cause = f"GET {peer.base_url}/pets: the target closed the connection without answering"
    assert messages[:3] == [cause] * 3
    assert (
        messages[3:]
        == [f"target unusable: 3 requests in a row got no answer (last: {cause}); no more requests are sent"] * 2
    )
    assert transport.guard.counters()["requests"] == 3
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
    with PeerServer(delay=3.0) as peer:
        transport = make_transport(peer.base_url, timeout=10.0, deadline=time.time() + 0.5, budget=0.5)
        started = time.monotonic()
        with pytest.raises(TargetProblem) as caught:
            transport.request("GET", "/pets")
        assert time.monotonic() - started < 1.5
    assert caught.value.kind == "budget"
    assert (
        one_line(caught.value)
        == f"run budget of 0.5 s spent (--contract-run-budget); GET {peer.base_url}/pets was cut short"
    )


def test_keep_alive_closed_by_the_server_is_sent_again_once(make_transport) -> None:
    # The second request on each connection is read and then dropped without an answer.
    with PeerServer(lambda seen: None if seen.nth == 2 else (200, {}, b"[]")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("GET", "/pets").status == 200
        assert transport.request("GET", "/pets").status == 200
        assert len(peer.requests) == 3 and peer.connections == 2
    assert transport.guard.counters()["no_answer"] == 0
    assert transport.guard.counters()["resent_writes"] == 0


def test_a_write_sent_again_after_a_dropped_connection_is_counted(make_transport) -> None:
    with PeerServer(lambda seen: None if seen.nth == 2 else (201, {}, b"{}")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("POST", "/pets", body=b"{}").status == 201
        assert transport.request("POST", "/pets", body=b"{}").status == 201
        assert len(peer.requests) == 3
    counters = transport.guard.counters()
    assert (counters["requests"], counters["writes"], counters["resent_writes"]) == (3, 3, 1)


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
    # after them: two or three pauses of about 1 s one after the other, and a few spaced sends.
    assert 1.5 < elapsed < 7.0, elapsed
    assert counters["concurrency_min"] < 8


def test_503_is_not_resent_for_a_post(make_transport) -> None:
    with PeerServer(lambda seen: (503, {"Retry-After": "1"}, b"")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("POST", "/pets", body=b"{}").status == 503
        assert len(peer.requests) == 1 and transport.guard.counters()["throttled"] == 0


def test_retry_after_is_capped_and_never_outlives_the_budget(make_transport) -> None:
    with PeerServer(lambda seen: (429, {"Retry-After": "3600"}, b"")) as peer:
        capped = make_transport(peer.base_url, retry_after_cap=0.2)
        started = time.monotonic()
        assert capped.request("GET", "/pets").status == 429  # still throttled: the last answer, no exception
        assert time.monotonic() - started < 1.5
        assert len(peer.requests) == 4  # 3 re-sends at most
        assert capped.guard.counters()["throttled"] == 3

        budgeted = make_transport(peer.base_url, deadline=time.time() + 2, budget=2.0)
        started = time.monotonic()
        assert budgeted.request("GET", "/pets").status == 429
        assert time.monotonic() - started < 0.5  # the capped wait (30 s) would outlive the budget: no wait
        assert len(peer.requests) == 5 and budgeted.guard.counters()["throttled"] == 0

    with PeerServer(lambda seen: (429, {"Retry-After": "1"}, b"")) as peer:
        budgeted = make_transport(peer.base_url, deadline=time.time() + 1.6, budget=1.6)
        started = time.monotonic()
        assert budgeted.request("GET", "/pets").status == 429
        assert 0.9 < time.monotonic() - started < 1.6  # one wait fits in the budget, the second would not
        assert len(peer.requests) == 2


# -- proxies --------------------------------------------------------------------------------------


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def test_http_target_through_the_proxy(server: PeerServer, make_transport, no_proxy_env) -> None:
    with ForwardProxy({"petstore.test": server.port}) as proxy:
        no_proxy_env.setenv("HTTP_PROXY", proxy.url)
        transport = make_transport("http://petstore.test/v1")
        assert transport.request("GET", "/pets").json() == []
        assert [(s.method, s.target) for s in proxy.seen] == [("GET", "http://petstore.test/v1/pets")]
        assert server.requests[0].headers["host"] == "petstore.test"

        no_proxy_env.setenv("NO_PROXY", "petstore.test")
        with pytest.raises(TargetProblem, match="host name not found"):
            make_transport("http://petstore.test/v1").request("GET", "/pets")
        no_proxy_env.delenv("NO_PROXY")
        with pytest.raises(TargetProblem, match="host name not found"):
            make_transport("http://petstore.test/v1", use_proxy_env=False).request("GET", "/pets")
        loopback = make_transport(server.base_url)  # a loopback target never uses the proxy
        assert loopback.session().proxies == {}
        assert loopback.request("GET", "/pets").status == 200
        assert len(proxy.seen) == 1 and len(server.requests) == 2


# -- TLS ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    ca = trustme.CA()
    where = tmp_path_factory.mktemp("pki")
    client = ca.issue_cert("contract-suite@petstore.test")
    ca.cert_pem.write_to_path(str(where / "ca.pem"))
    client.cert_chain_pems[0].write_to_path(str(where / "client.pem"))
    client.private_key_pem.write_to_path(str(where / "client.key"))
    return SimpleNamespace(
        ca=ca,
        server=ca.issue_cert("127.0.0.1", "petstore.test"),
        ca_path=str(where / "ca.pem"),
        cert=str(where / "client.pem"),
        key=str(where / "client.key"),
    )


def tls_context(pki: SimpleNamespace, *, client_certificate: bool) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    pki.server.configure_cert(context)
    if client_certificate:
        context.verify_mode = ssl.CERT_REQUIRED
        pki.ca.configure_trust(context)
    return context


def test_https_target_through_a_connect_tunnel(pki: SimpleNamespace, make_transport, no_proxy_env) -> None:
    with (
        PeerServer(tls=tls_context(pki, client_certificate=False)) as server,
        ForwardProxy({"petstore.test": server.port}) as proxy,
    ):
        no_proxy_env.setenv("HTTPS_PROXY", proxy.url)
        transport = make_transport("https://petstore.test/v1", verify=pki.ca_path)
        assert transport.request("GET", "/pets").status == 200
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key reached the target
        assert [(s.method, s.target) for s in proxy.seen] == [("CONNECT", "petstore.test:443")]
        assert "authorization" not in proxy.seen[0].headers
        assert proxy.tunnelled and KEY.encode() not in proxy.tunnelled  # only ciphertext passed the proxy


def test_mutual_tls(pki: SimpleNamespace, make_transport) -> None:
    with PeerServer(tls=tls_context(pki, client_certificate=True)) as server:
        with_cert = make_transport(server.base_url, verify=pki.ca_path, client_cert=pki.cert, client_key=pki.key)
        assert with_cert.request("GET", "/pets").status == 200
        # Schemathesis passes verify=True to every call: the transport's CA bundle and certificate still apply.
        assert with_cert.session().get(server.base_url + "/pets", verify=True, timeout=2).status_code == 200

        without = make_transport(server.base_url, verify=pki.ca_path)
        with pytest.raises(TargetProblem) as caught:
            without.request("GET", "/pets")
        assert caught.value.kind == "target"
        # TLS 1.3: the server's alert, or (racing it) the connection closed as the request went out.
        assert one_line(caught.value) in (
            f"TLS error talking to https://127.0.0.1:{server.port}: "
            "the target requires a client certificate (--contract-client-cert)",
            f"TLS error talking to https://127.0.0.1:{server.port}: the target closed the connection "
            "during the TLS handshake (does it require a client certificate? --contract-client-cert)",
        )

        untrusted = make_transport(server.base_url, client_cert=pki.cert, client_key=pki.key)
        with pytest.raises(TargetProblem) as caught:
            untrusted.request("GET", "/pets")
        assert one_line(caught.value) == (
            f"TLS error talking to https://127.0.0.1:{server.port}: "
            "certificate verification failed (see --contract-ca-bundle)"
        )
        assert len(server.requests) == 2


# -- concurrency ----------------------------------------------------------------------------------


def test_map_runs_concurrently_on_bounded_connections(make_transport) -> None:
    with PeerServer(delay=0.1) as peer:
        transport = make_transport(peer.base_url, concurrency=16)
        started = time.monotonic()
        statuses = transport.map(lambda i: transport.request("GET", f"/pets/{i}").status, range(64))
        elapsed = time.monotonic() - started
        writes = transport.map(lambda i: transport.request("POST", "/pets", body=b"{}").status, range(16))
        assert statuses == [200] * 64 and writes == [200] * 16
        assert 0.4 <= elapsed < 1.5
        assert peer.connections <= 16
    assert transport.guard.counters()["requests"] == 80 == len(peer.requests)
    assert transport.guard.counters()["writes"] == 16


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
