"""A pytest plugin for ``benchmarks.distance``: at the run's end, how many connections it opened ahead of its
writes (``transport/spares.py``) and what became of them, as JSON in the file ``$PETSTORE_SPARES_OUT``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from petstore_contract.transport.spares import SPARES

OUT_ENV = "PETSTORE_SPARES_OUT"


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get(OUT_ENV)
    if out:
        counts = {"opened": SPARES.opened, "taken": SPARES.taken, "expired": SPARES.expired, "dropped": SPARES.dropped}
        Path(out).write_text(json.dumps(counts), encoding="utf-8")
