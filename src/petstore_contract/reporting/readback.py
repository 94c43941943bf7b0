"""A summary.json read back by the suite's own tools (compare, verify, replay).

Every problem with the file is one line (``SummaryError``): missing, not JSON, written by another
schema version, or not the shape of ``reporting/summary.schema.json``.  ``clause_rows`` turns the
file's clauses back into the ``ClauseResult`` rows the verdict is decided from.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from petstore_contract.core.records import SCHEMA_VERSION, ClauseResult, Finding, Note, Outcome
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.reporting import summary_json


class SummaryError(Exception):
    """A summary.json that cannot be used; ``str()`` is one line naming the file and the problem."""


def load(path: str | Path) -> JsonObject:
    """The summary.json at ``path``, checked against its schema (this suite's version)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SummaryError(f"{file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SummaryError(f"{file}: cannot be read ({type(exc).__name__})") from None
    try:
        data: JsonValue = json.loads(text)
    except ValueError as exc:
        raise SummaryError(f"{file}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise SummaryError(f"{file}: not a summary.json (a JSON {type(data).__name__}, not an object)")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SummaryError(
            f"{file}: summary.json of schema version {version!r}; this suite reads version {SCHEMA_VERSION} "
            "(run both with the same suite version)"
        )
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(summary_json.schema()).iter_errors(data))
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "(top level)"
        raise SummaryError(f"{file}: not a valid summary.json at {where}: {_short(error.message)}")
    return data


def clause_rows(data: JsonObject) -> list[ClauseResult]:
    """The file's clauses as the rows ``verdict.decide`` reads."""
    return [_clause_row(json_object(entry)) for entry in json_list(data.get("clauses"))]


def _clause_row(entry: JsonObject) -> ClauseResult:
    return ClauseResult(
        id=json_text(entry.get("id")),
        section=json_text(entry.get("section")),
        level=json_text(entry.get("level")),
        quote=json_text(entry.get("quote")),
        outcome=Outcome(json_text(entry.get("outcome"))),
        findings=[Finding.from_dict(json_object(f)) for f in json_list(entry.get("findings"))],
        notes=[Note.from_dict(json_object(n)) for n in json_list(entry.get("notes"))],
        tests=[json_text(t) for t in json_list(entry.get("tests"))],
        needs_complete_view=entry.get("needs_complete_view") is True,
    )


def findings(data: JsonObject) -> list[JsonObject]:
    """Every finding of the file, as written (with its ``id`` and ``signature``)."""
    return [
        json_object(finding)
        for clause in json_list(data.get("clauses"))
        for finding in json_list(json_object(clause).get("findings"))
    ]


# A file that ``load`` returned has its schema's shape: these narrow its values for the type checker, and
# give an empty value where a file of another shape (never one ``load`` passed) has none.
def json_object(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def json_list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def json_text(value: JsonValue) -> str:
    return value if isinstance(value, str) else ""


def _short(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"
