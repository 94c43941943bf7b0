"""The hand-written OpenAPI document and validators for its component schemas."""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import yaml

from petstore_contract.interface.document import INT64_MAX, INT64_MIN
from petstore_contract.interface.files import data_file as data_file
from petstore_contract.interface.files import suite_dir as suite_dir
from petstore_contract.interface.jsontypes import JsonObject, JsonValue


def spec_path() -> Path:
    """The OpenAPI document (PETSTORE_SPEC may point elsewhere)."""
    override = os.environ.get("PETSTORE_SPEC")
    return Path(override) if override else data_file("openapi.yaml")


def schemathesis_config_path() -> Path:
    return data_file("schemathesis.toml")


@cache
def load_spec() -> JsonObject:
    """The OpenAPI document as JSON (its YAML holds nothing else); TypeError for one that is no mapping."""
    loaded = yaml.safe_load(spec_path().read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise TypeError(f"{spec_path()}: the OpenAPI document is no mapping")
    document: JsonObject = loaded
    return document


def member(value: JsonValue, *names: str) -> JsonObject:
    """The object at ``names`` inside ``value`` (``member(spec, "components", "schemas")``), {} where a step
    is missing or no object."""
    for name in names:
        value = value.get(name) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def paths() -> list[str]:
    """The OpenAPI document's path templates, in its order."""
    return list(member(load_spec(), "paths"))


def required(component: str) -> tuple[str, ...]:
    """The fields components/schemas/<component> requires."""
    names = member(load_spec(), "components", "schemas", component).get("required")
    return tuple(name for name in names if isinstance(name, str)) if isinstance(names, list) else ()


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


# One animal comes back in many answers of a run (every page, every read, every stateful step), and
# validating a Pet with jsonschema costs more than the rest of judging it: a schema's verdict on a flat
# JSON object of scalars is kept, so each distinct object is validated once.  The key holds each
# value's type (``1``, ``1.0`` and ``True`` are equal in Python, not in JSON Schema) and a float's repr
# (``0.0`` and ``-0.0`` are quoted differently).  Memory is bounded by the objects and the text kept.
VERDICTS_KEPT = 20_000
TEXT_KEPT = 8_000_000  # characters of string values held by the keys, all of them together
_verdicts: dict[tuple[str, tuple[tuple[str, type, Any], ...]], tuple[str, ...]] = {}
_text_kept = 0


def schema_errors(component: str, instance: Any) -> list[str]:
    global _text_kept
    key, text = _flat_key(instance)
    if key is not None and (kept := _verdicts.get((component, key))) is not None:
        return list(kept)
    problems = _schema_errors(component, instance)
    if key is not None and len(_verdicts) < VERDICTS_KEPT and _text_kept + text <= TEXT_KEPT:
        _verdicts[(component, key)] = tuple(problems)
        _text_kept += text  # racing threads may miscount by an entry: a bound, not a ledger
    return problems


def _schema_errors(component: str, instance: Any) -> list[str]:
    try:
        errors = sorted(validator(component).iter_errors(instance), key=lambda e: list(e.absolute_path))
        return [f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in errors]
    except RecursionError:  # the message quotes the value; Pet and Error hold no nested values anyway
        return [f"(body): not a {component}: a value nested deeper than can be shown"]


def _flat_key(instance: Any) -> tuple[tuple[tuple[str, type, Any], ...] | None, int]:
    """``instance`` as a cache key (None: not a JSON object of scalars) and the characters it holds."""
    if not isinstance(instance, dict):
        return None, 0
    key: list[tuple[str, type, Any]] = []
    text = 0
    for name, value in instance.items():
        if value is not None and not isinstance(value, str | int | float):  # bool is an int: its type differs
            return None, 0
        text += len(name) + (len(value) if isinstance(value, str) else 0)
        key.append((name, type(value), repr(value) if isinstance(value, float) else value))
    return tuple(key), text


@cache
def _path_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each path template of the spec as a pattern for the end of a URL path, longest template first.

    None from a spec that does not load: naming an operation must not fail a request (the generated
    tests' collection reports the spec).
    """
    try:
        templates = sorted(paths(), key=len, reverse=True)
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
def _operations() -> dict[str, tuple[str, JsonObject]]:
    """ "GET /pets/{petId}" -> (operationId, its responses), from the OpenAPI document."""
    found: dict[str, tuple[str, JsonObject]] = {}
    for template, item in member(load_spec(), "paths").items():
        for method, operation in item.items() if isinstance(item, dict) else ():
            if isinstance(operation, dict) and isinstance(oid := operation.get("operationId"), str):
                found[f"{method.upper()} {template}"] = (oid, member(operation, "responses"))
    return found


def operation_id(method: str, url: str) -> str:
    """The operationId a request asked ("" for a method and path the document does not show)."""
    named = _operations().get(operation_of(method, url))
    return named[0] if named else ""


def _responses(operation: str) -> JsonObject:
    return next((responses for oid, responses in _operations().values() if oid == operation), {})


def statuses(operation: str) -> list[str]:
    """The statuses the operation's Responses table lists, in the document's order ("201", "400", "401")."""
    return [str(key) for key in _responses(operation)]


def documented(operation: str, status: int) -> bool:
    """The OpenAPI document lists ``status`` for ``operation`` (exactly, as a range like 4XX, or a default)."""
    keys = {str(key).upper() for key in _responses(operation)}
    return str(status) in keys or f"{str(status)[0]}XX" in keys or "DEFAULT" in keys


@cache
def takes_body(operation: str) -> bool:
    """The operation takes a request body (createPet's NewPet)."""
    for item in member(load_spec(), "paths").values():
        for found in item.values() if isinstance(item, dict) else ():
            if isinstance(found, dict) and found.get("operationId") == operation:
                return "requestBody" in found
    return False


def success_shown(operation: str) -> bool:
    """The document shows a shape for the operation's success answer (GET /store/orders': ``schema: {}``)."""
    for key, answer in _responses(operation).items():
        if str(key).startswith("2") and member(answer, "content", "application/json").get("schema"):
            return True
    return False


def answer_schema(operation: str, status: int) -> str | None:
    """The component schema the document gives the answer ("Pet", "Pet[]", "Error"), None when it shows none."""
    responses = _responses(operation)
    answer = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX") or responses.get("default")
    if not isinstance(answer, dict):
        return None
    if "$ref" in answer:
        answer = member(load_spec(), "components", "responses", str(answer["$ref"]).rsplit("/", 1)[-1])
    schema = member(answer, "content", "application/json", "schema")
    items = member(schema, "items")
    if schema.get("type") == "array" and "$ref" in items:
        return str(items["$ref"]).rsplit("/", 1)[-1] + "[]"
    return str(schema["$ref"]).rsplit("/", 1)[-1] if "$ref" in schema else None


def operation_ids() -> list[str]:
    """Every operationId of the OpenAPI document, in its order."""
    return [oid for oid, _ in _operations().values()]


def animal_made(status: int, body: bytes) -> JsonObject | None:
    """The animal a create's answer of this status and body shows the store now holds, or None: a 201 whose
    body is a JSON object with an integer id, or one spelled as a string of its decimal digits (taken as that
    integer; its shape is create.created's and create.id's to judge), or any other 2xx whose
    body is a Pet, id included (the document leaves no doubt the animal exists; the status is create.created's
    violation).  The transport counts such answers as animals created; judging goes on with them."""
    if not 200 <= status < 300:
        return None
    try:
        shown = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(shown, dict):
        return None
    if status == 201 and (pet_id := _decimal_id(shown.get("id"))) is not None:
        # An id sent as a JSON string of its decimal digits ("5") is still the animal's identifier: the path
        # of a read names it in those digits (§4.3), and its JSON type is create.id's to judge.
        shown = {**shown, "id": pet_id}
    if type(shown.get("id")) is not int:
        return None
    if status != 201 and schema_errors("Pet", shown):
        return None
    animal: JsonObject = shown
    return animal


_DECIMAL = re.compile(r"-?[1-9][0-9]{0,18}|0")


def _decimal_id(value: Any) -> int | None:
    """The int64 a JSON string spells in plain decimal digits (no sign but '-', no leading zero), or None."""
    if type(value) is not str or not _DECIMAL.fullmatch(value):
        return None
    number = int(value)
    return number if INT64_MIN <= number <= INT64_MAX else None
