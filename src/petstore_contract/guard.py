"""Bounds on a whole run against any target: a run budget, a circuit breaker, a bounded body read.

One ``Guard`` per process (the pytest controller and each xdist worker).  Every request of the
run asks it first, whether it comes from the targeted tests' ``ContractClient`` or from the
generated tests' Schemathesis calls (through ``GuardedSession``):

- once the run budget (``--run-budget``) is spent, nothing more is sent;
- once the target failed to answer ``trip_after`` requests in a row (refused, timed out, reset,
  TLS, a body that never ends), the breaker opens and nothing more is sent: its one-line message
  names the last cause, so a dead target costs a few timeouts, not one per test;
- a request's timeout is cut to what is left of the budget, so no request outlives it.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from schemathesis.transport.requests import ManagedCookiesSession

TRIP_AFTER = 3
MAX_BODY_BYTES = 4_000_000
READ_SIZE = 65536
MAX_REDIRECTS = 3
_REASONS = (
    ("Connection refused", "connection refused"),
    ("Name or service not known", "host name not found"),
    ("nodename nor servname", "host name not found"),
    ("Connection reset", "connection reset by the target"),
    ("RemoteDisconnected", "the target closed the connection without answering"),
    ("CERTIFICATE_VERIFY_FAILED", "certificate verification failed"),
    ("WRONG_VERSION_NUMBER", "the target does not speak TLS on that port"),
    ("IncompleteRead", "the answer ended before its announced length"),
    ("InvalidChunkLength", "malformed chunked encoding"),
    ("timed out", "timed out"),
)


class TargetUnavailable(requests.exceptions.ConnectionError):
    """Not sent: the run budget is spent or the breaker is open (the message says which)."""


class BodyError(requests.exceptions.RequestException):
    """An answer whose body could not be read within bounds: too big, too slow, or broken off."""


def reason(exc: BaseException) -> str:
    """A few words for a transport exception (its own text is a nested, multi-line repr)."""
    text = str(exc)
    for marker, words in _REASONS:
        if marker in text:
            return words
    return type(exc).__name__


def origin(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return f"{parts.scheme}://{parts.hostname}:{port}"


def describe(exc: requests.exceptions.RequestException) -> str:
    """One line naming what went wrong with a request, for a failure report."""
    if isinstance(exc, (TargetUnavailable, BodyError)):
        return str(exc)
    request = getattr(exc, "request", None)
    where = f"{request.method} {request.url}: " if request is not None else ""
    if isinstance(exc, requests.exceptions.SSLError):
        return f"{where}TLS error: {reason(exc)} (see --ca-bundle)"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"{where}no connection within the request timeout"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return f"{where}no answer within the request timeout"
    return where + reason(exc)


def find_transport_error(exc: BaseException | None) -> requests.exceptions.RequestException | None:
    """The requests exception behind a failure, also inside exception groups (Hypothesis) or chains."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 50:
        current = todo.pop(0)
        if current is None or any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, requests.exceptions.RequestException):
            return current
        todo += [*getattr(current, "exceptions", ()), current.__cause__, current.__context__]
    return None


@dataclass
class Guard:
    """The run's budget and circuit breaker."""

    budget: float | None = None  # seconds for the whole run; None: no budget
    deadline: float | None = None  # time.time() at which the budget is spent
    trip_after: int = TRIP_AFTER  # 0: the breaker never opens
    failures: int = 0  # requests in a row that got no answer
    last_cause: str = ""

    @classmethod
    def starting_now(cls, budget: float | None, trip_after: int = TRIP_AFTER) -> Guard:
        return cls(budget, time.time() + budget if budget else None, trip_after)

    def budget_spent(self) -> str | None:
        if self.deadline is None or time.time() < self.deadline:
            return None
        return f"run budget of {self.budget:g} s spent (--run-budget)"

    def breaker_open(self) -> str | None:
        if not self.trip_after or self.failures < self.trip_after:
            return None
        return (
            f"target unusable: {self.failures} requests in a row got no answer (last: {self.last_cause}); "
            "no more requests are sent"
        )

    def check(self) -> None:
        """Raise instead of sending when the budget is spent or the breaker is open."""
        spent = self.budget_spent()
        if spent:
            raise TargetUnavailable(f"{spent}; request not sent")
        problem = self.breaker_open()
        if problem:
            raise TargetUnavailable(problem)

    def timeout(self, wanted: float) -> float:
        """The request timeout, cut to what is left of the budget."""
        if self.deadline is None:
            return wanted
        return max(0.05, min(wanted, self.deadline - time.time()))

    def failed(self, cause: str) -> str | None:
        """Count a request that got no answer; the budget's message instead when the budget was the cause."""
        spent = self.budget_spent()
        if spent:
            return f"{spent}; the request was cut short"
        self.failures += 1
        self.last_cause = cause
        return None

    def answered(self) -> None:
        self.failures = 0


_current = Guard()


def current() -> Guard:
    return _current


def install(guard: Guard) -> Guard:
    global _current
    _current = guard
    return guard


def read_body(response: requests.Response, limit: int, seconds: float) -> bytes:
    """At most ``limit`` bytes of the answer, read within ``seconds``; BodyError otherwise.

    ``read1`` returns whatever has arrived, so a body that trickles in byte by byte still
    meets the deadline (a plain ``read(n)`` waits for n bytes, each recv within the timeout).
    """
    deadline = time.monotonic() + seconds
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := response.raw.read1(READ_SIZE, decode_content=True):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise BodyError(f"answer body exceeds {limit} bytes (--max-body-bytes); stopped reading")
            if time.monotonic() > deadline:
                raise BodyError(f"answer body still arriving after {seconds:g} s; stopped reading")
    except BodyError:
        raise
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        if isinstance(exc, (urllib3.exceptions.ReadTimeoutError, socket.timeout)):
            raise BodyError("answer body stalled: nothing more arrived within the request timeout") from None
        raise BodyError(f"connection broke mid-body ({reason(exc)})") from None
    finally:
        response.close()
    return b"".join(chunks)


_session_options: dict[str, Any] = {"verify": True, "max_body_bytes": MAX_BODY_BYTES}
_session: GuardedSession | None = None


def configure_session(*, verify: bool | str, max_body_bytes: int) -> None:
    """The TLS verification and body cap of the generated tests' session (set by the plugin)."""
    global _session
    _session_options.update(verify=verify, max_body_bytes=max_body_bytes)
    _session = None


def session() -> GuardedSession:
    """This process's session for Schemathesis calls (``case.call(session=...)``)."""
    global _session
    if _session is None:
        _session = GuardedSession(**_session_options)
    return _session


class GuardedSession(ManagedCookiesSession):
    """The requests session of the generated tests: the run's guard, a body cap, same-origin redirects."""

    def __init__(self, *, verify: bool | str = True, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        super().__init__()
        self.verify = verify
        self.trust_env = False  # no proxy from the environment sees the key
        self.max_body_bytes = max_body_bytes
        self.max_redirects = MAX_REDIRECTS

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        guard = current()
        guard.check()
        wanted = float(kwargs.get("timeout") or 10.0)
        kwargs["timeout"] = guard.timeout(wanted)
        kwargs["stream"] = True
        try:
            response = super().request(method, url, *args, **kwargs)
            body = _read_for(response, self.max_body_bytes, wanted * 3)
        except TargetUnavailable:
            raise
        except requests.exceptions.RequestException as exc:
            spent = guard.failed(describe(exc))
            if spent:
                raise TargetUnavailable(spent) from None
            raise
        guard.answered()
        response._content = body
        response._content_consumed = True
        return response

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        target = super().get_redirect_target(resp)
        if target is None or origin(urljoin(resp.url, target)) != origin(resp.url):
            return None  # another origin: the 3xx itself is the answer, the key stays here
        return target


def _read_for(response: requests.Response, limit: int, seconds: float) -> bytes:
    try:
        return read_body(response, limit, seconds)
    except BodyError as exc:
        raise BodyError(f"{response.request.method} {response.url}: {exc}") from None
