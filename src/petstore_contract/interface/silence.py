"""Where the document decides an answer and where HTTP does: one model, consulted by every judge.

The interface document describes requests of a kind: its operations, at its paths, with a JSON body or
none, with the valid key or a refused credential.  For those, its Responses tables and §§2, 4, 5, 7
and 8 decide the answer.  About every other request it is silent: a body in another media type, a body
or URI larger than a service accepts, a method it does not list, an ``Accept`` it cannot satisfy, a
path that names nothing it describes, a rate limit.  There RFC 9110 (and RFC 6585) decide: any 4xx that
fits the situation is compliant when it carries the Error body (§7: "All error responses use the Error
body"), and so is a 2xx that handles the request as the document says.  A 5xx, an HTML or text error
page, or an answer that breaks another sentence of the document stays a fault everywhere.

``classify`` places every request the run sends (a targeted test's, set-up's, a generated case's, a
stateful step's) once; each ``Silence`` names the gap it rests on and the RFC sentence that decides
instead, and the statuses that fit.  The pipeline (``judging/pipeline.py``), the generated tests'
mapping (``judging/generated.py``) and the targeted tests read it; docs/architecture.md lists it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from urllib.parse import unquote, urlsplit

from petstore_contract.interface.document import INT64_MAX, INT64_MIN
from petstore_contract.interface.spec import operation_id, paths, takes_body

WITHIN = "within the document"
# The 4xx statuses HTTP gives for a request the document does not describe (RFC 9110 §15.5, RFC 6585).
FITTING_4XX = (400, 404, 405, 406, 411, 413, 414, 415, 422, 429, 431)
# A body below this size is one every plain create sends (a NewPet of the suite's own is under 200
# bytes); above it a service, or a proxy in front of it, may refuse the size with 413.  §2's gaps leave
# name rules open, so a large body may be refused anyway: a 413 there is the same refusal told by HTTP.
BODY_FLOOR = 1024
# RFC 9110 §4.1: "It is RECOMMENDED that all senders and recipients support, at a minimum, URIs with
# lengths of 8000 octets in protocol elements."  Below that a 414 is no answer HTTP gives.
URI_FLOOR = 8000
# RFC 6585 §5 names no size; a request's header fields below this are what every client sends.
HEADERS_FLOOR = 8192
# The methods RFC 9110 §9 defines and PATCH (RFC 5789); another token, and TRACE and CONNECT, are the web
# server's to answer (its HTTP parser refuses an unknown token before any application sees it: llhttp, Go).
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
# Past this a web server's request line is full (Apache httpd's and aiohttp's 8,190 bytes, nginx's 8 KiB
# buffers): its parser answers (400, 414) in its own form.
REQUEST_LINE_LIMIT = 8190


@dataclass(frozen=True)
class Silence:
    """A kind of request the document does not describe, and how HTTP answers it."""

    kind: str
    gap: str  # the document's sentence (or silence) that leaves the answer open
    rfc: str  # the sentence of HTTP that decides it instead
    statuses: tuple[int, ...]  # the 4xx that fit, each with the Error body (§7)
    # §5.3: a missing or invalid key gets 401 "whatever else the request carries".  Where the service
    # itself reads the request (a body in another media type), the credential still comes first; where
    # a request may never reach the service's operations (a proxy's size limit, an unrouted path, a
    # method no route holds), a fitting 4xx Error is as good as the 401 (no animal is revealed either way).
    credential_first: bool
    # The web server in front answers such a request itself, before any handler a vendor could give
    # the Error body: only an answer that would mislead a client is judged (``judging/http_layer.py``).
    any_answer: bool = False
    # The statuses with which HTTP lets the web server refuse the request's framing itself (411 to a body
    # without Content-Length, 417 to an expectation, 501 to a transfer coding it does not implement), often
    # before any handler a vendor could give the Error body (mod_wsgi's 411, whose ErrorDocument httpd
    # cannot serve through the application): that answer is the web server's, whatever its body; the HTTP
    # layer's rule judges what would mislead in it (``judging/http_layer.py``, framing).
    framing_refusals: tuple[int, ...] = ()


SILENCES: dict[str, Silence] = {
    s.kind: s
    for s in (
        Silence(
            "media-type",
            "§1: 'Request and response bodies are JSON (application/json).' How a body in another media type, "
            "or a POST without one, is answered: not shown.",
            "RFC 9110 §15.5.16: 415 (Unsupported Media Type) 'indicates that the origin server is refusing to "
            "service the request because the content is in a format not supported by this method'; a server "
            "may also read the content as JSON and answer as the document says.",
            (400, 415, 422),
            credential_first=True,
        ),
        Silence(
            "too-large",
            "§2 Gaps: 'Constraints on name (length, format, uniqueness): not shown.' Sizes of bodies are not shown.",
            "RFC 9110 §15.5.14: 413 (Content Too Large) 'indicates that the server is refusing to process a "
            "request because the request content is larger than the server is willing or able to process'.",
            (400, 413),
            credential_first=False,
        ),
        Silence(
            "uri-too-long",
            "§4.1: query parameters limit and status; the length of a URI: not shown.",
            "RFC 9110 §15.5.15: 414 (URI Too Long) 'indicates that the server is refusing to service the "
            "request because the target URI is longer than the server is willing to interpret'.",
            (400, 414),
            credential_first=False,
        ),
        Silence(
            "headers-too-large",
            "§5.2: the Authorization header; the size of header fields: not shown.",
            "RFC 6585 §5: 431 (Request Header Fields Too Large) 'indicates that the server is unwilling to "
            "process the request because its header fields are too large'.",
            (400, 431),
            credential_first=False,
        ),
        Silence(
            "method",
            "§4.4: 'Other operations (update, delete, category operations, order creation): not shown.'",
            "RFC 9110 §15.5.6: 405 (Method Not Allowed) 'indicates that the method received in the "
            "request-line is known by the origin server but not supported by the target resource'; §9.1: 'An "
            "origin server that receives a request method that is unrecognized or not implemented SHOULD "
            "respond with the 501 (Not Implemented) status code.'",
            (400, 404, 405, 501),
            credential_first=False,
        ),
        Silence(
            "accept",
            "§1: 'Request and response bodies are JSON (application/json).' An Accept the service cannot "
            "satisfy: not shown.",
            "RFC 9110 §15.5.7: 406 (Not Acceptable); §12.5.1: a server may also disregard the Accept "
            "header and answer as if it were not subject to content negotiation.",
            (406,),
            credential_first=False,
        ),
        Silence(
            "path",
            "§4.3: 'Path parameter petId: integer, format int64'; a path that names nothing the document "
            "describes (a petId that is no int64, a documented path with a trailing slash or in another "
            "letter case) is no operation of the document.",
            "RFC 9110 §15.5.5: 404 (Not Found) 'indicates that the origin server did not find a current "
            "representation for the target resource'; §15.5.1: 400 for a request the server will not process "
            "(and 422, §15.5.21, as frameworks that validate path parameters answer).",
            (400, 404, 405, 422),
            credential_first=False,
        ),
        Silence(
            "chunked",
            "§4.2: 'Request body (required, application/json): NewPet.' A body in the chunked transfer coding, "
            "without a Content-Length: how it is read is not shown.",
            "RFC 9112 §6.3: 'A server MAY reject a request that contains a message body but not a "
            "Content-Length by responding with 411 (Length Required)'; RFC 9110 §15.5.12: 411 'indicates that "
            "the server refuses to accept the request without a defined Content-Length'; RFC 9112 §6.1: 'A "
            "server that receives a request message with a transfer coding it does not understand SHOULD "
            "respond with 501 (Not Implemented)'.",
            (),
            credential_first=False,
            framing_refusals=(411, 501),
        ),
        Silence(
            "expect-continue",
            "§4.2: 'Request body (required, application/json): NewPet.' A create that asks with Expect: "
            "100-continue to be told before it sends its body: how the expectation is answered is not shown.",
            "RFC 9110 §10.1.1 (the 100-continue expectation); §15.5.18: 417 (Expectation Failed) 'indicates "
            "that the expectation given in the request's Expect header field could not be met by at least one "
            "of the inbound servers'.",
            (),
            credential_first=False,
            framing_refusals=(417,),
        ),
        Silence(
            "web-server",
            "§4: the three operations and GET /store/orders; TRACE, CONNECT, a method token HTTP does not "
            "define, and a request-target past the request-line limits of web servers are no request of "
            "the interface.",
            "RFC 9110 §9.1: 'An origin server that receives a request method that is unrecognized or not "
            "implemented SHOULD respond with the 501 (Not Implemented) status code'; §9.3.8: TRACE is the "
            "final recipient's loop-back; RFC 9112 §3: 'A server that receives a request-target longer than "
            "any URI it wishes to parse MUST respond with a 414 (URI Too Long)'.  Web servers and HTTP "
            "parsers (Apache httpd, nginx, Go's net/http, llhttp) answer these themselves, in their own form.",
            (400, 404, 405, 414, 431, 501),
            credential_first=False,
            any_answer=True,
        ),
        Silence(
            "target-syntax",
            "§4: 'All paths are relative to the base address.' A request-target that is no URI, or whose "
            "path decodes to a control character, names nothing the document describes.",
            "RFC 9112 §3.2: 'A recipient that receives an invalid request-line SHOULD respond with either a "
            "400 (Bad Request) error or a 301 (Moved Permanently) redirect'; RFC 3986 §2.1: 'pct-encoded = "
            '"%" HEXDIG HEXDIG\'.',
            (400, 404),
            credential_first=False,
            any_answer=True,
        ),
    )
}
# Rate limits (§8 "Rate limits and quotas: not shown"; RFC 6585 §4, 429) are the transport's: a 429 is waited
# out and never judged as a violation (``transport/pacing.py``), so no silence here places them.


@dataclass(frozen=True)
class Placed:
    """Where one request stands: within the document (``silence`` None) or outside it, and why."""

    silence: Silence | None
    why: str = ""
    long_uri: bool = False  # past URI_FLOOR: 414 (URI Too Long) fits too, whatever else the request is

    @property
    def credential_first(self) -> bool:
        """A refused credential must still get its 401 first (``Silence.credential_first``); within the
        document it always must (§5.3)."""
        return self.silence is None or self.silence.credential_first

    def fits(self, status: int) -> bool:
        """An answer HTTP allows to a request outside the document: a fitting 4xx (its Error body is §7's
        to judge) or a 401 (every operation lists it; a valid key refused is auth.accepted's to judge)."""
        if self.silence is None:
            return False
        fitting = (*self.silence.statuses, *self.silence.framing_refusals, 401)
        return status in fitting or (self.long_uri and status == 414)

    def by_the_web_server(self, status: int) -> bool:
        """The answer is the web server's own (any form): to a request of a silence it answers itself, or a
        refusal of the request's framing HTTP defines; judged only for what misleads (``judging/http_layer.py``)."""
        if self.silence is None:
            return False
        return self.silence.any_answer or status in self.silence.framing_refusals


INSIDE = Placed(None)


@cache
def _documented_paths() -> tuple[tuple[re.Pattern[str], str, bool], ...]:
    """Each documented path (the spec's templates), as a pattern of the URL path's end, and whether it
    holds an int64 parameter (petId)."""
    try:
        templates = sorted(paths(), key=len, reverse=True)
    except (OSError, ValueError, AttributeError, TypeError):
        return ()
    found = []
    for template in templates:
        pattern = re.sub(r"\\\{[^/]+?\\\}", "([^/]*)", re.escape(template))
        found.append((re.compile(pattern + "$"), template, "{" in template))
    return tuple(found)


def _path_problem(path: str) -> str:
    """Why the URL's path names nothing the document describes ("" when it names an operation's path)."""
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        return f"dot segments ({path!r}): a client removes them before it sends (RFC 3986 §5.2.4)"
    if path.endswith("/") and path.rstrip("/"):
        return f"a trailing slash ({path!r}): no documented path ends in one"
    for pattern, _template, has_id in _documented_paths():
        match = pattern.search(path)
        if match is None:
            continue
        if has_id:
            segment = unquote(match.group(1))
            if not (re.fullmatch(r"-?[0-9]{1,19}", segment) and INT64_MIN <= int(segment) <= INT64_MAX):
                return f"petId {segment!r} is no int64 (§4.3)"
        return ""
    lowered = [template for pattern, template, _ in _documented_paths() if pattern.search(path.lower())]
    return f"{path!r} is {lowered[0]} in another letter case" if lowered else f"{path!r} is no documented path"


def classify(
    method: str, url: str, headers: Mapping[str, str] | None = None, body: bytes | str | None = None
) -> Placed:
    """Where one request stands: within the document, or outside it (which silence, and why)."""
    headers = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    operation = operation_id(method, url)
    target = urlsplit(url)
    syntax = target_syntax_problem(url)
    if syntax:
        return Placed(SILENCES["target-syntax"], syntax)
    if method.upper() not in HTTP_METHODS or method.upper() in ("TRACE", "CONNECT"):
        return Placed(SILENCES["web-server"], f"{method.upper()}: a method the web server answers itself")
    line = len(method) + len(target.path) + len(target.query) + len(" ? HTTP/1.1")
    if line > REQUEST_LINE_LIMIT:
        return Placed(SILENCES["web-server"], f"a request line of {line:,} bytes, past web servers' limits")
    problem = _path_problem(target.path)
    if problem:
        return Placed(SILENCES["path"], problem, long_uri=len(url) > URI_FLOOR)
    if not operation:
        return Placed(SILENCES["method"], f"{method.upper()} is no operation the document lists for this path")
    if len(url) > URI_FLOOR:
        return Placed(SILENCES["uri-too-long"], f"a URI of {len(url):,} characters")
    if "chunked" in headers.get("transfer-encoding", "").lower() and "content-length" not in headers:
        return Placed(SILENCES["chunked"], "a body in the chunked coding, no Content-Length")
    if "100-continue" in headers.get("expect", "").lower():
        return Placed(SILENCES["expect-continue"], "Expect: 100-continue")
    size = sum(len(k) + len(v) + 4 for k, v in headers.items())
    if size > HEADERS_FLOOR:
        return Placed(SILENCES["headers-too-large"], f"header fields of {size:,} bytes")
    accept = headers.get("accept")
    if accept is not None and not _accepts_json(accept):
        return Placed(SILENCES["accept"], f"Accept: {accept[:80]}")
    sent = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else (body or b"")
    if takes_body(operation):
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
            shown = f"Content-Type: {media}" if media else "no Content-Type"
            return Placed(SILENCES["media-type"], f"{shown} ({len(sent):,} bytes of body)")
    if len(sent) > BODY_FLOOR:
        return Placed(SILENCES["too-large"], f"a body of {len(sent):,} bytes")
    return INSIDE


# RFC 3986 §3.3 and §3.4: the characters a path or query may hold, a "%" only as pct-encoded.
_URI_CHARS = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CONTROL_ESCAPE = re.compile(r"%(?:[01][0-9A-Fa-f]|7[Ff])")


def target_syntax_problem(url: str) -> str:
    """Why the URL's path and query are no valid URI syntax, or decode to a control character ("" when fine)."""
    rest = url.split("://", 1)[-1]
    tail = rest[rest.find("/") :] if "/" in rest else ""
    tail = tail.split("#", 1)[0]
    if not _URI_CHARS.fullmatch(tail):
        bad = next(c for c in tail if not _URI_CHARS.fullmatch(c))
        return f"the request-target holds {bad!r}, which RFC 3986 does not allow there"
    if _BAD_ESCAPE.search(tail):
        return "the request-target holds a '%' that is no pct-encoded octet (RFC 3986 §2.1)"
    if _CONTROL_ESCAPE.search(tail.split("?", 1)[0]):
        return "the request-target's path decodes to a control character"
    return ""


def _accepts_json(accept: str) -> bool:
    """An Accept value that admits application/json (RFC 9110 §12.5.1; a range with q=0 refuses it)."""
    for item in accept.split(","):
        media, *params = (part.strip().lower() for part in item.split(";"))
        if media in ("*/*", "application/*", "application/json", "") and not any(
            re.fullmatch(r"q\s*=\s*0(\.0{0,3})?", p) for p in params
        ):
            return True
    return False
