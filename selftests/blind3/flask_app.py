"""The Pet Store on Flask over SQL (SQLAlchemy Core on a SQLite file), served by Werkzeug's threaded server.

Choices Flask makes where the document is silent, kept as a vendor would ship them:

- the key is checked in ``before_request``, which Flask runs before it raises the routing error:
  every path, known or not, answers 401 without the key;
- ``<int(signed=True):pet_id>``: Werkzeug's int converter, with a minus sign (an int64 may be
  negative); anything else is no route, 404 (after the key); beyond int64, the view's 404;
- query arguments are parsed with webargs, whose validation errors are 422 (its default):
  ``limit=0``, ``limit=abc``, ``status=bogus`` get 422 with the Error body;
- the body is read with ``request.get_json()``: another ``Content-Type`` is Werkzeug's 415, a
  malformed or empty body its 400; a NewPet with invalid values is 400, as §4.2 says (the vendor
  sets webargs aside for the body, whose 422 the document does not allow there);
- an unknown method on a known path: Werkzeug's 405 with ``Allow``.

``errorhandler(HTTPException)`` gives every one of them the Error body (§7) instead of Werkzeug's HTML page.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from domain import (
    INT64_MAX,
    INT64_MIN,
    STATUSES,
    bearer_problem,
    deprecation,
    error_body,
    new_pet,
    new_pet_problem,
    preload_rows,
    unauthorized,
)
from flask import Flask, Response, jsonify, request
from webargs import fields, validate
from webargs.flaskparser import use_args
from werkzeug.exceptions import HTTPException
from werkzeug.serving import make_server

SINCE = 1717200000  # deprecated since 2024-06-01T00:00:00Z
METADATA = sa.MetaData()
PETS = sa.Table(
    "pets",
    METADATA,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("category_id", sa.BigInteger, nullable=False),
    sa.Column("status", sa.String(16), nullable=True),
    sa.Index("pets_status", "status"),
    sqlite_autoincrement=True,
)
LIST_ARGS = {
    "limit": fields.Integer(load_default=20, validate=validate.Range(min=1, max=100)),
    "status": fields.String(load_default=None, validate=validate.OneOf(STATUSES)),
}


class SqlStore:
    def __init__(self, folder: Path, preload: int) -> None:
        self.engine = sa.create_engine(f"sqlite:///{folder / 'pets.db'}", connect_args={"timeout": 30})
        with self.engine.begin() as db:
            db.exec_driver_sql("PRAGMA journal_mode=WAL")
            METADATA.create_all(db)
            rows = [{"name": n, "category_id": c, "status": s} for n, c, s in preload_rows(preload)]
            if rows:
                db.execute(PETS.insert(), rows)

    @staticmethod
    def pet(row: Any) -> dict[str, Any]:
        pet = {"id": row.id, "name": row.name, "categoryId": row.category_id}
        if row.status is not None:
            pet["status"] = row.status
        return pet

    def add(self, fields_: dict[str, Any]) -> dict[str, Any]:
        values = {"name": fields_["name"], "category_id": fields_["categoryId"], "status": fields_.get("status")}
        with self.engine.begin() as db:
            pet_id = db.execute(PETS.insert().values(**values)).inserted_primary_key[0]
        return {"id": pet_id, **fields_}

    def get(self, pet_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as db:
            row = db.execute(sa.select(PETS).where(PETS.c.id == pet_id)).first()
        return self.pet(row) if row else None

    def page(self, limit: int, status: str | None) -> list[dict[str, Any]]:
        query = sa.select(PETS).order_by(PETS.c.id).limit(limit)
        if status is not None:
            query = query.where(PETS.c.status == status)
        with self.engine.connect() as db:
            return [self.pet(row) for row in db.execute(query)]


def build_app(flags: frozenset[str], key: str, store: SqlStore) -> Flask:
    app = Flask("petstore")

    @app.before_request
    def authenticate() -> Any:
        trouble = bearer_problem(request.headers.get("Authorization"), key)
        if trouble:
            body, headers = unauthorized(trouble)
            return jsonify(body), 401, headers
        return None

    @app.errorhandler(HTTPException)
    def as_error(exc: HTTPException) -> Any:
        status = exc.code or 500
        code = (exc.name or "error").lower().replace(" ", "_")
        headers = {k: v for k, v in exc.get_headers() if k == "Allow"}
        return jsonify(error_body(status, code, exc.description or exc.name)), status, headers

    @app.errorhandler(Exception)
    def crashed(exc: Exception) -> Any:
        return jsonify(error_body(500, "internal_error", "internal error")), 500

    @app.get("/v1/pets")
    @use_args(LIST_ARGS, location="query")
    def list_pets(args: dict[str, Any]) -> Any:
        return jsonify(store.page(args["limit"], args["status"]))

    @app.post("/v1/pets")
    def create_pet() -> Any:
        body = request.get_json()  # Werkzeug: 415 for another media type, 400 for a malformed body
        trouble = new_pet_problem(body)
        if trouble:
            return jsonify(error_body(400, "invalid_pet", trouble)), 400
        return jsonify(store.add(new_pet(body))), 201

    @app.get("/v1/pets/<int(signed=True):pet_id>")
    def get_pet(pet_id: int) -> Any:
        pet = store.get(pet_id) if INT64_MIN <= pet_id <= INT64_MAX else None
        if pet is None:
            return jsonify(error_body(404, "not_found", "no animal with this id")), 404, deprecation(SINCE)
        return jsonify(pet), 200, deprecation(SINCE)

    @app.get("/v1/store/orders")
    def list_orders() -> Response:
        return jsonify([])

    return app


class Running:
    def __init__(self, flags: frozenset[str], key: str, preload: int, port: int) -> None:
        # Werkzeug logs every request to stderr unless its logger is configured.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.folder = Path(tempfile.mkdtemp(prefix="blind3-flask-"))
        try:
            app = build_app(flags, key, SqlStore(self.folder, preload))
            self.server = make_server("127.0.0.1", port, app, threaded=True)
        except BaseException:  # the harness exits 2: leave no database behind
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        shutil.rmtree(self.folder, ignore_errors=True)


def serve(flags: frozenset[str], key: str, preload: int, port: int) -> Running:
    return Running(flags, key, preload, port)
