"""The reference Pet Store as an ASGI application: ``PetStore``'s routes under /v1, its answer to a path
or method the document does not show, and the request counter.

Kept apart from ``app.py`` (the behaviour the document decides): nothing here is a clause, so the
mutation sample (``devtools/mutation``, which mutates ``app.py`` and ``rules.py``) leaves it out.
``build_app``'s ``store_factory`` is the seam another store is served through: the checkout's fault
catalog (``devtools/catalog``) passes a subclass of ``PetStore`` with a fault in it; the package itself
knows no fault.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from petstore_contract.reference.app import PetStore
from petstore_contract.reference.variants import REFERENCE, Variant


class RequestCounter:
    """Counts requests (the self-tests prove read-only runs with it) and adds a variant's latency."""

    def __init__(self, app: ASGIApp, store: PetStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.store.request_count += 1
            if scope["method"] not in ("GET", "HEAD", "OPTIONS", "TRACE"):  # RFC 9110 §9.2.1: the safe methods
                self.store.write_count += 1
            if self.store.variant.latency_seconds:
                await asyncio.sleep(self.store.variant.latency_seconds)
        await self.app(scope, receive, send)


def build_app(
    api_key: str, variant: Variant = REFERENCE, *, store_factory: Callable[[str, Variant], PetStore] = PetStore
) -> Starlette:
    """The Pet Store under /v1, answering every input with a documented status: the store
    ``store_factory(api_key, variant)`` builds (the clean ``PetStore`` unless another is given)."""
    store = store_factory(api_key, variant)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        codes = {404: "not_found", 405: "method_not_allowed"}
        return store.error(exc.status_code, codes.get(exc.status_code, "error"), exc.detail, dict(exc.headers or {}))

    app = Starlette(
        routes=[Mount("/v1", routes=store.routes())],
        exception_handlers={HTTPException: http_error},
        middleware=[Middleware(RequestCounter, store=store)],
    )
    app.state.store = store
    return app
