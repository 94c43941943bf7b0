"""What a web framework or a reverse proxy in front of the service answers where the document is silent.

A front is an ASGI layer before the reference's app, deciding the requests the document does not
describe as common stacks do, each with its own choice of status (RFC 9110 §15.5): a body in another
media type (aiohttp, Express, connexion: 415; FastAPI: 422), a body over a proxy's size limit (nginx:
413, before any key is read), an ``Accept`` that admits no JSON (406), a path that names nothing the
document describes, which a router answers before any key is read (connexion: 404 for ``/pets/abc``).
With the Error body these are compliant variants (``FRONTED``); with the framework's HTML or text page
they are faults of §7 ("All error responses use the Error body"), registered in ``faulty/fronted.py``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from devtools.catalog.gzipping import gzipping

PREFIX = "/v1"
PAGE_TITLES = {
    400: "Bad Request",
    404: "Not Found",
    406: "Not Acceptable",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
}
INT64 = re.compile(r"-?[0-9]{1,19}")


@dataclass(frozen=True)
class Front:
    """The statuses a front answers where the document is silent (None: it lets the request through)."""

    media_type: int | None = None  # a POST whose body is not declared JSON (once the key is read, as a framework does)
    body_limit: int | None = None  # a proxy's limit in bytes: a larger body is refused before the service sees it
    accept: int | None = None  # an Accept that admits no JSON
    path: int | None = None  # a path that names nothing the document describes, before any key is read
    media_type_first: bool = False  # a fault: the media type refused before the key is read (§5.3)
    body: Literal["error", "html", "text"] = "error"  # what the refusal carries
    # Routes declared with a trailing slash (``to-slash``: /pets answered 308 to /pets/, a fault: the
    # document's own path redirected), or without one while the router redirects the other spelling
    # (``from-slash``: /pets/ answered 308 to /pets, compliant: a path the document does not describe).
    redirect: Literal["to-slash", "from-slash"] | None = None
    # Compression in the web server in front that looks for the word gzip in Accept-Encoding and not at its
    # qvalue (lighttpd's mod_deflate, Mojolicious' renderer): gzip;q=0 gets gzip too.  RFC 9110 §12.5.3's
    # SHOULD ("not acceptable"), not a MUST: a warning, never a failed gate; identity stays identity.
    gzip_by_word: bool = False


# The compliant variants with a front (their Variant in ``variants.py`` is the reference's knobs).
FRONTED: dict[str, Front] = {
    "framework-415": Front(media_type=415),
    "framework-422": Front(media_type=422, path=422),
    "proxy-413-64k": Front(body_limit=64 * 1024),
    "accept-406": Front(accept=406),
    "router-404-before-auth": Front(path=404),
    "router-400-before-auth": Front(path=400),
    "slash-redirect": Front(redirect="from-slash"),
    "gzip-by-word": Front(gzip_by_word=True),
}


class FrontLayer:
    """The front before ``app`` (a Starlette middleware, the outermost of the app's own): refuses what its
    ``Front`` names, passes every other request on."""

    def __init__(self, app: Any, front: Front, api_key: str) -> None:
        self.app, self.front, self.key = app, front, api_key

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.front.redirect is not None:
            location = self.redirected(scope)
            if location is not None:
                # Before any key is read, as a router's slash redirect is (Django's APPEND_SLASH, Go's ServeMux).
                headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 308, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
            if self.front.redirect == "to-slash" and str(scope["path"]).endswith(PREFIX + "/pets/"):
                scope = {**scope, "path": str(scope["path"])[:-1]}
                if "raw_path" in scope:
                    scope["raw_path"] = bytes(scope["raw_path"]).rstrip(b"/")
        status = self.refusal(scope) if scope["type"] == "http" else None
        if status is None:
            await self.app(scope, receive, self.compressing(scope, send))
            return
        body, media = self.page(status)
        headers = [(b"content-type", media.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def compressing(self, scope: dict[str, Any], send: Any) -> Any:
        """``send``, or one that gzips the answer when the request's Accept-Encoding names gzip (any qvalue)."""
        asked = b"".join(v for k, v in scope.get("headers", ()) if k.lower() == b"accept-encoding").lower()
        if scope["type"] != "http" or not self.front.gzip_by_word or b"gzip" not in asked:
            return send
        return gzipping(scope, send, vary=True, empty=False)

    def redirected(self, scope: dict[str, Any]) -> str | None:
        """Where the front's slash redirect sends this request (None: not redirected)."""
        path, query = str(scope["path"]), bytes(scope.get("query_string", b"")).decode("latin-1")
        rest = path[path.index(PREFIX) + len(PREFIX) :] if PREFIX in path else path
        if self.front.redirect == "to-slash" and rest == "/pets":
            target = path + "/"
        elif self.front.redirect == "from-slash" and rest.endswith("/") and rest != "/":
            target = path.rstrip("/")
        else:
            return None
        return target + (f"?{query}" if query else "")

    def refusal(self, scope: dict[str, Any]) -> int | None:
        front, headers = self.front, {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = str(scope["path"])
        rest = path[path.index(PREFIX) + len(PREFIX) :] if PREFIX in path else path
        if front.path is not None and not _documented_path(rest):
            return front.path
        scheme, _, token = headers.get("authorization", "").partition(" ")
        keyed = scheme.lower() == "bearer" and token == self.key  # the service reads the key first (§5.3)
        length = headers.get("content-length", "0")
        if front.body_limit is not None and length.isdigit() and int(length) > front.body_limit:
            return 413
        accept = headers.get("accept")
        if front.accept is not None and accept is not None and not _admits_json(accept):
            return front.accept
        media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        other_media = front.media_type is not None and scope["method"] == "POST" and media != "application/json"
        if other_media and (front.media_type_first or keyed):
            return front.media_type
        return None

    def page(self, status: int) -> tuple[bytes, str]:
        title = PAGE_TITLES.get(status, "Error")
        if self.front.body == "html":
            return f"<html><head><title>{status} {title}</title></head><body><h1>{title}</h1></body></html>".encode(), (
                "text/html; charset=utf-8"
            )
        if self.front.body == "text":
            return f"{status}: {title}".encode(), "text/plain; charset=utf-8"
        code = title.lower().replace(" ", "_")
        return json.dumps({"code": code, "message": title, "status": status}).encode(), "application/json"


def _documented_path(rest: str) -> bool:
    if rest in ("/pets", "/store/orders"):
        return True
    segment = rest.removeprefix("/pets/")
    return segment != rest and bool(INT64.fullmatch(segment)) and -(2**63) <= int(segment) < 2**63


def _admits_json(accept: str) -> bool:
    ranges = [item.split(";", 1)[0].strip().lower() for item in accept.split(",")]
    return any(r in ("*/*", "application/*", "application/json") for r in ranges)
