"""One ASGI ``send`` that gzips a whole answer: the catalog's compressing front and its forced-gzip fault."""

from __future__ import annotations

import gzip
from collections.abc import Awaitable, Callable
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[None]]


def gzipping(scope: dict[str, Any], send: Any, *, vary: bool, empty: bool) -> Send:
    """A ``send`` that gathers the answer's body and sends it gzip-coded, its Content-Length that of the coded
    bytes (a HEAD answer's head only); ``vary`` adds ``Vary: Accept-Encoding`` (a front that chose the coding
    by the request), ``empty`` codes an empty body too (a server that compresses whatever it sends)."""
    start: dict[str, Any] = {}
    parts: list[bytes] = []

    async def collect(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
            return
        parts.append(message.get("body", b""))
        if message.get("more_body"):
            return
        body = b"".join(parts)
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        if body or empty:
            body = gzip.compress(body)
            headers += [(b"content-encoding", b"gzip"), *([(b"vary", b"Accept-Encoding")] if vary else [])]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body if scope["method"] != "HEAD" else b""})

    return collect
