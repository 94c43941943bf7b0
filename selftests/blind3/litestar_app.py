"""The Pet Store on Litestar, served by uvicorn (Litestar's documented server).

Choices Litestar makes where the document is silent, kept as a vendor would ship them:

- ``/pets/{pet_id:str}``, read as a decimal int64 (``domain.pet_id_value``), else the Error 404.
  Litestar's ``int`` path type is Python's ``int()``, which reads ``1_01`` as 101 (PEP 515): the
  suite finds that on ``read.not-found`` (``1_01`` names no animal), so the vendor routes the text;
- a JSON body whose strings are not UTF-8: Litestar lets ``UnicodeDecodeError`` out of its decoder, a
  500 by default, which the suite finds on ``create.reject.json``: the vendor maps it to the Error 400;
- an unknown method on a known path: the router's 405 with ``Allow``;
- a query value of the wrong type or out of ``Parameter(ge=1, le=100)``: Litestar's ValidationException, 400;
- the body is decoded as JSON whatever its ``Content-Type`` (Litestar does not look at it);
- ``request_max_body_size`` (10 MB by default): a larger body is Litestar's 413.

Litestar converts a body to its declared type non-strictly (``"5"`` and ``5.0`` become ``5``), which
§4.2 forbids (invalid values get 400): the vendor takes the decoded object and converts it with
``msgspec.convert(..., strict=True)``, raising Litestar's own ValidationException (400).
The ``default_errors`` fault installs Error-body handlers for the documented errors only (401, 400):
the router's 404 and 405, and Litestar's own 400 for malformed JSON (a SerializationException, not a
ValidationException), keep Litestar's ``{"status_code": 404, "detail": "Not Found"}``.
"""

from __future__ import annotations

import socket
import threading
from typing import Annotated, Any, Literal

import msgspec
import uvicorn
from domain import (
    INT64_MAX,
    INT64_MIN,
    MemoryStore,
    bearer_problem,
    deprecation,
    encodable,
    error_body,
    pet_id_value,
    unauthorized,
)
from litestar import Litestar, Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.exceptions import HTTPException, NotAuthorizedException, ValidationException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult, DefineMiddleware
from litestar.params import Parameter

SINCE = 1704067200  # deprecated since 2024-01-01T00:00:00Z
Status = Literal["available", "pending", "sold"]


class NewPet(msgspec.Struct):
    name: str
    categoryId: Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)]  # the document's field name
    status: Status | msgspec.UnsetType = msgspec.UNSET


def build_app(flags: frozenset[str], key: str, store: MemoryStore) -> Litestar:
    class BearerKey(AbstractAuthenticationMiddleware):
        async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
            trouble = bearer_problem(connection.headers.get("authorization"), key)
            if trouble:
                body, headers = unauthorized(trouble)
                raise NotAuthorizedException(detail=body["message"], headers=headers)
            return AuthenticationResult(user="client", auth=None)

    @get("/v1/pets")
    async def list_pets(
        limit: Annotated[int, Parameter(ge=1, le=100)] = 20, status: Status | None = None
    ) -> list[dict[str, Any]]:
        return store.page(limit, status)

    @post("/v1/pets")
    async def create_pet(data: dict[str, Any]) -> dict[str, Any]:
        try:
            pet = msgspec.convert(data, NewPet, strict=True)
        except msgspec.ValidationError as exc:
            raise ValidationException(detail=str(exc)) from None
        if not encodable(pet.name):
            raise ValidationException(detail="name must be valid Unicode")
        return store.add(msgspec.to_builtins(pet))

    # The default_errors fault keeps Litestar's int path type too: a petId int() does not read is the
    # router's 404, with Litestar's own body.
    @get("/v1/pets/{pet_id:int}" if "default_errors" in flags else "/v1/pets/{pet_id:str}")
    async def get_pet(pet_id: int | str) -> Response[dict[str, Any]]:
        number = pet_id if isinstance(pet_id, int) else pet_id_value(pet_id)
        pet = None if number is None else store.get(number)
        if pet is None:
            body = error_body(404, "not_found", "no animal with this id")
            return Response(body, status_code=404, headers=deprecation(SINCE))
        return Response(pet, headers=deprecation(SINCE))

    @get("/v1/store/orders")
    async def list_orders() -> list[Any]:
        return []

    def as_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, Any]]:
        status = exc.status_code
        code = {400: "invalid_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed"}
        body = error_body(status, code.get(status, "error"), str(exc.detail))
        return Response(body, status_code=status, headers=exc.headers or {})

    def crashed(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
        return Response(error_body(500, "internal_error", "internal error"), status_code=500)

    def not_utf8(request: Request[Any, Any, Any], exc: UnicodeDecodeError) -> Response[dict[str, Any]]:
        return Response(error_body(400, "invalid_request", "the body is not UTF-8"), status_code=400)

    handlers: dict[Any, Any] = {HTTPException: as_error, UnicodeDecodeError: not_utf8, Exception: crashed}
    if "default_errors" in flags:
        handlers = {ValidationException: as_error, NotAuthorizedException: as_error, UnicodeDecodeError: not_utf8}
    return Litestar(
        [list_pets, create_pet, get_pet, list_orders],
        middleware=[DefineMiddleware(BearerKey)],
        exception_handlers=handlers,
        logging_config=None,
        openapi_config=None,
    )


class Running:
    def __init__(self, flags: frozenset[str], key: str, preload: int, port: int) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        app = build_app(flags, key, MemoryStore(preload))
        config = uvicorn.Config(app, log_level="critical", access_log=False, lifespan="on")
        self.server = uvicorn.Server(config)
        thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not self.server.started:
            if not thread.is_alive():
                raise OSError("uvicorn did not start")
            threading.Event().wait(0.01)
        self.port = sock.getsockname()[1]

    def stop(self) -> None:
        self.server.should_exit = True


def serve(flags: frozenset[str], key: str, preload: int, port: int) -> Running:
    return Running(flags, key, preload, port)
