"""The Pet Store on Bottle, served by the standard library's WSGI server (wsgiref, one thread per request).

Deployed behind nginx (``nginx.py``); the app alone is what nginx proxies to. Choices Bottle makes
where the document is silent, kept as a vendor would ship them:

- ``/pets/<pet_id:re:-?[0-9]{1,19}>``: any other petId is no route, Bottle's 404, *before* the key
  (the key is checked by a plugin, which Bottle applies to a route's callback once it matched);
- ``request.json`` is None unless ``Content-Type`` is ``application/json``: the vendor answers 400
  (the body is not a NewPet), as for an empty body; malformed JSON is Bottle's own 400;
- a body over ``MEMFILE_MAX`` (100 KiB) would be Bottle's 413; behind nginx's 64 KiB limit it never arrives;
- an unknown method on a known path: Bottle's 405 with ``Allow``.

``default_error_handler`` writes the Error body (§7) instead of Bottle's HTML error page.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Callable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bottle
from domain import (
    PET_ID,
    STATUSES,
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

SINCE = 1725148800  # deprecated since 2024-09-01T00:00:00Z


def as_json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> bottle.HTTPResponse:
    headers = {"Content-Type": "application/json", **(headers or {})}
    return bottle.HTTPResponse(json.dumps(body), status, headers)


def build_app(flags: frozenset[str], key: str, store: MemoryStore) -> bottle.Bottle:
    app = bottle.Bottle()

    def bearer(callback: Callable[..., Any]) -> Callable[..., Any]:
        def checked(*args: Any, **kwargs: Any) -> Any:
            trouble = bearer_problem(bottle.request.get_header("Authorization"), key)
            if trouble:
                body, headers = unauthorized(trouble)
                return as_json(body, 401, headers)
            return callback(*args, **kwargs)

        return checked

    app.install(bearer)

    def fail(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> bottle.HTTPResponse:
        return as_json(error_body(status, code, message), status, headers)

    @app.get("/v1/pets")
    def list_pets() -> Any:
        limit = limit_value(bottle.request.query.get("limit"))
        status = bottle.request.query.get("status")
        if limit is None:
            return fail(400, "invalid_query", "limit must be an integer from 1 to 100")
        if status is not None and status not in STATUSES:
            return fail(400, "invalid_query", "status must be one of available, pending, sold")
        return as_json(store.page(limit, status))

    @app.post("/v1/pets")
    def create_pet() -> Any:
        body = bottle.request.json  # None for another media type or an empty body
        trouble = new_pet_problem(body)
        if trouble:
            return fail(400, "invalid_pet", trouble)
        return as_json(store.add(new_pet(body)), 201)

    @app.get(f"/v1/pets/<pet_id:re:{PET_ID}>")
    def get_pet(pet_id: str) -> Any:
        number = pet_id_value(pet_id)
        pet = store.get(number) if number is not None else None
        if pet is None:
            return fail(404, "not_found", "no animal with this id", deprecation(SINCE))
        return as_json(pet, headers=deprecation(SINCE))

    @app.get("/v1/store/orders")
    def list_orders() -> Any:
        return as_json([])

    def json_error(error: bottle.HTTPError) -> str:
        bottle.response.content_type = "application/json"
        code = error.status_line.split(" ", 1)[-1].lower().replace(" ", "_")
        return json.dumps(error_body(error.status_code, code, str(error.body or error.status_line)))

    app.default_error_handler = json_error  # type: ignore[method-assign]
    return app


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class Running:
    """Listening once built; ``start()`` serves (the harness starts nginx in between, before any thread)."""

    def __init__(self, flags: frozenset[str], key: str, preload: int, port: int) -> None:
        app = build_app(flags, key, MemoryStore(preload))
        self.server = make_server("127.0.0.1", port, app, ThreadingWSGIServer, QuietHandler)
        self.port = self.server.server_port

    def start(self) -> None:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()


def serve(flags: frozenset[str], key: str, preload: int, port: int) -> Running:
    running = Running(flags, key, preload, port)
    running.start()
    return running
