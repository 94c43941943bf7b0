"""The one answer type every check reads (``Answer``), its absence (``Unanswered``), and recorded exchanges
(the key replaced by its variable)."""

from __future__ import annotations

import base64
import email.utils
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Never

import requests
from requests.structures import CaseInsensitiveDict

from petstore_contract.core import records as record
from petstore_contract.core import replay, wire
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.transport.problems import TargetProblem

# Not shown in a recorded exchange: transport details a replay (curl) sets by itself.
HOP_HEADERS = frozenset({"connection", "content-length", "transfer-encoding", "accept-encoding"})


def throttling(status: int | None, retry_after: str | None) -> bool:
    """An answer that throttles the run, whatever the method: a 429 (RFC 6585 §4: the request was not
    processed), or a 503 with ``Retry-After`` (RFC 9110 §15.6.4: the server is temporarily unable to
    handle the request and says when to come back).  The transport waits it out and sends again; one
    that outlasts the waits decides nothing about the operation (its test's clause is undecided)."""
    return status == 429 or (status == 503 and bool(retry_after))


# -- answers and exchanges -------------------------------------------------------------------------


@dataclass(frozen=True)
class RawView:
    """The raw bytes view of an answer, as the HTTP layer judges it (``transport/raw.py``): ``wire`` the body
    before content decoding, ``complete`` whether its framing ended as announced (or the run's own limits
    stopped the reading), ``problem`` why the body is not all here ("" when it is), ``interim`` the 1xx
    answers before it (100 Continue)."""

    wire: bytes
    complete: bool = True
    problem: str = ""
    interim: tuple[int, ...] = ()


Fields = tuple[tuple[str, str], ...]  # header fields in the order they came, a repeated name repeated


@dataclass(frozen=True, eq=False)
class Answer:
    """An answer of the target, the one form every check reads: its status, header fields, body (the whole
    body, within ``max_body_bytes``, content-decoded), the body as JSON (``json``: parsed once), the
    redacted record of its exchange and, for an answer read off the socket (``RawSender``), its raw bytes
    view.

    ``recorded`` is the exchange's record or what makes it: an answer the transport's watchers see (the
    pipeline of every exchange reads every answer of a run) makes its record, which scans the whole body
    for the key, only when a check reads ``exchange`` (evidence for a finding).  ``fields`` are the header
    fields as they came (a HAR records each one; ``headers`` keeps a repeated name's last value, or
    ``requests``' join of them); ``reason`` and ``version`` the status line's.  ``to_dict``/``from_dict``:
    the form the run's processes share.
    """

    status: int
    headers: CaseInsensitiveDict[str]
    body: bytes
    recorded: record.Exchange | Callable[[], record.Exchange]
    raw: RawView | None = None
    fields: Fields = ()  # () where not given: the headers' items
    reason: str = ""
    version: int = 11
    # The body's one parse (``json``), or the error it raised; None until first read.
    _parsed: tuple[JsonValue, ValueError | RecursionError | None] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.fields and self.headers:
            object.__setattr__(self, "fields", tuple(self.headers.items()))

    @property
    def exchange(self) -> record.Exchange:
        """The redacted record of the exchange, made on first use where the answer was given its maker."""
        made = self.recorded
        if not isinstance(made, record.Exchange):
            made = made()
            object.__setattr__(self, "recorded", made)  # made once: the same record for every reader
        return made

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> JsonValue:
        """The body as JSON, parsed once for every reader (a page can be megabytes); ValueError (or
        RecursionError) as ``json.loads`` raises them, each time it is asked.  The value is shared: a
        reader reads it, never changes it (``expect.parse_json`` gives a test a copy of its own)."""
        parsed = self._parsed
        if parsed is None:
            try:
                parsed = (json.loads(self.body), None)
            except (ValueError, RecursionError) as exc:
                parsed = (None, exc)
            object.__setattr__(self, "_parsed", parsed)
        value, problem = parsed
        if problem is not None:
            raise problem
        return value

    def raw_view(self) -> RawView:
        """The raw bytes view: the one recorded, or (an answer ``requests`` read) the body as it came, whole."""
        return self.raw if self.raw is not None else RawView(self.body)

    def to_dict(self) -> JsonObject:
        data: JsonObject = {
            "status": self.status,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body": base64.b64encode(self.body).decode(),
            "exchange": self.exchange.to_dict(),
        }
        if self.raw is not None:
            interim: list[JsonValue] = [*self.raw.interim]
            wire = base64.b64encode(self.raw.wire).decode()
            data["raw"] = {"wire": wire, "complete": self.raw.complete, "problem": self.raw.problem, "interim": interim}
        return data

    @classmethod
    def from_dict(cls, value: JsonLike) -> Answer:
        data = wire.fields(value, "answer")
        headers = CaseInsensitiveDict(dict(wire.pairs(data, "headers")))
        body, exchange = base64.b64decode(wire.text(data, "body")), record.Exchange.from_dict(data.get("exchange"))
        if data.get("raw") is None:
            return cls(wire.number(data, "status"), headers, body, exchange)
        raw = wire.table(data, "raw")
        complete = raw.get("complete")
        interim = wire.numbers(raw, "interim")
        view = RawView(base64.b64decode(wire.text(raw, "wire")), complete is True, wire.text(raw, "problem"), interim)
        return cls(wire.number(data, "status"), headers, body, exchange, view)


@dataclass(frozen=True)
class Unanswered:
    """No answer: a request the target did not answer (or the run did not send), with the reason.

    It stands where the ``Answer`` would (a row of a table); reading what the answer would hold raises the
    transport's ``TargetProblem``, which a ``judge`` block turns into *undecided* for its clause (and a test,
    for the clauses it names), while the table's other rows are judged as usual.
    """

    problem: TargetProblem

    def _raise(self) -> Never:
        raise self.problem

    status = property(_raise)
    headers = property(_raise)
    fields = property(_raise)
    body = property(_raise)
    text = property(_raise)
    json = property(_raise)
    exchange = property(_raise)
    raw_view = property(_raise)

    def to_dict(self) -> JsonObject:
        exchange = self.problem.exchange.to_dict() if self.problem.exchange is not None else None
        return {"unanswered": self.problem.message, "kind": self.problem.kind, "exchange": exchange}

    @classmethod
    def from_dict(cls, value: JsonLike) -> Unanswered:
        data = wire.fields(value, "unanswered")
        exchange = record.Exchange.from_dict(data["exchange"]) if data.get("exchange") else None
        return cls(TargetProblem(wire.text(data, "unanswered"), kind=wire.text(data, "kind"), exchange=exchange))


Row = Answer | Unanswered


def row_from_dict(value: JsonLike) -> Row:
    """An answer, or its absence, as ``to_dict`` wrote it."""
    data = wire.fields(value, "row")
    return Unanswered.from_dict(data) if "unanswered" in data else Answer.from_dict(data)


def seen_answer(
    redactor: Redactor,
    request: requests.PreparedRequest,
    status: int,
    fields: Fields,
    body: bytes,
    *,
    reason: str = "",
    version: int = 11,
) -> Answer:
    """An answer as the transport's watchers see it (``adapter.Observed``): the header fields as they came
    (``headers``: a repeated name's last value), its redacted exchange made only when first read."""

    def exchange() -> record.Exchange:
        sent = request.body if isinstance(request.body, bytes | str) else None
        method, url = request.method or "GET", request.url or ""
        return build_exchange(
            redactor, method, url, request.headers, sent, status=status, response_headers=fields, response_body=body
        )

    return Answer(status, CaseInsensitiveDict(fields), body, exchange, fields=fields, reason=reason, version=version)


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
