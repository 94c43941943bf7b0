"""The Pet Store on aiohttp.web, served by aiohttp's own server (``AppRunner`` + ``TCPSite``).

Choices aiohttp makes where the document is silent, kept as a vendor would ship them:

- the router: ``/pets/{petId:-?[0-9]{1,19}}``; any other path segment is no route (404), after the key;
- ``client_max_size`` (1 MiB by default): a larger body is aiohttp's 413;
- a POST whose ``Content-Type`` is not ``application/json`` gets 415 (``request.content_type``);
- an unknown method on a known path is aiohttp's 405 with ``Allow``;
- the vendor's error middleware turns every ``web.HTTPException`` into the Error body (§7); the
  ``text_errors`` fault leaves aiohttp's own ``text/plain`` bodies ("404: Not Found").

Middlewares run in order around the handler, also for paths no route matches: the key is checked first.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from domain import (
    PET_ID,
    MemoryStore,
    bearer_problem,
    deprecation,
    error_body,
    limit_value,
    new_pet,
    new_pet_problem,
    pet_id_value,
    unauthorized,
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SINCE = 1735689600  # deprecated since 2025-01-01T00:00:00Z
CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
CODES |= {415: "unsupported_media_type"}


def problem(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(error_body(status, code, message), status=status, headers=headers)


def build_app(flags: frozenset[str], key: str, store: MemoryStore) -> web.Application:
    @web.middleware
    async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            headers = {k: v for k, v in exc.headers.items() if k.lower() in ("allow", "www-authenticate")}
            return problem(exc.status, CODES.get(exc.status, "error"), exc.reason, headers)

    @web.middleware
    async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
        trouble = bearer_problem(request.headers.get("Authorization"), key)
        if trouble:
            body, headers = unauthorized(trouble)
            return web.json_response(body, status=401, headers=headers)
        return await handler(request)

    async def list_pets(request: web.Request) -> web.Response:
        limit = limit_value(request.query.get("limit"))
        status = request.query.get("status")
        if limit is None:
            return problem(400, "invalid_query", "limit must be an integer from 1 to 100")
        if status is not None and status not in ("available", "pending", "sold"):
            return problem(400, "invalid_query", "status must be one of available, pending, sold")
        return web.json_response(store.page(limit, status))

    async def create_pet(request: web.Request) -> web.Response:
        if request.content_type != "application/json":
            raise web.HTTPUnsupportedMediaType(reason="Content-Type must be application/json")
        raw = await request.read()  # over client_max_size: aiohttp raises its 413 here
        try:
            body: Any = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            return problem(400, "invalid_json", "the body is not JSON")
        trouble = new_pet_problem(body)
        if trouble:
            return problem(400, "invalid_pet", trouble)
        return web.json_response(store.add(new_pet(body)), status=201)

    async def get_pet(request: web.Request) -> web.Response:
        pet_id = pet_id_value(request.match_info["petId"])
        pet = store.get(pet_id) if pet_id is not None else None
        headers = deprecation(SINCE)
        if pet is None:
            return problem(404, "not_found", "no animal with this id", headers)
        return web.json_response(pet, headers=headers)

    async def list_orders(request: web.Request) -> web.Response:
        return web.json_response([])

    middlewares = [authenticate] if "text_errors" in flags else [errors, authenticate]
    app = web.Application(middlewares=middlewares)
    app.router.add_get("/v1/pets", list_pets, allow_head=False)
    app.router.add_post("/v1/pets", create_pet)
    app.router.add_get(f"/v1/pets/{{petId:{PET_ID}}}", get_pet, allow_head=False)
    app.router.add_get("/v1/store/orders", list_orders, allow_head=False)
    return app


class Running:
    """aiohttp's server on a loop of its own, in a thread."""

    def __init__(self, flags: frozenset[str], key: str, preload: int, port: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.app = build_app(flags, key, MemoryStore(preload))
        self.port = 0
        self.failed: BaseException | None = None
        started = threading.Event()
        threading.Thread(target=self._run, args=(port, started), daemon=True).start()
        started.wait(30)
        if self.failed or not self.port:
            raise OSError(f"aiohttp did not start: {self.failed}")

    def _run(self, port: int, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        runner = web.AppRunner(self.app, access_log=None)
        try:
            self.loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", port)
            self.loop.run_until_complete(site.start())
            self.port = runner.addresses[0][1]
        except BaseException as exc:  # reported to the harness, which exits 2
            self.failed = exc
        started.set()
        self.runner = runner
        if not self.failed:
            self.loop.run_forever()

    def stop(self) -> None:
        future = asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop)
        future.result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


def serve(flags: frozenset[str], key: str, preload: int, port: int) -> Running:
    return Running(flags, key, preload, port)
