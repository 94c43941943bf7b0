"""Which tests a run selected, the clauses each names and the set-up writes they need (read from
pytest's items and options)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

# The parts of set-up's plan of writes (``run/setup.py``, ``run/writeplan.py``): the suite's own animals
# (a few of each status), the valid bodies of the create and read tables, the fillers that take an
# empty store past a page of 100.  A test module of the suite names the parts its tests judge in
# ``SET_UP_WRITES``; a module that names none needs every part (a new module is never starved).
OWN, PLAN, FILLERS = "own", "plan", "fillers"
EVERY_WRITE = frozenset({OWN, PLAN, FILLERS})


def will_run(item: pytest.Item) -> bool:
    """A selected test that no skip marker (read-only, ...) keeps from running."""
    return not any(mark.name == "skip" for mark in item.iter_markers())


def whole_suite_selected(config: pytest.Config) -> bool:
    """No -k, -m or --deselect, and not --collect-only: every collected test will run."""
    option = config.option
    return not (option.keyword or option.markexpr or option.deselect or option.collectonly)


def clause_ids(item: pytest.Item) -> list[str]:
    return list(dict.fromkeys(cid for mark in item.iter_markers("clause") for cid in mark.args))


def needed_writes(items: Iterable[pytest.Item], suite: Path) -> frozenset[str]:
    """The parts of set-up's plan of writes the selected tests of the suite (under ``suite``) need:
    a run of a few clauses creates only what those clauses judge (``-k test_orders``: nothing)."""
    needed: set[str] = set()
    for item in items:
        if suite not in Path(str(item.path)).resolve().parents:
            continue  # another project's test in the same session: it uses no set-up
        module = getattr(item, "module", None)
        needed |= set(getattr(module, "SET_UP_WRITES", EVERY_WRITE))
    return frozenset(needed)
