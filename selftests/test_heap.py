"""The run's use of the garbage collector: long-lived objects frozen, young cycles still freed, all undone."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from petstore_contract.run import heap


@pytest.fixture
def settled() -> Iterator[None]:
    before = gc.get_threshold()
    heap.relax()
    heap.freeze_long_lived()
    try:
        yield
    finally:
        heap.restore()
        gc.unfreeze()
        assert gc.get_threshold() == before


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_relax_raises_only_the_youngest_threshold() -> None:
    before = gc.get_threshold()
    heap.relax()
    try:
        assert gc.get_threshold() == (heap.YOUNGEST_THRESHOLD, *before[1:])
    finally:
        heap.restore()
    assert gc.get_threshold() == before


def test_objects_alive_at_the_freeze_are_out_of_the_collectors_sight(settled: None) -> None:
    assert gc.get_freeze_count() > 0


def test_a_cycle_made_after_the_freeze_is_still_collected(settled: None) -> None:
    first, second = Node(), Node()
    first.other, second.other = second, first
    watch = weakref.ref(first)
    del first, second
    gc.collect()
    assert watch() is None


def test_restore_keeps_the_freeze_and_the_next_run_releases_it() -> None:
    heap.relax()
    heap.freeze_long_lived()
    heap.restore()
    heap.restore()
    try:
        assert gc.get_freeze_count() > 0  # the process's exit does not walk them again
        heap.relax()  # another run in the same process
        assert gc.get_freeze_count() == 0
    finally:
        heap.restore()
        gc.unfreeze()
