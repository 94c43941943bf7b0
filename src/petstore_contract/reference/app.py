"""The embedded reference implementation of the Pet Store interface: its operations and its store.

``asgi.build_app(api_key)`` serves a conformant one.  ``variant`` picks another conformant
set of choices where the document is silent (see ``variants.py``); ``fault`` injects one
named defect from ``faults.py``.  Every ``self.has(...)`` below is the one place where a
fault changes behaviour.
"""

from __future__ import annotations

import html
import json
import math
import random
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from petstore_contract.interface.document import INT64_MIN, STATUSES
from petstore_contract.reference.faults import FAULTS
from petstore_contract.reference.rules import (
    DEPRECATION,
    INTEGER,
    SUNSET,
    BadRequest,
    Rules,
    is_int64,
    reject_constant,
    salvage,
)
from petstore_contract.reference.variants import REFERENCE, Variant

MAX_BODY_BYTES = 4_000_000  # a NewPet with a name of a million characters fits (the suite sends one)


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
        self.rules = Rules(api_key, variant, fault, self.pets)
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
        if self.rules.accepted(scheme, token, header, operation):
            refused = {"read": "auth_read_rejects_valid_key", "orders": "auth_orders_rejects_valid_key"}
            if operation in refused and self.has(refused[operation]):
                return self.unauthorized(presented=True, operation=operation)
            return None
        if self.has("auth_403"):
            return self.error(403, "forbidden", "key not accepted")
        return self.unauthorized(presented=True, operation=operation)

    # -- pets -----------------------------------------------------------------------------

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

    def check_query(self, request: Request) -> tuple[int, str | None]:
        return (
            self.rules.parse_limit(request.query_params.get("limit")),
            self.rules.parse_status_filter(request.query_params.get("status")),
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
        if self.variant.by_name:
            pets.sort(key=lambda p: p["name"])  # stable: ties keep the order by id
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
        page = [self.rules.present(p, listed=True) for p in chosen]
        if self.has("list_late_names_wrong") and wanted is None:
            late = set(list(self.pets)[100:101])  # insertion order is creation order
            page = [{**p, "name": p["name"].upper()} if p["id"] in late else p for p in page]
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
            return json.loads(raw, parse_constant=reject_constant)
        except (ValueError, RecursionError) as exc:
            if self.has("create_500_on_invalid_json"):
                raise RuntimeError("invalid JSON") from exc
            raise BadRequest("request body is not valid JSON") from exc

    async def create_pet(self, request: Request) -> Response:
        body = await self.read_body(request)
        try:
            pet = self.rules.validate_new_pet(body)
        except BadRequest:
            if (
                self.has("create_rejected_still_stored")
                and isinstance(body, dict)
                and isinstance(body.get("name"), str)
            ):
                self.store_pet(salvage(body))
            raise
        if self.has("create_truncates_long_name"):
            pet["name"] = pet["name"][:50]
        self.rules.apply_edge_faults(pet)
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
        if not (is_int64(chosen) and chosen not in self.pets):
            chosen = None
        pet = self.store_pet(pet, chosen)
        answer = self.rules.present(pet)
        if self.has("store_latin1_names"):
            # The echo is built from the request; what is kept went through a Latin-1 column.
            pet["name"] = pet["name"].encode("latin-1", "replace").decode("latin-1")
        if self.has("create_id_string"):
            answer["id"] = str(answer["id"])
        status = 200 if self.has("create_returns_200") else 201
        base = request.scope.get("root_path", "")
        return self.json(answer, status, {"Location": f"{base}/pets/{pet['id']}"})

    # -- GET /pets/{petId} ------------------------------------------------------------------

    async def get_pet(self, request: Request) -> Response:
        raw = request.path_params["petId"]
        pet_id = int(raw) if INTEGER.fullmatch(raw) else None
        headers = self.rules.deprecation_headers(pet_id)
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
                and is_int64(pet_id)
                and pet_id >= self.next_id
            ):
                invented = {"id": pet_id, "name": f"pet-{pet_id}", "categoryId": 1, "status": "available"}
                return self.json(invented, 200, headers)
            if self.has("read_unknown_placeholder"):
                return self.json({"id": pet_id or 0, "name": "unknown", "categoryId": 0}, 200, headers)
            if self.has("read_unknown_400"):
                return self.error(400, "bad_request", f"no animal with id {raw}", headers)
            return self.error(404, "not_found", "no animal with that id", headers)
        answer = self.rules.present(pet)
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
            self.rules.validate_new_pet(await self.read_body(request))
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
