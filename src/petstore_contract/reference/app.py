"""The embedded reference implementation of the Pet Store interface (a Starlette app).

``build_app(api_key)`` gives a conformant server.  ``variant`` picks another conformant
set of choices where the document is silent (see ``variants.py``); ``fault`` injects one
named defect from ``faults.py``.  Every ``self.has(...)`` below is the one place where a
fault changes behaviour.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import json
import math
import random
import re
import time
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from petstore_contract.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.reference.faults import FAULTS
from petstore_contract.reference.variants import REFERENCE, Variant

MAX_BODY_BYTES = 1_000_000
# RFC 9745: an sf-date (2026-01-01T00:00:00Z); RFC 8594: an IMF-fixdate (§9.3: 5 December 2030).
DEPRECATION = "@1767225600"
SUNSET = "Thu, 05 Dec 2030 00:00:00 GMT"
_INTEGER = re.compile(r"-?[0-9]{1,20}")
_ABSENT = object()


class BadRequest(Exception):
    """A request to reject with a 4xx Error: 400 unless a variant answers 422 for query values."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class PetStore:
    def __init__(self, api_key: str, variant: Variant = REFERENCE, fault: str | None = None) -> None:
        if not api_key:
            raise ValueError("the reference server needs a non-empty API key")
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}")
        self.api_key = api_key
        self.variant = variant
        self.fault = fault
        # Insertion order is creation order (an id handed out again keeps its first place).
        self.pets: dict[int, dict[str, Any]] = {}
        self.next_id = variant.first_id
        self.allocated = 0  # ids handed out so far
        self.request_count = 0  # every HTTP request (RequestCounter)
        self.write_count = 0
        self.routed = 0  # requests that reached an operation: what throttling and the writer count
        self.background_added = 0
        self.warmed: set[str] = set()  # operations served since start-up (the cold-start fault)
        self.tokens = max(variant.rate_limit_per_second, 1.0)  # the rate limit's bucket starts full
        self.refilled = time.monotonic()
        self.random = random.Random(20301205)  # deterministic "random" statuses and categories
        for n in range(1, variant.preload + 1):
            self.store_pet({"name": f"preloaded-{n}", "categoryId": (n * 37) % 101, "status": STATUSES[n % 3]})

    def has(self, fault: str) -> bool:
        return self.fault == fault

    # -- plumbing -------------------------------------------------------------------------

    def json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        media = "application/json"
        if status >= 400 and self.has("error_html_content_type"):
            media = "text/html"
        if status == 200 and isinstance(body, (list, dict)) and self.has("list_text_plain") and isinstance(body, list):
            media = "text/plain"
        all_headers = {**self.variant.extra_headers, **(headers or {})}
        content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
        return Response(content, status_code=status, media_type=media, headers=all_headers)

    def error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        if self.variant.error_code_style == "upper":
            code = code.upper()
        body: dict[str, Any] = {"code": code, "message": message, "status": status}
        if self.has("error_status_string"):
            body["status"] = str(status)
        if self.has("error_missing_code"):
            del body["code"]
        if self.has("error_status_mismatch") and status == 404:
            body["status"] = 400
        if self.has("error_message_null"):
            body["message"] = None
        return self.json(body, status, headers)

    def unauthorized(self, presented: bool, operation: str = "") -> Response:
        challenge = self.variant.www_authenticate
        if presented and challenge == REFERENCE.www_authenticate:
            # RFC 6750 §3.1: error details only when a credential was presented.
            challenge += ', error="invalid_token"'
        if self.has("auth_basic_challenge"):
            challenge = 'Basic realm="petstore"'
        quiet = self.has("auth_no_challenge") or (operation == "orders" and self.has("auth_orders_no_challenge"))
        headers = {} if quiet else {"WWW-Authenticate": challenge}
        return self.error(401, "unauthorized", "missing or invalid API key", headers)

    def authorize(self, request: Request, operation: str) -> Response | None:
        header = request.headers.get("authorization")
        if self.variant.reject_every_key:
            return self.unauthorized(presented=header is not None, operation=operation)
        if self.has(f"auth_open_{operation}") and header is None:
            return None
        if self.has("auth_accepts_query_key") and request.query_params.get("access_token") == self.api_key:
            return None
        if self.has("auth_accepts_api_key_param") and request.query_params.get("api_key") == self.api_key:
            return None
        if self.has("auth_accepts_x_api_key") and header is None and request.headers.get("x-api-key") == self.api_key:
            return None
        if header is None:
            if self.has("auth_missing_403"):
                return self.error(403, "forbidden", "no API key")
            return self.unauthorized(presented=False, operation=operation)
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if self.accepted(scheme, token, header, operation):
            refused = {"read": "auth_read_rejects_valid_key", "orders": "auth_orders_rejects_valid_key"}
            if operation in refused and self.has(refused[operation]):
                return self.unauthorized(presented=True, operation=operation)
            return None
        if self.has("auth_403"):
            return self.error(403, "forbidden", "key not accepted")
        return self.unauthorized(presented=True, operation=operation)

    def accepted(self, scheme: str, token: str, header: str, operation: str = "") -> bool:
        key = self.api_key
        if self.has("auth_accepts_bare_key") and hmac.compare_digest(header.strip(), key):
            return True
        if self.has("auth_accepts_basic") and scheme.lower() == "basic" and token:
            return True
        if self.has("auth_any_scheme") and token and hmac.compare_digest(token.encode(), key.encode()):
            return True
        scheme_ok = scheme == "Bearer" if self.has("auth_case_sensitive_scheme") else scheme.lower() == "bearer"
        if self.has("auth_scheme_by_order"):
            scheme_ok = scheme.lower() <= "bearer"  # found by mutation testing: Basic, ApiKey, Bear pass
        if not scheme_ok:
            return False
        if self.has("auth_empty_token") and token == "":
            return True
        if token and (self.has("auth_any_key") or (operation == "orders" and self.has("auth_orders_any_token"))):
            return True
        if self.has("auth_key_prefix") and token and key.startswith(token):
            return True
        if self.has("auth_key_case_insensitive") and token.lower() == key.lower():
            return True
        if self.has("auth_key_extra_char") and len(token) == len(key) + 1 and token.startswith(key):
            return True
        return hmac.compare_digest(token.encode(), key.encode())

    # -- pets -----------------------------------------------------------------------------

    def present(self, pet: dict[str, Any], *, listed: bool = False) -> dict[str, Any]:
        out = dict(pet)
        if self.variant.extra_fields:
            out["tags"] = []
            out["createdBy"] = "reference"
        if listed:
            if self.has("list_item_id_string"):
                out["id"] = str(out["id"])
            if self.has("list_item_status_uppercase") and "status" in out:
                out["status"] = out["status"].upper()
            if self.has("list_item_missing_category"):
                out.pop("categoryId", None)
        return out

    def allocate_id(self) -> int:
        if self.has("create_id_reused"):
            return len(self.pets) % 3 + 1
        count = self.allocated
        self.allocated += 1
        if self.has("create_ids_repeat_after_100") and count >= 100:
            return self.variant.first_id + (count % 100) * self.variant.id_step
        new_id = self.next_id
        while new_id in self.pets:  # taken by a client-chosen id (fault create_honours_client_id)
            new_id += self.variant.id_step
        self.next_id = new_id + self.variant.id_step
        if self.has("create_id_beyond_int64"):
            return new_id + 2**63
        return new_id

    def store_pet(self, fields: dict[str, Any], pet_id: int | None = None) -> dict[str, Any]:
        pet = {"id": self.allocate_id() if pet_id is None else pet_id, **fields}
        self.pets[pet["id"]] = pet
        return pet

    def add_background_pet(self) -> None:
        """Another client's write: one animal with a random status."""
        self.background_added += 1
        n = self.background_added
        status = self.random.choice(STATUSES)
        self.store_pet({"name": f"background-{n}", "categoryId": self.random.randrange(0, 1000), "status": status})

    # -- GET /pets --------------------------------------------------------------------------

    def parse_limit(self, raw: str | None) -> int:
        if raw is None:
            return 50 if self.has("list_default_50") else 5 if self.has("list_default_5") else 20
        if not _INTEGER.fullmatch(raw):
            if self.has("list_500_on_non_integer_limit"):
                raise RuntimeError("limit is not an integer")
            if self.variant.out_of_range == "clamp":
                return 20
            raise BadRequest("limit must be an integer between 1 and 100", self.variant.invalid_query_status)
        value = int(raw)
        if value < 0 and self.has("list_500_on_negative_limit"):
            raise RuntimeError("negative limit")
        if value == 0 and self.has("list_zero_limit_returns_all"):
            return len(self.pets) + 1
        low = 2 if self.has("list_rejects_limit_1") else 1
        high = 1000 if self.has("list_no_maximum") else 99 if self.has("list_rejects_limit_100") else 100
        if low <= value <= high:
            return value
        if self.variant.out_of_range == "clamp":
            return min(max(value, 1), 100)
        raise BadRequest(f"limit must be between 1 and 100, got {value}", self.variant.invalid_query_status)

    def parse_status_filter(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        if raw in STATUSES:
            return raw
        if self.has("list_500_on_unknown_status"):
            raise RuntimeError("unknown status")
        if self.variant.out_of_range == "clamp":
            return None
        raise BadRequest(f"status must be one of {', '.join(STATUSES)}", self.variant.invalid_query_status)

    def check_query(self, request: Request) -> tuple[int, str | None]:
        return (
            self.parse_limit(request.query_params.get("limit")),
            self.parse_status_filter(request.query_params.get("status")),
        )

    async def list_pets(self, request: Request) -> Response:
        limit, wanted = self.check_query(request)
        if wanted is not None and limit < 10 and self.has("list_500_on_filtered_small_page"):
            raise RuntimeError("small filtered page")
        if self.has("list_ignores_status") or (self.has("list_ignores_status_sold") and wanted == "sold"):
            wanted = None
        if self.has("list_ignores_status_without_limit") and "limit" not in request.query_params:
            wanted = None
        if self.has("list_ignores_limit"):
            limit = 20
        if self.has("list_status_ignores_limit") and wanted is not None:
            limit = 100
        pets = sorted(self.pets.values(), key=lambda p: p["id"], reverse=self.variant.newest_first)
        if self.has("list_hides_newest") and self.pets:
            newest = max(self.pets)
            pets = [p for p in pets if p["id"] != newest]
        if self.has("list_forgets_after_100"):
            forgotten = set(list(self.pets)[100:])
            pets = [p for p in pets if p["id"] not in forgotten]
        leaked = next(reversed(self.pets)) if self.has("list_filter_leaks_over_100") and len(self.pets) > 100 else None
        matching = [p for p in pets if wanted is None or p.get("status") == wanted or p["id"] == leaked]
        unbounded = self.has("list_no_maximum") or self.has("list_zero_limit_returns_all")
        size = limit if unbounded else min(limit, self.variant.page_cap)
        size += 1 if self.has("list_limit_off_by_one") else 0
        if self.has("list_cap_inconsistent") and limit < 10:
            size = min(size, 3)
        chosen = matching[:size]
        if self.has("list_filter_after_cut"):
            chosen = [p for p in pets[:size] if wanted is None or p.get("status") == wanted]
        if self.has("list_short_by_one") and len(matching) >= size:
            chosen = chosen[: size - 1]
        if self.has("list_empty_past_store") and limit > len(matching):
            chosen = []
        if self.has("list_repeats_animal") and len(matching) > size >= 2:
            chosen = [*chosen[:-1], chosen[0]]
        page = [self.present(p, listed=True) for p in chosen]
        headers = {"X-Total-Count": str(len(matching))} if self.variant.paging_headers else {}
        if self.has("deprecation_on_list"):
            headers |= {"Deprecation": DEPRECATION, "Sunset": SUNSET}
        if self.variant.paging_headers and len(matching) > size:
            headers["Link"] = f'<{request.url.path}?limit={limit}&cursor={size}>; rel="next"'
        if self.has("list_wraps_array"):
            return self.json({"items": page}, 200, headers)
        return self.json(page, 200, headers)

    # -- POST /pets -------------------------------------------------------------------------

    async def read_body(self, request: Request) -> Any:
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise BadRequest("request body too large")
        if not raw.strip():
            if self.has("create_500_on_empty_body"):
                raise RuntimeError("empty body")
            raise BadRequest("request body is empty")
        try:
            return json.loads(raw, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as exc:
            if self.has("create_500_on_invalid_json"):
                raise RuntimeError("invalid JSON") from exc
            raise BadRequest("request body is not valid JSON") from exc

    def validate_new_pet(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            if self.has("create_500_on_non_object"):
                raise RuntimeError("body is not an object")
            raise BadRequest("request body must be a JSON object")
        pet: dict[str, Any] = {}
        pet["name"] = self.validate_name(body)
        pet["categoryId"] = self.validate_category(body)
        status = self.validate_status(body)
        if status is not _ABSENT:
            pet["status"] = status
        unknown = set(body) - {"name", "categoryId", "status"}
        if unknown and self.variant.reject_unknown_fields:
            raise BadRequest(f"unknown fields: {', '.join(sorted(unknown))}")
        return pet

    def validate_name(self, body: dict[str, Any]) -> str:
        name = self.validate_name_type(body)
        if self.variant.reject_angle_brackets and ("<" in name or ">" in name):
            raise BadRequest("name must not contain < or >")
        if self.variant.unique_names and any(p.get("name") == name for p in self.pets.values()):
            raise BadRequest("an animal with that name exists already")
        return name

    def validate_name_type(self, body: dict[str, Any]) -> str:
        if "name" not in body:
            if self.has("create_accepts_missing_name"):
                return "unnamed"
            raise BadRequest("name is required")
        name = body["name"]
        if not isinstance(name, str):
            if self.has("create_coerces_name") and name is not None:
                return json.dumps(name)
            raise BadRequest("name must be a string")
        if self.has("create_500_on_control_chars") and any(ord(c) < 0x20 for c in name):
            raise RuntimeError("control character in name")
        limit = self.variant.name_max_length
        if limit is not None and len(name) > limit:
            raise BadRequest(f"name must be at most {limit} characters")
        if self.variant.reject_blank_names and not name.strip():
            raise BadRequest("name must not be blank")
        return name

    def validate_category(self, body: dict[str, Any]) -> int:
        if "categoryId" not in body:
            if self.has("create_accepts_missing_category"):
                return 0
            raise BadRequest("categoryId is required")
        value = body["categoryId"]
        if isinstance(value, bool):
            if self.has("create_accepts_bool_category"):
                return int(value)
            raise BadRequest("categoryId must be an integer")
        if isinstance(value, str) and self.has("create_coerces_string_category") and _INTEGER.fullmatch(value):
            value = int(value)
        if isinstance(value, float) and self.has("create_accepts_float_category"):
            value = int(value)
        if not isinstance(value, int):
            raise BadRequest("categoryId must be an integer")
        if not INT64_MIN <= value <= INT64_MAX:
            raise BadRequest("categoryId must fit in 64 bits")
        if value < 0 and self.variant.positive_categories:
            raise BadRequest("categoryId must not be negative")
        if self.has("create_category_float_precision"):
            return int(float(value))
        return value

    def validate_status(self, body: dict[str, Any]) -> Any:
        if "status" not in body:
            if self.has("create_default_status_null"):
                return None
            if self.has("create_default_status_unknown"):
                return "new"
            return _ABSENT if self.variant.default_status is None else self.variant.default_status
        status = body["status"]
        if status is None:
            if self.has("create_accepts_null_status"):
                return None
            raise BadRequest("status must not be null")
        if status not in STATUSES:
            if self.has("create_accepts_unknown_status") and isinstance(status, str):
                return status
            if self.has("create_accepts_status_any_case") and isinstance(status, str) and status.lower() in STATUSES:
                return status.lower()
            raise BadRequest(f"status must be one of {', '.join(STATUSES)}")
        if status == "sold" and self.has("create_rejects_sold"):
            raise BadRequest("sold animals cannot be added")
        if self.has("create_ignores_status"):
            return "available"
        return status

    async def create_pet(self, request: Request) -> Response:
        body = await self.read_body(request)
        try:
            pet = self.validate_new_pet(body)
        except BadRequest:
            if (
                self.has("create_rejected_still_stored")
                and isinstance(body, dict)
                and isinstance(body.get("name"), str)
            ):
                self.store_pet(_salvage(body))
            raise
        if self.has("create_truncates_long_name"):
            pet["name"] = pet["name"][:50]
        if self.has("create_ascii_names"):
            pet["name"] = "".join(c if ord(c) < 128 else "?" for c in pet["name"])
        if self.has("create_strips_name"):
            pet["name"] = pet["name"].strip()
        if self.has("create_escapes_html_in_name"):
            pet["name"] = html.escape(pet["name"], quote=False)
        if self.has("create_category_int32"):
            pet["categoryId"] = (pet["categoryId"] + 2**31) % 2**32 - 2**31
        if self.has("create_negative_category_abs"):
            pet["categoryId"] = abs(pet["categoryId"])
        chosen = body.get("id") if self.has("create_honours_client_id") else None
        if not (_is_int64(chosen) and chosen not in self.pets):
            chosen = None
        pet = self.store_pet(pet, chosen)
        answer = self.present(pet)
        if self.has("store_latin1_names"):
            # The echo is built from the request; what is kept went through a Latin-1 column.
            pet["name"] = pet["name"].encode("latin-1", "replace").decode("latin-1")
        if self.has("create_id_string"):
            answer["id"] = str(answer["id"])
        status = 200 if self.has("create_returns_200") else 201
        base = request.scope.get("root_path", "")
        return self.json(answer, status, {"Location": f"{base}/pets/{pet['id']}"})

    # -- GET /pets/{petId} ------------------------------------------------------------------

    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        if self.has("read_no_deprecation"):
            return {}
        deprecation, sunset = DEPRECATION, SUNSET
        if self.has("read_deprecation_http_date"):
            deprecation = "Thu, 01 Jan 2026 00:00:00 GMT"
        if self.has("read_deprecation_boolean"):
            deprecation = "true"
        if self.has("read_deprecation_in_future"):
            deprecation = "@1893456000"  # 2030-01-01
        if self.has("read_sunset_wrong_day"):
            sunset = "Fri, 05 Dec 2031 00:00:00 GMT"
        if self.has("read_sunset_before_deprecation"):
            deprecation = "@1956528000"  # 2032-01-01, after the Sunset
        if self.has("read_sunset_not_http_date"):
            sunset = "2030-12-05"
        if self.has("read_sunset_day_before"):
            sunset = "Wed, 04 Dec 2030 23:00:00 GMT"  # midnight in Central Europe, one day early in GMT
        if self.has("read_deprecation_even_ids") and pet_id is not None and pet_id % 2 == 0:
            return {"Sunset": sunset}
        return {"Deprecation": deprecation, "Sunset": sunset}

    async def get_pet(self, request: Request) -> Response:
        raw = request.path_params["petId"]
        pet_id = int(raw) if _INTEGER.fullmatch(raw) else None
        headers = self.deprecation_headers(pet_id)
        if pet_id is not None and INT64_MIN <= pet_id < 0 and self.has("read_500_on_negative_id"):
            raise RuntimeError("negative id")
        if self.has("read_off_by_one") and pet_id is not None:
            pet_id += self.variant.id_step
        pet = self.pets.get(pet_id) if pet_id is not None else None
        if pet is not None and self.has("read_by_name_collision"):
            pet = next(p for p in sorted(self.pets.values(), key=lambda p: p["id"]) if p["name"] == pet["name"])
        if pet is not None and self.has("read_wrong_animal_after_50") and len(self.pets) > 50:
            ids = list(self.pets)
            at = ids.index(pet["id"])
            pet = self.pets[ids[at - 1 if at else 1]]
        if self.has("read_forgets_pets") or (
            self.has("read_404_for_newest") and pet_id == next(reversed(self.pets), None)
        ):
            pet = None
        if pet is None:
            if (
                self.has("read_invents_future_ids")
                and pet_id is not None
                and _is_int64(pet_id)
                and pet_id >= self.next_id
            ):
                invented = {"id": pet_id, "name": f"pet-{pet_id}", "categoryId": 1, "status": "available"}
                return self.json(invented, 200, headers)
            if self.has("read_unknown_placeholder"):
                return self.json({"id": pet_id or 0, "name": "unknown", "categoryId": 0}, 200, headers)
            if self.has("read_unknown_400"):
                return self.error(400, "bad_request", f"no animal with id {raw}", headers)
            return self.error(404, "not_found", "no animal with that id", headers)
        answer = self.present(pet)
        if self.has("read_drops_status"):
            answer.pop("status", None)
        if self.has("read_changes_name"):
            changed = answer["name"].upper()
            answer["name"] = changed if changed != answer["name"] else answer["name"] + "!"
        return self.json(answer, 200, headers)

    # -- GET /store/orders ------------------------------------------------------------------

    async def list_orders(self, request: Request) -> Response:
        if self.has("orders_404"):
            return self.error(404, "not_found", "no such operation")
        if self.has("orders_500"):
            raise RuntimeError("orders are broken")
        if self.has("orders_500_first") and "orders" not in self.warmed:
            self.warmed.add("orders")
            raise RuntimeError("orders are not warmed up yet")
        if self.variant.orders_need_query and not request.query_params.get("customerId"):
            raise BadRequest("the customerId query parameter is required")
        return self.json([])

    # -- dispatch ---------------------------------------------------------------------------

    def endpoint(self, operations: dict[str, tuple[str, Any]]) -> Any:
        async def handle(request: Request) -> Response:
            operation, handler = operations[request.method if request.method != "HEAD" else "GET"]
            wait = self.over_rate_limit()
            if wait:  # a gateway in front: the request never reaches the service, nor its counts
                return self.error(429, "too_many_requests", "rate limit exceeded", {"Retry-After": str(wait)})
            self.routed += 1
            if self.variant.throttle_every and self.routed % self.variant.throttle_every == 0:
                # Like a gateway: before authentication, and the request is not processed.
                return self.error(429, "too_many_requests", "slow down", {"Retry-After": "1"})
            if self.variant.background_writer and self.routed % self.variant.background_every == 0:
                self.add_background_pet()
            try:
                if "authorization" not in request.headers:
                    await self.validate_before_auth(request, operation)
                denied = self.authorize(request, operation)
                if denied is not None:
                    return denied
                answer: Response = await handler(request)
                return answer
            except BadRequest as exc:
                code = "unprocessable_entity" if exc.status == 422 else "bad_request"
                return self.error(exc.status, code, str(exc))
            except Exception:  # only injected faults get here; answer like a crashing server would
                return self.error(500, "internal_error", "the server failed")

        return handle

    def over_rate_limit(self) -> int:
        """Variant ``rate_limit_per_second``: 0 when a token is left (and taken), else the whole
        seconds until the next one (the Retry-After)."""
        rate = self.variant.rate_limit_per_second
        if not rate:
            return 0
        now = time.monotonic()
        self.tokens = min(max(rate, 1.0), self.tokens + (now - self.refilled) * rate)
        self.refilled = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0
        return max(1, math.ceil((1.0 - self.tokens) / rate))

    async def validate_before_auth(self, request: Request, operation: str) -> None:
        """Faults auth_*_validates_first: without a key, validation runs (and rejects) first."""
        if operation == "create" and self.has("auth_create_validates_first"):
            self.validate_new_pet(await self.read_body(request))
        if operation == "list" and self.has("auth_list_validates_first"):
            self.check_query(request)

    def routes(self) -> list[Route]:
        pets = {"GET": ("list", self.list_pets), "POST": ("create", self.create_pet)}
        pet = {"GET": ("read", self.get_pet)}
        orders = {"GET": ("orders", self.list_orders)}
        return [
            Route("/pets", self.endpoint(pets), methods=list(pets)),
            Route("/pets/{petId}", self.endpoint(pet), methods=list(pet)),
            Route("/store/orders", self.endpoint(orders), methods=list(orders)),
        ]


class RequestCounter:
    """Counts requests (the self-tests prove read-only runs with it) and adds a variant's latency."""

    def __init__(self, app: Any, store: PetStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.store.request_count += 1
            if scope["method"] not in ("GET", "HEAD", "OPTIONS"):
                self.store.write_count += 1
            if self.store.variant.latency_seconds:
                await asyncio.sleep(self.store.variant.latency_seconds)
        await self.app(scope, receive, send)


def _is_int64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def _salvage(body: dict[str, Any]) -> dict[str, Any]:
    """What a careless server stores from a body it rejects (fault create_rejected_still_stored)."""
    category = body.get("categoryId")
    status = body.get("status")
    return {
        "name": body["name"],
        "categoryId": category if _is_int64(category) else 0,
        "status": status if status in STATUSES else "available",
    }


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def build_app(api_key: str, variant: Variant = REFERENCE, fault: str | None = None) -> Starlette:
    """The Pet Store under /v1, answering every input with a documented status."""
    store = PetStore(api_key, variant, fault)

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
