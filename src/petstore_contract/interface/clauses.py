"""The clause registry (clauses.toml) and the ``clause`` marker that links a test to it."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.resources import files
from typing import Any


@dataclass(frozen=True)
class Clause:
    id: str
    section: str
    level: str
    quote: str
    statement: str
    complete_view: bool = False
    undecided_ok: tuple[str, ...] = ()  # reasons it may stay undecided without blocking the verdict
    blocked_by: tuple[str, ...] = ()  # a violation of one of these leaves this one undecided, blocked by it
    operation: str = ""  # the operationId (spec/openapi.yaml) whose success answer this clause judges
    catch_all: bool = False  # a clause findings land on when no more specific clause holds them

    @property
    def directness(self) -> int:
        """How directly a fault that breaks this clause and others breaks it (reports list the violated
        clauses in this order): 0 the clause of an operation's own documented answer (``operation``), 1 a
        specific rule, 2 a catch-all (``catch-all``: any answer's status and body, the generated tests'
        findings no table places)."""
        return 0 if self.operation else 2 if self.catch_all else 1

    @property
    def source(self) -> str:
        """interface (the Pet Store document) or rfc (an HTTP RFC the document relies on)."""
        return "rfc" if "RFC" in self.section else "interface"

    @cached_property
    def marker_names(self) -> tuple[str, ...]:
        """Markers derived from the clause, for ``-m`` selection (asked for every test's every clause)."""
        names = [self.level.lower()]
        if self.source == "rfc":
            names.append("rfc")
        for part in self.section.replace(";", ",").split(","):
            part = part.strip()
            if part.startswith("§"):
                names.append("section_" + part[1:].replace(".", "_"))
        return tuple(dict.fromkeys(names))


# Where a generated-test finding goes when the failure table places it nowhere more specific.
CATCH_ALL = "generated.other"


@cache
def registry() -> dict[str, Clause]:
    data = tomllib.loads(files("petstore_contract.interface").joinpath("clauses.toml").read_text(encoding="utf-8"))
    return {cid: Clause(id=cid, **_fields(table)) for cid, table in data["clauses"].items()}


def _fields(table: dict[str, Any]) -> dict[str, Any]:
    """A clause's TOML table as Clause fields: names in snake case, lists as tuples (the record is frozen)."""
    return {name.replace("-", "_"): tuple(v) if isinstance(v, list) else v for name, v in table.items()}


def success_clause(operation: str) -> str | None:
    """The clause that judges ``operation``'s success answer (an operationId), from clauses.toml."""
    return next((c.id for c in registry().values() if c.operation == operation), None)


def section_markers() -> list[str]:
    names = {name for clause in registry().values() for name in clause.marker_names if name.startswith("section_")}
    return sorted(names)
