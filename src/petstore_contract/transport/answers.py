"""Answers of the targeted tests and recorded exchanges (the key replaced by its variable)."""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from requests.structures import CaseInsensitiveDict

from petstore_contract.core import records as record
from petstore_contract.core import replay
from petstore_contract.core.redaction import Redactor

# Not shown in a recorded exchange: transport details a replay (curl) sets by itself.
HOP_HEADERS = frozenset({"connection", "content-length", "transfer-encoding", "accept-encoding"})


def throttling(status: int | None, retry_after: str | None) -> bool:
    """An answer that throttles the run, whatever the method: a 429 (RFC 6585 §4: the request was not
    processed), or a 503 with ``Retry-After`` (RFC 9110 §15.6.4: the server is temporarily unable to
    handle the request and says when to come back).  The transport waits it out and sends again; one
    that outlasts the waits decides nothing about the operation (its test's clause is undecided)."""
    return status == 429 or (status == 503 and bool(retry_after))


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
    body_text, exact = replay.recorded_body(request_body, show)
    return record.Exchange(
        method=method,
        url=show(url),
        request_headers=tuple(
            (name, show(str(value))) for name, value in request_headers.items() if name.lower() not in HOP_HEADERS
        ),
        request_body=None if body_text is None else record.cut(body_text),
        # the exact bytes only where the text holds the body whole (a cut body is not replayed)
        request_body_base64=exact if body_text is not None and len(body_text) <= record.BODY_EXCERPT else None,
        status=status,
        response_headers=tuple((name, show(value)) for name, value in response_headers),
        response_body=record.cut(show(response_body.decode("utf-8", errors="replace"))),
        response_length=len(response_body),
        problem=redactor(problem),
    )


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
