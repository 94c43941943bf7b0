"""Faults of the Error body (§7), of the Content-Type (§1) and of GET /store/orders (§4.4)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from devtools.catalog.faulty.registry import fault
from petstore_contract.reference.app import PetStore

# -- the Error body --------------------------------------------------------------------------------------


@fault("error_status_string")
class ErrorStatusString(PetStore):
    def error_body(self, status: int, code: str, message: str) -> dict[str, Any]:
        return {**super().error_body(status, code, message), "status": str(status)}


@fault("error_missing_code")
class ErrorMissingCode(PetStore):
    def error_body(self, status: int, code: str, message: str) -> dict[str, Any]:
        return {k: v for k, v in super().error_body(status, code, message).items() if k != "code"}


@fault("error_status_mismatch")
class ErrorStatusMismatch(PetStore):
    def error_body(self, status: int, code: str, message: str) -> dict[str, Any]:
        body = super().error_body(status, code, message)
        return {**body, "status": 400} if status == 404 else body


@fault("error_message_null")
class ErrorMessageNull(PetStore):
    def error_body(self, status: int, code: str, message: str) -> dict[str, Any]:
        return {**super().error_body(status, code, message), "message": None}


# -- the Content-Type ------------------------------------------------------------------------------------


@fault("list_text_plain")
class ListTextPlain(PetStore):
    def media_type(self, body: Any, status: int) -> str:
        # Every 200 with an array: the list of GET /pets, and that of GET /store/orders.
        return "text/plain" if status == 200 and isinstance(body, list) else super().media_type(body, status)


@fault("error_html_content_type")
class ErrorHtmlContentType(PetStore):
    def media_type(self, body: Any, status: int) -> str:
        return "text/html" if status >= 400 else super().media_type(body, status)


# -- GET /store/orders -------------------------------------------------------------------------------------


@fault("orders_404")
class Orders404(PetStore):
    async def list_orders(self, request: Request) -> Response:
        return self.error(404, "not_found", "no such operation")


@fault("orders_500")
class Orders500(PetStore):
    async def list_orders(self, request: Request) -> Response:
        raise RuntimeError("orders are broken")


@fault("orders_500_first")
class Orders500First(PetStore):
    warm = False  # set once the first authorised GET /store/orders since start-up has failed (a cold start)

    async def list_orders(self, request: Request) -> Response:
        if not self.warm:
            self.warm = True
            # What a server layer answers for an application that crashed (no Error body): a client cannot
            # tell it from a gateway's page (``orders_500_first_error_body`` is the service's own).
            return Response(b"Internal Server Error", 500, media_type="text/plain")
        return await super().list_orders(request)


@fault("orders_500_first_error_body")
class Orders500FirstErrorBody(PetStore):
    """The cold start of ``orders_500_first`` answered in the service's own Error body: no gateway writes that
    body (judging/flicker.py), so the 5xx is the service's even though the same request does not get it again."""

    warm = False

    async def list_orders(self, request: Request) -> Response:
        if not self.warm:
            self.warm = True
            return self.error(500, "internal", "orders are not warmed up yet")
        return await super().list_orders(request)
