"""The embedded reference implementation of the Pet Store interface: its operations and its store.

``asgi.build_app(api_key)`` serves a conformant one.  ``variant`` picks another conformant set of
choices where the document is silent (see ``variants.py``).  This is the clean reference, and it names
no fault: each fault of the catalog (``devtools/catalog/``) is a subclass that ``build_app`` serves
through its ``store_factory``.  A fault overrides an operation (``create_pet``, ``list_orders``), a
step of one (``check_query``, ``read_body``, ``allocate_id``, ``store_pet``, ``unauthorized``) or one of
the small hooks kept for them, each named after what it decides: ``media_type``, ``error_body``,
``challenge``, ``authorize``, ``matching``, ``page_size``, ``cut``, ``list_answer``,
``create_answer``, ``find`` and ``not_found``; or a method of ``Rules`` (``rules.py``).
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from petstore_contract.interface.document import STATUSES
from petstore_contract.interface.jsontypes import JsonLike, JsonObject, JsonValue
from petstore_contract.reference.rules import INTEGER, BadRequest, Rules, reject_constant
from petstore_contract.reference.variants import REFERENCE, Variant

Handler = Callable[[Request], Awaitable[Response]]
MAX_BODY_BYTES = 4_000_000  # a NewPet with a name of a million characters fits (the suite sends one)


class PetStore:
    """One server: its variant, its key, its store and the rules it applies (``rules``: a fault's, to install one)."""

    def __init__(self, api_key: str, variant: Variant = REFERENCE, rules: type[Rules] = Rules) -> None:
        if not api_key:
            raise ValueError("the reference server needs a non-empty API key")
        self.api_key = api_key
        self.variant = variant
        self.pets: dict[int, dict[str, Any]] = {}  # insertion order is creation order
        self.rules = rules(api_key, variant, self.pets)
        self.next_id = variant.first_id
        self.request_count = 0  # every HTTP request (RequestCounter)
        self.write_count = 0
        self.routed = 0  # requests that reached an operation: what throttling and the writer count
        self.background_added = 0
        self.tokens = max(variant.rate_limit_per_second, 1.0)  # the rate limit's bucket starts full
        self.refilled = time.monotonic()
        self.random = random.Random(20301205)  # deterministic "random" statuses and categories
        for n in range(1, variant.preload + 1):
            self.store_pet({"name": f"preloaded-{n}", "categoryId": (n * 37) % 101, "status": STATUSES[n % 3]})

    # -- plumbing -------------------------------------------------------------------------

    def json(self, body: JsonLike, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        media = self.media_type(body, status)
        all_headers = {**self.variant.extra_headers, **(headers or {})}
        try:
            content = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
        except UnicodeEncodeError:
            # A name sent as a lone surrogate escape ("\\ud800": JSON text, RFC 8259 §8.2) has no UTF-8
            # form: it goes back as the same escape, instead of a 500 on every later list of the store.
            content = json.dumps(body, allow_nan=False).encode()
        return Response(content, status_code=status, media_type=media, headers=all_headers)

    def media_type(self, body: JsonLike, status: int) -> str:
        """The Content-Type of an answer with ``body`` and ``status``: JSON, every one (§1)."""
        return "application/json"

    def error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
        if self.variant.error_code_style == "upper":
            code = code.upper()
        return self.json(self.error_body(status, code, message), status, headers)

    def error_body(self, status: int, code: str, message: str) -> JsonObject:
        """An Error (§7): ``code``, ``message`` and ``status``, all required; ``status`` repeats the HTTP status."""
        return {"code": code, "message": message, "status": status}

    def unauthorized(self, presented: bool, operation: str) -> Response:
        return self.error(401, "unauthorized", "missing or invalid API key", self.challenge(presented, operation))

    def challenge(self, presented: bool, operation: str) -> dict[str, str]:
        """The challenge of a 401 to ``operation`` (RFC 9110 §11.6.1: a 401 sends at least one)."""
        challenge = self.variant.www_authenticate
        if presented and challenge == REFERENCE.www_authenticate:
            # RFC 6750 §3.1: error details only when a credential was presented.
            challenge += ', error="invalid_token"'
        return {"WWW-Authenticate": challenge}

    async def authorize(self, request: Request, operation: str) -> Response | None:
        """None when the request may go on to ``operation``, else its 401 (§5.3).

        A coroutine, so that an override may read the request's body before it decides.
        """
        header = request.headers.get("authorization")
        if self.variant.reject_every_key:
            return self.unauthorized(presented=header is not None, operation=operation)
        if header is None:
            return self.unauthorized(presented=False, operation=operation)
        if self.rules.accepted(header, operation):
            return None
        return self.unauthorized(presented=True, operation=operation)

    # -- pets -----------------------------------------------------------------------------

    def allocate_id(self) -> int:
        """The id of the next animal: §2 asks for a unique int64, assigned by the service."""
        new_id = self.next_id
        self.next_id = new_id + self.variant.id_step
        return new_id

    def store_pet(self, fields: dict[str, Any]) -> dict[str, Any]:
        """Stores a new animal with ``fields`` under a new id; the animal as stored."""
        pet = {"id": self.allocate_id(), **fields}
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
        matching = self.matching(wanted)
        size = self.page_size(limit)
        page = [self.rules.present(p) for p in self.cut(matching, size, limit)]
        headers = {"X-Total-Count": str(len(matching))} if self.variant.paging_headers else {}
        if self.variant.paging_headers and len(matching) > size:
            headers["Link"] = f'<{request.url.path}?limit={limit}&cursor={size}>; rel="next"'
        return self.list_answer(page, headers)

    def matching(self, wanted: str | None) -> list[dict[str, Any]]:
        """The animals a list shows, in its order: those of status ``wanted`` (None: all of them)."""
        pets = sorted(self.pets.values(), key=lambda p: p["id"], reverse=self.variant.newest_first)
        if self.variant.by_name:
            pets.sort(key=lambda p: p["name"])  # stable: ties keep the order by id
        return [p for p in pets if wanted is None or p.get("status") == wanted]

    def page_size(self, limit: int) -> int:
        """How many animals a page asked with ``limit`` holds at most (§4.1: limit is a maximum)."""
        return min(limit, self.variant.page_cap)

    def cut(self, matching: list[dict[str, Any]], size: int, limit: int) -> list[dict[str, Any]]:
        """The animals of the page of ``size`` (asked with ``limit``) out of ``matching``: the first ones."""
        return matching[:size]

    def list_answer(self, page: list[dict[str, Any]], headers: dict[str, str]) -> Response:
        """The answer to GET /pets: 200 with the page, a JSON array of Pet (§4.1)."""
        return self.json(page, 200, headers)

    # -- POST /pets -------------------------------------------------------------------------

    async def read_body(self, request: Request) -> JsonValue:
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise BadRequest("request body too large")
        if not raw.strip():
            raise BadRequest("request body is empty")
        try:
            body: JsonValue = json.loads(raw, parse_constant=reject_constant)
        except (ValueError, RecursionError) as exc:
            raise BadRequest("request body is not valid JSON") from exc
        return body

    async def create_pet(self, request: Request) -> Response:
        pet = self.store_pet(self.rules.validate_new_pet(await self.read_body(request)))
        base = request.scope.get("root_path", "")
        return self.create_answer(self.rules.present(pet), {"Location": f"{base}/pets/{pet['id']}"})

    def create_answer(self, pet: dict[str, Any], headers: dict[str, str]) -> Response:
        """The answer to a POST /pets that created ``pet``: 201 with the animal, its id included (§4.2)."""
        return self.json(pet, 201, headers)

    # -- GET /pets/{petId} ------------------------------------------------------------------

    async def get_pet(self, request: Request) -> Response:
        raw = request.path_params["petId"]
        pet_id = int(raw) if INTEGER.fullmatch(raw) else None
        headers = self.rules.deprecation_headers(pet_id)
        pet = self.find(pet_id)
        if pet is None:
            return self.not_found(raw, pet_id, headers)
        return self.json(self.rules.present(pet), 200, headers)

    def find(self, pet_id: int | None) -> dict[str, Any] | None:
        """The animal a read of ``pet_id`` (None: a petId that is no integer) answers with: the one with that id."""
        return self.pets.get(pet_id) if pet_id is not None else None

    def not_found(self, raw: str, pet_id: int | None, headers: dict[str, str]) -> Response:
        """The answer to a read of the petId ``raw`` (``pet_id`` as in ``find``) that finds no animal: 404 (§4.3)."""
        return self.error(404, "not_found", "no animal with that id", headers)

    # -- GET /store/orders ------------------------------------------------------------------

    async def list_orders(self, request: Request) -> Response:
        if self.variant.orders_need_query and not request.query_params.get("customerId"):
            raise BadRequest("the customerId query parameter is required")
        return self.json([])

    # -- dispatch ---------------------------------------------------------------------------

    def endpoint(self, operations: Mapping[str, tuple[str, Handler]]) -> Handler:
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
                denied = await self.authorize(request, operation)
                if denied is not None:
                    return denied
                answer: Response = await handler(request)
                return answer
            except BadRequest as exc:
                code = "unprocessable_entity" if exc.status == 422 else "bad_request"
                return self.error(exc.status, code, str(exc))
            except Exception:  # a crash (a fault raises one on purpose): answer like a crashing server would
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

    def routes(self) -> list[Route]:
        pets = {"GET": ("list", self.list_pets), "POST": ("create", self.create_pet)}
        pet = {"GET": ("read", self.get_pet)}
        orders = {"GET": ("orders", self.list_orders)}
        return [
            Route("/pets", self.endpoint(pets), methods=list(pets)),
            Route("/pets/{petId}", self.endpoint(pet), methods=list(pet)),
            Route("/store/orders", self.endpoint(orders), methods=list(orders)),
        ]
