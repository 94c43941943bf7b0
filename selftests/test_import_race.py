"""No module is imported for the first time on one of the run's threads.

The run sends and judges generated cases on several threads; Schemathesis imports some modules on
first use, and two threads importing one module of an import cycle at once can see it
half-initialised (an ``ImportError`` that once made a healthy run inconclusive, one run in six).
An audit hook records every first import off the main thread during a whole run: there must be
none (``generated.LAZY_MODULES`` are imported while the schemas load).  A Schemathesis upgrade
that adds a lazy import fails here, naming the module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools import run_suite
from devtools.launcher import with_plugins


@pytest.mark.tier_2
def test_no_module_is_first_imported_on_a_worker_thread(tmp_path: Path) -> None:
    out = tmp_path / "threaded-imports.txt"
    run = run_suite(
        None,
        None,
        "-p",
        "threaded_imports",
        env=with_plugins({"THREADED_IMPORTS_OUT": str(out)}),
        timeout=300,
    )
    assert run.verdict == "conformant", run.output[-3000:]
    assert out.read_text(encoding="utf-8") == "", "first imported on a worker thread:\n" + out.read_text()
