"""Compliant choices the reference's knobs (``Variant``) do not make: rules of their own, served for a
compliant variant of that name (``catalog_app``).

- ``integral-numbers``: an integer in another JSON spelling (``1e3``, ``1000.0``: JSON Schema counts
  both as the integer 1000) is accepted as that integer, where the reference refuses it with 400.  Both
  are compliant (issue 40: "accepted as that integer, or refused with 400"); neither stores another number.
- ``repeated-key-refused``: a body that gives a key twice is refused with a 400 Error (RFC 8259 §4: "The
  names within an object SHOULD be unique"; what a parser does with a repeated one is its own), where the
  reference keeps the last value.
- ``lenient-utf8``: a body whose strings hold bytes that are not UTF-8 is read with each such byte as
  U+FFFD (as Go's and Node's decoders do) and created (RFC 8259 §9: a parser "MAY accept non-JSON
  forms"), where the reference refuses it with 400 (§8.1: JSON text is UTF-8).
- ``deprecation-parameters``: the Deprecation Date carries a structured-field parameter (RFC 9651
  §3.1.2), which the reference does not send.
"""

from __future__ import annotations

import json
from typing import Any

from petstore_contract.reference.app import PetStore
from petstore_contract.reference.rules import BadRequest, Rules


class IntegralNumbers(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        value = body.get("categoryId")
        if isinstance(value, float) and value.is_integer():
            body = {**body, "categoryId": int(value)}
        return super().validate_category(body)


class DeprecationParameters(Rules):
    """A Deprecation Item with a parameter (RFC 9651 §3.1.2: "Parameters are an ordered map of key-value
    pairs that are associated with an Item"): still the Date RFC 9745 §2.1 asks for."""

    def deprecation_headers(self, pet_id: int | None) -> dict[str, str]:
        found = super().deprecation_headers(pet_id)
        return {**found, "Deprecation": found["Deprecation"] + ';reason="replaced by GET /pets"'}


RULED: dict[str, type[Rules]] = {"integral-numbers": IntegralNumbers, "deprecation-parameters": DeprecationParameters}


class RepeatedKeyRefused(PetStore):
    async def read_body(self, request: Any) -> Any:
        body = await super().read_body(request)
        json.loads(await request.body(), object_pairs_hook=_unique)
        return body


class LenientUtf8(PetStore):
    async def read_body(self, request: Any) -> Any:
        raw = await request.body()
        readable = raw.decode("utf-8", "replace").encode()
        if readable == raw:
            return await super().read_body(request)
        try:
            return json.loads(readable)
        except ValueError as exc:
            raise BadRequest("request body is not valid JSON") from exc


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise BadRequest("a member name is given twice")
    return dict(pairs)


# Compliant variants whose choice is the server's own, not a rule's: served by this store.
STORED: dict[str, type[PetStore]] = {"repeated-key-refused": RepeatedKeyRefused, "lenient-utf8": LenientUtf8}
