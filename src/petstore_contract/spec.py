"""The hand-written OpenAPI document and validators for its component schemas."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def spec_path() -> Path:
    """spec/openapi.yaml of the checkout (PETSTORE_SPEC may point elsewhere)."""
    override = os.environ.get("PETSTORE_SPEC")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "spec" / "openapi.yaml"


@cache
def load_spec() -> dict[str, Any]:
    return yaml.safe_load(spec_path().read_text(encoding="utf-8"))


@cache
def spec_checksum() -> str:
    return hashlib.sha256(spec_path().read_bytes()).hexdigest()


@cache
def validator(component: str) -> jsonschema.Draft202012Validator:
    """A validator for components/schemas/<component>, with int64 ranges enforced."""
    root = {"$ref": f"#/components/schemas/{component}", "components": load_spec()["components"]}
    checker = jsonschema.FormatChecker()

    @checker.checks("int64")
    def is_int64(value: object) -> bool:
        return not isinstance(value, int) or isinstance(value, bool) or INT64_MIN <= value <= INT64_MAX

    return jsonschema.Draft202012Validator(root, format_checker=checker)


def schema_errors(component: str, instance: Any) -> list[str]:
    errors = sorted(validator(component).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in errors]
