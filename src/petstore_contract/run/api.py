"""The targeted tests' vocabulary over the run's transport: credentials as templates, JSON bodies.

``authorization``, header and parameter values may hold ``{key}`` (the API key), ``{key_b64}`` (its
base64 form) or a near miss of it (``near_misses``); the transport records every exchange with the
key replaced by its variable.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from petstore_contract.interface.jsontypes import JsonLike, JsonObject
from petstore_contract.transport import Answer, TargetProblem, Transport
from petstore_contract.transport.answers import Row as Row
from petstore_contract.transport.answers import Unanswered as Unanswered
from petstore_contract.transport.answers import row_from_dict

UNSET: Any = object()
VALID = "Bearer {key}"
MARKER = re.compile(r"\{(?:key|key_b64|key_prefix|key_half|key_swapcase|wrong_key)\}")
WRONG_KEY = "not-the-key-0123456789"


def near_misses(key: str) -> dict[str, str]:
    """Credentials close to the key and never equal to it, for a key of any length (1 character too):
    the key without its last character, its first half (empty for one character: still not the key),
    its case swapped (with a letter added when it has none), and a wrong key."""
    swapped = key.swapcase()
    return {
        "{key_prefix}": key[:-1],
        "{key_half}": key[: len(key) // 2],
        "{key_swapcase}": swapped if swapped != key else key + "Z",
        "{wrong_key}": WRONG_KEY if key != WRONG_KEY else WRONG_KEY + "-other",
    }


T = TypeVar("T")
R = TypeVar("R")


class Api:
    def __init__(self, transport: Transport, api_key: str) -> None:
        self.transport = transport
        self.api_key = api_key

    def fill(self, template: str) -> str:
        """The template with its markers replaced, in one pass (a key that holds a marker stays as it is)."""
        values = {
            **near_misses(self.api_key),
            "{key_b64}": base64.b64encode(self.api_key.encode()).decode(),
            "{key}": self.api_key,
        }
        return MARKER.sub(lambda match: values.get(match.group(0), match.group(0)), template)

    def get(self, path: str, **kwargs: Any) -> Answer:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Answer:
        return self.request("POST", path, **kwargs)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, JsonLike] | None = None,
        json_body: Any = UNSET,
        data: bytes | str | None = None,
        authorization: str | None = VALID,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        all_headers: dict[str, str | None] = {"Accept": "application/json"}
        all_headers.update({name: self.fill(value) for name, value in (headers or {}).items()})
        # None: no Authorization header at all (the transport would otherwise send the valid key).  A header
        # named so in another case (``authorization``: field names are case-insensitive, RFC 9110 §5.1) is the
        # one sent, as given.
        if not any(name.lower() == "authorization" for name in headers or {}):
            all_headers["Authorization"] = None if authorization is None else self.fill(authorization)
        body: bytes | None = None
        if json_body is not UNSET:
            body = json.dumps(json_body, ensure_ascii=False).encode()
        elif data is not None:
            body = data.encode() if isinstance(data, str) else data
        if body is not None:
            all_headers.setdefault("Content-Type", "application/json")
        query = {name: self.fill(str(value)) for name, value in (params or {}).items()}
        return self.transport.request(method, path, params=query or None, headers=all_headers, body=body)

    def map(self, send: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Independent requests side by side on the run's bounded pool; results in input order."""
        return self.transport.map(send, list(items))


class Request:
    """One request of a table, as data: sent later, side by side with the table's others."""

    def __init__(self, method: str, path: str, **options: Any) -> None:
        self.method, self.path, self.options = method, path, options

    def send(self, api: Api) -> Answer:
        return api.request(self.method, self.path, **self.options)


def answered(answers: dict[str, Row]) -> dict[str, Answer]:
    """The rows of a table that the target answered."""
    return {key: row for key, row in answers.items() if isinstance(row, Answer)}


def attempt(send: Callable[[], Answer]) -> Row:
    """The answer ``send()`` got, or the row unanswered (the target could not be asked)."""
    try:
        return send()
    except TargetProblem as problem:
        return Unanswered(problem)


def send_row(api: Api, request: Request) -> Row:
    return attempt(lambda: request.send(api))


def send_table(api: Api, table: dict[str, Request]) -> dict[str, Row]:
    """Every request of the table on the run's bounded pool; answers (or ``Unanswered``) by the table's keys."""
    keys = list(table)
    return dict(zip(keys, api.map(lambda key: send_row(api, table[key]), keys), strict=True))


def answers_to_data(answers: dict[str, Row]) -> JsonObject:
    """Answers as plain data, for the run's processes to share (a table is sent once per run)."""
    data: JsonObject = {key: row.to_dict() for key, row in answers.items()}
    return data


def answers_from_data(data: Mapping[str, JsonLike]) -> dict[str, Row]:
    return {key: row_from_dict(item) for key, item in data.items()}
