"""Faults of the rules that validate a NewPet (§2, §4.2): what a body must hold, which values are
taken, and what is kept of a valid one."""

from __future__ import annotations

import html
import json
from typing import Any

from devtools.catalog.faulty.registry import fault
from petstore_contract.interface.document import STATUSES
from petstore_contract.reference.rules import INTEGER, BadRequest, Rules

# -- the body and its name ----------------------------------------------------------------------------------


@fault("create_500_on_non_object")
class Create500OnNonObject(Rules):
    def validate_new_pet(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise RuntimeError("body is not an object")
        return super().validate_new_pet(body)


@fault("create_accepts_missing_name")
class CreateAcceptsMissingName(Rules):
    def validate_name_type(self, body: dict[str, Any]) -> str:
        return "unnamed" if "name" not in body else super().validate_name_type(body)


@fault("create_coerces_name")
class CreateCoercesName(Rules):
    def validate_name_type(self, body: dict[str, Any]) -> str:
        name = body.get("name")
        if name is None or isinstance(name, str):
            return super().validate_name_type(body)
        return json.dumps(name)


@fault("create_500_on_control_chars")
class Create500OnControlChars(Rules):
    def validate_name_type(self, body: dict[str, Any]) -> str:
        name = body.get("name")
        if isinstance(name, str) and any(ord(c) < 0x20 for c in name):
            raise RuntimeError("control character in name")
        return super().validate_name_type(body)


# -- categoryId ------------------------------------------------------------------------------------------------


@fault("create_accepts_missing_category")
class CreateAcceptsMissingCategory(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        return 0 if "categoryId" not in body else super().validate_category(body)


@fault("create_accepts_bool_category")
class CreateAcceptsBoolCategory(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        value = body.get("categoryId")
        return int(value) if isinstance(value, bool) else super().validate_category(body)


@fault("create_coerces_string_category")
class CreateCoercesStringCategory(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        value = body.get("categoryId")
        if isinstance(value, str) and INTEGER.fullmatch(value):
            body = {**body, "categoryId": int(value)}  # then checked as if the number had been sent
        return super().validate_category(body)


@fault("create_accepts_float_category")
class CreateAcceptsFloatCategory(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        value = body.get("categoryId")
        if isinstance(value, float):
            body = {**body, "categoryId": int(value)}  # then checked as if the number had been sent
        return super().validate_category(body)


@fault("create_category_float_precision")
class CreateCategoryFloatPrecision(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        return int(float(super().validate_category(body)))


# -- status ------------------------------------------------------------------------------------------------------


@fault("create_default_status_null")
class CreateDefaultStatusNull(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        return None if "status" not in body else super().validate_status(body)


@fault("create_default_status_unknown")
class CreateDefaultStatusUnknown(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        return "new" if "status" not in body else super().validate_status(body)


@fault("create_accepts_null_status")
class CreateAcceptsNullStatus(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        return None if "status" in body and body["status"] is None else super().validate_status(body)


@fault("create_accepts_unknown_status")
class CreateAcceptsUnknownStatus(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        status = body.get("status")
        return status if isinstance(status, str) and status not in STATUSES else super().validate_status(body)


@fault("create_accepts_status_any_case")
class CreateAcceptsStatusAnyCase(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        status = body.get("status")
        if isinstance(status, str) and status not in STATUSES and status.lower() in STATUSES:
            return status.lower()
        return super().validate_status(body)


@fault("create_rejects_sold")
class CreateRejectsSold(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        if body.get("status") == "sold":
            raise BadRequest("sold animals cannot be added")
        return super().validate_status(body)


@fault("create_ignores_status")
class CreateIgnoresStatus(Rules):
    def validate_status(self, body: dict[str, Any]) -> Any:
        status = super().validate_status(body)
        return "available" if "status" in body else status


# -- what is kept of a valid NewPet (and echoed) -----------------------------------------------------------------


class Kept(Rules):
    """Takes what the reference takes, then keeps (and echoes) the NewPet as ``kept`` changes it."""

    def kept(self, pet: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def validate_new_pet(self, body: Any) -> dict[str, Any]:
        return self.kept(super().validate_new_pet(body))


class NameKept(Kept):
    """Keeps the name as ``name`` changes it."""

    def name(self, name: str) -> str:
        raise NotImplementedError

    def kept(self, pet: dict[str, Any]) -> dict[str, Any]:
        return {**pet, "name": self.name(pet["name"])}


@fault("create_truncates_long_name")
class CreateTruncatesLongName(NameKept):
    def name(self, name: str) -> str:
        return name[:50]


@fault("create_cuts_name_at_65535")
class CreateCutsNameAt65535(NameKept):
    def name(self, name: str) -> str:
        return name[:65_535]  # a TEXT column


@fault("create_cuts_name_at_nul")
class CreateCutsNameAtNul(NameKept):
    def name(self, name: str) -> str:
        return name.split("\0", 1)[0]  # a C string


@fault("create_ascii_names")
class CreateAsciiNames(NameKept):
    def name(self, name: str) -> str:
        return "".join(c if ord(c) < 128 else "?" for c in name)


@fault("create_strips_name")
class CreateStripsName(NameKept):
    def name(self, name: str) -> str:
        return name.strip()


@fault("create_escapes_html_in_name")
class CreateEscapesHtmlInName(NameKept):
    def name(self, name: str) -> str:
        return html.escape(name, quote=False)


@fault("create_category_int32")
class CreateCategoryInt32(Kept):
    def kept(self, pet: dict[str, Any]) -> dict[str, Any]:
        return {**pet, "categoryId": (pet["categoryId"] + 2**31) % 2**32 - 2**31}


@fault("create_negative_category_abs")
class CreateNegativeCategoryAbs(Kept):
    def kept(self, pet: dict[str, Any]) -> dict[str, Any]:
        return {**pet, "categoryId": abs(pet["categoryId"])}  # an unsigned column


@fault("create_500_on_category_minus_one")
class Create500OnCategoryMinusOne(Kept):
    def kept(self, pet: dict[str, Any]) -> dict[str, Any]:
        if pet["categoryId"] == -1:
            raise RuntimeError("category -1 is the 'no category' sentinel")
        return pet


# -- lenient decoders ------------------------------------------------------------------------------------

FIELDS = ("name", "categoryId", "status")


@fault("create_member_names_folded")
class MemberNamesFolded(Rules):
    """Matches member names without regard to case, as Go's encoding/json does (an exact match first):
    ``Name`` is taken for name, ``STATUS`` for status."""

    def validate_new_pet(self, body: Any) -> dict[str, Any]:
        if isinstance(body, dict):
            folded = {next((f for f in FIELDS if f.lower() == key.lower()), key): key for key in body}
            body = {field: body[field if field in body else key] for field, key in folded.items()}
        return super().validate_new_pet(body)


@fault("create_status_loose_equality")
class StatusLooseEquality(Rules):
    """Checks status with a loose equality (PHP's ``in_array`` without strict): ``true`` equals any non-empty
    string, so ``"status": true`` is taken, and stored as sent."""

    def validate_status(self, body: dict[str, Any]) -> Any:
        if body.get("status") is True:
            return True
        return super().validate_status(body)
