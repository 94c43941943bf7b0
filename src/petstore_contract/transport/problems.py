"""Trouble talking to the target, as one line naming the cause and the (redacted) request."""

from __future__ import annotations

import re
import ssl
from typing import Any

import requests
import urllib3

from petstore_contract.core import records as record

TARGET, BUDGET = "target", "budget"
# An answer that started (its status and headers arrived) and never completed (RFC 9112 §6.3): the
# target's answer, judged on the clause of the request (``judging.expect.Judge.unanswered``).
INCOMPLETE = "incomplete"
_TLS_EOF = (
    "the target closed the connection during the TLS handshake "
    "(does it require a client certificate? --contract-client-cert)"
)
_REASONS = (
    ("Connection refused", "connection refused"),
    ("Name or service not known", "host name not found"),
    ("nodename nor servname", "host name not found"),
    ("Temporary failure in name resolution", "host name not found"),
    ("Connection reset", "connection reset by the target"),
    ("RemoteDisconnected", "the target closed the connection without answering"),
    ("CERTIFICATE_REQUIRED", "the target requires a client certificate (--contract-client-cert)"),
    ("certificate required", "the target requires a client certificate (--contract-client-cert)"),
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


def causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it wraps (requests wraps urllib3's errors, which hold the OSError in their args)."""
    found: list[BaseException] = []
    waiting = [exc]
    while waiting and len(found) < 16:
        seen = waiting.pop()
        if any(seen is e for e in found):
            continue
        found.append(seen)
        waiting += [e for e in (seen.__cause__, seen.__context__, *seen.args) if isinstance(e, BaseException)]
    return found


def never_sent(exc: BaseException) -> bool:
    """Whether the request certainly never left: no connection was made (refused, no such host, none within
    the connect timeout) or the target's certificate was refused before the handshake ended.  Its outcome is
    known (nothing was applied); any other failure may have come after the target read it."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    unsent = urllib3.exceptions.NewConnectionError | ssl.SSLCertVerificationError
    return any(isinstance(e, unsent) for e in causes(exc))


def describe(exc: BaseException, where: str, target: str, seconds: float) -> str:
    """One line for a request that got no answer.  ``where`` is "METHOD redacted-url", ``target`` the origin."""
    if isinstance(exc, requests.exceptions.ProxyError):
        return f"{where}: proxy error: {reason(exc)}"
    if _is_tls(exc):
        # The CA bundle is the remedy only where a certificate was met and not trusted: never for a port that
        # does not speak TLS, nor for a client certificate.
        hint = " (see --contract-ca-bundle)" if "certificate verification" in reason(exc) else ""
        return f"TLS error talking to {target}: {reason(exc)}{hint}"
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return f"no connection to {target} within {seconds:g} s"
    if isinstance(exc, requests.exceptions.ReadTimeout):
        return f"{where}: no answer within {seconds:g} s"
    return f"{where}: {reason(exc)}"
