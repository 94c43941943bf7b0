"""Many apps behind one loopback server, and a client of each: the reference server's and the fault
table's self-tests (``test_reference_server.py``, ``test_fault_table.py``).

Every server is a fresh app behind one loopback uvicorn (``BackgroundServer``), reached with
``requests`` and a timeout on every request: ``/<tag>/v1/...`` goes to the app registered as ``tag``.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import requests

from devtools.catalog import catalog_app
from petstore_contract.reference import REFERENCE, BackgroundServer, Variant

KEY = "Ref-Key-7f3A"  # letters of both cases, so that a case change is a different key
STATUSES = ("available", "pending", "sold")
TIMEOUT = 5


class Dispatcher:
    """An ASGI app routing ``/<tag>/...`` to the app registered as ``tag`` (root_path ``/<tag>``)."""

    def __init__(self) -> None:
        self.apps: dict[str, Any] = {}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        tag = scope["path"].split("/")[1] if scope["type"] == "http" else ""
        app = self.apps.get(tag)
        if app is None:
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": b"no app registered under this tag"})
            return
        await app({**scope, "root_path": scope.get("root_path", "") + "/" + tag}, receive, send)


class Api:
    """A client of one app: the valid key unless told otherwise, a timeout on every request."""

    def __init__(self, session: requests.Session, base_url: str, app: Any) -> None:
        self.session = session
        self.base_url = base_url
        self.store = app.state.store

    def request(
        self,
        method: str,
        path: str,
        *,
        key: str | None = KEY,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> requests.Response:
        sent = {"Authorization": f"Bearer {key}"} if key is not None else {}
        sent.update(headers or {})
        return self.session.request(
            method, self.base_url + path, headers=sent, params=params, timeout=TIMEOUT, **kwargs
        )

    def get(self, path: str = "/pets", **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, body: Any = None, **kwargs: Any) -> requests.Response:
        if body is not None:
            kwargs["json"] = body
        return self.request("POST", "/pets", **kwargs)

    def create(self, name: str = "Rex", category: int = 1, **fields: Any) -> dict[str, Any]:
        answer = self.post({"name": name, "categoryId": category, **fields})
        assert answer.status_code in (200, 201), answer.text
        return answer.json()

    def seed(self, count: int, prefix: str = "seed") -> list[dict[str, Any]]:
        """``count`` animals, statuses cycling available, pending, sold (oldest first)."""
        return [self.create(f"{prefix}-{n}", n, status=STATUSES[n % 3]) for n in range(count)]

    def pets(self, **params: Any) -> Any:
        answer = self.get("/pets", params=params)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def read(self, pet_id: Any) -> requests.Response:
        return self.get(f"/pets/{pet_id}")


@contextmanager
def apps_served() -> Iterator[Callable[..., Api]]:
    """``start(variant, fault, key)``: a fresh catalog app behind the one loopback server, and its client."""
    dispatcher = Dispatcher()
    counter = itertools.count()
    with BackgroundServer(dispatcher) as server, requests.Session() as session:  # type: ignore[arg-type]

        def start(variant: Variant = REFERENCE, fault: str | None = None, key: str = KEY) -> Api:
            tag = f"s{next(counter)}"
            app = catalog_app(key, variant, fault)
            dispatcher.apps[tag] = app
            return Api(session, f"http://{server.host}:{server.port}/{tag}/v1", app)

        yield start


# -- what the self-tests ask of an app ----------------------------------------------------------

OPERATIONS = (("GET", "/pets"), ("POST", "/pets"), ("GET", "/pets/1"), ("GET", "/store/orders"))


def each_operation(api: Api, **kwargs: Any) -> list[requests.Response]:
    """One request to each operation (animal 1 exists; the POST carries a valid body)."""
    api.create("first")
    return each_operation_unchecked(api, **kwargs)


def each_operation_unchecked(api: Api, **kwargs: Any) -> list[requests.Response]:
    body = {"json": {"name": "Rex", "categoryId": 1}}
    return [api.request(method, path, **kwargs, **(body if method == "POST" else {})) for method, path in OPERATIONS]


def valid_error(answer: requests.Response) -> bool:
    try:
        body = answer.json()
    except ValueError:
        return False
    return (
        isinstance(body, dict)
        and isinstance(body.get("code"), str)
        and isinstance(body.get("message"), str)
        and type(body.get("status")) is int
        and body["status"] == answer.status_code
    )


def listed_ids(api: Api, **params: Any) -> list[int]:
    return [p["id"] for p in api.pets(**params)]


Message = MutableMapping[str, Any]


class Counted:
    """ASGI wrapper: counts the requests that reached the server and the redirects it answered, then serves them."""

    def __init__(self, app: Any) -> None:
        self.app, self.requests, self.redirects = app, 0, 0

    async def __call__(
        self,
        scope: Message,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.requests += 1

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                self.redirects += 1
            await send(message)

        await self.app(scope, receive, counting)
