"""A pytest plugin for the stop-signal self-tests: holds a suite run at a point it reports.

Loaded into a suite run with ``-p hold_run`` (this folder on PYTHONPATH).  When the first test's body
starts, it writes that test's id to the file named by ``HOLD_RUN_FILE`` and waits there (at most
``HOLD_RUN_SECONDS``, 120 by default) for the signal the self-test sends.  The run is then mid-way on any
machine, fast or slow: a self-test that slept a fixed time before its signal failed on a fast machine,
where the whole run had ended first.

The product knows nothing of it; the signal comes from outside the code under test, as a CI system's would.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

HELD: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    marker = os.environ.get("HOLD_RUN_FILE")
    if not marker or HELD:
        return
    HELD.append(item.nodeid)
    Path(marker).write_text(item.nodeid, encoding="utf-8")
    deadline = time.monotonic() + float(os.environ.get("HOLD_RUN_SECONDS", "120"))
    while time.monotonic() < deadline:  # the stop signal's handler raises out of this sleep
        time.sleep(0.05)
