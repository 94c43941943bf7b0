"""Faults of the HTTP layer in front of the service (``judging/http_layer.py``): what a web server configured
one line wrong answers itself, before or instead of the application.  Each is an ASGI layer (``layer``)
before the reference's app, as a web server stands before the service."""

from __future__ import annotations

import json
from typing import Any

from devtools.catalog.faulty.registry import fault
from devtools.catalog.gzipping import gzipping
from petstore_contract.reference.app import PetStore

Scope = dict[str, Any]


class _Layer:
    def __init__(self, app: Any, api_key: str) -> None:
        self.app, self.key = app, api_key

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not await self.answer(scope, receive, send):
            await self.app(scope, receive, send)

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        raise NotImplementedError


async def _send(send: Any, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class TraceEcho(_Layer):
    """``TraceEnable On`` (Apache httpd's default): TRACE reflected as ``message/http``, the credential in it."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        if scope["method"] != "TRACE":
            return False
        lines = [f"TRACE {scope['raw_path'].decode('latin-1')} HTTP/1.1"]
        lines += [f"{k.decode('latin-1')}: {v.decode('latin-1')}" for k, v in scope["headers"]]
        body = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        await _send(send, 200, [(b"content-type", b"message/http"), (b"content-length", str(len(body)).encode())], body)
        return True


class GzipForced(_Layer):
    """Compression forced on every answer (``SetOutputFilter DEFLATE``), whatever ``Accept-Encoding`` says."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        await self.app(scope, receive, gzipping(scope, send, vary=False, empty=True))
        return True


class DotSegmentsRedirected(_Layer):
    """A path in another spelling (dot segments, an encoded slash) redirected to its canonical form (301)."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        raw = scope.get("raw_path", b"").decode("latin-1")
        if "/../" not in raw and "%2F" not in raw.upper():
            return False
        segments: list[str] = []
        for part in raw.replace("%2F", "/").replace("%2f", "/").split("/"):
            if part == "..":
                segments = segments[:-1]
            elif part != ".":
                segments.append(part)
        location = "/".join(segments) or "/"
        await _send(send, 301, [(b"location", location.encode("latin-1")), (b"content-length", b"0")], b"")
        return True


def _chunked(scope: Scope) -> bool:
    return any(k.lower() == b"transfer-encoding" and b"chunked" in v.lower() for k, v in scope["headers"])


def _html(status: int, title: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """A web server's own page for ``status`` (httpd's form) and its headers."""
    body = f"<!DOCTYPE HTML><html><head><title>{status} {title}</title></head><body><h1>{title}</h1></body></html>"
    headers = [(b"content-type", b"text/html; charset=iso-8859-1"), (b"content-length", str(len(body)).encode())]
    return headers, body.encode()


class ChunkedRefused(_Layer):
    """A request body in the chunked coding refused with 400 (and the Error body) before the key is read,
    where RFC 9112 §7.1 says a recipient MUST be able to parse it."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        if not _chunked(scope):
            return False
        body = json.dumps({"code": "bad_request", "message": "chunked bodies are not supported", "status": 400})
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await _send(send, 400, headers, body.encode())
        return True


class ChunkedServerError(_Layer):
    """A request body in the chunked coding answered 500 with the web server's HTML page before the key is
    read: the handler behind it reads the body by a Content-Length the request does not carry and fails."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        if not _chunked(scope):
            return False
        await _send(send, 500, *_html(500, "Internal Server Error"))
        return True


class ChunkedRefusalCutShort(_Layer):
    """A request body in the chunked coding refused with the web server's own 411 page (HTTP's refusal of the
    framing), unread, and the connection closed at once, without a lingering close (RFC 9112 §9.6): the page
    breaks off short of its ``Content-Length`` (RFC 9112 §6.3: an incomplete message)."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        if not _chunked(scope):
            return False
        headers, body = _html(411, "Length Required")
        await send({"type": "http.response.start", "status": 411, "headers": headers})
        await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        raise ConnectionAbortedError("the refusal's page broke off")


class RefusalCutShort(_Layer):
    """A refusal that never completes: a create without the key answered 401 by a script that does not read
    the body (a CGI under Apache httpd: its answer breaks off), here its Error body cut short of its
    ``Content-Length``, then the connection closed (RFC 9112 §6.3: an incomplete message).  The web server
    in front reads the body the script left (httpd's lingering close, RFC 9112 §9.6), so the connection ends
    with the server's FIN: closed with the body unread, it would end in a reset whenever the body's bytes
    came after the answer (on a busy client), and a reset is no answer the target is judged on."""

    async def answer(self, scope: Scope, receive: Any, send: Any) -> bool:
        keyless = not any(k.lower() == b"authorization" for k, _ in scope["headers"])
        if scope["method"] != "POST" or not keyless:
            return False
        while (await receive()).get("more_body", False):
            pass  # the body, read and dropped (a disconnect ends it too)
        body = json.dumps({"code": "unauthorized", "message": "API key missing", "status": 401}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"www-authenticate", b"Bearer"),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        # Half the body, then the answer ends: the server closes the connection with its framing unfinished.
        await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        raise ConnectionAbortedError("the script's answer broke off")


@fault("http_trace_echo")
class HttpTraceEcho(PetStore):
    layer = TraceEcho


@fault("http_gzip_forced")
class HttpGzipForced(PetStore):
    layer = GzipForced


@fault("http_dot_segments_redirected")
class HttpDotSegmentsRedirected(PetStore):
    layer = DotSegmentsRedirected


@fault("http_chunked_refused")
class HttpChunkedRefused(PetStore):
    layer = ChunkedRefused


@fault("http_refusal_cut_short")
class HttpRefusalCutShort(PetStore):
    layer = RefusalCutShort


@fault("http_chunked_500")
class HttpChunked500(PetStore):
    layer = ChunkedServerError


@fault("http_chunked_refusal_cut_short")
class HttpChunkedRefusalCutShort(PetStore):
    layer = ChunkedRefusalCutShort
