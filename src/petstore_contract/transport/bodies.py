"""Reading an answer's body: bounded in size and time, and told apart when it ends before its framing does."""

from __future__ import annotations

import io
import time
from typing import Any

import requests
import urllib3

from petstore_contract.transport.problems import causes, reason

READ_SIZE = 65536
BODY_TIME_FACTOR = 3  # a body may take this many request timeouts to arrive


def _reset(exc: BaseException) -> bool:
    """Whether a read failed on a connection reset (RST: a network's or a gateway's doing as much as the
    target's) rather than on the target's own end of the answer (FIN) with its framing unfinished."""
    return any(isinstance(e, ConnectionResetError) or "Connection reset" in str(e) for e in causes(exc))


def _framing(raw: Any) -> str:
    chunked = getattr(raw, "chunked", False)
    return "chunked, without its last chunk" if chunked else "fewer bytes than its Content-Length"


class BodyProblem(Exception):
    """Why a body was not read whole; ``cut``: the target's answer ended, or stopped, before its framing did
    (RFC 9112 §6.3) on a connection it did not reset: an answer it gave, judged as such (``INCOMPLETE``)."""

    def __init__(self, line: str, *, cut: bool = False, partial: bytes = b"") -> None:
        super().__init__(line)
        self.cut, self.partial = cut, partial


def read(response: requests.Response, seconds: float, limit: int) -> bytes:
    """At most ``limit`` bytes of the (decoded) body within ``seconds``; ``read1`` returns what has arrived."""
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
                raise BodyProblem(f"answer body exceeds {limit} bytes (--contract-max-body-bytes); stopped reading")
            if time.monotonic() > deadline:
                raise BodyProblem(
                    f"answer still arriving after {seconds:g} s (the limit is {BODY_TIME_FACTOR} x "
                    "--contract-request-timeout); stopped reading"
                )
        complete = True
    except BodyProblem:
        raise
    except (requests.exceptions.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        partial = b"".join(chunks)
        if isinstance(exc, urllib3.exceptions.ReadTimeoutError | TimeoutError):
            stalled = "answer body stalled: nothing more arrived within the request timeout"
            raise BodyProblem(stalled, cut=True, partial=partial) from None
        if not _reset(exc):  # the target closed its end with the framing unfinished
            ended = f"the answer ended before its framing did ({_framing(raw)})"
            raise BodyProblem(ended, cut=True, partial=partial) from None
        raise BodyProblem(f"connection broke mid-body ({reason(exc)})") from None
    finally:
        if complete:
            raw.release_conn()  # read to the end: the connection goes back to the pool
        else:
            response.close()  # closes the connection and frees its place in the pool
    return b"".join(chunks)


def in_memory(response: requests.Response, body: bytes, method: str) -> urllib3.HTTPResponse:
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
