"""A summary.json read back by the suite's own tools (compare, verify, replay).

Every problem with the file is one line (``SummaryError``): missing, not JSON, written by another
schema version, or not the shape of ``reporting/summary.schema.json``.  ``clause_rows`` turns the
file's clauses back into the ``ClauseResult`` rows the verdict is decided from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from petstore_contract.core.records import SCHEMA_VERSION, ClauseResult, Finding, Note, Outcome
from petstore_contract.reporting import summary_json


class SummaryError(Exception):
    """A summary.json that cannot be used; ``str()`` is one line naming the file and the problem."""


def load(path: str | Path) -> dict[str, Any]:
    """The summary.json at ``path``, checked against its schema (this suite's version)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SummaryError(f"{file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SummaryError(f"{file}: cannot be read ({type(exc).__name__})") from None
    try:
        data = json.loads(text)
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


def clause_rows(data: dict[str, Any]) -> list[ClauseResult]:
    """The file's clauses as the rows ``verdict.decide`` reads."""
    return [
        ClauseResult(
            id=entry["id"],
            section=entry["section"],
            level=entry["level"],
            quote=entry["quote"],
            outcome=Outcome(entry["outcome"]),
            findings=[Finding.from_dict(f) for f in entry["findings"]],
            notes=[Note.from_dict(n) for n in entry["notes"]],
            tests=list(entry["tests"]),
            needs_complete_view=entry["needs_complete_view"],
        )
        for entry in data["clauses"]
    ]


def findings(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every finding of the file, as written (with its ``id`` and ``signature``)."""
    return [finding for clause in data["clauses"] for finding in clause["findings"]]


def _short(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"
