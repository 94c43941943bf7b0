"""The HTTP layer's rules: what a web server in front of the service may answer to a request inside the base URL.

The cases are data (``interface/http_layer.toml``); each group names the rule here that judges its
answers.  Every rule reads an answer as it arrived (``transport/raw.py``): its status, its headers, its
bytes before any content decoding, and whether its framing completed.  A redirect is the answer, never
followed.  Each raises ``Mismatch`` (expected, observed, the exchange) for its group's clause.

- ``methods`` (RFC 9110 §9): a refusal is a 4xx or 501 with the Error body (§7); a 405 carries ``Allow``
  (§15.5.6).  HEAD and OPTIONS may be served (2xx).
- ``web-server-method``: TRACE and a token HTTP does not define are the web server's to answer, in its
  own form or not at all; its echo (``message/http``, the credential in it) or a 2xx misleads (§1:
  bodies are JSON; the document offers neither).
- ``target`` (RFC 3986, RFC 9112 §3.2): a valid request-target is served as the document says (2xx)
  or refused with a fitting 4xx and the Error body; never a 5xx, never a redirect but a dot-segment
  path's to the path it stands for.
- ``target-syntax``: a request-target that is no URI is the web server's to answer; only what would
  mislead a client is judged: a 2xx, a redirect into the API.
- ``web-server-target``: a request line past web servers' limits, the same but that a 2xx is the
  document's answer.
- ``coding`` (RFC 9110 §12.5.3, §8.4): a coding the request did not accept is not used; a coding used
  is labelled with ``Content-Encoding`` and the bytes are in it.
- ``framing`` (RFC 9112 §6.1, §6.3, §7.1; RFC 9110 §10.1.1, §15.5.12, §15.5.18): a chunked body, or one
  behind ``Expect: 100-continue``, sent without the key gets its 401 with the Error body, or the web
  server's refusal of the framing (411 or 501 to the chunked coding, 417 to the expectation) in any form;
  never a 2xx, a redirect, a 5xx or an echo of the request.
- ``large`` (§5.3): a create without the key is answered 401, or refused for its size (413, 400: a
  proxy's limit may stand before the key), whole.

Every answer that starts must arrive whole (RFC 9112 §6.3: a message whose framing did not end is
incomplete): an answer cut off is a finding of its rule, never "the target did not answer".
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Protocol
from urllib.parse import urljoin, urlsplit

from petstore_contract.core.records import Exchange, Mismatch
from petstore_contract.interface.silence import SILENCES, classify
from petstore_contract.judging import expect, headers
from petstore_contract.transport import TargetProblem
from petstore_contract.transport.answers import Answer
from petstore_contract.transport.raw import decode

GZIP_MAGIC = b"\x1f\x8b"

# The rules of requests a web server answers itself, in its own form, or drops (``interface/silence.py``).
ANSWERED_BY_THE_WEB_SERVER = frozenset({"target-syntax", "web-server-method", "web-server-target"})


class LayerCase(Protocol):
    """What a rule reads of the case it judges (a row of ``interface/http_layer.toml``, as the suite's
    ``tests/test_http_layer.py`` holds it)."""

    @property
    def method(self) -> str: ...

    @property
    def accept_encoding(self) -> str: ...


Rule = Callable[[LayerCase, Answer, str], None]  # (the case, its answer, the key) -> None, or raises Mismatch


def _observed(answer: Answer) -> str:
    return f"HTTP {answer.status} with {expect.body_of(answer)}"


def whole(answer: Answer) -> None:
    """RFC 9112 §6.3: the answer's framing ended as announced (the last chunk, every byte of Content-Length)."""
    if not answer.raw_view().complete:
        raise Mismatch(
            expect.WHOLE, f"HTTP {answer.status} that never completed: {answer.raw_view().problem}", answer.exchange
        )


def no_redirect(answer: Answer) -> None:
    if 300 <= answer.status < 400:
        location = answer.headers.get("location", "(none)")
        expected = "the answer itself, no redirect (the document's Responses tables list no 3xx)"
        raise Mismatch(expected, f"HTTP {answer.status} to {location}", answer.exchange)


def methods(case: LayerCase, answer: Answer, key: str) -> None:
    """A method HTTP defines on the collection, answered by the service: HEAD and OPTIONS served or refused,
    PUT, PATCH and DELETE refused (the document offers none), a 405 with ``Allow``."""
    whole(answer)
    no_redirect(answer)
    status, method = answer.status, case.method
    if 200 <= status < 300:
        if method in ("HEAD", "OPTIONS"):
            if answer.body and method == "OPTIONS":
                expect.json_media_type(answer)
            return
        expected = f"a refusal of {method} (4xx or 501 with the Error body): the document offers no {method} on /pets"
        raise Mismatch(expected, _observed(answer), answer.exchange)
    if status == 405 and not answer.headers.get("allow"):
        expected = "an Allow header on the 405 (RFC 9110 §15.5.6: the origin server MUST generate one)"
        raise Mismatch(expected, "HTTP 405 without Allow", answer.exchange)


def web_server_method(case: LayerCase, answer: Answer, key: str) -> None:
    """A method the web server answers itself (``interface/silence.py``, web-server): any refusal in its own
    form, or none; what misleads is an echo of the request (TRACE's 200 ``message/http``, the key in it) or a
    2xx (as if the document offered the method).  An echo of the key elsewhere is no finding: the key is the
    client's own, and every output redacts it."""
    media = headers.media_type(answer.headers.get("content-type", ""))
    if 200 <= answer.status < 300 or media == "message/http":
        expected = f"{case.method} refused (the document offers no {case.method}; §1: bodies are JSON), never echoed"
        observed = f"HTTP {answer.status} ({media or 'no media type'})"
        raise Mismatch(expected, observed + (": the request echoed" if case.method == "TRACE" else ""), answer.exchange)


def web_server_target(case: LayerCase, answer: Answer, key: str) -> None:
    """A request line past web servers' limits: any answer in the web server's own form, or none; a 2xx as the
    document says is fine; what misleads is a redirect into the API."""
    _no_redirect_into_the_api(answer, "a request line past web servers' limits")


def target(case: LayerCase, answer: Answer, key: str) -> None:
    whole(answer)
    if not _to_its_own_form(answer):
        no_redirect(answer)
    # Its status and its Error body are the pipeline's to judge (a fitting 4xx, ``interface/silence.py``).


def _to_its_own_form(answer: Answer) -> bool:
    """A redirect of a path with dot segments to the path they stand for (RFC 3986 §5.2.4, what Go's ServeMux
    does): the same resource, the client led to its own request; not a redirect elsewhere."""
    location = answer.headers.get("location")
    if not (300 <= answer.status < 400 and location):
        return False
    asked = urlsplit(answer.exchange.url)
    there = urlsplit(urljoin(answer.exchange.url, location))
    segments = asked.path.split("/")
    if ".." not in segments and "." not in segments:
        return False
    return (there.netloc, there.path, there.query) == (asked.netloc, posixpath.normpath(asked.path), asked.query)


def target_syntax(case: LayerCase, answer: Answer, key: str) -> None:
    """Only what misleads: a 2xx (an answer as if the target named something), a redirect into the API, the key."""
    status = answer.status
    if 200 <= status < 300:
        expected = "no 2xx: the request-target is no URI (RFC 3986), it names nothing the document describes"
        raise Mismatch(expected, _observed(answer), answer.exchange)
    _no_redirect_into_the_api(answer, "a request-target that is no URI")


def _no_redirect_into_the_api(answer: Answer, what: str) -> None:
    location = answer.headers.get("location")
    if 300 <= answer.status < 400 and location:
        there = urlsplit(urljoin(answer.exchange.url, location))
        if there.path.startswith(urlsplit(answer.exchange.url).path.split("/pets", 1)[0]):
            raise Mismatch(
                f"no redirect into the API for {what}", f"HTTP {answer.status} to {location}", answer.exchange
            )


def _accepted(coding: str, accept: str | None) -> bool:
    """RFC 9110 §12.5.3: whether a request that sent ``accept`` (None: no Accept-Encoding) accepts ``coding``."""
    if accept is None:
        return True
    weights: dict[str, float] = {}
    for item in accept.split(","):
        name, *params = (part.strip().lower() for part in item.split(";"))
        if not name:
            continue
        q = 1.0
        for param in params:
            found = re.fullmatch(r"q\s*=\s*([0-9.]+)", param)
            if found:
                try:
                    q = float(found.group(1))
                except ValueError:
                    q = 0.0
        weights[name] = q
    if coding in weights:
        return weights[coding] > 0
    if coding == "identity":
        return weights.get("*", 1.0) > 0 or "identity" in weights
    return weights.get("*", 0.0) > 0


def coding(case: LayerCase, answer: Answer, key: str) -> None:
    whole(answer)
    accept: str | None = case.accept_encoding or None
    label = answer.headers.get("content-encoding", "")
    used = [c.strip().lower() for c in label.split(",") if c.strip() and c.strip().lower() != "identity"]
    for name in used:
        if not _accepted(name, accept):
            asked = f"Accept-Encoding: {accept}"
            expected = f"a body in a coding the request accepted ({asked}; RFC 9110 §12.5.3): identity"
            raise Mismatch(expected, f"HTTP {answer.status} with Content-Encoding: {label}", answer.exchange)
    if used and decode(label, answer.raw_view().wire) is None:
        expected = f"a body in the coding its Content-Encoding names ({label}; RFC 9110 §8.4)"
        raise Mismatch(expected, f"HTTP {answer.status} with bytes that are not {label}", answer.exchange)
    if not used and answer.raw_view().wire.startswith(GZIP_MAGIC):
        expected = "a Content-Encoding naming the coding the body is in (RFC 9110 §8.4)"
        raise Mismatch(expected, f"HTTP {answer.status}: gzip bytes without Content-Encoding", answer.exchange)


def framing(case: LayerCase, answer: Answer, key: str) -> None:
    """A create without the key in another framing: its 401 (the Error body and the challenge are the pipeline's
    to judge), or the web server's refusal of the framing HTTP defines for the request (its silence's
    ``framing_refusals``: 411 or 501 to the chunked coding, 417 to the expectation), before or after the key's
    check and in whatever form the web server gives it (the pipeline leaves it alone); whole, never an echo of
    the request.  Anything else misleads a client: a 2xx, a redirect, a 5xx, another refusal (RFC 9112 §7.1:
    a recipient MUST be able to parse the chunked coding)."""
    whole(answer)
    exchange = answer.exchange
    if headers.media_type(answer.headers.get("content-type", "")) == "message/http":
        expected = "no echo of the request (message/http is TRACE's answer alone, RFC 9110 §9.3.8)"
        raise Mismatch(expected, f"HTTP {answer.status} with the request echoed (message/http)", exchange)
    placed = classify(exchange.method, exchange.url, dict(exchange.request_headers), exchange.request_body)
    refusals = placed.silence.framing_refusals if placed.silence is not None else ()
    if answer.status == 401 or answer.status in refusals:
        return
    no_redirect(answer)
    expected = "401 (§5.3: the key is missing)"
    if refusals:
        expected += f", or {', '.join(map(str, refusals))}: the web server's refusal of {placed.why}"
    if 200 <= answer.status < 300:
        expected += "; never a 2xx (a create without the key taken, or answered as taken)"
    elif answer.status >= 500:
        expected += "; never a 5xx (§4 lists none)"
    raise Mismatch(expected, _observed(answer), exchange)


def large(case: LayerCase, answer: Answer, key: str) -> None:
    """401, or the refusal HTTP fits to a size (``interface/silence.py``: 413 or 400; a proxy's or a web
    server's limit may stand before the key's check, where no animal is revealed either way), whole; its Error
    body is errors.body's."""
    whole(answer)
    if answer.status not in (401, *SILENCES["too-large"].statuses):
        fitting = ", ".join(map(str, SILENCES["too-large"].statuses))
        expected = f"401: the key is missing (§5.3); or {fitting}, the refusal HTTP fits to the size"
        raise Mismatch(expected, _observed(answer), answer.exchange)


RULES: dict[str, Rule] = {
    "methods": methods,
    "target": target,
    "target-syntax": target_syntax,
    "web-server-method": web_server_method,
    "web-server-target": web_server_target,
    "coding": coding,
    "framing": framing,
    "large": large,
}


def unanswered(rule: str, problem: TargetProblem) -> Mismatch | None:
    """What a request without an answer decides: nothing (the problem leaves its clause undecided), but
    where the rule says a refusal must arrive: a large body's connection closed under it (RFC 9112 §9.6)."""
    if rule in ANSWERED_BY_THE_WEB_SERVER:
        return None  # a web server may drop what is no request of the interface; nothing misleads there
    # Only a connection the target closed or reset under the body is its refusal lost; a connection refused,
    # a timeout, the breaker or the budget say nothing about how it refuses.
    dropped = any(words in problem.message for words in ("connection reset by the target", "closed the connection"))
    if rule == "large" and problem.kind != "budget" and dropped and "target unusable" not in problem.message:
        exchange = problem.exchange if problem.exchange is not None else Exchange("POST", "")
        expected = (
            "the 401 with the Error body, whole, even when the body is not read (RFC 9112 §9.6: a lingering close)"
        )
        return Mismatch(expected, f"no answer: {problem.message}", exchange)
    return None
