"""Which connection a request goes out on, and what the transport does when one closes under it.

RFC 9112 §9.6: a server may close a kept-alive connection at any time.  A read whose connection closed is
sent once more on a new one (RFC 9112 §9.3.1); a write goes out on a connection that carried no request,
opened ahead of it where one is ready (``transport/connections.py``, ``transport/spares.py``), and one
whose answer was lost all the same is never sent again (RFC 9110 §9.2.2).  Every server listens on
127.0.0.1 and every request has a timeout.
"""

from __future__ import annotations

import itertools
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from netpeers import PeerServer, Reply, Seen, free_port
from petstore_contract.transport import (
    TargetProblem,
    connections,
    spares,
)

ROOT = Path(__file__).resolve().parents[1]


def test_keep_alive_closed_by_the_server_is_sent_again_once(make_transport) -> None:
    # The second request on each connection is read and then dropped without an answer.
    with PeerServer(lambda seen: None if seen.nth == 2 else (200, {}, b"[]")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("GET", "/pets").status == 200
        assert transport.request("GET", "/pets").status == 200
        assert len(peer.requests) == 3 and peer.connections == 2
    assert transport.guard.counters()["no_answer"] == 0
    assert transport.guard.counters()["unknown_writes"] == 0


def test_a_read_whose_fresh_connection_dropped_is_sent_again_once(make_transport) -> None:
    """Under concurrency a drop cannot be told to be a kept-alive connection's: every idempotent request
    dropped before its answer is sent once more; dropped again, it is the target's problem."""
    with PeerServer(lambda seen: None if seen.connection == 1 else (200, {}, b"[]")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("GET", "/pets").status == 200
        assert len(peer.requests) == 2 and peer.connections == 2
    with PeerServer(lambda seen: None) as peer:
        transport = make_transport(peer.base_url)
        with pytest.raises(TargetProblem):
            transport.request("GET", "/pets")
        assert len(peer.requests) == 2


def test_a_write_goes_out_on_a_connection_that_carried_no_request(make_transport) -> None:
    """RFC 9112 §9.6: a server may close a kept-alive connection at any time; a write sent as it closes never
    reached the service and cannot be told from one that was applied.  Here the server drops every kept-alive
    connection's next request unanswered (the keep-alive race at its worst): the reads are sent once more, the
    writes go out on new connections and never race it."""
    with PeerServer(lambda seen: None if seen.nth > 1 else (201 if seen.method == "POST" else 200, {}, b"{}")) as peer:
        transport = make_transport(peer.base_url, concurrency=1)
        for method in ("GET", "POST", "POST", "GET", "POST"):
            assert transport.request(method, "/pets", body=b"{}" if method == "POST" else None).status < 300
        posts = [seen for seen in peer.requests if seen.method == "POST"]
        assert [seen.nth for seen in posts] == [1, 1, 1], [(s.method, s.connection, s.nth) for s in peer.requests]
    counters = transport.guard.counters()
    assert (counters["unknown_writes"], counters["no_answer"]) == (0, 0), counters


def test_the_next_write_goes_out_on_a_connection_opened_ahead_of_it(make_transport, monkeypatch) -> None:
    """A write's new connection costs it a handshake (TCP's, and TLS's) at a network's distance; so each write has
    the next one's connection opened ahead (``transport/spares.py``): the server accepts it before that write is
    sent, and the write arrives on it as its first request.  Every write still goes out on a connection that
    carried no request before, and a read goes out on a kept-alive one, never on a spare."""
    monkeypatch.setattr(spares, "FAR", 0.0)  # loopback as far as a network: near, no spare is opened
    with PeerServer(lambda seen: (201 if seen.method == "POST" else 200, {}, b"{}")) as peer:
        transport = make_transport(peer.base_url, concurrency=1)
        assert transport.request("POST", "/pets", body=b"{}").status == 201
        deadline = time.monotonic() + 10
        while peer.connections < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        opened_ahead = peer.connections
        assert transport.request("GET", "/pets").status == 200
        assert transport.request("POST", "/pets", body=b"{}").status == 201
        transport.close()  # its spare too: the server's thread for it ends
        seen = [(s.method, s.connection, s.nth) for s in peer.requests]
    assert opened_ahead == 2, seen
    (first, read, second) = seen
    assert (first[0], first[2], read) == ("POST", 1, ("GET", first[1], 2)), seen
    # On a connection the server had accepted before the write was sent, other than the one the read kept alive.
    assert second[0] == "POST" and second[2] == 1 and second[1] != first[1] and second[1] <= opened_ahead, seen


def test_a_busy_target_that_drops_connections_gets_fewer_requests_and_the_read_again(make_transport) -> None:
    """After the target answered, a read whose connection closed unanswered twice in a row (its kept-alive one,
    then a new one) is a busy target's: every sender pauses, fewer requests go out at once, and the read goes
    again (``transport/busy.py``); nothing counts against the circuit breaker."""
    arrived = itertools.count(1)

    def respond(seen: Seen) -> Reply:
        return None if next(arrived) in (2, 3) else (200, {}, b"[]")

    with PeerServer(respond) as peer:
        transport = make_transport(peer.base_url, concurrency=4, circuit_breaker=1)
        assert transport.request("GET", "/pets").status == 200
        assert transport.request("GET", "/pets").status == 200
        assert len(peer.requests) == 4
    counters = transport.guard.counters()
    assert (counters["busy_resends"], counters["no_answer"]) == (1, 0), counters
    assert transport.adapter.pacer.limit < 4 and counters["concurrency_min"] < 4, counters


def test_a_refused_connection_after_an_answer_is_sent_again_after_a_pause(make_transport) -> None:
    """A target that answered and then refuses connections (a full accept queue, a worker restarting) is busy,
    not gone: nothing was sent, so any request, a write too, goes again after a pause."""
    port = free_port()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(201)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    def serve() -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return server

    first = serve()
    transport = make_transport(f"http://127.0.0.1:{port}/v1", circuit_breaker=1)
    # A read first: a write would have the next write's connection opened ahead (``transport/spares.py``),
    # accepted by the first server, and the write below would need no connection the target refuses.
    assert transport.request("GET", "/pets").status == 201
    first.shutdown()
    first.server_close()  # refused from now on, until the timer starts the second server
    later: list[ThreadingHTTPServer] = []
    timer = threading.Timer(0.3, lambda: later.append(serve()))
    timer.start()
    try:
        assert transport.request("POST", "/pets", body=b"{}").status == 201
    finally:
        timer.join()
        for server in later:
            server.shutdown()
            server.server_close()
    counters = transport.guard.counters()
    assert counters["busy_resends"] >= 1 and (counters["no_answer"], counters["unknown_writes"]) == (0, 0), counters


def test_a_write_whose_connection_dropped_is_never_sent_again(make_transport) -> None:
    """RFC 9110 §9.2.2: the server read the POST and dropped the connection; it may have applied it."""
    arrived = itertools.count(1)  # by arrival: a connection opened ahead (``spares``) takes a number when accepted
    with PeerServer(lambda seen: None if next(arrived) == 2 else (201, {}, b"{}")) as peer:
        transport = make_transport(peer.base_url)
        assert transport.request("POST", "/pets", body=b"{}").status == 201
        with pytest.raises(TargetProblem):
            transport.request("POST", "/pets", body=b"{}")
        assert len(peer.requests) == 2
    counters = transport.guard.counters()
    assert (counters["requests"], counters["writes"], counters["unknown_writes"]) == (2, 2, 1)
    assert counters["connection_resets"] == 1
    assert "POST" in counters["event_examples"]["unknown_writes"]


def test_map_runs_concurrently_on_bounded_connections(make_transport) -> None:
    # Requests in flight as the server counts them (each held 0.1 s): side by side, never more than the bound,
    # whatever the machine's speed.
    lock, in_flight, most = threading.Lock(), [0], [0]

    def held(seen: Seen) -> Reply:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
        time.sleep(0.1)
        with lock:
            in_flight[0] -= 1
        return 200, {}, b"[]"

    with PeerServer(held) as peer:
        transport = make_transport(peer.base_url, concurrency=16)
        statuses = transport.map(lambda i: transport.request("GET", f"/pets/{i}").status, range(64))
        reads, reads_at_once = peer.connections, most[0]
        writes = transport.map(lambda i: transport.request("POST", "/pets", body=b"{}").status, range(16))
        assert statuses == [200] * 64 and writes == [200] * 16
        assert 1 < reads_at_once <= 16 and most[0] <= 16, (reads_at_once, most[0])
        # 16 connections for the reads; each write on a new one (``transport/connections.py``), some opened ahead
        # of it (``transport/spares.py``, at most ``MOST`` more than the writes)
        posts = [seen for seen in peer.requests if seen.method == "POST"]
        assert {seen.nth for seen in posts} == {1} and len({seen.connection for seen in posts}) == 16
        assert reads <= 16 and reads + 16 <= peer.connections <= reads + 16 + spares.MOST
    assert transport.guard.counters()["requests"] == 80 == len(peer.requests)
    assert transport.guard.counters()["writes"] == 16


def test_a_connection_opened_ahead_shares_no_state_with_the_one_it_was_copied_from() -> None:
    """A spare is a copy of the write's connection (its host, port, TLS settings); http.client builds each
    request's head in a list it empties in place, so a copy sharing that list with a pooled connection would
    send header lines of another thread's request (a gunicorn sync worker saw a request line as a header)."""
    for cls in (connections.FreshWritesHTTPConnection, connections.FreshWritesHTTPSConnection):
        original = cls("127.0.0.1", 9)
        twin = spares.detached(original)
        mutable = (list, dict, set, bytearray)
        shared = [
            name for name, value in vars(original).items() if isinstance(value, mutable) and value is vars(twin)[name]
        ]
        assert not shared, (cls.__name__, shared)
        assert (twin.host, twin.port) == (original.host, original.port)
