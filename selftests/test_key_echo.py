"""The key in no output, whatever the target echoes: redaction at the boundary of every output.

Servers that echo the request's ``Authorization`` header (a common debugging habit) and the key
in its URL-encoded and base64 forms into response headers, ``Location``, JSON bodies and Error
messages, on every operation and every answer.  A compliant echo server must still end
conformant; echo servers with a fault make findings whose observations and Schemathesis messages
quote those bodies.  Every output (terminal, summary.json, summary.md, report.html, junit.xml)
is searched for the key and each of its encodings: none may appear.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from devtools.catalog import catalog_app
from hosted import run_hosted
from petstore_contract.reference import BackgroundServer

KEY = "echo+key/With=Chars-0123456789"
REPORTS = ("summary.json", "summary.md", "report.html", "junit.xml")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def encodings(key: str) -> dict[str, str]:
    """The key and the forms a request or an echo may carry it in."""
    b64 = {f"base64 of {raw!r}": base64.b64encode(raw.encode()).decode() for raw in (key, f":{key}", f"user:{key}")}
    return {"key": key, "URL-encoded": quote(key, safe=""), "form-encoded": quote_plus(key), **b64}


class EchoKey:
    """ASGI middleware: every answer carries the request's Authorization header and the key's encodings."""

    def __init__(self, app: Any, key: str) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode("latin-1") for k, v in scope["headers"]}
        echo = " ".join([headers.get("authorization", "(none)"), *encodings(self.key).values()])
        query = scope.get("query_string", b"").decode("latin-1")
        started: Message = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.update(message)
            else:
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    await self._answer(send, started, b"".join(chunks), echo, query)

        await self.app(scope, receive, capture)

    async def _answer(self, send: Send, start: Message, body: bytes, echo: str, query: str) -> None:
        body = _echoed_body(body, f"{echo} (query {query})")
        headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
        headers += [(b"content-length", str(len(body)).encode()), (b"x-echo-authorization", echo.encode("latin-1"))]
        if start["status"] == 201:
            headers.append((b"location", f"/v1/pets/new?api_key={quote(self.key, safe='')}".encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _echoed_body(body: bytes, echo: str) -> bytes:
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if isinstance(data, dict):
        if isinstance(data.get("message"), str):
            data["message"] += f" (request Authorization: {echo!r})"
        data["echo"] = echo
    elif isinstance(data, list) and data and isinstance(data[0], dict):
        data[0]["echo"] = echo  # extra fields are allowed: the list stays a list of Pet
    return json.dumps(data).encode()


def assert_key_in_no_output(output: str, reports: dict[str, str]) -> None:
    assert set(reports) == set(REPORTS), f"missing reports: {set(REPORTS) - set(reports)}"
    texts = {"the terminal": output, **reports}
    for form, value in encodings(KEY).items():
        for name, text in texts.items():
            assert value not in text, f"the key ({form}) is in {name}"


@pytest.mark.parametrize(
    ("fault", "verdict", "clause"),
    [
        # Tier 2: in tier 1, test_stop_signals.py reads every output of a run for the key.
        pytest.param(None, "conformant", None, marks=pytest.mark.tier_2),
        ("error_status_string", "not_conformant", "errors.body"),  # findings quote the echoing Error body
        pytest.param(  # Schemathesis quotes the echoing list
            "list_item_missing_category", "not_conformant", "list.shape", marks=pytest.mark.tier_2
        ),
    ],
)
def test_echoed_key_reaches_no_output(fault: str | None, verdict: str, clause: str | None) -> None:
    with BackgroundServer(EchoKey(catalog_app(KEY, fault=fault), KEY)) as server:  # type: ignore[arg-type]
        run = run_hosted(server.base_url, KEY, "--contract-profile", "quick", keep=REPORTS, timeout=300)
    assert run.verdict == verdict, run.output[-3000:]
    if clause is not None:
        assert clause in run.violated(), sorted(run.violated())
        # The evidence is there, only the key is not: the echo was quoted and redacted.
        assert "[REDACTED]" in run.reports["summary.json"] or "$PETSTORE_API_KEY" in run.reports["summary.json"]
    assert_key_in_no_output(run.output, run.reports)
