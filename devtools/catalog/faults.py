"""The fault catalog (``faults.toml``): named defects the reference server can be started with.

Each fault is written from one sentence of the interface document (``spec/interface.md``) or of an
RFC the document relies on, quotes it word for word, breaks exactly one clause of the registry
(``clauses.toml``) and leaves the server otherwise conformant.  The self-test runs the contract
suite against every fault and demands that it be caught on its clause with no collateral.

The clean reference (``src/petstore_contract/reference/``: ``app.py``, ``rules.py``) names no fault,
and the installed package holds none of this.  Each fault is implemented in ``faulty/`` (next to this
file): a subclass of ``PetStore`` or ``Rules`` registered under its name that overrides the hook where
its clause is decided; ``catalog_app(key, variant, fault)`` serves that subclass, through the seam of
the reference's ``build_app(key, variant, store_factory=...)``.

To add a fault: add a ``[faults.<name>]`` table to ``faults.toml``, then a class decorated with
``@fault("<name>")`` to the module of ``faulty/`` for its part, overriding the hook that decides the
clause (where no hook decides it, add one to the clean server: a small method named after what it
decides).  ``selftests/test_faults.py`` fails until every fault has exactly one implementation.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Fault:
    name: str
    clause: str
    description: str
    quote: str
    dependants: tuple[str, ...] = ()
    generated_only: bool = False
    needs_complete_view: bool = False
    unseen_when_crowded: str = ""  # why the crowded store may hide it (see faults.toml)
    also_crowded: bool = False  # run on the crowded store too (see faults.toml)
    intermittent: bool = False  # caught as the deployment's 5xx: inconclusive, never passed (see faults.toml)


def _load() -> tuple[dict[str, Fault], frozenset[str]]:
    text = Path(__file__).with_name("faults.toml").read_text(encoding="utf-8")
    data: dict[str, Any] = tomllib.loads(text)
    faults = {
        name: Fault(
            name=name,
            clause=row["clause"],
            description=row["description"],
            quote=row["quote"],
            dependants=tuple(row.get("dependants", ())),
            generated_only=row.get("generated-only", False),
            needs_complete_view=row.get("needs-complete-view", False),
            unseen_when_crowded=row.get("unseen-when-crowded", ""),
            also_crowded=row.get("also-crowded", False),
            intermittent=row.get("intermittent", False),
        )
        for name, row in data["faults"].items()
    }
    return faults, frozenset(data["rfc-quotes"])


FAULTS, RFC_QUOTES = _load()
