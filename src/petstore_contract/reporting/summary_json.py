"""summary.json: ``RunResult.to_dict()`` plus the verdict line and the counts, for machines.

Its shape is summary.schema.json (JSON Schema 2020-12) beside this module.  What this module adds
to ``to_dict``: ``verdict_line``, ``clause_counts`` and, per violated clause, ``folded`` (identical
findings as one, with their count and tests).  The facts pass ``view.public_facts`` (a secret-named
fact is hidden); nothing else is rewritten.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

from petstore_contract.core.records import RunResult
from petstore_contract.interface.jsontypes import JsonObject, JsonValue
from petstore_contract.reporting import view

SCHEMA_FILE = "summary.schema.json"


def document(result: RunResult) -> JsonObject:
    data: JsonObject = result.to_dict()
    data.update(view.public_facts(result.facts))
    data["verdict_line"] = view.verdict_line(result)
    data["clause_counts"] = {outcome: count for outcome, count in view.outcome_counts(result).items()}
    entries = data["clauses"]
    assert isinstance(entries, list)  # RunResult.to_dict: one object per clause
    for clause, entry in zip(result.clauses, entries, strict=True):
        assert isinstance(entry, dict)
        entry["folded"] = [_folded(f) for f in view.fold(clause.findings)]
    return data


def _folded(folded: view.Folded) -> JsonObject:
    tests: list[JsonValue] = [*folded.tests]
    return {
        "expected": folded.finding.expected,
        "observed": folded.finding.observed,
        "count": folded.count,
        "tests": tests,
    }


def render(result: RunResult) -> str:
    return json.dumps(document(result), indent=2, ensure_ascii=False) + "\n"


@cache
def schema() -> JsonObject:
    """The JSON Schema every summary.json validates against."""
    text = files("petstore_contract.reporting").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: JsonObject = json.loads(text)
    return loaded
