"""The clause registry (clauses.toml) and the ``clause`` marker that links a test to it.

Code names a clause through the registry, never as a bare string: ``CLAUSE_IDS.list_found`` is the id
``list.found`` (dots and dashes as underscores), typed ``ClauseId``; a name clauses.toml does not hold
raises AttributeError where it is read (at import for a test's mark or a module's table, and
``selftests/test_clause_ids.py`` reads every name the code uses).  An id that comes as data (a TOML
table, a finding read back) is checked with ``clause_id``.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.resources import files
from typing import NewType

# A clause id that is in the registry (``CLAUSE_IDS.<name>`` or ``clause_id``); at run time the id's str.
ClauseId = NewType("ClauseId", str)


@dataclass(frozen=True)
class Clause:
    id: ClauseId
    section: str
    level: str
    quote: str
    statement: str
    complete_view: bool = False
    undecided_ok: tuple[str, ...] = ()  # reasons it may stay undecided without blocking the verdict
    blocked_by: tuple[ClauseId, ...] = ()  # a violation of one of these leaves this one undecided, blocked by it
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


@cache
def registry() -> dict[str, Clause]:
    data = tomllib.loads(files("petstore_contract.interface").joinpath("clauses.toml").read_text(encoding="utf-8"))
    clauses = {cid: _clause(ClauseId(cid), table) for cid, table in data["clauses"].items()}
    for clause in clauses.values():
        if unknown := set(clause.blocked_by) - set(clauses):
            raise TypeError(f"clauses.toml: {clause.id}: blocked-by names no clause {sorted(unknown)[0]!r}")
    return clauses


FIELDS = frozenset(
    {"section", "level", "quote", "statement", "complete-view", "undecided-ok", "blocked-by", "operation", "catch-all"}
)


def _clause(cid: ClauseId, table: Mapping[str, object]) -> Clause:
    """A clause's TOML table as a Clause; TypeError, naming the clause and the field, for one that is wrong."""
    if unknown := set(table) - FIELDS:
        raise TypeError(f"clauses.toml: {cid}: unknown field {sorted(unknown)[0]!r}")

    def text(name: str, default: str | None = None) -> str:
        value = table.get(name, default)  # no default: the field is required
        if not isinstance(value, str):
            raise TypeError(f"clauses.toml: {cid}: {name} must be a string")
        return value

    def texts(name: str) -> tuple[str, ...]:
        value = table.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise TypeError(f"clauses.toml: {cid}: {name} must be a list of strings")
        return tuple(str(item) for item in value)

    flags = {name: table.get(name, False) for name in ("complete-view", "catch-all")}
    if not all(isinstance(flag, bool) for flag in flags.values()):
        raise TypeError(f"clauses.toml: {cid}: complete-view and catch-all are true or false")
    return Clause(
        cid,
        text("section"),
        text("level"),
        text("quote"),
        text("statement"),
        complete_view=flags["complete-view"] is True,
        undecided_ok=texts("undecided-ok"),
        blocked_by=tuple(ClauseId(blocking) for blocking in texts("blocked-by")),  # checked by ``registry``
        operation=text("operation", ""),
        catch_all=flags["catch-all"] is True,
    )


def attribute_name(clause: str) -> str:
    """The registry name of a clause id: ``create.reject.nothing-created`` -> ``create_reject_nothing_created``."""
    return clause.replace(".", "_").replace("-", "_")


def clause_id(text: str) -> ClauseId:
    """``text`` as a ClauseId; ValueError, naming it, when the registry holds no such clause."""
    if text not in registry():
        raise ValueError(f"no clause {text!r} in clauses.toml")
    return ClauseId(text)


class _Clauses:
    """Every clause of the registry as an attribute (``CLAUSE_IDS.list_found``), filled from clauses.toml on
    first use; a name it does not hold raises."""

    def __getattr__(self, name: str) -> ClauseId:
        if name.startswith("__"):
            raise AttributeError(name)
        names = {attribute_name(cid): ClauseId(cid) for cid in registry()}
        if name not in names:
            raise AttributeError(
                f"no clause named {name!r} in clauses.toml (CLAUSE_IDS.<id with dots and dashes as _>)"
            )
        self.__dict__.update(names)
        return names[name]


CLAUSE_IDS = _Clauses()
# Where a generated-test finding goes when the failure table places it nowhere more specific.
CATCH_ALL = CLAUSE_IDS.generated_other


def success_clause(operation: str) -> ClauseId | None:
    """The clause that judges ``operation``'s success answer (an operationId), from clauses.toml."""
    return next((ClauseId(c.id) for c in registry().values() if c.operation == operation), None)


def section_markers() -> list[str]:
    names = {name for clause in registry().values() for name in clause.marker_names if name.startswith("section_")}
    return sorted(names)
