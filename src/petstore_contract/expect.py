"""Assertions the targeted tests share; each failure message says what was expected and what came back."""

from __future__ import annotations

from typing import Any

from petstore_contract.client import Exchange
from petstore_contract.spec import schema_errors

STATUSES = ("available", "pending", "sold")


def status(exchange: Exchange, *expected: int) -> None:
    if exchange.status not in expected:
        want = " or ".join(map(str, expected))
        raise AssertionError(f"expected HTTP {want}, got {exchange.status}: {exchange.preview()}")


def no_server_error(exchange: Exchange) -> None:
    if exchange.status >= 500:
        raise AssertionError(f"expected no 5xx, got {exchange.status}: {exchange.preview()}")


def json_media_type(exchange: Exchange) -> None:
    content_type = exchange.headers.get("content-type", "")
    media = content_type.split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise AssertionError(f"expected Content-Type application/json, got {content_type or 'none'!r}")


def error_body(exchange: Exchange, http_status: int | None = None) -> dict[str, Any]:
    """An Error: JSON object with string code, string message, integer status = HTTP status."""
    if http_status is not None:
        status(exchange, http_status)
    json_media_type(exchange)
    body = exchange.json()
    problems = schema_errors("Error", body)
    if problems:
        raise AssertionError(f"expected an Error body, got {exchange.preview()} ({'; '.join(problems)})")
    if body["status"] != exchange.status:
        raise AssertionError(f"Error body says status {body['status']!r}, the HTTP status is {exchange.status}")
    return body


def pet(instance: Any, where: str = "Pet") -> dict[str, Any]:
    problems = schema_errors("Pet", instance)
    if problems:
        raise AssertionError(f"expected {where} to be a Pet, got {instance!r:.300} ({'; '.join(problems)})")
    return instance


def pet_list(exchange: Exchange) -> list[dict[str, Any]]:
    """A 200 whose body is a JSON array of Pet."""
    status(exchange, 200)
    json_media_type(exchange)
    body = exchange.json()
    if not isinstance(body, list):
        raise AssertionError(f"expected a JSON array of Pet, got {type(body).__name__}: {exchange.preview()}")
    for index, item in enumerate(body):
        pet(item, f"item {index}")
    return body


def rejected_or_listed(exchange: Exchange, at_most: int = 100) -> list[dict[str, Any]] | None:
    """Where the document leaves handling open: a 400 Error, or a 200 list that keeps the bounds."""
    no_server_error(exchange)
    if exchange.status == 400:
        error_body(exchange, 400)
        return None
    items = pet_list(exchange)
    if len(items) > at_most:
        raise AssertionError(f"expected at most {at_most} animals, got {len(items)}")
    return items


def same_fields(sent: dict[str, Any], answer: dict[str, Any], where: str) -> None:
    """Each field sent comes back exactly (type and value: 1 is not 1.0 nor "1")."""
    for name, value in sent.items():
        got = answer.get(name, "<absent>")
        if got != value or type(got) is not type(value):
            raise AssertionError(f"{where}: expected {name}={value!r}, got {got!r:.200}")
