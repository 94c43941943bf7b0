"""Compliant choices the reference's knobs (``Variant``) do not make: rules of their own, served for a
compliant variant of that name (``catalog_app``).

- ``integral-numbers``: an integer in another JSON spelling (``1e3``, ``1000.0``: JSON Schema counts
  both as the integer 1000) is accepted as that integer, where the reference refuses it with 400.  Both
  are compliant (issue 40: "accepted as that integer, or refused with 400"); neither stores another number.
"""

from __future__ import annotations

from typing import Any

from petstore_contract.reference.rules import Rules


class IntegralNumbers(Rules):
    def validate_category(self, body: dict[str, Any]) -> int:
        value = body.get("categoryId")
        if isinstance(value, float) and value.is_integer():
            body = {**body, "categoryId": int(value)}
        return super().validate_category(body)


RULED: dict[str, type[Rules]] = {"integral-numbers": IntegralNumbers}
