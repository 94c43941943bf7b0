"""Which tests a run selected, and the clauses each names (read from pytest's items and options)."""

from __future__ import annotations

import pytest


def will_run(item: pytest.Item) -> bool:
    """A selected test that no skip marker (read-only, ...) keeps from running."""
    return not any(mark.name == "skip" for mark in item.iter_markers())


def whole_suite_selected(config: pytest.Config) -> bool:
    """No -k, -m or --deselect, and not --collect-only: every collected test will run."""
    option = config.option
    return not (option.keyword or option.markexpr or option.deselect or option.collectonly)


def clause_ids(item: pytest.Item) -> list[str]:
    return list(dict.fromkeys(cid for mark in item.iter_markers("clause") for cid in mark.args))
