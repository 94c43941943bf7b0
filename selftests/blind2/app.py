"""The Pet Store as a Starlette application over a store backend.

``build_app(flags, key, store)`` returns the ASGI app. The compliant behaviour
is the default; each flag of a catalog entry turns one deviation on (a fault or
a compliant choice). Served by uvicorn (see ``server.py``).
"""

from __future__ import annotations

import hmac
import itertools
import json
import re
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from store import STATUSES, Pet

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
DEPRECATION = "@1735689600"  # deprecated since 2025-01-01T00:00:00Z
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
DEPRECATION_VALUES = {
    "deprecation_http_date": "Wed, 01 Jan 2025 00:00:00 GMT",
    "deprecation_boolean": "true",
    "sunset_before_deprecation": "@1924992000",  # 2031-01-01, after the Sunset
    "deprecation_milliseconds": "@1735689600000",  # Date.now(): milliseconds, year 56970
}
SUNSET_VALUES = {
    "sunset_day_month_swapped": "Sun, 12 May 2030 00:00:00 GMT",
    "sunset_iso": "2030-12-05T00:00:00Z",
    "sunset_utc": "Thu, 05 Dec 2030 00:00:00 UTC",  # copied from an RFC 9745 example
}
REALM = 'realm="petstore"'
TOKEN_RE = re.compile(r"([!#$%&'*+.^_`|~0-9A-Za-z-]+) +([^ ]+) *")


class Reply(Exception):
    """Raised to answer at once with a prepared response."""

    def __init__(self, response: Response) -> None:
        self.response = response


class PetStore:
    def __init__(self, flags: frozenset[str], key: str, store: Any) -> None:
        self.flags = flags
        self.key = key
        self.store = store
        self.requests = itertools.count(1)
        self.names_seen: set[str] = set()
        self.presence_only = {
            ("getPet", "read_any_token" in flags),
            ("createPet", "create_any_token" in flags),
        }

    def on(self, flag: str) -> bool:
        return flag in self.flags

    # errors ---------------------------------------------------------------
    def error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        body: dict[str, Any] = {"code": code, "message": message, "status": status}
        if status == 404 and self.on("read_404_detail"):
            body = {"detail": "Not Found"}
        if status == 404 and self.on("error_status_string"):
            body["status"] = "404"
        if status == 400 and self.on("error_status_mismatch_400"):
            body["status"] = 422
        if status == 401 and self.on("error_missing_message_401"):
            del body["message"]
        if status == 400 and self.on("problem_json_400"):
            problem = {"type": "about:blank", "title": "Bad Request", "status": 400}
            problem["detail"] = message
            return JSONResponse(problem, 400, headers=headers, media_type="application/problem+json")
        return JSONResponse(body, status, headers=headers)

    def bad_request(self, message: str, missing: str | None = None) -> Reply:
        if missing and self.on("validation_422"):
            detail = [{"loc": ["body", missing], "msg": "field required", "type": "missing"}]
            return Reply(JSONResponse({"detail": detail}, 422))
        return Reply(self.error(400, "invalid_request", message))

    def bad_query(self, message: str) -> Reply:
        if self.on("query_422"):
            return Reply(self.error(422, "invalid_query", message))
        return Reply(self.error(400, "invalid_query", message))

    # authentication -------------------------------------------------------
    def challenge(self, error: bool) -> dict[str, str]:
        if self.on("no_www_authenticate"):
            return {}
        if self.on("www_authenticate_basic"):
            return {"WWW-Authenticate": f"Basic {REALM}"}
        if self.on("www_authenticate_bare"):
            return {"WWW-Authenticate": "Bearer"}
        value = f"Bearer {REALM}"
        if error:
            value += ', error="invalid_token", error_description="The API key is not valid"'
        return {"WWW-Authenticate": value}

    def authenticate(self, request: Request, operation: str) -> None:
        if operation == "listPets" and self.on("list_unprotected"):
            return
        if operation == "orders" and self.on("orders_unprotected"):
            return
        header = request.headers.get("authorization")
        if operation == "orders" and self.on("orders_401_plain"):
            # the store area has its own little auth check
            if header is None or header.split(" ", 1)[-1] != self.key:
                raise Reply(PlainTextResponse("Unauthorized", 401, headers=self.challenge(False)))
            return
        if header is None:
            raise Reply(self.error(401, "unauthorized", "API key missing", self.challenge(False)))
        match = TOKEN_RE.fullmatch(header)
        ok = False
        if match:
            scheme, token = match.groups()
            strict = self.on("scheme_case_sensitive")
            scheme_ok = scheme == "Bearer" if strict else scheme.lower() == "bearer"
            if self.on("key_prefix_accepted"):
                token_ok = self.key.startswith(token)
            elif (operation, True) in self.presence_only:
                token_ok = True  # the operation only checks that a token is there
            elif self.on("key_case_insensitive"):
                token_ok = token.lower() == self.key.lower()  # the header was lower-cased
            else:
                token_ok = hmac.compare_digest(token.encode(), self.key.encode())
            ok = scheme_ok and token_ok
        elif self.on("key_prefix_accepted") and header.strip().lower() == "bearer":
            ok = True  # "Bearer" with an empty token: "" is a prefix of every key
        if ok:
            return
        if self.on("invalid_key_403"):
            raise Reply(self.error(403, "forbidden", "API key not valid"))
        raise Reply(self.error(401, "unauthorized", "API key not valid", self.challenge(True)))

    # rendering ------------------------------------------------------------
    def render(self, pet: Pet, in_list: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": pet["id"], "name": pet["name"]}
        if self.on("name_empty_null") and not pet["name"]:
            out["name"] = None
        if pet["categoryId"] or not self.on("category_zero_dropped"):
            out["categoryId"] = pet["categoryId"]
        if pet["status"] is not None:
            out["status"] = pet["status"]
        elif self.on("status_null_when_omitted"):
            out["status"] = None
        if self.on("extra_fields"):
            out["createdAt"] = (pet.get("createdAt") or "").replace(" ", "T") + "Z"
            out["tags"] = []
            out["category"] = {"id": pet["categoryId"]}
        if in_list:
            if self.on("list_status_capitalized") and out.get("status"):
                out["status"] = out["status"].capitalize()
            if self.on("list_omits_categoryid"):
                out.pop("categoryId", None)
            if self.on("list_id_string"):
                out["id"] = str(out["id"])
            if self.on("list_truncates_long_names") and len(out["name"] or "") > 64:
                out["name"] = out["name"][:63] + "\u2026"
        return out

    def json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        return JSONResponse(body, status, headers=headers)

    def deprecation_headers(self) -> dict[str, str]:
        deprecation = DEPRECATION
        sunset = SUNSET
        for flag, value in DEPRECATION_VALUES.items():
            if self.on(flag):
                deprecation = value
        for flag, value in SUNSET_VALUES.items():
            if self.on(flag):
                sunset = value
        return {"Deprecation": deprecation, "Sunset": sunset}

    # operations -------------------------------------------------------------
    def list_pets(self, request: Request) -> Response:
        params = request.query_params
        limit: int | None = 20
        if "limit" in params:
            raw = params["limit"]
            if not re.fullmatch(r"[0-9]{1,4}", raw):
                raise self.bad_query("limit must be an integer from 1 to 100")
            if self.on("limit_string_compare") and not "1" <= raw <= "100":
                raise self.bad_query("limit must be an integer from 1 to 100")
            limit = int(raw)
            top = 99 if self.on("limit_100_refused") else 100
            if not 1 <= limit <= top:
                raise self.bad_query(f"limit must be an integer from 1 to {top}")
        elif self.on("default_limit_all"):
            limit = None
        elif self.on("default_limit_100"):
            limit = 100
        status = params.get("status")
        if status is not None and status not in STATUSES:
            raise self.bad_query("status must be one of available, pending, sold")
        if status == "sold" and self.on("status_filter_sold_ignored"):
            status = None  # the filter table of the query builder lacks "sold"
        if status is not None and self.on("limit_ignored_with_status"):
            limit = None
        if "limit" in params and self.on("status_ignored_with_limit"):
            status = None  # the paged query path forgets the WHERE clause
        if limit is not None:
            if self.on("page_cap_50"):
                limit = min(limit, 50)
            if self.on("limit_plus_one"):
                limit += 1  # one more row fetched to see if a next page exists
        after = None
        if self.on("next_link") and "after" in params:
            if not re.fullmatch(r"-?[0-9]{1,19}", params["after"]):
                raise self.bad_query("after must be the id of an animal")
            after = int(params["after"])
        pets = self.store.list(limit, status, after)
        if self.on("next_link"):
            headers = {"X-Total-Count": str(self.store.count(status))}
            if limit is not None and len(pets) == limit and pets:
                query = f"limit={limit}&after={pets[-1]['id']}"
                if status:
                    query += f"&status={status}"
                headers["Link"] = f'</v1/pets?{query}>; rel="next"'
            return self.json([self.render(p, in_list=True) for p in pets], headers=headers)
        headers = self.deprecation_headers() if self.on("deprecation_on_list") else None
        return self.json([self.render(p, in_list=True) for p in pets], headers=headers)

    async def create_pet(self, request: Request) -> Response:
        raw = await request.body()
        content_type = request.headers.get("content-type", "")
        if self.on("json_charset_415") and content_type != "application/json":
            return self.error(415, "unsupported_media_type", "send application/json")
        if not raw.strip():
            raise self.bad_request("a JSON body is required")
        if self.on("malformed_json_500"):
            body = json.loads(raw)
        else:
            try:
                body = json.loads(raw)
            except ValueError:
                raise self.bad_request("the body is not valid JSON") from None
        if not isinstance(body, dict) and not self.on("body_array_500"):
            raise self.bad_request("the body must be a JSON object")
        name = body.get("name")
        category = body.get("categoryId")
        if "name" not in body:
            raise self.bad_request("name is required", missing="name")
        if not isinstance(name, str):
            raise self.bad_request("name must be a string")
        if "categoryId" not in body and not self.on("missing_category_accepted"):
            raise self.bad_request("categoryId is required", missing="categoryId")
        coerce = self.on("category_string_coerced")
        if coerce and isinstance(category, str) and re.fullmatch(r"-?[0-9]+", category):
            category = int(category)
        if isinstance(category, bool) and self.on("category_bool_accepted"):
            category = int(category)
        if category is not None or not self.on("missing_category_accepted"):
            if not isinstance(category, int) or isinstance(category, bool):
                raise self.bad_request("categoryId must be an int64 integer")
            if not INT64_MIN <= category <= INT64_MAX and not self.on("category_beyond_int64_500"):
                raise self.bad_request("categoryId must be an int64 integer")
        status = body.get("status")
        if "status" in body:
            allowed = STATUSES
            if self.on("status_pending_refused"):
                allowed = ("available", "pendng", "sold")
            if status not in allowed and not self.on("invalid_status_accepted"):
                raise self.bad_request("status must be one of available, pending, sold")
        elif self.on("default_available"):
            status = "available"
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise self.bad_request("name must be valid Unicode") from None
        self.name_rules(name)
        if self.on("category_positive") and category < 1:
            raise self.bad_request("categoryId must be a positive category identifier")
        if self.on("category_catalog") and not 1 <= category <= 1000:
            raise Reply(self.error(400, "unknown_category", f"no category {category}"))
        # storage quirks of some teams
        if self.on("name_trimmed"):
            name = name.strip()
        if self.on("name_truncated_255"):
            name = name[:255]
        if self.on("name_astral_question_mark"):
            name = "".join("?" if ord(ch) > 0xFFFF else ch for ch in name)
        if self.on("name_nul_500") and "\x00" in name:
            raise RuntimeError("embedded NUL in C string")
        if self.on("name_huge_500") and len(name) > 65535:
            raise RuntimeError("row size too large")
        if self.on("category_int32_wrap") and category is not None:
            category = (category + 2**31) % 2**32 - 2**31
        pet = self.store.add(name, category, status)
        self.names_seen.add(name)
        out = self.render(pet)
        if self.on("create_no_id"):
            out.pop("id")
        code = 200 if self.on("create_200") else 201
        return self.json(out, code, headers={"Location": f"/v1/pets/{pet['id']}"})

    def name_rules(self, name: str) -> None:
        if self.on("name_rules"):
            if not 1 <= len(name) <= 200:
                raise self.bad_request("name must have 1 to 200 characters")
            if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in name):
                raise self.bad_request("name must not contain control characters")
        if self.on("unique_names") and name in self.names_seen:
            raise Reply(self.error(400, "duplicate_name", f"an animal named {name!r} exists"))

    def get_pet(self, request: Request, raw_id: str) -> Response:
        headers = self.deprecation_headers()
        if not re.fullmatch(r"-?[0-9]{1,19}", raw_id):
            if self.on("petid_text_400"):
                return self.error(400, "invalid_pet_id", "petId must be an int64", headers)
            return self.error(404, "not_found", f"no animal with id {raw_id}", headers)
        pet_id = int(raw_id)
        if self.on("read_int32_500") and pet_id > 2**31 - 1:
            raise OverflowError("petId does not fit in a 32-bit integer")
        pet = None
        if INT64_MIN <= pet_id <= INT64_MAX:
            if self.on("read_first_page_only"):
                pet = next((p for p in self.store.list(100, None) if p["id"] == pet_id), None)
            else:
                pet = self.store.get(pet_id)
        if pet is None:
            return self.error(404, "not_found", f"no animal with id {pet_id}", headers)
        out = self.render(pet)
        if self.on("read_category_string") and "categoryId" in out:
            out["categoryId"] = str(out["categoryId"])
        return self.json(out, headers=headers)

    def orders(self, request: Request) -> Response:
        if self.on("orders_object"):
            return self.json({"orders": [], "total": 0})
        return self.json([])

    # dispatch -------------------------------------------------------------
    async def dispatch(self, request: Request) -> Response:
        try:
            return await self._dispatch(request)
        except Reply as reply:
            return reply.response

    def allow(self, allowed: str, method: str) -> None:
        methods = allowed.split(", ")
        if method not in methods:
            headers = {} if self.on("method_405_no_allow") else {"Allow": allowed}
            raise Reply(self.error(405, "method_not_allowed", f"{method} is not allowed", headers))

    async def _dispatch(self, request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        path = request.url.path
        if self.on("rate_limited") and next(self.requests) % 50 == 0:
            return self.error(429, "rate_limited", "too many requests", {"Retry-After": "1"})
        if path in ("/v1/pets", "/v1/pets/"):
            if method == "POST":
                if self.on("validate_before_auth"):
                    await self.create_pet_validation_only(request)
                self.authenticate(request, "createPet")
                return await self.create_pet(request)
            self.authenticate(request, "listPets")
            self.allow("GET, HEAD, POST", method)
            return self.list_pets(request)
        match = re.fullmatch(r"/v1/pets/([^/]+)", path)
        if match:
            if self.on("notfound_before_auth") and method == "GET":
                response = self.get_pet(request, match.group(1))
                if response.status_code == 404:
                    return response
            self.authenticate(request, "getPet")
            self.allow("GET, HEAD", method)
            return self.get_pet(request, match.group(1))
        if path == "/v1/store/orders" and not self.on("orders_missing"):
            self.authenticate(request, "orders")
            self.allow("GET, HEAD", method)
            return self.orders(request)
        self.authenticate(request, "unknown")
        return self.error(404, "not_found", f"no resource at {path}")

    async def create_pet_validation_only(self, request: Request) -> None:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            raise self.bad_request("the body is not valid JSON") from None
        if not isinstance(body, dict) or "name" not in body or "categoryId" not in body:
            raise self.bad_request("name and categoryId are required")


def build_app(flags: frozenset[str], key: str, store: Any) -> Starlette:
    service = PetStore(flags, key, store)

    async def endpoint(request: Request) -> Response:
        return await service.dispatch(request)

    async def read_int_route(request: Request) -> Response:
        # the typed route: "/pets/{petId:int}" only matches digits
        return await service.dispatch(request)

    async def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("Not Found", 404)

    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    if "read_negative_plain_404" in flags:
        routes = [
            Route("/v1/pets", endpoint, methods=methods),
            Route("/v1/pets/{petId:int}", read_int_route, methods=methods),
            Route("/v1/store/orders", endpoint, methods=methods),
        ]
        return Starlette(routes=routes, exception_handlers={404: not_found})
    routes = [Route("/{path:path}", endpoint, methods=methods)]
    return Starlette(routes=routes)
