"""The Pet Store as plain Django views (no REST framework), served by waitress.

Choices Django makes where the document is silent, kept as a vendor would ship them:

- the URLconf's ``<int64:pet_id>``: a path converter the vendor registers for a signed int64
  (Django's own ``<int:...>`` takes no minus sign, which would make ``/pets/-1`` no route); any
  other petId is no route, and Django answers 404 *before* the view (and so before the key,
  checked by a view decorator, the Django way);
- ``require_http_methods``: 405 with ``Allow``; the vendor's middleware gives Django's empty 405
  the Error body;
- the body is read as JSON whatever its ``Content-Type`` (Django does not look at it for
  ``request.body``); over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB) Django raises RequestDataTooBig,
  a SuspiciousOperation: 400 through ``handler400``;
- ``DEBUG = False``, ``handler400``/``handler404``/``handler500`` answer the Error body (§7); the
  ``html_404`` fault leaves ``handler404`` out: Django's own HTML "Not Found" page.
- Lists are newest first (§4.4: the order is not shown).
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import types
from collections.abc import Callable
from functools import wraps
from typing import Any

import django
import waitress
from django.conf import settings
from domain import (
    INT64_MAX,
    INT64_MIN,
    PET_ID,
    STATUSES,
    MemoryStore,
    bearer_problem,
    deprecation,
    error_body,
    limit_value,
    new_pet,
    new_pet_problem,
    unauthorized,
)

SINCE = 1730419200  # deprecated since 2024-11-01T00:00:00Z
View = Callable[..., Any]


class Int64Converter:
    regex = PET_ID

    def to_python(self, value: str) -> int:
        number = int(value)
        if not INT64_MIN <= number <= INT64_MAX:
            raise ValueError("beyond int64")  # Django: no match, the next pattern or 404
        return number

    def to_url(self, value: int) -> str:
        return str(value)


def build_urlconf(flags: frozenset[str], key: str, store: MemoryStore) -> types.ModuleType:
    from django.http import HttpRequest, JsonResponse
    from django.urls import path, register_converter
    from django.views.decorators.http import require_http_methods

    def problem(status: int, code: str, message: str, **headers: str) -> JsonResponse:
        return JsonResponse(error_body(status, code, message), status=status, headers=headers)

    def bearer(view: View) -> View:
        @wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            trouble = bearer_problem(request.headers.get("Authorization"), key)
            if trouble:
                body, headers = unauthorized(trouble)
                return JsonResponse(body, status=401, headers=headers)
            return view(request, *args, **kwargs)

        return checked

    @require_http_methods(["GET", "POST"])
    @bearer
    def pets(request: HttpRequest) -> JsonResponse:
        if request.method == "POST":
            try:
                body = json.loads(request.body)
            except (ValueError, UnicodeDecodeError):
                return problem(400, "invalid_json", "the body is not JSON")
            trouble = new_pet_problem(body)
            if trouble:
                return problem(400, "invalid_pet", trouble)
            return JsonResponse(store.add(new_pet(body)), status=201)
        limit = limit_value(request.GET.get("limit"))
        status = request.GET.get("status")
        if limit is None:
            return problem(400, "invalid_query", "limit must be an integer from 1 to 100")
        if status is not None and status not in STATUSES:
            return problem(400, "invalid_query", "status must be one of available, pending, sold")
        return JsonResponse(store.page(limit, status, newest_first=True), safe=False)

    @require_http_methods(["GET"])
    @bearer
    def pet(request: HttpRequest, pet_id: int) -> JsonResponse:
        found = store.get(pet_id)
        if found is None:
            return problem(404, "not_found", "no animal with this id", **deprecation(SINCE))
        return JsonResponse(found, headers=deprecation(SINCE))

    @require_http_methods(["GET"])
    @bearer
    def orders(request: HttpRequest) -> JsonResponse:
        return JsonResponse([], safe=False)

    register_converter(Int64Converter, "int64")
    urls = types.ModuleType("petstore_urls")
    urls.urlpatterns = [  # type: ignore[attr-defined]
        path("v1/pets", pets),
        path("v1/pets/<int64:pet_id>", pet),
        path("v1/store/orders", orders),
    ]

    def bad_request(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
        return problem(400, "bad_request", "the request could not be read")

    def not_found(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
        return problem(404, "not_found", "no such resource")

    def server_error(request: HttpRequest) -> JsonResponse:
        return problem(500, "internal_error", "internal error")

    urls.handler400 = bad_request  # type: ignore[attr-defined]
    urls.handler500 = server_error  # type: ignore[attr-defined]
    if "html_404" not in flags:
        urls.handler404 = not_found  # type: ignore[attr-defined]
    return urls


class JsonMethodNotAllowed:
    """Django's HttpResponseNotAllowed is an empty text/html 405: give it the Error body (§7), keep Allow."""

    def __init__(self, get_response: View) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        from django.http import JsonResponse

        response = self.get_response(request)
        if response.status_code == 405 and not response.get("Content-Type", "").startswith("application/json"):
            body = error_body(405, "method_not_allowed", f"{request.method} is not allowed here")
            return JsonResponse(body, status=405, headers={"Allow": response["Allow"]})
        return response


def build_app(flags: frozenset[str], key: str, store: MemoryStore) -> Any:
    sys.modules[__name__].JsonMethodNotAllowed = JsonMethodNotAllowed  # importable by its dotted path
    settings.configure(
        DEBUG=False,
        SECRET_KEY="blind3-not-a-secret",
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        ROOT_URLCONF="petstore_urls",
        MIDDLEWARE=["django.middleware.common.CommonMiddleware", f"{__name__}.JsonMethodNotAllowed"],
        INSTALLED_APPS=[],
        TEMPLATES=[],
        USE_TZ=True,
        LOGGING_CONFIG=None,
    )
    django.setup()
    # Without LOGGING the "Not Found: /v1/pets/abc" warnings would reach logging's last-resort stderr handler.
    logging.getLogger("django").addHandler(logging.NullHandler())
    logging.getLogger("django").propagate = False
    sys.modules["petstore_urls"] = build_urlconf(flags, key, store)
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()


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
