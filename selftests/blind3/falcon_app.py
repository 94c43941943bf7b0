"""The Pet Store on Falcon (WSGI), served by waitress.

Choices Falcon makes where the document is silent, kept as a vendor would ship them:

- the middleware of Falcon's own tutorial, in its order: the key first (``process_request`` runs
  before routing, so every path answers 401 without the key), then ``RequireJSON``: 406 when the
  client's ``Accept`` excludes JSON (``req.client_accepts_json``), 415 for a POST whose
  ``Content-Type`` is not JSON;
- ``/pets/{pet_id}``, read as a decimal int64 (``domain.pet_id_value``); anything else is Falcon's
  404. Falcon's ``int`` converter is Python's ``int()``, which reads ``1_01`` as 101 (PEP 515): the
  suite finds that on ``read.not-found`` (``1_01`` names no animal), so the vendor routes the text;
- ``req.get_param_as_int('limit', min_value=1, max_value=100)``: Falcon's 400 (HTTPInvalidParam);
- an empty or malformed body: Falcon's media errors, 400; an unknown method: Falcon's 405 with ``Allow``.

Every error goes through the vendor's error serializer (``app.set_error_serializer``), which writes
the Error body (§7) whatever the client accepts (Falcon's own picks JSON or XML by ``Accept``).
"""

from __future__ import annotations

import threading
from typing import Any

import falcon
import waitress
from domain import (
    STATUSES,
    MemoryStore,
    bearer_problem,
    challenge,
    deprecation,
    error_body,
    new_pet,
    new_pet_problem,
    pet_id_value,
)

SINCE = 1719792000  # deprecated since 2024-07-01T00:00:00Z


class BearerKey:
    def __init__(self, key: str) -> None:
        self.key = key

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        trouble = bearer_problem(req.get_header("Authorization"), self.key)
        if trouble:
            message = "API key missing" if trouble == "missing" else "API key not valid"
            raise falcon.HTTPUnauthorized(title="unauthorized", description=message, challenges=[challenge(trouble)])


class RequireJSON:
    """Falcon's tutorial middleware, as vendors copy it."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if not req.client_accepts_json:
            raise falcon.HTTPNotAcceptable(description="This API only answers JSON (application/json).")
        if req.method == "POST" and (req.content_type is None or "application/json" not in req.content_type):
            raise falcon.HTTPUnsupportedMediaType(description="Request bodies must be application/json.")


class Pets:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        limit = req.get_param_as_int("limit", min_value=1, max_value=100, default=20)
        status = req.get_param("status")
        if status is not None and status not in STATUSES:
            raise falcon.HTTPInvalidParam("must be one of available, pending, sold", "status")
        resp.media = self.store.page(limit, status)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = req.get_media()  # empty or malformed: Falcon's MediaNotFoundError / MediaMalformedError (400)
        trouble = new_pet_problem(body)
        if trouble:
            raise falcon.HTTPBadRequest(title="invalid_pet", description=trouble)
        resp.media = self.store.add(new_pet(body))
        resp.status = falcon.HTTP_201


class Pet:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def on_get(self, req: falcon.Request, resp: falcon.Response, pet_id: str) -> None:
        resp.set_headers(deprecation(SINCE))
        number = pet_id_value(pet_id)
        pet = None if number is None else self.store.get(number)
        if pet is None:
            raise falcon.HTTPNotFound(title="not_found", description="no animal with this id")
        resp.media = pet


class Orders:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = []


def serialize(req: falcon.Request, resp: falcon.Response, exc: falcon.HTTPError) -> None:
    """§7: the Error body for every error, whatever the client accepts (JSON is all this API speaks)."""
    status = exc.status_code
    code = exc.title if exc.title and " " not in exc.title else falcon.code_to_http_status(status)[4:]
    code = code.lower().replace(" ", "_")
    resp.media = error_body(status, code, exc.description or exc.title or "error")
    resp.content_type = falcon.MEDIA_JSON


def build_app(flags: frozenset[str], key: str, store: MemoryStore) -> falcon.App:
    app = falcon.App(middleware=[BearerKey(key), RequireJSON()])
    app.add_route("/v1/pets", Pets(store))
    app.add_route("/v1/pets/{pet_id}", Pet(store))
    app.add_route("/v1/store/orders", Orders())
    app.set_error_serializer(serialize)
    return app


class Running:
    def __init__(self, flags: frozenset[str], key: str, preload: int, port: int) -> None:
        app = build_app(flags, key, MemoryStore(preload))
        self.server: Any = waitress.create_server(app, host="127.0.0.1", port=port, threads=8, ident="waitress")
        self.port = self.server.effective_port
        threading.Thread(target=self.server.run, daemon=True).start()

    def stop(self) -> None:
        self.server.close()


def serve(flags: frozenset[str], key: str, preload: int, port: int) -> Running:
    return Running(flags, key, preload, port)
