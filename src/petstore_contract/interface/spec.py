"""The hand-written OpenAPI document and validators for its component schemas."""

from __future__ import annotations

import hashlib
import os
import re
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import yaml

from petstore_contract.interface.document import INT64_MAX, INT64_MIN


def data_file(name: str) -> Path:
    """A file of spec/: shipped in the wheel as package data, read from the checkout otherwise.

    An editable install does not apply the wheel's force-include, so the checkout is the fallback.
    """
    shipped = files("petstore_contract") / "data" / name
    if shipped.is_file():
        return Path(str(shipped))
    return Path(__file__).resolve().parents[3] / "spec" / name


def spec_path() -> Path:
    """The OpenAPI document (PETSTORE_SPEC may point elsewhere)."""
    override = os.environ.get("PETSTORE_SPEC")
    return Path(override) if override else data_file("openapi.yaml")


def schemathesis_config_path() -> Path:
    return data_file("schemathesis.toml")


def suite_dir() -> Path:
    """The contract tests: the package's ``suite`` when installed from a wheel, else tests/ of the checkout."""
    shipped = files("petstore_contract") / "suite"
    if shipped.is_dir():
        return Path(str(shipped))
    return Path(__file__).resolve().parents[3] / "tests"


@cache
def load_spec() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(spec_path().read_text(encoding="utf-8"))
    return loaded


@cache
def spec_checksum() -> str:
    """SHA-256 of the OpenAPI document the run judged by (reports name it, so a run can be traced)."""
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
    try:
        errors = sorted(validator(component).iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in errors]
    except RecursionError:  # the message quotes the value; Pet and Error hold no nested values anyway
        return [f"(body): not a {component}: a value nested deeper than can be shown"]


@cache
def _path_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each path template of the spec as a pattern for the end of a URL path, longest template first.

    None from a spec that does not load: naming an operation must not fail a request (the generated
    tests' collection reports the spec).
    """
    try:
        templates = sorted(load_spec().get("paths", {}), key=len, reverse=True)
    except (OSError, yaml.YAMLError, AttributeError, TypeError):
        return ()
    return tuple((re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(t)) + "$"), t) for t in templates)


def operation_of(method: str, url: str) -> str:
    """ "GET /pets/{petId}": the method and the spec's path template a request URL asked (whatever the base
    path); "GET (no documented path)" for a URL that matches none."""
    path = urlsplit(url).path.rstrip("/") or "/"
    for pattern, template in _path_patterns():
        if pattern.search(path):
            return f"{method.upper()} {template}"
    return f"{method.upper()} (no documented path)"


@cache
def _operations() -> dict[str, tuple[str, dict[str, Any]]]:
    """ "GET /pets/{petId}" -> (operationId, its responses), from the OpenAPI document."""
    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for template, item in load_spec().get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                found[f"{method.upper()} {template}"] = (operation["operationId"], operation.get("responses", {}))
    return found


def operation_id(method: str, url: str) -> str:
    """The operationId a request asked ("" for a method and path the document does not show)."""
    named = _operations().get(operation_of(method, url))
    return named[0] if named else ""


def _responses(operation: str) -> dict[str, Any]:
    return next((responses for oid, responses in _operations().values() if oid == operation), {})


def documented(operation: str, status: int) -> bool:
    """The OpenAPI document lists ``status`` for ``operation`` (exactly, as a range like 4XX, or a default)."""
    keys = {str(key).upper() for key in _responses(operation)}
    return str(status) in keys or f"{str(status)[0]}XX" in keys or "DEFAULT" in keys


def success_shown(operation: str) -> bool:
    """The document shows a shape for the operation's success answer (GET /store/orders': ``schema: {}``)."""
    for key, answer in _responses(operation).items():
        if str(key).startswith("2") and isinstance(answer, dict):
            media = answer.get("content", {}).get("application/json", {})
            if media.get("schema"):
                return True
    return False


def answer_schema(operation: str, status: int) -> str | None:
    """The component schema the document gives the answer ("Pet", "Pet[]", "Error"), None when it shows none."""
    responses = _responses(operation)
    answer = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX") or responses.get("default")
    if not isinstance(answer, dict):
        return None
    if "$ref" in answer:
        answer = load_spec()["components"]["responses"].get(answer["$ref"].rsplit("/", 1)[-1], {})
    schema = answer.get("content", {}).get("application/json", {}).get("schema") or {}
    if schema.get("type") == "array" and "$ref" in schema.get("items", {}):
        return str(schema["items"]["$ref"]).rsplit("/", 1)[-1] + "[]"
    return str(schema["$ref"]).rsplit("/", 1)[-1] if "$ref" in schema else None


def operation_ids() -> list[str]:
    """Every operationId of the OpenAPI document, in its order."""
    return [oid for oid, _ in _operations().values()]
