"""The targeted tests' vocabulary over the run's transport: credentials as templates, JSON bodies.

``authorization``, header and parameter values may hold ``{key}`` (the API key), ``{key_b64}`` (its
base64 form) or a near miss of it (``near_misses``); the transport records every exchange with the
key replaced by its variable.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from requests.structures import CaseInsensitiveDict

from petstore_contract.core.records import Exchange
from petstore_contract.transport import Answer, TargetProblem, Transport

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
        params: dict[str, Any] | None = None,
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


class Unanswered:
    """A row of a table the target did not answer: the row alone is undecided.

    It stands where the row's ``Answer`` would; reading what the answer would hold raises the
    transport's ``TargetProblem``, which a ``judge`` block turns into *undecided* for its clause
    (and a test, for the clauses it names), while the table's other rows are judged as usual.
    """

    def __init__(self, problem: TargetProblem) -> None:
        self.problem = problem

    def _raise(self) -> Any:
        raise self.problem

    status = property(_raise)
    headers = property(_raise)
    body = property(_raise)
    text = property(_raise)
    exchange = property(_raise)


Row = Answer | Unanswered


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


def answers_to_data(answers: dict[str, Row]) -> dict[str, Any]:
    """Answers as plain data, for the run's processes to share (a table is sent once per run)."""
    return {key: _row_to_data(row) for key, row in answers.items()}


def _row_to_data(row: Row) -> dict[str, Any]:
    if isinstance(row, Unanswered):
        exchange = row.problem.exchange.to_dict() if row.problem.exchange is not None else None
        return {"unanswered": row.problem.message, "kind": row.problem.kind, "exchange": exchange}
    return {
        "status": row.status,
        "headers": list(row.headers.items()),
        "body": base64.b64encode(row.body).decode(),
        "exchange": row.exchange.to_dict(),
    }


def answers_from_data(data: dict[str, Any]) -> dict[str, Row]:
    return {key: _row_from_data(item) for key, item in data.items()}


def _row_from_data(item: dict[str, Any]) -> Row:
    if "unanswered" in item:
        exchange = Exchange.from_dict(item["exchange"]) if item["exchange"] else None
        return Unanswered(TargetProblem(item["unanswered"], kind=item["kind"], exchange=exchange))
    return Answer(
        status=item["status"],
        headers=CaseInsensitiveDict(dict(item["headers"])),
        body=base64.b64decode(item["body"]),
        exchange=Exchange.from_dict(item["exchange"]),
    )
