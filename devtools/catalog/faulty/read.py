"""Faults of GET /pets/{petId} (§4.3): the animal it finds, its answer to an id it does not know, and
its Deprecation and Sunset headers."""

from __future__ import annotations

import contextlib
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from devtools.catalog.faulty.registry import fault
from petstore_contract.interface.document import INT64_MAX, INT64_MIN
from petstore_contract.interface.jsontypes import JsonObject
from petstore_contract.reference.app import PetStore
from petstore_contract.reference.rules import DEPRECATION, SUNSET, Rules

Found = dict[str, Any] | None  # the animal a read answers with, if any

# -- the animal found -----------------------------------------------------------------------------------


@fault("read_id_leading_digits")
class ReadIdLeadingDigits(PetStore):
    """Reads a petId by its leading digits, as a lenient parser does: "5abc" and "5.5" read animal 5."""

    async def get_pet(self, request: Request) -> Response:
        raw = request.path_params["petId"]
        digits = re.match(r"-?[0-9]{1,19}", raw)
        if digits is not None:
            request.path_params["petId"] = digits.group()
        return await super().get_pet(request)


@fault("read_id_wraps_64")
class ReadIdWraps64(PetStore):
    """Reads a petId as a machine integer that wraps: N + 2^64 reads animal N."""

    async def get_pet(self, request: Request) -> Response:
        raw = request.path_params["petId"]
        if re.fullmatch(r"-?[0-9]{1,40}", raw):
            wrapped = (int(raw) - INT64_MIN) % 2**64 + INT64_MIN
            request.path_params["petId"] = str(wrapped)
        return await super().get_pet(request)


@fault("read_500_on_negative_id")
class Read500OnNegativeId(PetStore):
    def find(self, pet_id: int | None) -> Found:
        if pet_id is not None and INT64_MIN <= pet_id < 0:
            raise RuntimeError("negative id")
        return super().find(pet_id)


@fault("read_off_by_one")
class ReadOffByOne(PetStore):
    def find(self, pet_id: int | None) -> Found:
        return super().find(None if pet_id is None else pet_id + self.variant.id_step)


@fault("read_by_name_collision")
class ReadByNameCollision(PetStore):
    def find(self, pet_id: int | None) -> Found:
        pet = super().find(pet_id)
        if pet is None:
            return None
        return next(p for p in sorted(self.pets.values(), key=lambda p: p["id"]) if p["name"] == pet["name"])


@fault("read_wrong_animal_after_50")
class ReadWrongAnimalAfter50(PetStore):
    def find(self, pet_id: int | None) -> Found:
        pet = super().find(pet_id)
        if pet is None or len(self.pets) <= 50:
            return pet
        ids = list(self.pets)  # creation order
        at = ids.index(pet["id"])
        return self.pets[ids[at - 1 if at else 1]]


@fault("read_forgets_pets")
class ReadForgetsPets(PetStore):
    def find(self, pet_id: int | None) -> Found:
        return None


@fault("read_404_for_newest")
class Read404ForNewest(PetStore):
    def find(self, pet_id: int | None) -> Found:
        return None if pet_id == next(reversed(self.pets), None) else super().find(pet_id)


@fault("read_drops_status")
class ReadDropsStatus(PetStore):
    def find(self, pet_id: int | None) -> Found:
        pet = super().find(pet_id)
        return None if pet is None else {k: v for k, v in pet.items() if k != "status"}


@fault("read_changes_name")
class ReadChangesName(PetStore):
    def find(self, pet_id: int | None) -> Found:
        pet = super().find(pet_id)
        if pet is None:
            return None
        changed = pet["name"].upper()
        return {**pet, "name": changed if changed != pet["name"] else pet["name"] + "!"}


# -- an id no animal has ----------------------------------------------------------------------------------


@fault("read_invents_future_ids")
class ReadInventsFutureIds(PetStore):
    def not_found(self, raw: str, pet_id: int | None, headers: dict[str, str]) -> Response:
        if pet_id is None or not INT64_MIN <= pet_id <= INT64_MAX or pet_id < self.next_id:
            return super().not_found(raw, pet_id, headers)
        invented: JsonObject = {"id": pet_id, "name": f"pet-{pet_id}", "categoryId": 1, "status": "available"}
        return self.json(invented, 200, headers)


@fault("read_unknown_placeholder")
class ReadUnknownPlaceholder(PetStore):
    def not_found(self, raw: str, pet_id: int | None, headers: dict[str, str]) -> Response:
        return self.json({"id": pet_id or 0, "name": "unknown", "categoryId": 0}, 200, headers)


@fault("read_unknown_400")
class ReadUnknown400(PetStore):
    def not_found(self, raw: str, pet_id: int | None, headers: dict[str, str]) -> Response:
        return self.error(400, "bad_request", f"no animal with id {raw}", headers)


# -- Deprecation and Sunset ---------------------------------------------------------------------------------


class Deprecated(Rules):
    """Sends ``deprecation`` and ``sunset`` as the Deprecation and Sunset of every read."""

    deprecation, sunset = DEPRECATION, SUNSET

    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        return {"Deprecation": self.deprecation, "Sunset": self.sunset}


@fault("read_deprecation_http_date")
class ReadDeprecationHttpDate(Deprecated):
    deprecation = "Thu, 01 Jan 2026 00:00:00 GMT"


@fault("read_deprecation_boolean")
class ReadDeprecationBoolean(Deprecated):
    deprecation = "true"


@fault("read_deprecation_in_future")
class ReadDeprecationInFuture(Deprecated):
    deprecation = "@1893456000"  # 2030-01-01


@fault("read_sunset_before_deprecation")
class ReadSunsetBeforeDeprecation(Deprecated):
    deprecation = "@1956528000"  # 2032-01-01, after the Sunset


@fault("read_sunset_wrong_day")
class ReadSunsetWrongDay(Deprecated):
    sunset = "Fri, 05 Dec 2031 00:00:00 GMT"


@fault("read_sunset_not_http_date")
class ReadSunsetNotHttpDate(Deprecated):
    sunset = "2030-12-05"


@fault("read_sunset_day_before")
class ReadSunsetDayBefore(Deprecated):
    sunset = "Wed, 04 Dec 2030 23:00:00 GMT"  # midnight in Central Europe, one day early in GMT


@fault("read_no_deprecation")
class ReadNoDeprecation(Rules):
    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        return {}


@fault("read_deprecation_even_ids")
class ReadDeprecationEvenIds(Rules):
    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        headers = super().deprecation_headers(pet_id)
        return {"Sunset": headers["Sunset"]} if pet_id is not None and pet_id % 2 == 0 else headers


@fault("read_id_base_prefix")
class ReadIdBasePrefix(PetStore):
    """Reads a petId with the language's integer literal parser (Python's ``int(s, 0)``, Go's ParseInt with
    base 0): 0x1f, 0o37, 0b11111 and 3_1 all read animal 31."""

    async def get_pet(self, request: Request) -> Response:
        with contextlib.suppress(ValueError):
            request.path_params["petId"] = str(int(request.path_params["petId"], 0))
        return await super().get_pet(request)


@fault("read_id_leading_zero_octal")
class ReadIdLeadingZeroOctal(PetStore):
    """Reads a petId with a leading zero as octal (C's strtol with base 0, PHP's intval with base 0): 012
    reads animal 10."""

    async def get_pet(self, request: Request) -> Response:
        raw = request.path_params["petId"]
        if re.fullmatch(r"0[0-7]+", raw):
            request.path_params["petId"] = str(int(raw, 8))
        return await super().get_pet(request)
