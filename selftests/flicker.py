"""A flickering deployment on loopback: the reference behind a small fault-injecting HTTP/1.1 proxy.

CI gates run the suite right after a deploy, while gateways answer for upstreams that are restarting
(issue 44).  ``FlickerProxy`` stands where nginx would: it listens on 127.0.0.1 (an ephemeral port),
forwards each request to an upstream (a reference app behind a ``BackgroundServer``) over kept-alive
connections, relays the answer byte for byte (Content-Length, chunked, or until close) and, as its
modes tell it, answers or breaks on the upstream's behalf.  Each mode is one row of the issue's table:

- ``gateway_502(rate)``: a fraction of requests get nginx's own ``502 Bad Gateway`` page without
  reaching the upstream.  RFC 9110 §15.6.3: "the server, while acting as a gateway or proxy, received
  an invalid response from an inbound server" -- an answer of the deployment, not of the service; a
  502 that is not there when the same GET is asked again (§9.2.2, idempotent) breaks no clause: the
  run is conformant, or inconclusive naming the 502s, never not conformant.
- ``rolling_deploy(seconds, start_after)``: for ``seconds`` every request gets ``503`` with
  ``Retry-After: 1`` and nginx's HTML page, without reaching the upstream.  RFC 9110 §15.6.4: 503
  "indicates that the server is currently unable to handle the request due to a temporary overload or
  scheduled maintenance"; Retry-After says how long to wait (RFC 6585 §4 says the same of 429).  The
  target throttling, whatever the method: the run waits, sends again and is conformant, the waits
  counted as throttling.  (Here nothing reached the upstream, so a POST sent again creates one animal.)
- ``reset_after_answer(rate, methods)``: the request reaches the upstream, the upstream answers, and
  the proxy resets the client's connection (SO_LINGER 0, then close) instead of relaying the answer.
  For a POST it is the create whose answer was lost.  RFC 9110 §9.2.2: "A client SHOULD NOT
  automatically retry a request with a non-idempotent method unless it has some means to know that
  the request semantics are actually idempotent, regardless of the method, or some means to detect
  that the original request was never applied": no animal may be created twice, and no clause may
  rest on a store model that believes the write did not happen.
- ``restart(after)``: after ``after`` requests the upstream is replaced by a fresh reference with the
  same key, an in-memory store starting over: ids are handed out again from the start.  The document:
  "id | integer, format int64 | yes | Unique identifier, assigned by the service on creation."
  (``create.id``: "never one handed out before in the run"), broken in fact: not conformant on that
  clause, with the animals that vanished named.
- ``stall(every, seconds)``: every ``every``-th forwarded answer is held ``seconds`` before it is
  relayed.  ``--contract-request-timeout`` is "the longest wait for a connection or for the next bytes
  of an answer" (docs/options.md): a stall shorter than it is a slow answer, still judged: conformant,
  and the stalls reported.
- ``trickle(bytes_per_write, delay)``: each answer's head goes at once, its body in
  ``bytes_per_write``-byte writes ``delay`` apart: with the test's values every gap is within the
  request timeout and the whole body is past 3 x it ("a body must be complete within 3 x S",
  docs/options.md).  The run is inconclusive and says what happened ("answer still arriving after
  ...") and which option changes the limit (``--contract-request-timeout``), not that the target did
  not answer.

- ``idle_reset(idle)``: a kept-alive client connection that has been idle ``idle`` seconds or more is reset
  (SO_LINGER 0, then close) as its next request arrives, unread and never forwarded: the race of a server
  closing a kept-alive connection at its keep-alive timeout (gunicorn 2 s, Apache httpd, Node and uvicorn
  5 s) or because it is busy (Apache's event MPM), with the request on the wire.  RFC 9112 §9.6: "A client,
  server, or proxy MAY close the transport connection at any time."  Nothing was applied: a run is
  conformant, its reads sent once more on a fresh connection (§9.3.1) and its writes never sent on a
  connection that may be closing under them, so no write is lost.

Seeded: every mode that draws has a ``random.Random`` of its own, seeded from the proxy's seed and
the mode's name, and draws once per request it applies to, in the order they arrive.  Requests
arrive concurrently, so *which* request a draw hits may change from run to run, but how many of the
first N requests are hit does not.  Bounded: every socket has a timeout, every wait ends when the
proxy stops, and leaving the context manager stops the listener, every connection and every upstream.
``counts`` says what the proxy did, for the self-tests to hold against the suite's reports.

The bytes on the wire (reading a message as framed, nginx's pages, the reset) are ``flickerwire.py``'s.
The proxy speaks HTTP/1.1 in the clear only and sends no field of its own to the upstream (no
Forwarded, no Via): the reference sees what the suite sent.
"""

from __future__ import annotations

import contextlib
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from flickerwire import NGINX_502, NGINX_503, Message, Wire, canned_answer, closes, created_body, reset
from petstore_contract.reference import BackgroundServer

# uvicorn closes a connection idle for 30 s (``quiet_config``); an upstream connection idle this long is
# dropped and opened anew, so that the proxy never sends into a close of its own upstream.
UPSTREAM_IDLE = 5.0


# -- the modes: one row of the table each ---------------------------------------------------


@dataclass(frozen=True)
class Gateway502:
    rate: float
    methods: frozenset[str] | None = None  # None: every method


@dataclass(frozen=True)
class RollingDeploy:
    seconds: float = 3.0
    start_after: int = 100
    retry_after: int = 1


@dataclass(frozen=True)
class ResetAfterAnswer:
    rate: float
    methods: frozenset[str] | None = None  # None: every method; {"POST"}: the creates whose answer is lost


@dataclass(frozen=True)
class Restart:
    after: int


@dataclass(frozen=True)
class Stall:
    every: int = 200
    seconds: float = 8.0


@dataclass(frozen=True)
class Trickle:
    bytes_per_write: int = 1
    delay: float = 0.05


@dataclass(frozen=True)
class IdleReset:
    idle: float


Mode = Gateway502 | RollingDeploy | ResetAfterAnswer | Restart | Stall | Trickle | IdleReset


def idle_reset(idle: float = 1.0) -> IdleReset:
    return IdleReset(idle)


def gateway_502(rate: float, methods: Collection[str] | None = None) -> Gateway502:
    return Gateway502(rate, frozenset(methods) if methods is not None else None)


def rolling_deploy(seconds: float = 3.0, start_after: int = 100, retry_after: int = 1) -> RollingDeploy:
    return RollingDeploy(seconds, start_after, retry_after)


def reset_after_answer(rate: float, methods: Collection[str] | None = None) -> ResetAfterAnswer:
    return ResetAfterAnswer(rate, frozenset(methods) if methods is not None else None)


def restart(after: int) -> Restart:
    return Restart(after)


def stall(every: int = 200, seconds: float = 8.0) -> Stall:
    return Stall(every, seconds)


def trickle(bytes_per_write: int = 1, delay: float = 0.05) -> Trickle:
    return Trickle(bytes_per_write, delay)


@dataclass
class Counts:
    """What the proxy did: ``lost_creates`` holds the body of each POST the upstream answered 201 and whose
    answer the client never got (the animal exists; the client cannot know)."""

    connections: int = 0
    requests: int = 0
    forwarded: int = 0
    gateway_502: int = 0
    deploy_503: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # the methods the gateway answered itself
    refused_posts: list[bytes] = field(default_factory=list)  # their bodies, to find them sent again
    posts: Counter[bytes] = field(default_factory=Counter)  # the bodies of the POSTs forwarded
    resets: int = 0
    idle_resets: Counter[str] = field(default_factory=Counter)  # by method: requests reset unread on an idle connection
    lost_creates: list[dict[str, Any]] = field(default_factory=list)
    sent_again: list[bytes] = field(default_factory=list)  # the bodies of reset requests the client sent again
    restarts: int = 0
    stalls: int = 0
    trickles: int = 0
    upstream_failures: int = 0  # the proxy's own trouble reaching the upstream: a test wants 0


@dataclass
class Plan:
    """What happens to one request, decided as it arrives."""

    canned: bytes | None = None  # answered by the "gateway" itself
    reset: bool = False
    stall: float = 0.0
    trickle: Trickle | None = None
    upstream: BackgroundServer | None = None


# -- the proxy -------------------------------------------------------------------------------------------


class FlickerProxy:
    """``with FlickerProxy(make_app, *modes, seed=44) as proxy``: ``proxy.base_url`` is the deployment."""

    def __init__(
        self, make_app: Callable[[], Any], *modes: Mode, seed: int = 44, timeout: float = 30.0, idle: float = 180.0
    ) -> None:
        self.make_app = make_app
        self.modes = modes
        self.draws = {type(m).__name__: random.Random(f"{seed}:{type(m).__name__}") for m in modes}
        self.timeout = timeout  # every socket operation towards the upstream
        # A client connection is kept this long between requests.  A close of an idle connection races
        # the client's next request (the very race of the third row), so it must outlast any run
        # a self-test makes: the proxy's own closes would otherwise be faults nobody asked for.
        self.idle = idle
        self.counts = Counts()
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.upstreams: list[BackgroundServer] = []
        self.clients: set[socket.socket] = set()
        self.threads: list[threading.Thread] = []
        self.deploy_from: float | None = None
        self.reset_requests: set[bytes] = set()  # each reset request as it came, head and body
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)  # how soon the accepting thread sees ``stopping``
        self.port = self.listener.getsockname()[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def upstream(self) -> BackgroundServer:
        return self.upstreams[-1]

    def stores(self) -> list[Any]:
        """Each upstream's store, oldest first (more than one after a restart)."""
        return [server.app.state.store for server in self.upstreams]

    def __enter__(self) -> FlickerProxy:
        self.upstreams.append(BackgroundServer(self.make_app()).start())
        accepting = threading.Thread(target=self._accept, name="flicker-accept", daemon=True)
        accepting.start()
        self.threads.append(accepting)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stopping.set()
        self.threads[0].join(timeout=5)  # the accepting thread first: no connection is taken after this
        with self.lock:
            clients, threads = list(self.clients), list(self.threads[1:])
        for client in clients:  # wakes each connection's thread out of its read
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout=5)
        self.listener.close()
        for server in self.upstreams:
            server.stop()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(self.idle)
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.counts.connections += 1
                self.clients.add(client)
                self.threads = self.threads[:1] + [t for t in self.threads[1:] if t.is_alive()]
                thread = threading.Thread(target=self._serve, args=(client,), name="flicker-conn", daemon=True)
                self.threads.append(thread)
            thread.start()

    def _plan(self, method: str, body: bytes) -> Plan:
        """Every mode's decision for the next request, under the lock (the draws and counts are shared)."""
        with self.lock:
            self.counts.requests += 1
            number = self.counts.requests
            plan = Plan()
            for mode in self.modes:
                draw = self.draws[type(mode).__name__]
                if isinstance(mode, Restart) and number == mode.after + 1:
                    # A new store with the same key; the old server keeps running (its connections are
                    # dropped by the threads as they see the new upstream) until the proxy stops.
                    self.upstreams.append(BackgroundServer(self.make_app()).start())
                    self.counts.restarts += 1
                elif isinstance(mode, RollingDeploy):
                    if number == mode.start_after + 1:
                        self.deploy_from = time.monotonic()
                    deploying = self.deploy_from is not None and time.monotonic() < self.deploy_from + mode.seconds
                    if deploying and plan.canned is None:
                        retry = (f"Retry-After: {mode.retry_after}",)
                        plan.canned = canned_answer(
                            "503 Service Temporarily Unavailable", NGINX_503, method == "HEAD", retry
                        )
                        self.counts.deploy_503 += 1
                elif isinstance(mode, Gateway502) and (mode.methods is None or method in mode.methods):
                    if draw.random() < mode.rate and plan.canned is None:
                        plan.canned = canned_answer("502 Bad Gateway", NGINX_502, method == "HEAD")
                        self.counts.gateway_502 += 1
                elif isinstance(mode, ResetAfterAnswer) and (mode.methods is None or method in mode.methods):
                    plan.reset = draw.random() < mode.rate
                elif isinstance(mode, Trickle):
                    plan.trickle = mode
            if plan.canned is not None:
                self.counts.refused[method] += 1
                if method == "POST":
                    self.counts.refused_posts.append(body)
            else:
                self.counts.forwarded += 1
                if method == "POST":
                    self.counts.posts[body] += 1
                stalling = [m for m in self.modes if isinstance(m, Stall) and self.counts.forwarded % m.every == 0]
                plan.stall = max((m.seconds for m in stalling), default=0.0)
            plan.upstream = self.upstream
            return plan

    def _serve(self, client: socket.socket) -> None:
        """One client connection, request after request, until either side closes or the proxy stops."""
        wire = Wire(client)
        upstream: tuple[BackgroundServer, socket.socket, Wire] | None = None
        last_used = 0.0
        first = True
        idle_since: float | None = None  # when the last answer went out on this connection
        racing = [m.idle for m in self.modes if isinstance(m, IdleReset)]
        try:
            while not self.stopping.is_set():
                request = wire.head()
                if request is None:
                    return
                if racing and idle_since is not None and time.monotonic() - idle_since >= min(racing):
                    with self.lock:
                        self.counts.idle_resets[request.start[0]] += 1
                    reset(client)
                    return
                wire.body(request)
                if first:
                    self._note_sent_again(request)
                    first = False
                plan = self._plan(request.start[0], request.body)
                if plan.canned is not None:
                    client.sendall(plan.canned)
                    idle_since = time.monotonic()
                    if closes(request):
                        return
                    continue
                assert plan.upstream is not None
                if upstream is not None and (
                    upstream[0] is not plan.upstream or time.monotonic() - last_used > UPSTREAM_IDLE
                ):
                    upstream[1].close()
                    upstream = None
                if upstream is None:
                    with contextlib.suppress(OSError):
                        sock = socket.create_connection((plan.upstream.host, plan.upstream.port), self.timeout)
                        upstream = (plan.upstream, sock, Wire(sock))
                answer = self._exchange(upstream, request) if upstream is not None else None
                last_used = time.monotonic()
                if answer is None:
                    with self.lock:
                        self.counts.upstream_failures += 1
                    return
                if answer.ends_connection and upstream is not None:
                    upstream[1].close()
                    upstream = None
                if plan.reset:
                    created = created_body(request, answer)
                    with self.lock:
                        self.counts.resets += 1
                        self.reset_requests.add(request.head + request.body)
                        if created is not None:
                            self.counts.lost_creates.append(created)
                    reset(client)
                    return
                self._relay(client, answer, plan)
                idle_since = time.monotonic()
                if closes(request) or closes(answer) or answer.ends_connection:
                    return
        except (OSError, ValueError, IndexError):
            return  # the client went away, timed out, or sent what is no HTTP: its connection ends
        finally:
            if upstream is not None:
                upstream[1].close()
            with self.lock:
                self.clients.discard(client)
            with contextlib.suppress(OSError):
                client.close()

    def _note_sent_again(self, request: Message) -> None:
        """The first request of a connection, byte for byte one whose connection was reset: the client sent it
        again on a fresh connection (what a transport does when it takes the reset for a dropped keep-alive)."""
        with self.lock:
            if request.head + request.body in self.reset_requests:
                self.counts.sent_again.append(request.body)

    def _exchange(self, upstream: tuple[BackgroundServer, socket.socket, Wire], request: Message) -> Message | None:
        _, sock, wire = upstream
        try:
            sock.sendall(request.head + request.body)
            while (answer := wire.head()) is not None and answer.start[1:2] and answer.start[1].startswith("1"):
                pass  # an interim answer (100 Continue): the final one follows
            if answer is None:
                return None
            bodiless = request.start[0] == "HEAD" or answer.start[1] in ("204", "304")
            wire.body(answer, bodiless)
            return answer
        except (OSError, ValueError):
            return None

    def _relay(self, client: socket.socket, answer: Message, plan: Plan) -> None:
        if plan.stall:
            with self.lock:
                self.counts.stalls += 1
            self.stopping.wait(plan.stall)
        if plan.trickle is None or not answer.body:
            client.sendall(answer.head + answer.body)
            return
        with self.lock:
            self.counts.trickles += 1
        client.sendall(answer.head)
        step = max(plan.trickle.bytes_per_write, 1)
        for at in range(0, len(answer.body), step):
            if at and self.stopping.wait(plan.trickle.delay):
                return
            client.sendall(answer.body[at : at + step])
