"""An exchange the transport observed, read as ``expect.Answer`` by the pipeline of every exchange (``pipeline``)."""

from __future__ import annotations

from requests.structures import CaseInsensitiveDict

from petstore_contract.core.records import Exchange
from petstore_contract.core.redaction import Redactor
from petstore_contract.interface.jsontypes import JsonValue
from petstore_contract.judging import expect
from petstore_contract.transport import Observed
from petstore_contract.transport.answers import build_exchange


class SeenAnswer:
    """An observed exchange read as ``expect.Answer``; the redacted record made only when a check fails."""

    def __init__(self, seen: Observed, redact: Redactor) -> None:
        self.seen, self.redact = seen, redact
        self.status = seen.status or 0
        self.body = seen.body
        self.headers: CaseInsensitiveDict[str] = CaseInsensitiveDict(seen.headers)
        self._exchange: Exchange | None = None

    def json(self) -> JsonValue:
        """The body as JSON, parsed once for every watcher (``Observed.json``); not JSON: the Mismatch."""
        try:
            return self.seen.json()
        except (ValueError, RecursionError):
            return expect.parse_json(self)  # raises, with the exchange as evidence

    @property
    def exchange(self) -> Exchange:
        if self._exchange is None:
            request = self.seen.request
            body = request.body if isinstance(request.body, bytes | str) else None
            self._exchange = build_exchange(
                self.redact,
                request.method or "GET",
                request.url or "",
                request.headers,
                body,
                status=self.seen.status,
                response_headers=self.seen.headers,
                response_body=self.seen.body,
            )
        return self._exchange
