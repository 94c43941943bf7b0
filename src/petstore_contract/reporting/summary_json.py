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
from typing import Any

from petstore_contract.core.records import ClauseResult, RunResult
from petstore_contract.interface.jsontypes import JsonValue
from petstore_contract.reporting import view

SCHEMA_FILE = "summary.schema.json"


def document(result: RunResult) -> dict[str, Any]:
    data = result.to_dict()
    data.update(view.public_facts(result.facts))
    data["verdict_line"] = view.verdict_line(result)
    data["clause_counts"] = {**view.outcome_counts(result)}
    data["clauses"] = [{**clause.to_dict(result.gate), "folded": _folded(clause)} for clause in result.clauses]
    return data


def _folded(clause: ClauseResult) -> JsonValue:
    return [
        {"expected": f.finding.expected, "observed": f.finding.observed, "count": f.count, "tests": [*f.tests]}
        for f in view.fold(clause.findings)
    ]


def render(result: RunResult) -> str:
    return json.dumps(document(result), indent=2, ensure_ascii=False) + "\n"


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema every summary.json validates against."""
    text = files("petstore_contract.reporting").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded
