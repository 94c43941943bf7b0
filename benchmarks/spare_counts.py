"""A pytest plugin for ``benchmarks.distance``: at the run's end, how many connections it opened ahead of its
writes (``transport/spares.py``), what became of them, and how long the requests that went to take one
waited, as JSON in the file ``$PETSTORE_SPARES_OUT``.

A request takes a spare as it goes out (``Spares.take``): it finds one ready, waits for one still opening
(at most a set-up), or opens its own (``own``).  ``waited`` counts those that waited a millisecond or more,
``wait_ms`` their waits summed: time a write spent on a handshake all the same, the figure that is left of
what new connections cost where spares are opened."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from petstore_contract.transport.spares import SPARES, Key

OUT_ENV = "PETSTORE_SPARES_OUT"
WAITED = 0.001  # seconds in ``take`` from which a request counts as having waited for its spare

_lock = threading.Lock()
_takes = {"own": 0, "waited": 0, "wait_ms": 0.0}


def _timed(take: Callable[[Key], Any | None]) -> Callable[[Key], Any | None]:
    """``take`` counted in ``_takes``."""

    def timed(key: Key) -> Any | None:
        started = time.monotonic()
        spare = take(key)
        _count(time.monotonic() - started, spare is not None)
        return spare

    return timed


def _count(waited: float, got: bool) -> None:
    with _lock:
        _takes["own"] += not got
        if waited >= WAITED:
            _takes["waited"] += 1
            _takes["wait_ms"] += waited * 1000


def pytest_configure(config: pytest.Config) -> None:
    # Only in a run this plugin is loaded into (``-p benchmarks.spare_counts``), never where it is imported.
    SPARES.take = _timed(SPARES.take)  # type: ignore[method-assign, assignment]


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get(OUT_ENV)
    if out:
        counts = {"opened": SPARES.opened, "taken": SPARES.taken, "expired": SPARES.expired, "dropped": SPARES.dropped}
        with _lock:
            counts |= {name: round(value) for name, value in _takes.items()}
        Path(out).write_text(json.dumps(counts), encoding="utf-8")
