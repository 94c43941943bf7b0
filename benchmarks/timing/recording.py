"""Recording at the server: every request a run sends, in order of arrival, and what it answered;
the fresh reference servers the rows meet."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from petstore_contract.reference import REFERENCE, BackgroundServer, build_app
from petstore_contract.reference.variants import Variant

WRITE_METHODS_EXCLUDED = ("GET", "HEAD", "OPTIONS")
PET_PATH = re.compile(r"^(.*/pets/)([^/?]+)$")


@dataclass
class Exchange:
    """One request as the server saw it, and what it answered."""

    method: str
    raw_path: str  # as sent, percent-encoding kept, /v1 included
    query: str
    headers: list[tuple[str, str]]
    body: bytes
    start: float  # time.monotonic() at arrival (before the server's latency)
    end: float = 0.0  # after the last byte of the answer was handed to the server
    status: int = 0
    created_id: int | None = None  # the id a 2xx POST /pets answered

    @property
    def is_write(self) -> bool:
        return self.method not in WRITE_METHODS_EXCLUDED

    @property
    def creates(self) -> bool:
        return self.method == "POST" and 200 <= self.status < 300 and self.created_id is not None

    @property
    def lists(self) -> bool:
        return self.method == "GET" and self.raw_path.rstrip("/").endswith("/pets")

    def pet_id(self) -> str | None:
        if self.method != "GET":
            return None
        found = PET_PATH.match(self.raw_path)
        return found.group(2) if found else None

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["body"] = base64.b64encode(self.body).decode("ascii")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Exchange:
        data = {**data, "body": base64.b64decode(data["body"]), "headers": [tuple(h) for h in data["headers"]]}
        return cls(**data)


class Recorder:
    """ASGI middleware around a Pet Store app: every HTTP request, in order of arrival."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        arrived = time.monotonic()
        messages, body = [], b""
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        raw = scope.get("raw_path") or (scope.get("root_path", "") + scope["path"]).encode()
        exchange = Exchange(
            method=scope["method"],
            raw_path=raw.decode("latin-1"),
            query=scope.get("query_string", b"").decode("latin-1"),
            headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])],
            body=body,
            start=arrived,
        )
        self.exchanges.append(exchange)
        pending = iter(messages)
        answer = bytearray()

        async def replayed_receive() -> Any:
            for message in pending:
                return message
            return await receive()

        async def watched_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body" and exchange.method == "POST":
                answer.extend(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, replayed_receive, watched_send)
        finally:
            exchange.end = time.monotonic()
            if exchange.method == "POST" and 200 <= exchange.status < 300:
                exchange.created_id = answered_id(bytes(answer))


def answered_id(body: bytes) -> int | None:
    try:
        value = json.loads(body).get("id")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class Server:
    """A fresh reference server (optionally recorded) in a thread of this process."""

    key: str
    app: Any
    recorder: Recorder | None
    base_url: str = ""

    @property
    def requests(self) -> int:
        return int(self.app.state.store.request_count)

    @property
    def writes(self) -> int:
        return int(self.app.state.store.write_count)


@contextmanager
def serve(variant: Variant, record: bool = False, key: str | None = None) -> Iterator[Server]:
    key = key or "bench-" + secrets.token_urlsafe(18)
    app = build_app(key, variant)
    recorder = Recorder(app) if record else None
    server = Server(key, app, recorder)
    background = BackgroundServer(recorder or app).start()  # type: ignore[arg-type]
    try:
        server.base_url = background.base_url
        yield server
    finally:
        background.stop()


def with_latency(ms: float) -> Variant:
    return dataclasses.replace(REFERENCE, name=f"reference+{ms:g}ms", latency_seconds=ms / 1000)
