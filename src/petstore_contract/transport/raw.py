"""Requests ``requests`` cannot send exactly, sent byte for byte on a socket of their own, under the run's guard.

``requests`` asks for gzip and decodes it, re-quotes the URL (``%zz`` becomes ``%25zz``, dot segments
vanish), follows redirects and sends only the methods and framings its callers name.  The HTTP layer's
requests (``tests/test_http_layer.py``) need the request-target as written, any method token, no
``Accept-Encoding`` or ``identity``, chunked bodies, ``Expect: 100-continue`` and large bodies sent in
pieces while the answer may already be arriving; and they need the answer as it came: its bytes before
any content decoding, whether its framing completed, any redirect as the answer.

Every request still goes through the run's guard, as the adapter's do: the origin is the target's
(the request-target is always the base URL's path and more, so the key goes nowhere else), the guard is
asked first (budget, breaker, a stopped run), the request is counted, its timeout is cut to the budget,
it takes a place among the requests in flight from the adapter's ``Pacer``, and the adapter's watchers
(the judging pipeline, coverage, a certification bundle's recorder) see it with its body decoded as the
adapter would hand it on.  The record of it is redacted like every other (``answers.build_exchange``),
with the ``Accept-Encoding`` it was sent with, so that its replay sends the same.
"""

from __future__ import annotations

import http.client
import select
import socket
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.structures import CaseInsensitiveDict

from petstore_contract.core import records as record
from petstore_contract.transport.adapter import MAX_RESENDS, GuardedAdapter, Observed
from petstore_contract.transport.answers import (
    Answer,
    RawView,
    build_exchange,
    parse_retry_after,
    seen_answer,
    throttling,
)
from petstore_contract.transport.bodies import BODY_TIME_FACTOR, READ_SIZE
from petstore_contract.transport.guard import RunGuard
from petstore_contract.transport.options import origin
from petstore_contract.transport.problems import BUDGET, TargetProblem

PIECE = 65536  # a large body goes out in pieces, the answer watched for between them
CONTINUE_WAIT = 1.0  # RFC 9110 §10.1.1: a client need not wait for 100 (Continue) indefinitely
DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


@dataclass(frozen=True)
class RawRequest:
    """One request as it goes on the wire: ``target`` follows the base URL's path as written (no quoting).

    ``body`` goes with Content-Length; ``chunks`` (instead) with ``Transfer-Encoding: chunked`` (RFC 9112
    §7.1); ``expect_continue`` sends ``Expect: 100-continue`` and holds the body back until 100 or a
    second (RFC 9110 §10.1.1).  No header is added but Host, Content-Length or Transfer-Encoding.
    """

    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    chunks: tuple[bytes, ...] | None = None
    expect_continue: bool = False


# A body the run stopped reading (``--contract-max-body-bytes``, the body's time limit): the run's limit,
# not an answer the target left unfinished.
OUR_LIMITS = ("the body exceeds", "the body was still arriving")
DECODED_LIMIT = 16 * 1024 * 1024  # bytes of a decoded body kept (judged answers are far smaller)
INTERIM_LIMIT = 8192  # bytes of a 1xx answer's head read before the final answer


def decode(coding: str, wire: bytes) -> bytes | None:
    """``wire`` decoded from ``coding`` (a Content-Encoding value; "" or identity: as it is); None when
    the coding is unknown here or the bytes are not in it."""
    codings = [c.strip().lower() for c in coding.split(",") if c.strip() and c.strip().lower() != "identity"]
    data = wire
    for name in reversed(codings):
        if name not in DECODERS:
            return None
        # Bounded: a small body may decode to gigabytes; past DECODED_LIMIT the rest is not decoded.
        decoder = zlib.decompressobj(DECODERS[name])
        try:
            data = decoder.decompress(data, DECODED_LIMIT)
        except zlib.error:
            return None
    return data


class RawSender:
    """Sends ``RawRequest``s to one target under the adapter's guard, pacer, redaction and watchers."""

    def __init__(self, adapter: GuardedAdapter) -> None:
        self.adapter = adapter
        self.options = adapter.options
        self.guard: RunGuard = adapter.guard
        self.redact = adapter.redact
        self.tls = adapter.tls
        base = urlsplit(self.options.base_url.rstrip("/"))
        self.scheme, self.host, self.base_path = base.scheme.lower(), base.hostname or "", base.path
        self.port = base.port or (443 if self.scheme == "https" else 80)
        self.netloc = base.netloc.rpartition("@")[2]

    def url(self, target: str) -> str:
        return f"{self.scheme}://{self.netloc}{self.base_path}{target}"

    def send(self, raw: RawRequest, *, no_answer_is_an_answer: bool = False) -> Answer:
        """The answer (complete or not); TargetProblem when none started (``no_answer_is_an_answer``: a
        request a web server may drop, an invalid request-target: it does not count against the target).

        A throttling answer (a 429, a 503 with ``Retry-After``: the request was not processed) is waited
        out and the request sent again, as the adapter does for every other request (``MAX_RESENDS``, within
        the budget); the last answer is returned, and judged as throttled if it still is."""
        resends = 0
        while True:
            answer, ticket = self._send_once(raw, no_answer_is_an_answer)
            wait = self._throttle_wait(answer)
            if wait is None or resends >= MAX_RESENDS:
                self.adapter.pacer.answered(ticket)
                return answer
            self.adapter.pacer.throttled(ticket, wait)
            self.guard.count_throttled(wait)
            resends += 1
            if self.adapter.closing.wait(wait):
                return answer

    def _throttle_wait(self, answer: Answer) -> float | None:
        """Seconds to wait before sending again, or None: not throttled, or the wait would outlive the budget."""
        after = answer.headers.get("retry-after")
        if not throttling(answer.status, after):
            return None
        wait = parse_retry_after(after)
        if wait is None:
            return None
        wait = min(wait, self.options.retry_after_cap)
        left = self.guard.seconds_left()
        return None if left is not None and wait >= left else wait

    def _send_once(self, raw: RawRequest, no_answer_is_an_answer: bool) -> tuple[Answer, Any]:
        url = self.url(raw.target)
        where = f"{raw.method} {self.redact(url)}"
        if origin(url) != self.adapter.origin or not raw.target.startswith("/"):
            raise TargetProblem(f"{where}: not sent: outside the target's base URL", kind=BUDGET)
        headers = self._headers(raw)
        prepared = _prepared(raw, url, headers)
        self.guard.check()
        ticket = self._slot()
        wanted = self.options.timeout
        cut = self.guard.timeout(wanted)
        self.guard.count_sent(raw.method)
        started, clock = time.time(), time.monotonic()
        try:
            status, reason, pairs, wire, problem, interim = self._exchange(raw, headers, cut, wanted)
        except (OSError, http.client.HTTPException) as exc:
            self.adapter.pacer.unanswered(ticket)
            line = f"{where}: no answer ({_why(exc)})"
            self._observe(prepared, started, clock, problem=line)
            if not no_answer_is_an_answer:
                self.guard.failed(line)
            spent = self.guard.budget_spent()
            exchange = build_exchange(self.redact, raw.method, url, _shown(headers), raw.body, problem=line)
            raise TargetProblem(
                f"{spent}; {where} was cut short" if spent else line,
                kind=BUDGET if spent else "target",
                exchange=_with_coding(exchange, headers, self.redact),
            ) from None
        self.guard.answered()
        coding = dict((k.lower(), v) for k, v in pairs).get("content-encoding", "")
        decoded = decode(coding, wire) if coding else wire
        body = decoded if decoded is not None else wire
        shown = [(k, v) for k, v in pairs if not (decoded is not None and coding and k.lower() == "content-encoding")]
        if self.adapter.watchers:
            seen = seen_answer(self.redact, prepared, status, tuple(shown), body, reason=reason)
            self._observe(prepared, started, clock, seen, problem)
        exchange = build_exchange(
            self.redact,
            raw.method,
            url,
            _shown(headers),
            _recorded_body(raw),
            status=status,
            response_headers=pairs,
            response_body=body,
            problem=problem,
        )
        view = RawView(wire, not problem or problem.startswith(OUR_LIMITS), problem, interim)
        answer = Answer(
            status, CaseInsensitiveDict(dict(pairs)), body, _with_coding(exchange, headers, self.redact), view
        )
        return answer, ticket

    def _slot(self) -> Any:
        while (ticket := self.adapter.pacer.acquire(self.guard.seconds_left())) is None:
            self.guard.check()
        return ticket

    def _headers(self, raw: RawRequest) -> list[tuple[str, str]]:
        default_port = self.port == (443 if self.scheme == "https" else 80)
        headers = [("Host", self.host if default_port else f"{self.host}:{self.port}")]
        headers += [(name, value) for name, value in raw.headers]
        if raw.chunks is not None:
            headers.append(("Transfer-Encoding", "chunked"))
        elif raw.body is not None:
            headers.append(("Content-Length", str(len(raw.body))))
        if raw.expect_continue:
            headers.append(("Expect", "100-continue"))
        return headers

    def _connect(self, seconds: float) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=seconds)
        if self.scheme != "https":
            return sock
        context = self.tls.context(self.options.verify)  # the run's, read once (``tls``), as every request's
        return context.wrap_socket(sock, server_hostname=self.host)

    def _exchange(
        self, raw: RawRequest, headers: list[tuple[str, str]], cut: float, wanted: float
    ) -> tuple[int, str, list[tuple[str, str]], bytes, str, tuple[int, ...]]:
        """Send, then read the answer; the socket is closed at the end (one request a connection: what
        a server does with a connection after an unusual request is its own affair)."""
        sock = self._connect(cut)
        try:
            head = f"{raw.method} {self.base_path}{raw.target} HTTP/1.1\r\n"
            head += "".join(f"{name}: {value}\r\n" for name, value in headers) + "\r\n"
            sock.sendall(head.encode("latin-1", "replace"))
            interim: list[int] = []
            final_first = False
            if raw.expect_continue and self.scheme == "http" and _readable(sock, min(CONTINUE_WAIT, cut)):
                status = _take_interim(sock)
                final_first = status is None
                interim += [] if status is None else [status]
            if not final_first:  # a final answer in place of 100: the body is not sent (§10.1.1)
                _send_body(sock, raw)
            response = http.client.HTTPResponse(sock, method=raw.method)
            response.begin()  # skips any further 1xx answers
            wire, problem = _read_body(response, BODY_TIME_FACTOR * wanted, self.options.max_body_bytes)
            pairs = [(str(k), str(v)) for k, v in response.getheaders()]
            return response.status, response.reason or "", pairs, wire, problem, tuple(interim)
        finally:
            sock.close()

    def _observe(
        self,
        prepared: requests.PreparedRequest,
        started: float,
        clock: float,
        answer: Answer | None = None,
        problem: str = "",
    ) -> None:
        if not self.adapter.watchers:
            return
        now = time.monotonic()
        seen = Observed(prepared, started, now - clock, 0.0, answer, problem)
        for watcher in self.adapter.watchers:
            try:
                watcher(seen)
            except Exception:  # bookkeeping never fails a request (as in the adapter)
                continue


def _prepared(raw: RawRequest, url: str, headers: list[tuple[str, str]]) -> requests.PreparedRequest:
    """The request as the watchers read it (not ``prepare()``d: that would re-quote the URL)."""
    prepared = requests.PreparedRequest()
    prepared.method = raw.method
    prepared.url = url
    prepared.headers = CaseInsensitiveDict({k: v for k, v in headers if k.lower() not in ("host", "content-length")})
    prepared.body = raw.body if raw.body is not None else (b"".join(raw.chunks) if raw.chunks is not None else None)
    return prepared


def _shown(headers: list[tuple[str, str]]) -> dict[str, str]:
    return {name: value for name, value in headers if name.lower() != "host"}


def _recorded_body(raw: RawRequest) -> bytes | None:
    if raw.chunks is not None:
        return b"".join(raw.chunks)
    return raw.body


def _with_coding(exchange: record.Exchange, headers: Iterable[tuple[str, str]], redact: Any) -> record.Exchange:
    """The record with the Accept-Encoding it was sent with (``build_exchange`` leaves it out as a hop
    header a replay sets by itself): a replay must ask for the same codings to get the same bytes."""
    kept = [(k, redact.for_exchange(v)) for k, v in headers if k.lower() in ("accept-encoding", "transfer-encoding")]
    if not kept:
        return exchange
    return replace(exchange, request_headers=(*exchange.request_headers, *kept))


def _readable(sock: socket.socket, seconds: float) -> bool:
    ready, _, _ = select.select([sock], [], [], max(seconds, 0.0))
    return bool(ready)


def _send_body(sock: socket.socket, raw: RawRequest) -> bool:
    """Send the body; True when the server answered before it was all sent (the rest is not sent: the
    answer is read as it is, RFC 9112 §9.6)."""
    if raw.chunks is not None:
        pieces: list[bytes] = [b"%x\r\n%s\r\n" % (len(c), c) for c in raw.chunks if c] + [b"0\r\n\r\n"]
    elif raw.body is not None:
        pieces = [raw.body[i : i + PIECE] for i in range(0, len(raw.body), PIECE)]
    else:
        return False
    for piece in pieces:
        if len(pieces) > 1 and _readable(sock, 0):
            return True
        try:
            sock.sendall(piece)
        except OSError:
            return True  # the server stopped reading: its answer may be waiting
    return False


def _read_body(response: http.client.HTTPResponse, seconds: float, limit: int) -> tuple[bytes, str]:
    """The body as it came (no content decoding) and why it is not complete ("" when it is)."""
    deadline = time.monotonic() + seconds
    chunks: list[bytes] = []
    size = 0
    try:
        while piece := response.read1(READ_SIZE):
            chunks.append(piece)
            size += len(piece)
            if size > limit:
                return b"".join(chunks), f"the body exceeds {limit} bytes (--contract-max-body-bytes); stopped reading"
            if time.monotonic() > deadline:
                return b"".join(chunks), f"the body was still arriving after {seconds:g} s; stopped reading"
    except http.client.IncompleteRead as exc:
        chunks.append(exc.partial)
        framing = "chunked, without its last chunk" if response.chunked else "fewer bytes than its Content-Length"
        return b"".join(chunks), f"the answer ended before its framing did ({framing})"
    except (OSError, http.client.HTTPException) as exc:
        return b"".join(chunks), f"the answer broke off mid-body ({_why(exc)})"
    if response.length:  # read1 returns b"" at the end of the stream, whatever Content-Length announced
        return b"".join(chunks), "the answer ended before its framing did (fewer bytes than its Content-Length)"
    return b"".join(chunks), ""


def _take_interim(sock: socket.socket) -> int | None:
    """The 1xx answer waiting on the socket, consumed (its status); None when a final answer waits there
    (left to be read as the answer)."""
    peeked = sock.recv(4096, socket.MSG_PEEK)
    if not (peeked.startswith(b"HTTP/1.") and peeked[9:10] == b"1"):
        return None
    seen = b""
    while not seen.endswith(b"\r\n\r\n") and len(seen) < INTERIM_LIMIT:  # a target may send anything
        byte = sock.recv(1)
        if not byte:
            break
        seen += byte
    status = seen[9:12]
    return int(status) if status.isdigit() else 100


def _why(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by the target"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the target closed the connection without answering"
    if isinstance(exc, http.client.BadStatusLine):
        return "not an HTTP answer"
    return type(exc).__name__ if not str(exc) else f"{type(exc).__name__}: {str(exc)[:80]}"


def header_map(pairs: Mapping[str, str]) -> CaseInsensitiveDict[str]:
    return CaseInsensitiveDict(dict(pairs))
