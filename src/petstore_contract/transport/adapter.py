"""The one adapter every request of a run goes through (see the package's docstring)."""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter

from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.spec import animal_made
from petstore_contract.transport import bodies, busy, connections
from petstore_contract.transport.answers import Answer, build_exchange, parse_retry_after, seen_answer, throttling
from petstore_contract.transport.connections import IDEMPOTENT
from petstore_contract.transport.guard import RunGuard, cut_timeout, longest_wait
from petstore_contract.transport.options import TransportOptions, origin
from petstore_contract.transport.pacing import Pacer, Ticket
from petstore_contract.transport.problems import BUDGET, INCOMPLETE, TargetProblem, describe, never_sent
from petstore_contract.transport.tls import TlsContexts

MAX_RESENDS = 3
TLS_FILES = ("ca_certs", "ca_cert_dir", "cert_file", "key_file")  # what the run's TLS context holds read once
STALL_FACTOR = 0.5  # an answer slower than this part of the request timeout is reported as stalled


# -- the adapter -----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Observed:
    """One exchange as the adapter saw it, for its ``watchers``: the request as it went out on the wire, the
    answer that came back (``answers.Answer``, as every check reads it), and when.

    Raw: not redacted (a watcher that keeps it redacts it, e.g. ``har.Recorder``; the answer's own
    ``exchange`` is redacted).  ``answer`` None: no answer, ``problem`` says why; an answer and a
    ``problem``: an answer that never completed (its body not read).  Times: ``started`` epoch seconds,
    ``wait`` until the answer's headers (or the failure), ``receive`` reading the body.
    """

    request: requests.PreparedRequest
    started: float
    wait: float
    receive: float = 0.0
    answer: Answer | None = None
    problem: str = ""


class GuardedAdapter(HTTPAdapter):
    """The one adapter of a run: guard, origin, budgeted timeout, bounded body, Retry-After."""

    def __init__(self, options: TransportOptions, guard: RunGuard, redactor: Redactor) -> None:
        self.options = options
        self.guard = guard
        self.redact = redactor
        self.origin = origin(options.base_url)
        self.closing = threading.Event()
        if options.client_cert and options.client_key:
            self.cert: str | tuple[str, str] | None = (options.client_cert, options.client_key)
        else:
            self.cert = options.client_cert
        size = max(options.concurrency, 1)
        # One bound for the whole process, whichever thread sends: a batch of generated cases and
        # a table sent ahead share the same ``concurrency`` requests in flight, fewer while throttled.
        self.pacer = Pacer(size, on_cut=guard.note_concurrency)
        guard.note_concurrency(size)
        # Called with every request sent and its answer (``Observed``): a contract run's coverage tally and
        # pipeline, and its recorder where the run keeps its exchanges (a certification bundle, HAR); a
        # transport with none (a replay) reads no exchange for them.
        self.watchers: list[Callable[[Observed], None]] = []
        self.answered_once = False  # the target answered a request of this process (``busy``)
        self.tls = TlsContexts(options.client_cert, options.client_key)
        super().__init__(pool_connections=2, pool_maxsize=size, pool_block=True)
        connections.open_spares(True)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        connections.install(self.poolmanager)  # writes on new connections only (``connections``)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> urllib3.ProxyManager:
        manager: urllib3.ProxyManager = super().proxy_manager_for(proxy, **proxy_kwargs)
        return connections.install(manager)

    def build_connection_pool_key_attributes(
        self, request: requests.PreparedRequest, verify: bool | str, cert: str | tuple[str, str] | None = None
    ) -> tuple[Any, Any]:
        """requests' pool for the request, given the run's TLS context (``tls``: the trust store and the
        client certificate read once) in place of the files each new connection would read again."""
        host, pool = super().build_connection_pool_key_attributes(request, verify, cert)
        if host["scheme"] != "https":
            return host, pool
        try:
            context = self.tls.context(verify)
        except (OSError, ssl.SSLError):
            return host, pool  # requests says what is wrong with the files, as it would without it
        kept: dict[str, Any] = {k: v for k, v in pool.items() if k not in TLS_FILES}
        return host, {**kept, "ssl_context": context}

    def cert_verify(self, conn: Any, url: str, verify: bool | str, cert: Any) -> None:
        super().cert_verify(conn, url, verify, cert)  # type: ignore[no-untyped-call]  # its checks, the verify mode
        if url.lower().startswith("https") and conn.conn_kw.get("ssl_context") is not None:
            conn.ca_certs = conn.ca_cert_dir = conn.cert_file = conn.key_file = None  # in the context already

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: bool | str = True,
        cert: Any = None,
        proxies: Mapping[str, str] | None = None,
    ) -> requests.Response:
        method = (request.method or "GET").upper()
        url = request.url or ""
        where = f"{method} {self.redact(url)}"
        there = origin(url)
        if there != self.origin:
            line = (
                f"{where}: not sent: {there} is not the target's origin ({self.origin}); "
                "the API key goes to the target only"
            )
            self.guard.noted(line)
            raise TargetProblem(line, request=request)
        wanted = longest_wait(timeout, self.options.timeout)
        resendable = request.body is None or isinstance(request.body, bytes | str)
        resends = busy_resends = 0
        while True:
            ticket = self._slot()  # not held while waiting out a Retry-After
            clock = time.monotonic()
            try:
                response = self._send_once(request, method, where, timeout, wanted, proxies)
            except busy.Busy as sign:  # back-pressure, as for a 429 (``busy``)
                pause, left = busy.pause(busy_resends), self.guard.seconds_left()
                again = sign.resend and resendable and busy_resends < busy.RESENDS and (left is None or pause < left)
                self.pacer.throttled(ticket, pause if again else 0.0)
                if not again or self.closing.wait(pause):
                    raise self._no_answer(sign.line, where, request, sign.sent) from None
                busy_resends += 1
                self.guard.note_event("busy_resends", sign.line)
                self._observe(request, sign.sent, problem=f"{sign.line}; sent again after {pause:g} s")
                continue
            except BaseException:
                self.pacer.unanswered(ticket)
                raise
            self._pace(ticket, response, slow=time.monotonic() - clock > STALL_FACTOR * wanted)
            wait = self._throttle_wait(response)
            if wait is None or resends >= MAX_RESENDS or not resendable:
                self._keep_server_error(request, method, response)
                if method == "POST" and (
                    response.status_code == 201 or animal_made(response.status_code, response.content) is not None
                ):
                    self.guard.count_created()  # a 201, or another 2xx that shows the Pet it made
                return response
            resends += 1
            self.guard.count_throttled(wait)
            if self.closing.wait(wait):
                return response

    def close(self) -> None:
        self.closing.set()
        self.pacer.close()
        connections.open_spares(False)
        super().close()

    def _slot(self) -> Ticket:
        """A place among the requests in flight; a budget spent while waiting for one raises (nothing sent)."""
        while (ticket := self.pacer.acquire(self.guard.seconds_left())) is None:
            self.guard.check()
        return ticket

    def _pace(self, ticket: Ticket, response: requests.Response, slow: bool) -> None:
        """Tell the pacer how the request fared: a 429, or a 503 with Retry-After (whatever the method),
        is the target throttling the run; every sender then pauses as long as it asks, within the budget.
        An answer that stalled is a busy target's: fewer requests in flight (``busy``)."""
        after = response.headers.get("Retry-After")
        if not throttling(response.status_code, after):
            if slow:
                self.pacer.throttled(ticket)
            else:
                self.pacer.answered(ticket)
            return
        pause = min(parse_retry_after(after) or 0.0, self.options.retry_after_cap)
        left = self.guard.seconds_left()
        self.pacer.throttled(ticket, 0.0 if left is not None and pause >= left else pause)

    def _keep_server_error(self, request: requests.PreparedRequest, method: str, response: requests.Response) -> None:
        """Every 5xx is evidence against the operation's documented answers, whichever check sent it
        (set-up, a table, a generated case); a 503 with Retry-After is the target throttling, not a fault."""
        status = response.status_code
        if status < 500 or throttling(status, response.headers.get("Retry-After")):
            return
        body = request.body if isinstance(request.body, bytes | str) else None
        pairs = list(response.headers.items())
        exchange = build_exchange(
            self.redact,
            method,
            request.url or "",
            request.headers,
            body,
            status=status,
            response_headers=pairs,
            response_body=response.content or b"",
        )
        self.guard.note_server_error(exchange)

    # one request

    def _send_once(
        self,
        request: requests.PreparedRequest,
        method: str,
        where: str,
        timeout: Any,
        wanted: float,
        proxies: Mapping[str, str] | None,
    ) -> requests.Response:
        streamed, (started, clock) = self._head(request, method, where, timeout, wanted, proxies)
        answered = time.monotonic()
        self.answered_once = True  # from now on a refused or dropped connection is a busy target's
        left = self.guard.seconds_left()
        factor = bodies.BODY_TIME_FACTOR
        body_seconds = factor * wanted if left is None else max(0.05, min(factor * wanted, left))
        try:
            body = bodies.read(streamed, body_seconds, self.options.max_body_bytes)
        except bodies.BodyProblem as exc:
            if exc.cut:
                raise self._cut_short(f"{where}: {exc}", request, streamed, exc.partial, (started, clock)) from None
            raise self._no_answer(f"{where}: {exc}", where, request, (started, clock)) from None
        took = time.monotonic() - clock
        if took > STALL_FACTOR * wanted:
            self.guard.note_event("stalled_answers", f"{where} answered HTTP {streamed.status_code} after {took:.1f} s")
        self.guard.answered()
        if self.watchers:
            raw = streamed.raw
            fields = tuple(raw.headers.items())
            seen = seen_answer(
                self.redact, request, raw.status, fields, body, reason=raw.reason or "", version=raw.version
            )
            self._observe(request, (started, clock), answered, seen)
        return self.build_response(request, bodies.in_memory(streamed, body, method))

    def _head(
        self,
        request: requests.PreparedRequest,
        method: str,
        where: str,
        timeout: Any,
        wanted: float,
        proxies: Mapping[str, str] | None,
    ) -> tuple[requests.Response, tuple[float, float]]:
        """The answer's head (its body still to read) and when its request went out (epoch, monotonic)."""
        self.guard.check()
        cut = self.guard.timeout(wanted)
        sent_timeout = cut_timeout(timeout, wanted, cut)
        self.guard.count_sent(method)
        started, clock = time.time(), time.monotonic()
        try:
            streamed = super().send(
                request, stream=True, timeout=sent_timeout, verify=self.options.verify, cert=self.cert, proxies=proxies
            )
        except requests.exceptions.RequestException as exc:
            line = describe(exc, where, self.origin, cut)
            if busy.refused(exc) and self.answered_once:
                raise busy.Busy(line, (started, clock), resend=True) from None
            if not connections.dropped_before_answer(exc):
                raise self._no_answer(line, where, request, (started, clock), unsent=never_sent(exc)) from None
            if method not in IDEMPOTENT:
                # The connection (a new one: ``connections``) dropped with no answer: the service may have
                # applied the write before it did (a reset after the answer was on its way looks the same),
                # so it is never sent again on a guess (RFC 9110 §9.2.2).  Its outcome is unknown.
                raise busy.Busy(line, (started, clock), resend=False) from None
            # A connection closed by the server as an idempotent request went out (most often a kept-alive
            # one its idle timeout ended): send it once more on a new one, as browsers and curl do
            # (RFC 9112 §9.3.1; asking again changes nothing).
            self._observe(request, (started, clock), problem="connection closed as the request went out; sent again")
            self.guard.count_sent(method)
            started, clock = time.time(), time.monotonic()
            try:
                with connections.fresh_connection():
                    streamed = super().send(
                        request,
                        stream=True,
                        timeout=cut_timeout(timeout, wanted, self.guard.timeout(wanted)),
                        verify=self.options.verify,
                        cert=self.cert,
                        proxies=proxies,
                    )
            except requests.exceptions.RequestException as again:
                line = describe(again, where, self.origin, cut)
                if self.answered_once and (busy.refused(again) or connections.dropped_before_answer(again)):
                    raise busy.Busy(line, (started, clock), resend=True) from None
                raise self._no_answer(line, where, request, (started, clock), unsent=never_sent(again)) from None
        return streamed, (started, clock)

    def _observe(
        self,
        request: requests.PreparedRequest,
        sent: tuple[float, float],
        answered: float | None = None,
        answer: Answer | None = None,
        problem: str = "",
    ) -> None:
        """Hand one exchange to the watchers (``sent``: epoch and monotonic time it went out)."""
        if not self.watchers:
            return
        started, clock = sent
        now = time.monotonic()
        wait = (answered if answered is not None else now) - clock
        seen = Observed(request, started, wait, now - clock - wait, answer, problem)
        for watcher in self.watchers:
            # Bookkeeping must never fail a request; a recorder that lost an exchange shows in
            # ``petstore-contract verify`` (the HAR's entries against the requests counted).
            with contextlib.suppress(Exception):
                watcher(seen)

    def _no_answer(
        self,
        line: str,
        where: str,
        request: requests.PreparedRequest,
        sent: tuple[float, float] | None = None,
        unsent: bool = False,  # it never left (``never_sent``): nothing was applied, nothing is lost
    ) -> TargetProblem:
        if sent is not None:
            self._observe(request, sent, problem=line)
        if sent is not None and not unsent:
            self._note_lost(where, line)
            if where.split(" ", 1)[0] not in IDEMPOTENT:  # what the clauses that needed it are undecided for
                line += "; a write's answer was lost: it may have been applied, and was not sent again"
        self.guard.failed(line)
        spent = self.guard.budget_spent()
        if spent:
            return TargetProblem(f"{spent}; {where} was cut short", kind=BUDGET, request=request)
        return TargetProblem(line, request=request)

    def _cut_short(
        self,
        line: str,
        request: requests.PreparedRequest,
        streamed: requests.Response,
        partial: bytes,
        sent: tuple[float, float],
    ) -> TargetProblem:
        """An answer whose head arrived and whose body never completed: the target answered (the breaker is
        not moved, the write's outcome is its status's), incompletely; the judge places it on its clause."""
        raw = streamed.raw
        pairs = list(raw.headers.items())
        if self.watchers:
            head = seen_answer(self.redact, request, raw.status, tuple(pairs), b"", reason=raw.reason or "")
            self._observe(request, sent, answer=head, problem=line)
        self.guard.answered()
        body = request.body if isinstance(request.body, bytes | str) else None
        exchange = build_exchange(
            self.redact,
            request.method or "GET",
            request.url or "",
            request.headers,
            body,
            status=raw.status,
            response_headers=pairs,
            response_body=partial,
            problem=line,
        )
        return TargetProblem(line, kind=INCOMPLETE, request=request, exchange=exchange)

    def _note_lost(self, where: str, line: str) -> None:
        """The transport events of a request that was sent and got no usable answer."""
        if where.split(" ", 1)[0] not in IDEMPOTENT:
            self.guard.note_event("unknown_writes", line)
        if any(words in line for words in ("reset", "closed the connection", "connection broke")):
            self.guard.note_event("connection_resets", line)
        elif "still arriving" in line:
            self.guard.note_event("bodies_cut", line)

    def _throttle_wait(self, response: requests.Response) -> float | None:
        """Seconds to wait before sending again, or None: not throttled, or the wait would outlive the budget."""
        if not throttling(response.status_code, response.headers.get("Retry-After")):
            return None
        after = parse_retry_after(response.headers.get("Retry-After"))
        if after is None:
            return None
        wait = min(after, self.options.retry_after_cap)
        left = self.guard.seconds_left()
        if left is not None and wait >= left:
            return None
        return wait
