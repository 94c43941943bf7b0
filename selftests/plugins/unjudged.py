"""A pytest plugin for the suite-mutation self-test (selftests/test_unexamined.py): the named clauses'
judgements become no-ops, as if their checks had returned early.

Loaded into a suite run with ``-p unjudged --unjudged CLAUSES`` (this folder on PYTHONPATH: see
``devtools.launcher.with_plugins``); CLAUSES is a comma-separated list of clause ids, or ``all``.
Every ``with judge(clause)`` block of a named clause drops whatever it raises and counts nothing, and
every count of its judgements made elsewhere (a generated case, a stateful hop) is dropped: each such
clause must then end undecided (not exercised), never conforming.  The product knows nothing of this:
the plugin supplies each test's Judge through the product's seam ``judging.expect.JUDGE_FACTORY``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from petstore_contract.judging.expect import JUDGE_FACTORY, Judge

ALL = "all"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--unjudged", default="", metavar="CLAUSES", help="clause ids (comma-separated) or 'all': judge nothing"
    )


@dataclass
class UnjudgedJudge(Judge):
    """A Judge for which the chosen clauses' judgements are no-ops."""

    chosen: frozenset[str] = frozenset()

    def skips(self, clause: str) -> bool:
        return ALL in self.chosen or clause in self.chosen

    @contextmanager
    def __call__(self, clause: str) -> Iterator[None]:
        if self.skips(clause):
            with contextlib.suppress(Exception):
                yield
            return
        with super().__call__(clause):
            yield

    def count(self, clause: str, exchanges: int = 1) -> None:
        if not self.skips(clause):
            super().count(clause, exchanges)


def pytest_configure(config: pytest.Config) -> None:
    chosen = frozenset(filter(None, str(config.getoption("--unjudged")).split(",")))
    if chosen:
        config.stash[JUDGE_FACTORY] = lambda: UnjudgedJudge(chosen=chosen)
