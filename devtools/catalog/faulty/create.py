"""Faults of POST /pets (§4.2) in the server: the body it reads, the ids it hands out, what it stores
and its answer.  Those of the rules that validate a NewPet are in ``newpet.py``."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from devtools.catalog.faulty.registry import fault
from petstore_contract.interface.document import INT64_MAX, INT64_MIN, STATUSES
from petstore_contract.reference.app import MAX_BODY_BYTES, PetStore
from petstore_contract.reference.rules import BadRequest, Rules

# -- the body ----------------------------------------------------------------------------------------------


@fault("create_500_on_empty_body")
class Create500OnEmptyBody(PetStore):
    async def read_body(self, request: Request) -> Any:
        raw = await request.body()
        if len(raw) <= MAX_BODY_BYTES and not raw.strip():  # a body too large is refused first
            raise RuntimeError("empty body")
        return await super().read_body(request)


@fault("create_500_on_invalid_json")
class Create500OnInvalidJson(PetStore):
    async def read_body(self, request: Request) -> Any:
        try:
            return await super().read_body(request)
        except BadRequest as exc:
            # Of the reference's 400s for a body, only that of a body not JSON comes from the parser's
            # error: a body too large or empty keeps its 400.
            if exc.__cause__ is None:
                raise
            raise RuntimeError("invalid JSON") from exc


# -- the answer --------------------------------------------------------------------------------------------


@fault("create_returns_200")
class CreateReturns200(PetStore):
    def create_answer(self, pet: dict[str, Any], headers: dict[str, str]) -> Response:
        return self.json(pet, 200, headers)


@fault("create_id_string")
class CreateIdString(PetStore):
    def create_answer(self, pet: dict[str, Any], headers: dict[str, str]) -> Response:
        return super().create_answer({**pet, "id": str(pet["id"])}, headers)


# -- the ids -----------------------------------------------------------------------------------------------


@fault("create_id_reused")
class CreateIdReused(PetStore):
    def allocate_id(self) -> int:
        return len(self.pets) % 3 + 1


@fault("create_ids_repeat_after_100")
class CreateIdsRepeatAfter100(PetStore):
    allocated = 0  # ids handed out so far

    def allocate_id(self) -> int:
        count = self.allocated
        self.allocated += 1
        if count >= 100:
            return self.variant.first_id + (count % 100) * self.variant.id_step
        return super().allocate_id()


@fault("create_id_beyond_int64")
class CreateIdBeyondInt64(PetStore):
    def allocate_id(self) -> int:
        return super().allocate_id() + 2**63


def is_int64(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


class ClientIdKept(Rules):
    """Keeps the id a valid NewPet brings, when it is an int64 no animal has."""

    def validate_new_pet(self, body: Any) -> dict[str, Any]:
        pet = super().validate_new_pet(body)
        chosen = body.get("id")
        return {"id": chosen, **pet} if is_int64(chosen) and chosen not in self.pets else pet


@fault("create_honours_client_id", rules=ClientIdKept)
class CreateHonoursClientId(PetStore):
    def store_pet(self, fields: dict[str, Any]) -> dict[str, Any]:
        if "id" not in fields:
            return super().store_pet(fields)
        self.pets[fields["id"]] = fields
        return fields

    def allocate_id(self) -> int:
        while self.next_id in self.pets:  # taken by an id a client chose
            self.next_id += self.variant.id_step
        return super().allocate_id()


# -- what is stored ------------------------------------------------------------------------------------------


@fault("store_latin1_names")
class StoreLatin1Names(PetStore):
    def store_pet(self, fields: dict[str, Any]) -> dict[str, Any]:
        # The answer is built from the request; what is kept went through a Latin-1 column.
        pet = super().store_pet(fields)
        self.pets[pet["id"]] = {**pet, "name": pet["name"].encode("latin-1", "replace").decode("latin-1")}
        return pet


def salvage(body: dict[str, Any]) -> dict[str, Any]:
    """What a careless server stores from a body it rejects."""
    category = body.get("categoryId")
    status = body.get("status")
    return {
        "name": body["name"],
        "categoryId": category if is_int64(category) else 0,
        "status": status if status in STATUSES else "available",
    }


@fault("create_rejected_still_stored")
class CreateRejectedStillStored(PetStore):
    async def create_pet(self, request: Request) -> Response:
        body = await self.read_body(request)
        try:
            self.rules.validate_new_pet(body)
        except BadRequest:
            if isinstance(body, dict) and isinstance(body.get("name"), str):
                self.store_pet(salvage(body))
            raise
        return await super().create_pet(request)


@fault("create_stored_before_key")
class CreateStoredBeforeKey(PetStore):
    """Stores a valid NewPet sent without the valid key, then answers the 401 (§5.3) all the same."""

    async def authorize(self, request: Request, operation: str) -> Response | None:
        denied = await super().authorize(request, operation)
        if denied is not None and operation == "create":
            with contextlib.suppress(BadRequest):
                self.store_pet(self.rules.validate_new_pet(await self.read_body(request)))
        return denied


class Pairs(list[tuple[str, Any]]):
    """A JSON object's members in order, a key given twice kept twice."""


@fault("create_not_utf8_500")
class CreateNotUtf8ServerError(PetStore):
    """Reads the body with its bytes that are not UTF-8 kept (Ruby's parser copies them), then measures the
    name in UTF-8 bytes unguarded: 500 before anything is stored (RFC 8259 §8.1: JSON text is UTF-8)."""

    async def read_body(self, request: Request) -> Any:
        raw = await request.body()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            body = json.loads(raw.decode("utf-8", "surrogateescape"))
            if isinstance(body, dict) and isinstance(body.get("name"), str):
                len(body["name"].encode("utf-8"))  # raises: a server error, nothing stored
        return await super().read_body(request)


@fault("create_repeated_key_validated_first_stored_last")
class CreateRepeatedKeyMixed(PetStore):
    """A body that repeats a key: validates its first value and stores its last (two parsers disagreeing)."""

    async def create_pet(self, request: Request) -> Response:
        raw = await request.body()
        try:
            pairs = json.loads(raw, object_pairs_hook=Pairs)
        except (ValueError, RecursionError):
            return await super().create_pet(request)
        if not isinstance(pairs, Pairs) or len({k for k, _ in pairs}) == len(pairs):
            return await super().create_pet(request)
        first = {k: v for k, v in reversed(pairs)}
        validated = self.rules.validate_new_pet(first)
        pet = self.store_pet(self.rules.validate_new_pet(dict(pairs)))
        return self.create_answer(self.rules.present({**pet, **validated}), {})


@fault("create_repeated_key_validated_first_kept_last")
class CreateRepeatedKeyKeptLast(PetStore):
    """A body that repeats a key: validates its first value, then stores and echoes its last one unchecked
    (a validator and a store that read the body with two parsers)."""

    async def create_pet(self, request: Request) -> Response:
        try:
            pairs = json.loads(await request.body(), object_pairs_hook=Pairs)
        except (ValueError, RecursionError):
            return await super().create_pet(request)
        if not isinstance(pairs, Pairs) or len({k for k, _ in pairs}) == len(pairs):
            return await super().create_pet(request)
        self.rules.validate_new_pet({k: v for k, v in reversed(pairs)})
        last = dict(pairs)
        pet = self.store_pet({k: last[k] for k in ("name", "categoryId", "status") if k in last})
        return self.create_answer(self.rules.present(pet), {})


@fault("create_replaces_held_id")
class CreateReplacesHeldId(PetStore):
    """A create whose body carries the id of an animal the store holds replaces that animal (the body spread
    over the record: ``{id: next++, ...body}`` upserted); other client ids are ignored."""

    async def create_pet(self, request: Request) -> Response:
        body = await self.read_body(request)
        held = body.get("id") if isinstance(body, dict) else None
        if type(held) is not int or held not in self.pets:
            return await super().create_pet(request)
        pet = {"id": held, **self.rules.validate_new_pet(body)}
        self.pets[held] = pet
        return self.create_answer(self.rules.present(pet), {})


@fault("create_status_checked_after_insert")
class CreateStatusCheckedAfterInsert(PetStore):
    """Lists oldest first (a compliant order) and checks status after its INSERT: a body whose only fault is
    its status is answered 400, and the animal, stored with that status as sent, stays (shown only on
    unfiltered pages, past the first 100 once the store has grown)."""

    def matching(self, wanted: str | None) -> list[dict[str, Any]]:
        pets = sorted(self.pets.values(), key=lambda p: p["id"])
        return [p for p in pets if wanted is None or p.get("status") == wanted]

    async def create_pet(self, request: Request) -> Response:
        body = await self.read_body(request)
        if isinstance(body, dict) and "status" in body:
            try:
                self.rules.validate_status(body)
            except BadRequest:
                with contextlib.suppress(BadRequest):
                    valid = self.rules.validate_new_pet({k: v for k, v in body.items() if k != "status"})
                    self.store_pet({**valid, "status": body["status"]})
                raise
        return await super().create_pet(request)
