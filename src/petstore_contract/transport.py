"""All HTTP of the suite: one bounded, same-origin, guarded transport for a run.

Every request of a run, whether a targeted test's ``Transport.request`` or a Schemathesis call
through ``Transport.session()``, goes through one ``GuardedAdapter``.  In its ``send()``:

- the run's ``RunGuard`` is asked first: once the run budget is spent or the circuit breaker is
  open, nothing more is sent (``TargetProblem``, kind "budget" or "target");
- a request to another origin than the target's is refused, so the API key never leaves it;
- the timeout is cut to what is left of the budget;
- the body is read with ``read1`` within ``max_body_bytes`` and 3 x the timeout (a trickling body
  still meets the deadline) into a new in-memory ``urllib3.HTTPResponse``;
- a 429 with ``Retry-After`` (any method: RFC 6585, the request was not processed) or a 503 with
  ``Retry-After`` (GET/HEAD only) is waited out and sent again, at most ``MAX_RESENDS`` times, each
  wait at most ``retry_after_cap`` and never past the budget; still throttled, the last answer is
  returned (the caller decides);
- requests in flight are bounded by a ``pacing.Pacer``: ``concurrency`` at most, fewer while the
  target throttles, with every sender of the process pausing and then paced after a 429;
- transport trouble becomes a one-line ``TargetProblem`` naming the cause and the (redacted) request.

TLS settings (``verify``, the client certificate) are the transport's, whatever a caller passes:
Schemathesis passes its own ``verify=True`` to every call.

Cookies: the in-memory answer carries no ``http.client`` response, so requests puts no cookie into
a session's jar (the Pet Store authenticates with a bearer key; cookies play no part).

Under pytest-xdist each process has its own ``RunGuard``; the deadline is one epoch time given by
the controller, an open breaker is a file in ``shared_dir`` that every process sees, and the
controller sums the counters each process wrote (``RunGuard.write_counters``, ``merge_counters``).
"""

from __future__ import annotations

import contextlib
import email.utils
import io
import ipaddress
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from http.client import RemoteDisconnected
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode, urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.exceptions import ProtocolError

from petstore_contract import record
from petstore_contract.pacing import Pacer, Ticket
from petstore_contract.redaction import Redactor

__all__ = [
    "BREAKER_FILE",
    "COUNTERS_GLOB",
    "SERVER_ERRORS",
    "Answer",
    "Batch",
    "GuardedAdapter",
    "Observed",
    "RunGuard",
    "TargetProblem",
    "Transport",
    "TransportOptions",
    "describe",
    "merge_counters",
    "origin",
    "parse_retry_after",
]

T = TypeVar("T")
R = TypeVar("R")

TARGET, BUDGET = "target", "budget"
BREAKER_FILE = "breaker-open"
COUNTERS_GLOB = "counters-*.json"
# A run's counters (RunGuard); "resent_writes": requests not safe to repeat that were sent again on a
# fresh connection after the server closed a kept-alive one as they went out (counted and reported).
# "created": POSTs answered 201, the animals a run added to a store that has no delete;
# "held_back": generated creates not sent on a crowded store (``Run.limit_generated_creates``).
COUNTS = ("requests", "writes", "no_answer", "throttled", "repeats_not_sent", "resent_writes", "created", "held_back")
SERVER_ERRORS = "server_errors"  # beside the counters: the 5xx answers a process kept as evidence
# Beside the counters too: the lowest bound on requests in flight a process came down to (``pacing``);
# the run's is the lowest of its processes', not their sum.
CONCURRENCY_MIN = "concurrency_min"
SERVER_ERRORS_KEPT = 20
READ_SIZE = 65536
MAX_RESENDS = 3
BODY_TIME_FACTOR = 3
REDIRECTS = frozenset({301, 302, 303, 307, 308})
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Not shown in a recorded exchange: transport details a replay (curl) sets by itself.
HOP_HEADERS = frozenset({"connection", "content-length", "transfer-encoding", "accept-encoding"})
# TLS 1.3: a server that wants a client certificate may close before its alert is read.
_TLS_EOF = (
    "the target closed the connection during the TLS handshake (does it require a client certificate? --client-cert)"
)
_REASONS = (
    ("Connection refused", "connection refused"),
    ("Name or service not known", "host name not found"),
    ("nodename nor servname", "host name not found"),
    ("Temporary failure in name resolution", "host name not found"),
    ("Connection reset", "connection reset by the target"),
    ("RemoteDisconnected", "the target closed the connection without answering"),
    ("CERTIFICATE_REQUIRED", "the target requires a client certificate (--client-cert)"),
    ("certificate required", "the target requires a client certificate (--client-cert)"),
    ("UNKNOWN_CA", "the target rejected the client certificate"),
    ("BAD_CERTIFICATE", "the target rejected the client certificate"),
    ("CERTIFICATE_VERIFY_FAILED", "certificate verification failed"),
    ("WRONG_VERSION_NUMBER", "the target does not speak TLS on that port"),
    ("UNEXPECTED_EOF", _TLS_EOF),
    ("EOF occurred in violation of protocol", _TLS_EOF),
    ("Tunnel connection failed", "the proxy refused the tunnel"),
    ("Unable to connect to proxy", "the proxy could not be reached"),
    ("IncompleteRead", "the answer ended before its announced length"),
    ("InvalidChunkLength", "malformed chunked encoding"),
    ("failed to decode", "the body does not match its Content-Encoding"),
    ("timed out", "timed out"),
)
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"()\]\[]+)")


class TargetProblem(requests.exceptions.RequestException):
    """The target could not be asked, or did not answer usably; ``str()`` is one line naming cause and request.

    ``kind`` is "target" (refused, timed out, reset, TLS, body too large/slow/broken, another
    origin, breaker open) or "budget" (the run budget was spent).  ``exchange``, when set, is the
    request as recorded (no answer: ``status`` None, ``problem`` this message).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = TARGET,
        request: requests.PreparedRequest | None = None,
        exchange: record.Exchange | None = None,
    ) -> None:
        line = " ".join(message.split())
        super().__init__(line, request=request)
        self.kind = kind
        self.message = line
        self.exchange = exchange

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:  # keeps ``kind`` when pickled (xdist, Hypothesis)
        return (_rebuild_problem, (self.message, self.kind, self.exchange))


def _rebuild_problem(message: str, kind: str, exchange: record.Exchange | None) -> TargetProblem:
    return TargetProblem(message, kind=kind, exchange=exchange)


@dataclass(frozen=True)
class TransportOptions:
    """How to talk to one target during one run."""

    base_url: str
    api_key: str
    key_env: str = "PETSTORE_API_KEY"
    timeout: float = 10.0  # seconds per request (connect and each read)
    max_body_bytes: int = 4_000_000
    verify: bool | str = True  # False, True or a CA bundle path
    client_cert: str | None = None  # PEM certificate (or certificate + key) for mutual TLS
    client_key: str | None = None
    use_proxy_env: bool = True  # HTTPS_PROXY/HTTP_PROXY/NO_PROXY, never for a loopback target
    concurrency: int = 8  # threads of ``Transport.map`` and connections per origin
    trip_after: int = 3  # requests in a row without answer that open the breaker; 0: never
    deadline: float | None = None  # epoch seconds (time.time()) at which the run budget is spent
    budget: float | None = None  # the budget in seconds, for messages
    max_redirects: int = 3
    retry_after_cap: float = 30.0  # the longest single wait on Retry-After
    shared_dir: str | None = None  # a directory all processes of the run share (breaker, counters)


# -- helpers ---------------------------------------------------------------------------------------


def origin(url: str) -> str:
    """``scheme://host:port`` with the default port made explicit (lower-case scheme and host)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme, 0)
    except ValueError:  # a port that is not a number
        port = 0
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reason(exc: BaseException) -> str:
    """A few words for a transport exception (its own text is a nested, multi-line repr)."""
    text = str(exc)
    for marker, words in _REASONS:
        if marker in text:
            return words
    found = _ERRNO.search(text)
    if found:
        return found.group(1).strip().lower()
    return type(exc).__name__


def _is_tls(exc: BaseException) -> bool:
    if isinstance(exc, requests.exceptions.SSLError):
        return True
    text = str(exc)
    return any(marker in text for marker in ("SSLError", "SSL:", "TLSV1", "CERTIFICATE_REQUIRED"))


def describe(exc: BaseException, where: str, target: str, seconds: float) -> str:
    """One line for a request that got no answer.  ``where`` is "METHOD redacted-url", ``target`` the origin."""
    if isinstance(exc, requests.exceptions.ProxyError):
        return f"{where}: proxy error: {reason(exc)}"
    if _is_tls(exc):
        hint = "" if "client certificate" in reason(exc) else " (see --ca-bundle)"
        return f"TLS error talking to {target}: {reason(exc)}{hint}"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"no connection to {target} within {seconds:g} s"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return f"{where}: no answer within {seconds:g} s"
    return f"{where}: {reason(exc)}"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait for a ``Retry-After`` value (delay-seconds or HTTP-date); None if absent or invalid."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _seconds(timeout: Any, default: float) -> float:
    """The longest single wait a requests ``timeout`` argument allows (for messages and the body deadline)."""
    if timeout is None:
        return default
    if isinstance(timeout, int | float):
        return float(timeout)
    if isinstance(timeout, tuple):
        values = [float(v) for v in timeout if v is not None]
        return max(values) if values else default
    if isinstance(timeout, urllib3.Timeout):
        values = [v for v in (timeout.connect_timeout, timeout.read_timeout) if isinstance(v, int | float)]
        return float(max(values)) if values else default
    return default


def _cut_timeout(timeout: Any, wanted: float, cut: float) -> Any:
    """The caller's timeout with no part longer than ``cut`` (what is left of the budget)."""
    if cut >= wanted and timeout is not None:
        return timeout
    if isinstance(timeout, tuple):
        return tuple(cut if v is None else min(float(v), cut) for v in timeout)
    return cut


def _dropped_before_answer(exc: BaseException) -> bool:
    """A keep-alive connection that the server closed as the request went out (no answer started)."""
    cause = exc.args[0] if exc.args else None
    return (
        isinstance(cause, ProtocolError)
        and len(cause.args) == 2
        and isinstance(cause.args[1], RemoteDisconnected | ConnectionResetError | BrokenPipeError)
    )


# -- the run's guard -------------------------------------------------------------------------------


class RunGuard:
    """The run budget, the circuit breaker and the counters of one process; thread-safe.

    The deadline is an epoch time (the pytest controller computes it and hands it to xdist workers).
    When ``shared_dir`` is set, opening the breaker writes ``shared_dir/breaker-open`` (its one-line
    reason) and ``check()`` in every process of the run sees it.  Once open, the breaker stays open
    for the run.  Counters are per process: each writes them with ``write_counters`` (name the file
    ``counters-<worker>.json`` in ``shared_dir``) and the controller sums them with ``merge_counters``.
    """

    def __init__(
        self,
        *,
        deadline: float | None = None,
        budget: float | None = None,
        trip_after: int = 3,
        shared_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.deadline = deadline
        self.budget = budget
        self.trip_after = trip_after
        self.shared_dir = Path(shared_dir) if shared_dir is not None else None
        self._lock = threading.Lock()
        self._streak = 0
        self._open: str | None = None
        self._first = ""
        self._counts = dict.fromkeys(COUNTS, 0)
        self._waited = 0.0
        self._concurrency_min: int | None = None
        self._server_errors: dict[tuple[str, str, int | None], record.Exchange] = {}
        # Other tallies of this process, written beside its counters (e.g. "coverage"): plain data
        # that ``merge_counters`` leaves alone (it sums numbers only) and their own readers merge.
        self.tallies: dict[str, Callable[[], Any]] = {}

    @classmethod
    def from_options(cls, options: TransportOptions) -> RunGuard:
        return cls(
            deadline=options.deadline,
            budget=options.budget,
            trip_after=options.trip_after,
            shared_dir=options.shared_dir,
        )

    # budget

    def seconds_left(self) -> float | None:
        """What is left of the budget (may be negative); None without a budget."""
        return None if self.deadline is None else self.deadline - time.time()

    def budget_spent(self) -> str | None:
        left = self.seconds_left()
        if left is None or left > 0:
            return None
        if self.budget is None:
            return "run budget spent (--run-budget)"
        return f"run budget of {self.budget:g} s spent (--run-budget)"

    def timeout(self, wanted: float) -> float:
        """The request timeout, cut to what is left of the budget (at least 50 ms)."""
        left = self.seconds_left()
        return wanted if left is None else max(0.05, min(wanted, left))

    # breaker

    @property
    def breaker_path(self) -> Path | None:
        return self.shared_dir / BREAKER_FILE if self.shared_dir is not None else None

    def breaker_open(self) -> str | None:
        """The breaker's one-line reason if it is open here or in another process of the run."""
        if self._open is not None:
            return self._open
        path = self.breaker_path
        if path is None or not path.exists():
            return None
        try:
            text = path.read_text(encoding="utf-8").strip().splitlines()
        except OSError:
            text = []
        with self._lock:
            if self._open is None:
                self._open = text[0] if text else "target unusable (breaker opened by another process of the run)"
                self._first = self._first or self._open
        return self._open

    def check(self) -> None:
        """Raise TargetProblem instead of sending when the budget is spent or the breaker is open."""
        spent = self.budget_spent()
        if spent:
            line = f"{spent}; request not sent"
            self.noted(line)
            raise TargetProblem(line, kind=BUDGET)
        problem = self.breaker_open()
        if problem:
            raise TargetProblem(problem, kind=TARGET)

    def failed(self, cause: str) -> None:
        """Count a request that got no answer; ``trip_after`` in a row open the breaker.

        A request cut short because the budget ran out says nothing about the target: it is counted
        as unanswered but does not feed the breaker.
        """
        with self._lock:
            self._counts["no_answer"] += 1
            self._first = self._first or cause
            if self.budget_spent() or self._open is not None:
                return
            self._streak += 1
            if not self.trip_after or self._streak < self.trip_after:
                return
            self._open = (
                f"target unusable: {self._streak} requests in a row got no answer (last: {cause}); "
                "no more requests are sent"
            )
            opened = self._open
        self._publish(opened)

    def answered(self) -> None:
        with self._lock:
            self._streak = 0

    def noted(self, problem: str) -> None:
        """Remember a one-line problem that is not a missing answer (the first one is the run's)."""
        with self._lock:
            self._first = self._first or problem

    @property
    def first_problem(self) -> str:
        """The first one-line problem of the run in this process ("" if none), for the verdict line."""
        return self._first

    def _publish(self, line: str) -> None:
        path = self.breaker_path
        if path is None or path.exists():
            return
        temporary = path.with_name(f".{BREAKER_FILE}.{os.getpid()}.{threading.get_ident()}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(line + "\n", encoding="utf-8")
            os.replace(temporary, path)  # readers see the whole line or nothing
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()

    # counters

    def count_sent(self, method: str) -> None:
        with self._lock:
            self._counts["requests"] += 1
            if method.upper() not in READ_METHODS:
                self._counts["writes"] += 1

    def count_repeat(self) -> None:
        """A generated case that would have asked again what its test already asked: not sent."""
        with self._lock:
            self._counts["repeats_not_sent"] += 1

    def count_resent(self, method: str) -> None:
        self.count_sent(method)
        if method.upper() not in READ_METHODS:
            with self._lock:
                self._counts["resent_writes"] += 1

    def count_held_back(self) -> None:
        """A generated create not sent: the run's allowance of new animals on a crowded store is spent."""
        with self._lock:
            self._counts["held_back"] += 1

    def count_created(self) -> None:
        with self._lock:
            self._counts["created"] += 1

    def count_throttled(self, waited: float) -> None:
        with self._lock:
            self._counts["throttled"] += 1
            self._waited += waited

    def note_concurrency(self, limit: int) -> None:
        """The process's bound on requests in flight (the configured one, then each throttled lower one)."""
        with self._lock:
            if self._concurrency_min is None or limit < self._concurrency_min:
                self._concurrency_min = limit

    def note_server_error(self, exchange: record.Exchange) -> None:
        """A 5xx answer, kept (once per request line and status, at most ``SERVER_ERRORS_KEPT``) as evidence."""
        with self._lock:
            key = (exchange.method, exchange.url, exchange.status)
            if key not in self._server_errors and len(self._server_errors) < SERVER_ERRORS_KEPT:
                self._server_errors[key] = exchange

    def server_errors(self) -> list[record.Exchange]:
        with self._lock:
            return list(self._server_errors.values())

    def counters(self) -> dict[str, Any]:
        """``requests`` sent, ``writes`` (not GET/HEAD/OPTIONS), ``no_answer``, ``throttled``, ``throttle_wait_s``,
        ``repeats_not_sent`` (generated cases identical to one their test sent), and ``concurrency_min``
        (the lowest bound on requests in flight, once the transport has noted one)."""
        with self._lock:
            lowest = {} if self._concurrency_min is None else {CONCURRENCY_MIN: self._concurrency_min}
            return {**self._counts, "throttle_wait_s": round(self._waited, 3), **lowest}

    def write_counters(self, path: str | os.PathLike[str]) -> None:
        """This process's counters as JSON (e.g. ``shared_dir/counters-gw0.json``) for ``merge_counters``."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}")
        data = {
            **self.counters(),
            SERVER_ERRORS: [exchange.to_dict() for exchange in self.server_errors()],
            **{name: tally() for name, tally in self.tallies.items()},
        }
        temporary.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
        os.replace(temporary, target)


def merge_counters(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """The sum of every ``counters-*.json`` in ``directory`` (the run's counters, all processes), the
    lowest ``concurrency_min`` of them, and under ``server_errors`` the 5xx answers each process kept
    (as exchange dicts)."""
    total: dict[str, Any] = {**dict.fromkeys(COUNTS, 0), "throttle_wait_s": 0.0, SERVER_ERRORS: []}
    for path in sorted(Path(directory).glob(COUNTERS_GLOB)):
        data = json.loads(path.read_text(encoding="utf-8"))
        total[SERVER_ERRORS] += data.pop(SERVER_ERRORS, [])
        lowest = data.pop(CONCURRENCY_MIN, None)
        if isinstance(lowest, int):
            total[CONCURRENCY_MIN] = min(total.get(CONCURRENCY_MIN, lowest), lowest)
        for name, value in data.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[name] = total.get(name, 0) + value
    total["throttle_wait_s"] = round(float(total["throttle_wait_s"]), 3)
    return total


# -- the adapter -----------------------------------------------------------------------------------


class _BodyProblem(Exception):
    pass


@dataclass(frozen=True, eq=False)
class Observed:
    """One request as it went out on the wire and what came back, for the adapter's ``watchers``.

    Raw: not redacted (a watcher that keeps it redacts it, e.g. ``har.Recorder``).  ``status`` None:
    no answer, ``problem`` says why.  Times: ``started`` epoch seconds, ``wait`` until the answer's
    headers (or the failure), ``receive`` reading the body.
    """

    request: requests.PreparedRequest
    started: float
    wait: float
    receive: float = 0.0
    status: int | None = None
    reason: str = ""
    version: int = 11
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
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
        # Called with every request sent and its answer (``Observed``); none in an ordinary run, so
        # that only a run that keeps its exchanges (a certification bundle) pays for them.
        self.watchers: list[Callable[[Observed], None]] = []
        super().__init__(pool_connections=2, pool_maxsize=size, pool_block=True)

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
        wanted = _seconds(timeout, self.options.timeout)
        resendable = request.body is None or isinstance(request.body, bytes | str)
        resends = 0
        while True:
            ticket = self._slot()  # not held while waiting out a Retry-After
            try:
                response = self._send_once(request, method, where, timeout, wanted, proxies)
            except BaseException:
                self.pacer.unanswered(ticket)
                raise
            self._pace(ticket, response)
            wait = self._throttle_wait(response, method)
            if wait is None or resends >= MAX_RESENDS or not resendable:
                self._keep_server_error(request, method, response)
                if method == "POST" and response.status_code == 201:
                    self.guard.count_created()
                return response
            resends += 1
            self.guard.count_throttled(wait)
            if self.closing.wait(wait):
                return response

    def close(self) -> None:
        self.closing.set()
        self.pacer.close()
        super().close()

    def _slot(self) -> Ticket:
        """A place among the requests in flight; a budget spent while waiting for one raises (nothing sent)."""
        while (ticket := self.pacer.acquire(self.guard.seconds_left())) is None:
            self.guard.check()
        return ticket

    def _pace(self, ticket: Ticket, response: requests.Response) -> None:
        """Tell the pacer how the request fared: a 429, or a 503 with Retry-After (whatever the method),
        is the target throttling the run; every sender then pauses as long as it asks, within the budget."""
        after = response.headers.get("Retry-After")
        if response.status_code != 429 and not (response.status_code == 503 and after):
            self.pacer.answered(ticket)
            return
        pause = min(parse_retry_after(after) or 0.0, self.options.retry_after_cap)
        left = self.guard.seconds_left()
        self.pacer.throttled(ticket, 0.0 if left is not None and pause >= left else pause)

    def _keep_server_error(self, request: requests.PreparedRequest, method: str, response: requests.Response) -> None:
        """Every 5xx is evidence against the operation's documented answers, whichever check sent it
        (set-up, a table, a generated case); a 503 with Retry-After is the target throttling, not a fault."""
        status = response.status_code
        if status < 500 or (status == 503 and response.headers.get("Retry-After")):
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
        self.guard.check()
        cut = self.guard.timeout(wanted)
        sent_timeout = _cut_timeout(timeout, wanted, cut)
        self.guard.count_sent(method)
        opened = self._opened_connections()
        started, clock = time.time(), time.monotonic()
        try:
            streamed = super().send(
                request, stream=True, timeout=sent_timeout, verify=self.options.verify, cert=self.cert, proxies=proxies
            )
        except requests.exceptions.RequestException as exc:
            if not (_dropped_before_answer(exc) and self._opened_connections() == opened):
                raise self._no_answer(
                    describe(exc, where, self.origin, cut), where, request, (started, clock)
                ) from None
            # A keep-alive connection closed by the server as the request went out: send once more on a
            # fresh one, as browsers and curl do (Schemathesis does the same for its own sessions).  A
            # write sent again is counted apart and shown in every report: the server may have taken both.
            self._observe(request, (started, clock), problem="connection closed as the request went out; sent again")
            self.guard.count_resent(method)
            started, clock = time.time(), time.monotonic()
            try:
                streamed = super().send(
                    request,
                    stream=True,
                    timeout=_cut_timeout(timeout, wanted, self.guard.timeout(wanted)),
                    verify=self.options.verify,
                    cert=self.cert,
                    proxies=proxies,
                )
            except requests.exceptions.RequestException as again:
                line = describe(again, where, self.origin, cut)
                raise self._no_answer(line, where, request, (started, clock)) from None
        answered = time.monotonic()
        left = self.guard.seconds_left()
        body_seconds = BODY_TIME_FACTOR * wanted if left is None else max(0.05, min(BODY_TIME_FACTOR * wanted, left))
        try:
            body = self._read(streamed, body_seconds)
        except _BodyProblem as exc:
            raise self._no_answer(f"{where}: {exc}", where, request, (started, clock)) from None
        self.guard.answered()
        if self.watchers:
            raw = streamed.raw
            answer = {"status": raw.status, "reason": raw.reason or "", "version": raw.version, "body": body}
            self._observe(request, (started, clock), answered, headers=tuple(raw.headers.items()), **answer)
        return self.build_response(request, self._in_memory(streamed, body, method))

    def _observe(
        self, request: requests.PreparedRequest, sent: tuple[float, float], answered: float | None = None, **answer: Any
    ) -> None:
        """Hand one exchange to the watchers (``sent``: epoch and monotonic time it went out)."""
        if not self.watchers:
            return
        started, clock = sent
        now = time.monotonic()
        wait = (answered if answered is not None else now) - clock
        seen = Observed(request, started, wait, now - clock - wait, **answer)
        for watcher in self.watchers:
            # Bookkeeping must never fail a request; a recorder that lost an exchange shows in
            # ``petstore-contract verify`` (the HAR's entries against the requests counted).
            with contextlib.suppress(Exception):
                watcher(seen)

    def _no_answer(
        self, line: str, where: str, request: requests.PreparedRequest, sent: tuple[float, float] | None = None
    ) -> TargetProblem:
        if sent is not None:
            self._observe(request, sent, problem=line)
        self.guard.failed(line)
        spent = self.guard.budget_spent()
        if spent:
            return TargetProblem(f"{spent}; {where} was cut short", kind=BUDGET, request=request)
        return TargetProblem(line, request=request)

    def _read(self, response: requests.Response, seconds: float) -> bytes:
        """At most ``max_body_bytes`` of the (decoded) body within ``seconds``; ``read1`` returns what has arrived."""
        limit = self.options.max_body_bytes
        raw = response.raw
        deadline = time.monotonic() + seconds
        chunks: list[bytes] = []
        size = 0
        complete = False
        try:
            while chunk := raw.read1(READ_SIZE, decode_content=True):
                chunks.append(chunk)
                size += len(chunk)
                if size > limit:
                    raise _BodyProblem(f"answer body exceeds {limit} bytes (--max-body-bytes); stopped reading")
                if time.monotonic() > deadline:
                    raise _BodyProblem(f"answer body still arriving after {seconds:g} s; stopped reading")
            complete = True
        except _BodyProblem:
            raise
        except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if isinstance(exc, urllib3.exceptions.ReadTimeoutError | TimeoutError):
                raise _BodyProblem("answer body stalled: nothing more arrived within the request timeout") from None
            raise _BodyProblem(f"connection broke mid-body ({reason(exc)})") from None
        finally:
            if complete:
                raw.release_conn()  # read to the end: the connection goes back to the pool
            else:
                response.close()  # closes the connection and frees its place in the pool
        return b"".join(chunks)

    def _in_memory(self, response: requests.Response, body: bytes, method: str) -> urllib3.HTTPResponse:
        raw = response.raw
        headers = urllib3.HTTPHeaderDict(raw.headers)
        encodings = [e.strip().lower() for e in headers.get("Content-Encoding", "").split(",") if e.strip()]
        decoded = bool(encodings) and all(e in urllib3.HTTPResponse.CONTENT_DECODERS for e in encodings)
        if decoded:
            headers.discard("Content-Encoding")
        headers.discard("Transfer-Encoding")
        if decoded and method != "HEAD":
            headers["Content-Length"] = str(len(body))  # the decoded length, as the body now is
        return urllib3.HTTPResponse(
            body=io.BytesIO(body),
            headers=headers,
            status=raw.status,
            version=raw.version,
            reason=raw.reason,
            preload_content=False,
            decode_content=False,
            request_method=method,
            request_url=response.url,
        )

    def _throttle_wait(self, response: requests.Response, method: str) -> float | None:
        """Seconds to wait before sending again, or None: not throttled, or the wait would outlive the budget."""
        if response.status_code == 429 or (response.status_code == 503 and method in ("GET", "HEAD")):
            after = parse_retry_after(response.headers.get("Retry-After"))
        else:
            return None
        if after is None:
            return None
        wait = min(after, self.options.retry_after_cap)
        left = self.guard.seconds_left()
        if left is not None and wait >= left:
            return None
        return wait

    def _opened_connections(self) -> int:
        total = 0
        for manager in (self.poolmanager, *self.proxy_manager.values()):
            for key in list(manager.pools.keys()):
                pool = manager.pools.get(key)
                if pool is not None:
                    total += pool.num_connections
        return total


# -- answers and exchanges -------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Answer:
    """The answer to a targeted test's request (the body whole, within ``max_body_bytes``)."""

    status: int
    headers: CaseInsensitiveDict[str]
    body: bytes
    exchange: record.Exchange

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not JSON (the caller turns that into a finding)."""
        return json.loads(self.body)


def _text(body: bytes | str | None) -> str | None:
    if body is None:
        return None
    return body if isinstance(body, str) else body.decode("utf-8", errors="replace")


def build_exchange(
    redactor: Redactor,
    method: str,
    url: str,
    request_headers: Mapping[str, str],
    request_body: bytes | str | None,
    *,
    status: int | None = None,
    response_headers: Iterable[tuple[str, str]] = (),
    response_body: bytes = b"",
    problem: str = "",
) -> record.Exchange:
    """A recorded exchange, redacted: the key as ``$<key variable>``, its encodings as [REDACTED]."""
    show = redactor.for_exchange
    body_text = _text(request_body)
    return record.Exchange(
        method=method,
        url=show(url),
        request_headers=tuple(
            (name, show(str(value))) for name, value in request_headers.items() if name.lower() not in HOP_HEADERS
        ),
        request_body=None if body_text is None else record.cut(show(body_text)),
        status=status,
        response_headers=tuple((name, show(value)) for name, value in response_headers),
        response_body=record.cut(show(response_body.decode("utf-8", errors="replace"))),
        response_length=len(response_body),
        problem=redactor(problem),
    )


# -- the transport ---------------------------------------------------------------------------------


class Transport:
    """All HTTP of a run against one target: sessions for Schemathesis, ``request`` and ``map`` for targeted tests."""

    def __init__(
        self, options: TransportOptions, guard: RunGuard | None = None, redactor: Redactor | None = None
    ) -> None:
        self.options = options
        self.guard = guard if guard is not None else RunGuard.from_options(options)
        self.redact = redactor if redactor is not None else Redactor(options.api_key, options.key_env)
        self.base_url = options.base_url.rstrip("/")
        self.origin = origin(self.base_url)
        self.proxies = self._proxies()
        self.adapter = GuardedAdapter(options, self.guard, self.redact)
        self._local = threading.local()

    def _proxies(self) -> dict[str, str]:
        if not self.options.use_proxy_env or is_loopback(self.base_url):
            return {}
        found = requests.utils.get_environ_proxies(self.base_url)
        return {scheme: url for scheme, url in found.items() if scheme in ("http", "https", "all") and url}

    def auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.options.api_key}"}

    def session(self) -> requests.Session:
        """A new session on the run's one adapter; one per thread (Schemathesis swaps ``headers`` during a call)."""
        session = requests.Session()
        session.trust_env = False  # no .netrc credentials, no proxy unless set below
        session.proxies = dict(self.proxies)
        session.verify = self.options.verify
        session.cert = self.adapter.cert
        session.max_redirects = self.options.max_redirects
        session.mount("http://", self.adapter)
        session.mount("https://", self.adapter)
        return session

    def _thread_session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self.session()
        return session

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str | None] | None = None,
        body: bytes | None = None,
    ) -> Answer:
        """One request to ``base_url + path``; redirects followed within the target's origin only.

        Sends ``Accept: application/json`` and ``Authorization: Bearer <key>`` unless ``headers`` names
        them (a None value: the header is not sent); a body gets ``Content-Type: application/json``
        unless given.  Transport trouble raises TargetProblem (its ``exchange`` records the request).
        """
        method = method.upper()
        url = self.base_url + path + ("?" + urlencode(params, doseq=True) if params else "")
        sent: dict[str, str | None] = {"Accept": "application/json", **self.auth_headers()}
        if body is not None:
            sent["Content-Type"] = "application/json"
        for name, value in (headers or {}).items():
            for existing in [k for k in sent if k.lower() == name.lower()]:
                del sent[existing]
            sent[name] = value
        final: dict[str, str] = {k: v for k, v in sent.items() if v is not None}
        session = self._thread_session()
        redirects = 0
        while True:
            try:
                response = session.request(
                    method, url, headers=final, data=body, timeout=self.options.timeout, allow_redirects=False
                )
            except TargetProblem as exc:
                exc.exchange = build_exchange(self.redact, method, url, final, body, problem=str(exc))
                raise
            except requests.exceptions.RequestException as exc:  # e.g. an invalid URL: nothing was sent
                line = f"{method} {self.redact(url)}: {reason(exc)}"
                self.guard.noted(line)
                raise TargetProblem(
                    line, exchange=build_exchange(self.redact, method, url, final, body, problem=line)
                ) from None
            location = response.headers.get("Location")
            if response.status_code not in REDIRECTS or not location:
                break
            target = urljoin(url, location)
            if origin(target) != self.origin:
                line = (
                    f"{method} {self.redact(url)} was redirected to another origin ({origin(target)}); "
                    "not followed, so the API key stays with the target"
                )
                self.guard.noted(line)
                raise TargetProblem(line, exchange=self.exchange(response, problem=line))
            redirects += 1
            if redirects > self.options.max_redirects:
                line = f"{method} {self.redact(url)}: more than {self.options.max_redirects} redirects"
                self.guard.noted(line)
                raise TargetProblem(line, exchange=self.exchange(response, problem=line))
            if (response.status_code == 303 and method != "HEAD") or (
                response.status_code in (301, 302) and method == "POST"
            ):
                method, body = "GET", None
                final = {k: v for k, v in final.items() if k.lower() != "content-type"}
            url = target
        return Answer(
            status=response.status_code,
            headers=response.headers,
            body=response.content,
            exchange=self.exchange(response),
        )

    def exchange(self, response: Any, problem: str = "") -> record.Exchange:
        """The redacted record of a request and its answer.

        ``response`` is a ``requests.Response`` or what ``Case.call`` returns (a Schemathesis
        ``Response``: same ``request``, ``status_code`` and ``content``, header values as lists).
        """
        request = response.request
        pairs: list[tuple[str, str]] = []
        for name, value in response.headers.items():
            pairs += [(name, str(v)) for v in value] if isinstance(value, list) else [(name, str(value))]
        return build_exchange(
            self.redact,
            request.method or "GET",
            request.url or "",
            request.headers,
            request.body if isinstance(request.body, bytes | str) else None,
            status=response.status_code,
            response_headers=pairs,
            response_body=response.content or b"",
            problem=problem,
        )

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn(item)`` for independent items on ``concurrency`` threads; results in input order.

        Every item runs (a spent budget or an open breaker makes the rest fail fast); then the first
        exception, in input order, is raised, with a note counting the others.  Concurrency 1 runs
        the items one after another in the calling thread.
        """
        work = list(items)
        batch = self.batch(fn, len(work))
        for item in work:
            batch.submit(item)
        return batch.results()

    def batch(self, fn: Callable[[T], R], size: int | None = None) -> Batch[T, R]:
        """A ``map`` whose items are sent as they come (e.g. while Hypothesis draws the next one)."""
        limit = max(self.options.concurrency, 1)
        return Batch(fn, min(limit, size) if size is not None else limit)

    def close(self) -> None:
        """Stops throttling waits and closes every pooled connection."""
        self.adapter.close()


def _attempt(fn: Callable[[T], R], item: T) -> tuple[bool, Any]:
    try:
        return True, fn(item)
    except Exception as exc:
        return False, exc


class Batch(Generic[T, R]):
    """Independent items run by ``fn`` on at most ``workers`` threads from the moment they are submitted.

    ``results()`` waits for all of them and answers as ``Transport.map`` does: results in
    submission order, or the first exception (in submission order) with a note counting the
    others.  One worker runs each item at once in the submitting thread.
    """

    def __init__(self, fn: Callable[[T], R], workers: int) -> None:
        self.fn = fn
        self.outcomes: list[Future[tuple[bool, Any]] | tuple[bool, Any]] = []
        self.pool = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="petstore-transport") if workers > 1 else None
        )

    def submit(self, item: T) -> None:
        if self.pool is None:
            self.outcomes.append(_attempt(self.fn, item))
        else:
            self.outcomes.append(self.pool.submit(_attempt, self.fn, item))

    def results(self) -> list[R]:
        outcomes = [o.result() if isinstance(o, Future) else o for o in self.outcomes]
        self.close()
        errors = [value for ok, value in outcomes if not ok]
        if errors:
            first = errors[0]
            if len(errors) > 1:
                first.add_note(f"{len(errors) - 1} more of {len(outcomes)} items failed too")
            raise first
        return [value for _, value in outcomes]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
