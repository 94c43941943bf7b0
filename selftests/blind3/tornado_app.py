"""The Pet Store on Tornado, served by Tornado's own HTTPServer.

Choices Tornado makes where the document is silent, kept as a vendor would ship them:

- the key is checked in ``prepare()``, which Tornado runs before the method: every path answers 401
  without the key (the ``default_handler_class`` for unknown paths is a subclass too);
- ``/pets/([^/]+)``: Tornado routes by regular expression, the handler parses the id; a petId that is
  not an int64 written in digits gets 400 (a malformed parameter), an int64 no animal has 404;
- ``limit`` out of 1..100 is clamped into it (the document calls it a maximum, §4.1); a limit that is
  not an integer gets 400; the body is read as JSON whatever its ``Content-Type``;
- a method the handler lacks: Tornado's 405; Tornado sends no ``Allow``, which RFC 9110 §15.5.6
  requires, so the vendor's ``write_error`` adds it (the handler's own methods);
- ``write_error`` writes the Error body (§7) instead of Tornado's HTML error page.
- Ids start at 1000 (§2: assigned by the service).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from typing import Any

import tornado.httpserver
import tornado.netutil
import tornado.web
from domain import (
    INT64_MAX,
    INT64_MIN,
    STATUSES,
    MemoryStore,
    bearer_problem,
    deprecation,
    error_body,
    new_pet,
    new_pet_problem,
    unauthorized,
)

SINCE = 1722470400  # deprecated since 2024-08-01T00:00:00Z


class Base(tornado.web.RequestHandler):
    ALLOWED: tuple[str, ...] = ()

    def initialize(self, key: str, store: MemoryStore) -> None:
        self.key, self.store = key, store

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json")

    def prepare(self) -> None:
        trouble = bearer_problem(self.request.headers.get("Authorization"), self.key)
        if trouble:
            body, headers = unauthorized(trouble)
            self.set_status(401)
            for name, value in headers.items():
                self.set_header(name, value)
            self.finish(json.dumps(body))

    def answer(self, body: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(body))

    def fail(self, status: int, code: str, message: str) -> None:
        self.answer(error_body(status, code, message), status)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        if status_code == 405 and self.ALLOWED:
            self.set_header("Allow", ", ".join(self.ALLOWED))
        code = self._reason.lower().replace(" ", "_")
        self.finish(json.dumps(error_body(status_code, code, self._reason)))


class Pets(Base):
    ALLOWED = ("GET", "POST")

    def get(self) -> None:
        raw = self.get_query_argument("limit", "20")
        status = self.get_query_argument("status", None)
        if not re.fullmatch(r"-?[0-9]+", raw):
            return self.fail(400, "invalid_query", "limit must be an integer")
        if status is not None and status not in STATUSES:
            return self.fail(400, "invalid_query", "status must be one of available, pending, sold")
        self.answer(self.store.page(min(max(int(raw), 1), 100), status))

    def post(self) -> None:
        try:
            body = json.loads(self.request.body)
        except (ValueError, UnicodeDecodeError):
            return self.fail(400, "invalid_json", "the body is not JSON")
        trouble = new_pet_problem(body)
        if trouble:
            return self.fail(400, "invalid_pet", trouble)
        self.answer(self.store.add(new_pet(body)), 201)


class Pet(Base):
    ALLOWED = ("GET",)

    def get(self, raw: str) -> None:
        for name, value in deprecation(SINCE).items():
            self.set_header(name, value)
        if not re.fullmatch(r"-?[0-9]{1,19}", raw) or not INT64_MIN <= int(raw) <= INT64_MAX:
            return self.fail(400, "invalid_pet_id", "petId must be an int64")
        pet = self.store.get(int(raw))
        if pet is None:
            return self.fail(404, "not_found", "no animal with this id")
        self.answer(pet)


class Orders(Base):
    ALLOWED = ("GET",)

    def get(self) -> None:
        self.answer([])


class NoRoute(Base):
    def prepare(self) -> None:
        super().prepare()
        if not self._finished:
            raise tornado.web.HTTPError(404)


def build_app(flags: frozenset[str], key: str, store: MemoryStore) -> tornado.web.Application:
    args = {"key": key, "store": store}
    routes: list[Any] = [
        (r"/v1/pets", Pets, args),
        (r"/v1/pets/([^/]+)", Pet, args),
        (r"/v1/store/orders", Orders, args),
    ]
    # No access log: Tornado logs every 4xx as a warning, which would reach logging's last-resort stderr.
    logging.getLogger("tornado").addHandler(logging.NullHandler())
    logging.getLogger("tornado").propagate = False
    return tornado.web.Application(
        routes, default_handler_class=NoRoute, default_handler_args=args, log_function=lambda handler: None
    )


class Running:
    def __init__(self, flags: frozenset[str], key: str, preload: int, port: int) -> None:
        self.loop = asyncio.new_event_loop()
        app = build_app(flags, key, MemoryStore(preload, first_id=1000))
        sockets = tornado.netutil.bind_sockets(port, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.server = tornado.httpserver.HTTPServer(app, xheaders=False)
            self.server.add_sockets(sockets)
            self.loop.run_forever()

        threading.Thread(target=run, daemon=True).start()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


def serve(flags: frozenset[str], key: str, preload: int, port: int) -> Running:
    return Running(flags, key, preload, port)
